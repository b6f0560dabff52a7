#include "sim/calibration/measurements.hpp"

#include "sim/core/limits.hpp"
#include "sim/core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
#include "traces/collectives/tuner.hpp"

namespace fabsim::calibration {

using nlohmann::json;

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<double> number(const std::string& text) { return core::parse_finite(text); }

/// "Ring", "NVLS", "Tree" as a data set records them (forced or logged), else NCCL's choice.
std::string algorithm_from(const std::string& recorded) {
  if (recorded.find("NVLS") != std::string::npos) return "nvls";
  if (recorded.find("Ring") != std::string::npos) return "ring";
  if (recorded.find("Tree") != std::string::npos) return "tree";
  return "";
}

}  // namespace

std::string disagreeing_timings(double out_of_place_us, std::optional<double> in_place_us) {
  if (!in_place_us || !(out_of_place_us > 0) || !(*in_place_us > 0)) return "";
  const double apart = std::max(out_of_place_us, *in_place_us) / std::min(out_of_place_us, *in_place_us) - 1;
  if (apart <= kTimingDisagreementLimit) return "";
  return fmt::format("out of place {:.2f} us, in place {:.2f} us: {:.0f}% apart", out_of_place_us, *in_place_us, 100 * apart);
}

std::string disagreeing_timings(const json& row) {
  if (!row.contains("time_us") || !row["time_us"].is_number()) return "";
  const auto in_place = row.contains("inplace_time_us") && row["inplace_time_us"].is_number()
                            ? std::optional<double>(row["inplace_time_us"].get<double>())
                            : std::nullopt;
  return disagreeing_timings(row["time_us"].get<double>(), in_place);
}

std::optional<RecordedChoice> parse_recorded_choice(const std::string& text, traces::CollectiveOp op) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const auto algorithm = traces::parse_algorithm(text.substr(0, slash));
  const auto protocol = traces::parse_protocol(text.substr(slash + 1));
  if (!algorithm || !protocol || !traces::algorithm_runs(*algorithm, op)) return std::nullopt;
  if (traces::runs_simple_only(*algorithm) && *protocol != topo::Protocol::kSimple) return std::nullopt;
  return RecordedChoice{core::lower_case(traces::algorithm_name(*algorithm)), topo::protocol_name(*protocol)};
}

std::vector<ChoiceRun> choice_runs(const std::vector<std::pair<std::uint64_t, std::string>>& rows) {
  std::vector<ChoiceRun> runs;
  for (const auto& row : rows) {
    // A plain loop variable, not a structured binding: clang before 16 cannot capture bindings in a lambda.
    const std::uint64_t bytes = row.first;
    const std::string& choice = row.second;
    auto it = std::find_if(runs.begin(), runs.end(), [&](const ChoiceRun& r) { return r.choice == choice; });
    if (it == runs.end()) runs.push_back({choice, bytes, bytes});
    else it->lo = std::min(it->lo, bytes), it->hi = std::max(it->hi, bytes);
  }
  return runs;
}

std::vector<std::string> choice_arguments(const ChoiceRun& run, const std::string& fallback) {
  if (run.choice.empty()) return {"--algo", fallback};
  const auto slash = run.choice.find('/');
  return {"--algo", run.choice.substr(0, slash), "--proto", run.choice.substr(slash + 1)};
}

bool run_covers(const ChoiceRun& run, const std::vector<std::pair<std::uint64_t, std::string>>& rows, std::uint64_t bytes) {
  return std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == bytes && r.second == run.choice; });
}

std::optional<int> read_gpus_per_process(const nlohmann::json& dataset, std::int64_t gpus, std::string& why) {
  const auto it = dataset.find("gpus_per_process");
  if (it == dataset.end() || it->is_null()) return std::nullopt;
  const auto n = core::integer_in_range(*it, 1, std::max<std::int64_t>(1, gpus));
  if (!n) {
    why = fmt::format("expected the GPUs one process drives (nccl-tests -g), an integer from 1 to the data set's {} GPUs, or null; found {}",
                      gpus, it->dump());
    return std::nullopt;
  }
  return static_cast<int>(*n);
}

Measurements parse_nccl_tests_text(const std::string& text, const std::string& file) {
  Measurements m;
  m.file = file;
  core::Diagnostics diag(file);
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  MeasuredSweep* current = nullptr;
  std::set<std::string> hosts;
  int n_gpus_line = 0, rank_lines = 0;
  auto finish = [&] {
    if (current == nullptr) return;
    if (current->gpus == 0) current->gpus = rank_lines > 0 ? rank_lines : n_gpus_line;
    if (n_gpus_line > 0) current->gpus_per_process = n_gpus_line;
    current->nodes = std::max<int>(1, static_cast<int>(hosts.size()));
    if (current->rows.empty()) diag.error(fmt::format("line {}", line_number), fmt::format("{} has no result rows", current->id));
  };
  while (std::getline(in, line)) {
    ++line_number;
    const auto words = split_words(line);
    if (words.empty()) continue;
    if (words[0] == "#") {
      // "# Collective test starting: all_reduce_perf"
      if (const auto at = line.find("Collective test starting:"); at != std::string::npos) {
        finish();
        const auto named = split_words(line.substr(at + 25));
        if (named.empty()) {
          diag.error(fmt::format("line {}", line_number), "'Collective test starting:' names no test (expected e.g. all_reduce_perf)");
          current = nullptr;
          continue;
        }
        std::string test = named.front();
        if (test.size() > 5 && test.substr(test.size() - 5) == "_perf") test.resize(test.size() - 5);
        const auto op = traces::parse_collective(test == "hypercube" ? "all_gather" : test);
        if (!op) {
          diag.error(fmt::format("line {}", line_number), fmt::format("unknown nccl-tests test '{}' (expected e.g. all_reduce_perf)", test));
          current = nullptr;
          continue;
        }
        m.sweeps.push_back({});
        current = &m.sweeps.back();
        current->op = *op;
        current->id = fmt::format("{}:{}", file, test);
        hosts.clear();
        rank_lines = 0;
        n_gpus_line = 0;
        continue;
      }
      for (std::size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i] == "nGpus") n_gpus_line = core::parse_integer<int>(words[i + 1]).value_or(0);
      // "#  Rank  0 Group  0 Pid  30001 on     node01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3"
      if (words.size() > 2 && words[1] == "Rank") {
        ++rank_lines;
        for (std::size_t i = 0; i + 1 < words.size(); ++i)
          if (words[i] == "on") hosts.insert(words[i + 1]);
        if (const auto bracket = line.find(']'); bracket != std::string::npos && current != nullptr && current->gpu.empty()) {
          current->gpu = line.substr(bracket + 1);
          current->gpu.erase(0, current->gpu.find_first_not_of(' '));
          current->system = current->gpu;
        }
      }
      continue;
    }
    // A result row: size count type redop root time algbw busbw #wrong, then the in-place four.
    if (current == nullptr) {
      diag.error(fmt::format("line {}", line_number), "a result row before any '# Collective test starting:' line");
      continue;
    }
    const auto size = words.size() >= 8 ? core::parse_integer<std::int64_t>(words[0]) : std::nullopt;
    const auto time = words.size() >= 8 ? number(words[5]) : std::nullopt;
    const auto busbw = words.size() >= 8 ? number(words[7]) : std::nullopt;
    if (!size || !time || !busbw || *size < 0 || *size > core::kMaxBytes) {
      diag.error(fmt::format("line {}", line_number),
                 fmt::format("expected a result row 'size count type redop root time algbw busbw ...', found '{}'", line));
      continue;
    }
    const auto in_place = words.size() >= 10 ? number(words[9]) : std::nullopt;
    if (const auto apart = disagreeing_timings(*time, in_place); !apart.empty()) {
      m.skipped.push_back(fmt::format("line {}, {} B: {} (not fitted on)", line_number, *size, apart));
      continue;
    }
    current->rows.push_back({static_cast<std::uint64_t>(*size), *time, *busbw, ""});
  }
  finish();
  if (m.sweeps.empty() && diag.empty()) diag.error("line 1", "no '# Collective test starting:' line: not nccl-tests output");
  diag.throw_if_any();
  return m;
}

Measurements parse_measurements_json(const json& doc, const std::string& file) {
  Measurements m;
  m.file = file;
  core::Diagnostics diag(file);
  core::JsonObject root(doc, "", diag);
  const bool harness = doc.contains("format");
  if (harness) root.expect_format("fabsim-measurements/1");
  const json* sets = root.child(harness ? "nccl" : "collective_datasets", json::value_t::array, !harness);
  for (std::size_t i = 0; sets != nullptr && i < sets->size(); ++i) {
    const json& ds = (*sets)[i];
    const std::string path = fmt::format("/{}/{}", harness ? "nccl" : "collective_datasets", i);
    if (!ds.is_object()) {
      diag.error(path, "expected an object");
      continue;
    }
    // The record's free-form fields, typed: one of another type is the file's error, not a crash.
    bool typed = true;
    for (const auto& [key, type] : {std::pair{"id", json::value_t::string}, std::pair{"system", json::value_t::string},
                                    std::pair{"gpu", json::value_t::string}, std::pair{"collective", json::value_t::string},
                                    std::pair{"cuda_graph", json::value_t::boolean}})
      if (const auto it = ds.find(key); it != ds.end() && it->type() != type) {
        diag.error(path + "/" + key, fmt::format("expected a {}, found {}", type == json::value_t::string ? "string" : "boolean", it->type_name()));
        typed = false;
      }
    if (!typed) continue;
    MeasuredSweep s;
    s.id = ds.value("id", fmt::format("{}{}", file, path));
    s.system = ds.value("system", "");
    s.gpu = ds.value("gpu", "");
    s.cuda_graph = s.id.find("cudagraph") != std::string::npos || ds.value("cuda_graph", false);
    const std::string collective = ds.value("collective", "");
    const auto op = traces::parse_collective(collective);
    if (!op) {
      diag.error(path + "/collective", fmt::format("unknown collective '{}'", collective));
      continue;
    }
    s.op = *op;
    if (!ds.contains("gpus") || !ds["gpus"].is_number_integer()) {
      m.skipped.push_back(fmt::format("{}: no single GPU count", s.id));
      continue;
    }
    const auto gpus = core::integer_in_range(ds["gpus"], 1, core::kMaxGpus);
    const auto nodes = ds.contains("nodes") ? core::integer_in_range(ds["nodes"], 1, core::kMaxGpus) : std::optional<std::int64_t>(1);
    if (!gpus || !nodes) {
      diag.error(path + (gpus ? "/nodes" : "/gpus"), fmt::format("expected 1 to {}", core::kMaxGpus));
      continue;
    }
    s.gpus = static_cast<int>(*gpus);
    s.nodes = static_cast<int>(*nodes);
    s.algorithm = ds.contains("algorithm") && ds["algorithm"].is_string() ? algorithm_from(ds["algorithm"].get<std::string>()) : "";
    if (ds.contains("nccl_version") && ds["nccl_version"].is_string())
      if (const auto version = traces::nccl_version_with_tuner(ds["nccl_version"].get<std::string>()))
        s.nccl_version = traces::nccl_version_name(*version);
    std::string launch_problem;
    s.gpus_per_process = read_gpus_per_process(ds, s.gpus, launch_problem);
    if (!launch_problem.empty()) diag.error(path + "/gpus_per_process", launch_problem);
    if (ds.contains("rows") && ds["rows"].is_array())
      for (std::size_t j = 0; j < ds["rows"].size(); ++j) {
        const json& r = ds["rows"][j];
        if (!(r.is_object() && r.contains("bytes") && core::integer_in_range(r["bytes"], 1, core::kMaxBytes) && r.contains("time_us") &&
              r["time_us"].is_number()))
          continue;
        std::string choice;
        if (r.contains("nccl_choice")) {
          const auto parsed = r["nccl_choice"].is_string() ? parse_recorded_choice(r["nccl_choice"].get<std::string>(), s.op) : std::nullopt;
          if (!parsed) {
            diag.error(fmt::format("{}/rows/{}/nccl_choice", path, j), kRecordedChoiceExpected);
            continue;
          }
          choice = parsed->algorithm + "/" + parsed->protocol;
        }
        if (const auto apart = disagreeing_timings(r); !apart.empty()) {
          m.skipped.push_back(fmt::format("{} at {} B: {} (not fitted on)", s.id, r["bytes"].get<std::uint64_t>(), apart));
          continue;
        }
        s.rows.push_back({r["bytes"].get<std::uint64_t>(), r["time_us"].get<double>(),
                          r.contains("busbw_GBps") && r["busbw_GBps"].is_number() ? r["busbw_GBps"].get<double>() : 0.0, choice});
      }
    if (s.rows.empty()) {
      m.skipped.push_back(fmt::format("{}: no per-size rows", s.id));
      continue;
    }
    m.sweeps.push_back(std::move(s));
  }
  if (harness) {
    if (const json* peers = root.child("peers", json::value_t::array, false))
      for (std::size_t i = 0; i < peers->size(); ++i) {
        core::JsonObject p((*peers)[i], fmt::format("/peers/{}", i), diag);
        MeasuredPeer peer;
        peer.source = static_cast<int>(p.integer("source").value_or(0));
        peer.destination = static_cast<int>(p.integer("destination").value_or(0));
        peer.engine = p.string("engine").value_or("");
        peer.unidirectional_gbps = p.number("unidirectional_GBps").value_or(0);
        peer.bidirectional_gbps = p.number("bidirectional_GBps", false);
        peer.latency_us = p.number("latency_us", false);
        p.reject_unknown_keys();
        m.peers.push_back(peer);
      }
    if (const json* host = root.child("host", json::value_t::object, false)) {
      core::JsonObject h(*host, "/host", diag);
      m.host_to_device_gbps = h.number("host_to_device_GBps", false);
      m.device_to_host_gbps = h.number("device_to_host_GBps", false);
      m.device_copy_gbps = h.number("device_copy_GBps", false);
      m.launch_latency_us = h.number("kernel_launch_us", false);
      m.launch_round_trip_us = h.number("launch_round_trip_us", false);
      m.host_read_round_trip_us = h.number("host_read_round_trip_us", false);
      h.reject_unknown_keys();
    }
    if (const json* skipped = root.child("skipped", json::value_t::array, false))
      for (const auto& s : *skipped)
        if (s.is_string()) m.skipped.push_back(s.get<std::string>());
    if (const json* machine = root.child("machine", json::value_t::object, false))
      if (machine->contains("gpus") && (*machine)["gpus"].is_array() && !(*machine)["gpus"].empty() && (*machine)["gpus"][0].is_object() &&
          (*machine)["gpus"][0].contains("name") && (*machine)["gpus"][0]["name"].is_string())
        m.gpu = (*machine)["gpus"][0]["name"].get<std::string>();
    root.reject_unknown_keys();
  } else if (doc.contains("point_to_point_datasets") && doc["point_to_point_datasets"].is_array()) {
    // p2pBandwidthLatencyTest: the unidirectional P2P-enabled rows (copy engine).
    for (const auto& ds : doc["point_to_point_datasets"]) {
      if (!ds.contains("matrices") || !ds["matrices"].is_object()) continue;
      for (const auto& [name, matrix] : ds["matrices"].items()) {
        if (name.rfind("unidirectional_p2p_enabled", 0) != 0 || !matrix.is_array()) continue;
        // A single row (GPU 0 to each) or a whole matrix.
        const bool single = !matrix.empty() && matrix[0].is_number();
        for (std::size_t r = 0; r < (single ? 1 : matrix.size()); ++r) {
          const json& row = single ? matrix : matrix[r];
          for (std::size_t c = 0; c < row.size(); ++c)
            if (c != r && row[c].is_number())
              m.peers.push_back({static_cast<int>(r), static_cast<int>(c), row[c].get<double>(), std::nullopt, std::nullopt, "copy-engine"});
        }
      }
    }
  }
  diag.throw_if_any();
  return m;
}

Measurements load_measurements(const std::string& path) {
  const std::string text = core::read_text_file(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return parse_nccl_tests_text(text, path);
  try {
    return parse_measurements_json(core::parse_json_text(text, path), path);
  } catch (const nlohmann::json::exception& e) {
    // A field of another JSON type than the format has somewhere in the file.
    throw core::ConfigError(path, "", fmt::format("a field has an unexpected JSON type ({})", e.what()));
  }
}

}  // namespace fabsim::calibration
