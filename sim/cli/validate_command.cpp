#include "sim/cli/validate_command.hpp"

#include "sim/cli/child_run.hpp"
#include "sim/core/limits.hpp"
#include "sim/cli/simulation_request.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;
constexpr std::uint64_t kMiB = 1u << 20;

/// `object[key]`, or null when the key is missing: a data set's fields are
/// optional, and a const operator[] on a missing key is undefined.
const json& member(const json& object, const char* key) {
  static const json kMissing;
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}

std::string string_member(const json& object, const char* key) {
  const json& v = member(object, key);
  return v.is_string() ? v.get<std::string>() : "";
}

/// Which stock topology a data set's system runs on, or why none does.
std::string topology_for(const json& ds, const std::string& dir, std::string& why) {
  const std::string gpu = string_member(ds, "gpu");
  if (core::integer_in_range(member(ds, "nodes"), 0, core::kMaxGpus) != 1) {
    why = "multi-node systems are not modelled yet";
    return "";
  }
  if (gpu.find("H100") != std::string::npos && gpu.find("SXM") != std::string::npos) return dir + "/hgx-h100.json";
  if (gpu.find("A100") != std::string::npos && gpu.find("SXM") != std::string::npos) return dir + "/dgx-a100.json";
  why = fmt::format("no stock topology for GPU '{}'", gpu);
  return "";
}

/// The algorithm the data set says NCCL ran (forced or logged), else NCCL's choice.
std::string algorithm_for(const json& ds) {
  const std::string recorded = string_member(ds, "algorithm");
  if (recorded.find("NVLS") != std::string::npos) return "nvls";
  if (recorded.find("Ring") != std::string::npos) return "ring";
  return "auto";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

int run_validate(const ValidateOptions& options, std::ostream& out) {
  if (!options.calibration.empty()) (void)calibration_patch(options.calibration);  // a bad profile is its own error
  const json doc = core::read_json_file(options.measurements);
  if (!doc.contains("collective_datasets") || !doc["collective_datasets"].is_array())
    throw core::ConfigError(options.measurements, "/collective_datasets", "expected an array of data sets");

  std::vector<double> latency_errors, bandwidth_errors;
  json report = {{"datasets", json::array()}, {"skipped", json::array()}};
  const auto& sets = doc["collective_datasets"];
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json& ds = sets[i];
    if (!ds.is_object())
      throw core::ConfigError(options.measurements, fmt::format("/collective_datasets/{}", i), fmt::format("expected a data set object, found {}", ds.type_name()));
    const std::string id = member(ds, "id").is_string() ? ds["id"].get<std::string>() : fmt::format("collective_datasets/{}", i);
    std::string why;
    std::vector<const json*> rows;
    if (member(ds, "rows").is_array())
      for (const auto& r : ds["rows"])
        if (r.is_object() && r.contains("bytes") && r["bytes"].is_number_unsigned() && r["bytes"].get<std::uint64_t>() > 0 &&
            r.contains("time_us") && r["time_us"].is_number())
          rows.push_back(&r);
    std::string topology;
    if (id.find("cudagraph") != std::string::npos) {
      why = "CUDA-graph timing has no launch gaps between iterations (not modelled)";
    } else if (rows.empty()) {
      why = "no per-size rows with a byte count and a time (a summary figure)";
    } else if (!member(ds, "gpus").is_number_integer() || !member(ds, "collective").is_string()) {
      why = "no GPU count or collective";
    } else if (!core::integer_in_range(ds["gpus"], 1, core::kMaxGpus)) {
      throw core::ConfigError(options.measurements, fmt::format("/collective_datasets/{}/gpus", i),
                              fmt::format("expected 1 to {} GPUs, found {}", core::kMaxGpus, ds["gpus"].dump()));
    } else {
      topology = topology_for(ds, options.topology_dir, why);
    }
    if (topology.empty()) {
      report["skipped"].push_back({{"id", id}, {"reason", why}});
      continue;
    }
    std::uint64_t lo = ~0ull, hi = 0;
    for (const auto* r : rows) {
      lo = std::min(lo, (*r)["bytes"].get<std::uint64_t>());
      hi = std::max(hi, (*r)["bytes"].get<std::uint64_t>());
    }
    const std::string algorithm = algorithm_for(ds);
    std::vector<std::string> args{"nccl-test", "--topology", topology, "--op", ds["collective"].get<std::string>(), "-g",
                                  std::to_string(ds["gpus"].get<int>()), "-b", std::to_string(lo), "-e", std::to_string(hi), "-f", "2",
                                  "--algo", algorithm, "--format", "json"};
    if (!options.calibration.empty()) args.insert(args.end(), {"--calibration", options.calibration});
    const json predicted = run_json_child(options.self, args, {options.measurements, fmt::format("/collective_datasets/{}", i)});
    std::map<std::uint64_t, const json*> by_bytes;
    for (const auto& row : predicted["rows"]) by_bytes[row["bytes"].get<std::uint64_t>()] = &row;

    json entry = {{"id", id}, {"gpus", ds["gpus"]}, {"collective", ds["collective"]}, {"algorithm", algorithm}, {"rows", json::array()}};
    if (!options.json) {
      fmt::print(out, "\n{} ({} GPUs, {}, measured: {})\n", id, ds["gpus"].get<int>(), ds["collective"].get<std::string>(),
                 member(ds, "algorithm").is_string() ? ds["algorithm"].get<std::string>() : "not recorded");
      fmt::print(out, "{:>12} {:>10} {:>10} {:>11} {:>11} {:>8}  {}\n", "bytes", "meas us", "pred us", "meas busbw",
                 "pred busbw", "error", "algorithm/protocol");
    }
    for (const auto* r : rows) {
      const auto bytes = (*r)["bytes"].get<std::uint64_t>();
      const auto it = by_bytes.find(bytes);
      if (it == by_bytes.end()) continue;
      const json& p = *it->second;
      const double measured_us = (*r)["time_us"].get<double>();
      // Times, not busbw: the published tables round small busbw to 0.00.
      const double error = (p["time_us"].get<double>() - measured_us) / measured_us;
      (bytes < kMiB ? latency_errors : bandwidth_errors).push_back(std::abs(error));
      const double measured_busbw = (*r).contains("busbw_GBps") && (*r)["busbw_GBps"].is_number() ? (*r)["busbw_GBps"].get<double>() : 0.0;
      entry["rows"].push_back({{"bytes", bytes}, {"measured_us", measured_us}, {"predicted_us", p["time_us"]},
                               {"measured_busbw_GBps", measured_busbw}, {"predicted_busbw_GBps", p["busbw_GBps"]},
                               {"error", std::round(error * 1e4) / 1e4}});
      if (!options.json)
        fmt::print(out, "{:>12} {:>10.2f} {:>10.2f} {:>11.2f} {:>11.2f} {:>+7.1f}%  {}/{}\n", bytes, measured_us,
                   p["time_us"].get<double>(), measured_busbw, p["busbw_GBps"].get<double>(), 100 * error,
                   p["algorithm"].get<std::string>(), p["protocol"].get<std::string>());
    }
    report["datasets"].push_back(entry);
  }

  const double lat = median(latency_errors), bw = median(bandwidth_errors);
  const auto worst = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  report["summary"] = {{"latency_bound", {{"sizes", latency_errors.size()}, {"median_error", lat}, {"worst_error", worst(latency_errors)}}},
                       {"bandwidth_bound", {{"sizes", bandwidth_errors.size()}, {"median_error", bw}, {"worst_error", worst(bandwidth_errors)}}}};
  const bool failed = (options.max_latency_error > 0 && lat > options.max_latency_error) ||
                      (options.max_bandwidth_error > 0 && bw > options.max_bandwidth_error);
  if (options.json) {
    out << report.dump(1) << '\n';
  } else {
    fmt::print(out, "\nskipped {} data sets:\n", report["skipped"].size());
    for (const auto& s : report["skipped"]) fmt::print(out, "  {}: {}\n", s["id"].get<std::string>(), s["reason"].get<std::string>());
    fmt::print(out, "\nsummary (|predicted - measured| / measured time)\n");
    fmt::print(out, "latency-bound (< 1 MiB)     sizes {:>4}  median {:5.1f}%  worst {:5.1f}%\n", latency_errors.size(), 100 * lat, 100 * worst(latency_errors));
    fmt::print(out, "bandwidth-bound (>= 1 MiB)  sizes {:>4}  median {:5.1f}%  worst {:5.1f}%\n", bandwidth_errors.size(), 100 * bw, 100 * worst(bandwidth_errors));
    if (options.max_latency_error > 0 || options.max_bandwidth_error > 0) fmt::print(out, "check: {}\n", failed ? "FAILED" : "passed");
  }
  return failed ? 1 : 0;
}

}  // namespace fabsim::cli
