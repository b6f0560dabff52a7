#include "sim/cli/validate_plan.hpp"
#include "sim/cli/validate_launch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/calibration/measurements.hpp"
#include "sim/calibration/stock_systems.hpp"
#include "sim/cli/child_run.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;

/// `object[key]`, or null when the key is missing: a data set's fields are
/// optional, and a const operator[] on a missing key is undefined.
const json& member(const json& object, const char* key) {
  static const json kMissing;
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}

/// Which stock topology (and GPU model) a data set's system runs on, or why none does.
std::string topology_for(const json& ds, const std::string& dir, std::string& gpu_model, std::string& why) {
  const std::string gpu = string_member(ds, "gpu");
  if (const auto nodes = core::integer_in_range(member(ds, "nodes"), 0, core::kMaxGpus); nodes != 1) {
    const auto stock = calibration::multi_node_stock_topology(gpu + " " + string_member(ds, "system"), static_cast<int>(nodes.value_or(0)));
    if (stock.topology.empty()) {
      why = "multi-node: no stock topology models this system's NICs yet (issue 15)";
      return "";
    }
    gpu_model = stock.gpu_model;
    return dir + "/" + stock.topology;
  }
  const auto stock = calibration::single_node_stock_topology(gpu + " " + string_member(ds, "system"));
  if (stock.topology.empty()) {
    why = fmt::format("no stock topology for GPU '{}'", gpu);
    return "";
  }
  gpu_model = stock.gpu_model;
  return dir + "/" + stock.topology;
}

/// The algorithm the data set says NCCL ran (forced or logged), else NCCL's choice.
std::string algorithm_for(const json& ds) {
  const std::string recorded = string_member(ds, "algorithm");
  if (recorded.find("NVLS") != std::string::npos) return "nvls";
  if (recorded.find("Ring") != std::string::npos) return "ring";
  if (recorded.find("Tree") != std::string::npos) return "tree";  // NVLSTree was taken above
  return "auto";
}

/// The data set's nccl_version ("2.26.2", "2.29.2 (log header ...)"), where
/// fabsim has that release's tuner; `tuner` says which constants choose.
std::optional<traces::NcclVersion> nccl_version_for(const json& ds, std::string& tuner) {
  const std::string written = string_member(ds, "nccl_version");
  if (const auto version = traces::nccl_version_with_tuner(written)) {
    tuner = traces::nccl_tuner_description(version);
    return version;
  }
  tuner = traces::nccl_tuner_description(std::nullopt);
  if (traces::parse_nccl_version(written)) tuner += fmt::format("; the data set's {} predates the oldest tuner read", written);
  else if (!written.empty()) tuner += fmt::format("; the data set's version '{}' is not a release number", written);
  else tuner += "; the data set names no NCCL version";
  return std::nullopt;
}

/// A row's nccl_choice as "algorithm/protocol" in fabsim's spellings ("tree/LL128"), "" without one.
std::string recorded_choice(const json& ds, const json& row, const std::string& file, const std::string& at) {
  if (!row.contains("nccl_choice")) return "";
  const auto op = traces::parse_collective(string_member(ds, "collective"));
  const auto parsed = row["nccl_choice"].is_string() && op ? calibration::parse_recorded_choice(row["nccl_choice"].get<std::string>(), *op)
                                                           : std::nullopt;
  if (!parsed) throw core::ConfigError(file, at, fmt::format("{}, found {}", calibration::kRecordedChoiceExpected, row["nccl_choice"].dump()));
  return parsed->algorithm + "/" + parsed->protocol;
}

}  // namespace

std::string string_member(const json& object, const char* key) {
  const json& v = member(object, key);
  return v.is_string() ? v.get<std::string>() : "";
}

bool is_time_row(const json& row) {
  return row.is_object() && row.contains("bytes") && row["bytes"].is_number_unsigned() && row["bytes"].get<std::uint64_t>() > 0 &&
         row.contains("time_us") && row["time_us"].is_number();
}

std::vector<DatasetPlan> plan_datasets(const json& doc, const ValidateOptions& options, json& skipped) {
  if (!doc.contains("collective_datasets") || !doc["collective_datasets"].is_array())
    throw core::ConfigError(options.measurements, "/collective_datasets", "expected an array of data sets");
  std::vector<DatasetPlan> plans;
  const auto& sets = doc["collective_datasets"];
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json& ds = sets[i];
    if (!ds.is_object())
      throw core::ConfigError(options.measurements, fmt::format("/collective_datasets/{}", i), fmt::format("expected a data set object, found {}", ds.type_name()));
    const std::string at = fmt::format("/collective_datasets/{}", i);
    if (ds.contains("gpu") && !ds["gpu"].is_string())
      throw core::ConfigError(options.measurements, at + "/gpu", fmt::format("expected a string (the GPU model), found {}", ds["gpu"].type_name()));
    if (ds.contains("nodes") && !core::integer_in_range(ds["nodes"], 1, core::kMaxGpus))
      throw core::ConfigError(options.measurements, at + "/nodes", fmt::format("expected 1 to {} nodes, found {}", core::kMaxGpus, ds["nodes"].dump()));
    DatasetPlan plan;
    plan.index = i;
    plan.dataset = &ds;
    plan.id = member(ds, "id").is_string() ? ds["id"].get<std::string>() : fmt::format("collective_datasets/{}", i);
    if (member(ds, "rows").is_array())
      for (std::size_t j = 0; j < ds["rows"].size(); ++j) {
        const json& r = ds["rows"][j];
        if (!is_time_row(r)) continue;
        plan.rows.push_back(&r);
        plan.choices.push_back(recorded_choice(ds, r, options.measurements, fmt::format("{}/rows/{}/nccl_choice", at, j)));
      }
    std::string why;
    const bool busbw_rows = member(ds, "rows").is_array() &&
                            std::any_of(ds["rows"].begin(), ds["rows"].end(), [](const json& r) {
                              return r.is_object() && r.contains("bytes") && r["bytes"].is_number_unsigned() && r.contains("busbw_GBps") &&
                                     r["busbw_GBps"].is_number();
                            });
    if (plan.id.find("cudagraph") != std::string::npos) {
      why = "CUDA-graph timing has no launch gaps between iterations (not modelled)";
    } else if (plan.rows.empty() && busbw_rows) {
      why = "per-size rows give busbw only, no time (rounded to 0.01 GB/s, too coarse below 1 GB/s)";
    } else if (plan.rows.empty()) {
      why = "no per-size rows with a byte count and a time (a summary figure: its plateaus are under reported figures)";
    } else if (!member(ds, "gpus").is_number_integer() || !member(ds, "collective").is_string()) {
      why = "no GPU count or collective";
    } else if (!core::integer_in_range(ds["gpus"], 1, core::kMaxGpus)) {
      throw core::ConfigError(options.measurements, fmt::format("/collective_datasets/{}/gpus", i),
                              fmt::format("expected 1 to {} GPUs, found {}", core::kMaxGpus, ds["gpus"].dump()));
    } else {
      plan.topology = topology_for(ds, options.topology_dir, plan.gpu_model, why);
    }
    if (plan.topology.empty()) {
      skipped.push_back({{"id", plan.id}, {"reason", why}});
      continue;
    }
    plan.algorithm = algorithm_for(ds);
    plan.nccl_version = nccl_version_for(ds, plan.nccl_tuner);
    plan.gpus_per_process = gpus_per_process(ds, options.measurements, at);
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::map<std::uint64_t, json> predict_dataset(const DatasetPlan& plan, const ValidateOptions& options, const std::string& calibration) {
  std::uint64_t lo = ~0ull, hi = 0;
  for (const auto* r : plan.rows) {
    lo = std::min(lo, (*r)["bytes"].get<std::uint64_t>());
    hi = std::max(hi, (*r)["bytes"].get<std::uint64_t>());
  }
  const json& ds = *plan.dataset;
  std::vector<std::pair<std::uint64_t, std::string>> sizes;
  for (std::size_t i = 0; i < plan.rows.size(); ++i) sizes.emplace_back((*plan.rows[i])["bytes"].get<std::uint64_t>(), plan.choices[i]);
  std::map<std::uint64_t, json> by_bytes;
  // One child per recorded choice (a row's nccl_choice), the rest with the data set's algorithm.
  for (const auto& run : calibration::choice_runs(sizes)) {
    std::vector<std::string> args{"nccl-test", "--topology", plan.topology, "--op", ds["collective"].get<std::string>(), "-g",
                                  std::to_string(ds["gpus"].get<int>()), "-b", std::to_string(run.lo), "-e", std::to_string(run.hi), "-f", "2",
                                  "--format", "json"};
    if (options.extrapolate) args.insert(args.end(), {"--extrapolate-above", "auto"});
    const auto algo = calibration::choice_arguments(run, plan.algorithm);
    args.insert(args.end(), algo.begin(), algo.end());
    if (!calibration.empty()) args.insert(args.end(), {"--calibration", calibration});
    if (plan.nccl_version) args.insert(args.end(), {"--nccl-version", traces::nccl_version_name(*plan.nccl_version)});
    if (plan.gpus_per_process) args.insert(args.end(), {"--gpus-per-process", std::to_string(*plan.gpus_per_process)});
    const json predicted = run_json_child(options.self, args, {options.measurements, fmt::format("/collective_datasets/{}", plan.index)});
    for (const auto& row : predicted["rows"])
      if (calibration::run_covers(run, sizes, row["bytes"].get<std::uint64_t>())) {
        auto& kept = by_bytes[row["bytes"].get<std::uint64_t>()] = row;
        kept["model"] = predicted["meta"]["model"];  // which fidelity gave this figure
      }
  }
  return by_bytes;
}

}  // namespace fabsim::cli
