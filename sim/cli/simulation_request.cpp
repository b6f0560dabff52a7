#include "sim/cli/simulation_request.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <ostream>

#include "sim/calibration/known_gaps.hpp"
#include "sim/cli/work_estimate.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/kernel.hpp"
#include "sim/core/limits.hpp"
#include "topologies/flow_fabric.hpp"
#include "traces/collectives/tuner.hpp"

namespace fabsim::cli {

std::string segment_size_with_flow_model() {
  return "a segment-level setting, and the flow model moves no segments: it would change nothing (leave it out, or use "
         "the segment or auto model)";
}

void execute(const SimulationRequest& asked, std::ostream& out, std::ostream& err) {
  const auto wall_start = std::chrono::steady_clock::now();
  core::configure_kernel();
  topo::TopologySpec spec = topo::load_topology(asked.topology_path, asked.catalogue_path, asked.topology_patch,
                                                calibration_patch(asked.calibration_path));
  traces::validate_nccl_test(asked.test, spec, asked.origin);
  SimulationRequest request = asked;
  const std::vector<int> ranks = request_ranks(request, spec);
  const bool flags = request.origin == "command line";
  const PreparedFaults faults = prepare_faults(spec, request.faults, ranks, request.origin,
                                               request.model_given && !request.flow_level && !request.model_auto,
                                               flags ? "--model" : "/parameters/model", request.flow_level, err);
  if (request.extrapolate_auto) choose_extrapolation(request, spec, err);
  if (request.model_auto && !request.flow_level) request.flow_level = auto_chooses_flow(estimate_run_events(request, spec), err);
  check_run_work(request, spec);
  std::unique_ptr<topo::FabricBackend> backend;
  if (request.flow_level) {
    backend = std::make_unique<topo::FlowFabric>(spec);
  } else {
    backend = std::make_unique<topo::Fabric>(spec, topo::FabricOptions{request.segment_size});
  }
  auto& fabric = *backend;
  schedule_faults(fabric, faults, request.faults);
  core::ProgressLine progress(err, core::progress_wanted(request.progress), "sizes");
  traces::NcclTestResult result = traces::run_nccl_test(fabric, request.test, &progress);
  for (auto& warning : calibration::known_gap_warnings(spec, ranks, request.test)) result.warnings.push_back(std::move(warning));
  if (auto warning = traces::nccl_version_warning(request.test.nccl_version)) result.warnings.push_back(std::move(*warning));
  const auto links = fabric.link_usage(result.simulated);

  report::RunDescription run;
  run.topology_file = request.topology_path;
  run.topology_name = spec.name;
  run.op = traces::collective_name(request.test.op);
  run.gpus = request.test.gpus == 0 ? fabric.gpu_count() : request.test.gpus;
  run.root = traces::is_rooted(request.test.op) ? request.test.root : -1;
  const auto op = request.test.op;
  run.reduces = op == traces::CollectiveOp::kAllReduce || op == traces::CollectiveOp::kReduceScatter ||
                op == traces::CollectiveOp::kReduce;
  run.segment_size = request.flow_level ? 0 : request.segment_size;
  run.model = request.flow_level ? "flow" : "segment";
  run.extrapolate_above = request.flow_level ? 0 : request.test.extrapolate_above;
  run.nccl_tuner = traces::nccl_tuner_description(request.test.nccl_version);
  run.launch = traces::launch_description(request.test, spec.gpu_model(ranks.front()),
                                          flags ? "--gpus-per-process" : "/workload/gpus_per_process");
  run.kernel_events = result.timer_events + fabric.backend_events();
  run.provenance = {request.command_line, spec.catalogue.file, request.calibration_path};
  run.faults = request.faults.faults;
  run.fault_events = fabric.fault_events();
  const auto* link_report = request.links ? &links : nullptr;

  switch (request.format) {
    case report::OutputFormat::kTable: report::write_table(out, run, result, link_report); break;
    case report::OutputFormat::kCsv: report::write_csv(out, run, result); break;
    case report::OutputFormat::kJson: out << report::to_json(run, result, link_report).dump(1) << '\n'; break;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  fmt::print(err, "fabsim: {} rows, {} simulated, {} kernel events, {:.3f} s wall, {:.2f} M events/s\n",
             result.rows.size(), core::format_time(result.simulated), run.kernel_events, wall,
             wall > 0 ? static_cast<double>(run.kernel_events) / wall / 1e6 : 0.0);
}

std::vector<int> request_ranks(const SimulationRequest& request, const topo::TopologySpec& spec) {
  std::vector<int> ranks(request.test.gpus == 0 ? spec.gpus.size() : static_cast<std::size_t>(request.test.gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

nlohmann::json calibration_patch(const std::string& profile_path) {
  if (profile_path.empty()) return nullptr;
  const nlohmann::json doc = core::read_json_file(profile_path);
  core::Diagnostics diag(profile_path);
  core::JsonObject root(doc, "", diag);
  root.expect_format("fabsim-calibration/1");
  const nlohmann::json* patch = root.child("catalogue_patch", nlohmann::json::value_t::object);
  diag.throw_if_any();
  return *patch;
}

SimulationRequest load_scenario(const std::string& path) {
  using core::JsonObject;
  using core::QuantityKind;
  using nlohmann::json;
  const json doc = core::read_json_file(path);
  core::Diagnostics diag(path);
  JsonObject root(doc, "", diag);
  SimulationRequest request;
  request.origin = path;
  root.expect_format("fabsim-scenario/1");
  root.string("name", false);
  root.string("description", false);
  // A referenced file that is missing is this file's error, at its key.
  auto referenced = [&](const char* key, bool required) -> std::string {
    const auto name = root.string(key, required);
    if (!name) return "";
    const std::string resolved = core::resolve_relative(path, *name);
    if (const auto why = core::unreadable_reference(resolved, "this file")) diag.error(root.path_of(key), *why);
    return resolved;
  };
  request.topology_path = referenced("topology", true);
  request.catalogue_path = referenced("hardware", false);
  if (const json* patch = root.child("topology_patch", json::value_t::object, false)) request.topology_patch = *patch;
  request.calibration_path = referenced("calibration", false);

  if (const json* w = root.child("workload", json::value_t::object)) {
    JsonObject o(*w, "/workload", diag);
    if (const auto kind = o.string("kind"); kind && *kind != "nccl-test")
      diag.error("/workload/kind", fmt::format("unknown workload kind '{}' (expected \"nccl-test\")", *kind));
    if (const auto op = o.string("op")) {
      if (auto parsed = traces::parse_collective(*op)) {
        request.test.op = *parsed;
      } else {
        diag.error("/workload/op", fmt::format("unknown collective '{}' (expected one of: {})", *op, traces::collective_names()));
      }
    }
    if (const auto b = o.quantity("min_bytes", QuantityKind::kBytes)) request.test.min_bytes = static_cast<core::Bytes>(*b);
    if (const auto e = o.quantity("max_bytes", QuantityKind::kBytes)) request.test.max_bytes = static_cast<core::Bytes>(*e);
    request.test.factor = o.number("factor", false).value_or(2.0);
    request.test.gpus = static_cast<int>(o.integer("gpus", false, 1, core::kMaxGpus).value_or(0));
    request.test.root = static_cast<int>(o.integer("root", false, 0, core::kMaxGpus).value_or(0));
    if (const auto g = o.integer("gpus_per_process", false, 1, core::kMaxGpus)) request.test.gpus_per_process = static_cast<int>(*g);
    if (const auto algo = o.string("algo", false)) request.test.algorithm = *algo;
    if (const auto proto = o.string("proto", false); proto && *proto != "auto") {
      if (auto p = traces::parse_protocol(*proto)) {
        request.test.protocol = p;
      } else {
        diag.error("/workload/proto", fmt::format("unknown protocol '{}' (expected LL, LL128, Simple or auto)", *proto));
      }
    }
    if (const auto version = o.string("nccl_version", false)) {
      if (const auto problem = traces::nccl_version_problem(*version)) diag.error("/workload/nccl_version", *problem);
      else request.test.nccl_version = traces::parse_nccl_version(*version);
    }
    const json* channels = o.has("channels") ? &(*w)["channels"] : nullptr;
    if (channels != nullptr && channels->is_string()) {
      if (o.string("channels") != "auto") diag.error("/workload/channels", "expected an integer or \"auto\"");
    } else if (channels != nullptr) {
      request.test.channels = static_cast<int>(o.integer("channels", true, 1, core::kMaxChannels).value_or(1));
    }
    o.reject_unknown_keys();
  }
  if (const json* p = root.child("parameters", json::value_t::object, false)) {
    JsonObject o(*p, "/parameters", diag);
    if (const auto s = o.quantity("segment_size", QuantityKind::kBytes, false)) {
      request.segment_size = static_cast<core::Bytes>(*s);
      if (request.segment_size == 0) diag.error("/parameters/segment_size", "expected a segment size > 0");
    }
    if (const auto m = o.string("model", false)) {
      request.model_given = true;
      request.model_auto = *m == "auto";
      request.flow_level = *m == "flow";
      if (*m != "segment" && *m != "flow" && *m != "auto")
        diag.error("/parameters/model", fmt::format("unknown model '{}' (expected \"auto\", \"segment\" or \"flow\")", *m));
      if (*m == "flow" && o.has("segment_size")) diag.error("/parameters/segment_size", segment_size_with_flow_model());
    }
    o.reject_unknown_keys();
  }
  if (const json* list = root.child("faults", json::value_t::array, false)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string where = fmt::format("/faults/{}", i);
      if (!(*list)[i].is_string()) {
        diag.error(where, "expected a fault as a string, e.g. \"gpu0~nvswitch0=down\" or \"leaf3=down@1ms\"");
        continue;
      }
      try {
        request.faults.faults.push_back(topo::parse_fault((*list)[i].get<std::string>(), path, where));
      } catch (const core::ConfigError& e) {
        for (const auto& item : e.items()) diag.error(item.json_path, item.message);
      }
    }
  }
  if (const auto d = root.quantity("fault_detection", QuantityKind::kTime, false)) {
    request.faults.detection = static_cast<core::TimePs>(*d);
    request.faults.detection_where = "/fault_detection";
  }
  if (const json* p = root.child("output", json::value_t::object, false)) {
    JsonObject o(*p, "/output", diag);
    if (const auto f = o.string("format", false)) {
      if (auto parsed = report::parse_output_format(*f)) {
        request.format = *parsed;
      } else {
        diag.error("/output/format", fmt::format("unknown format '{}' (expected table, json or csv)", *f));
      }
    }
    request.links = o.boolean("links", false).value_or(false);
    o.reject_unknown_keys();
  }
  root.reject_unknown_keys();
  diag.throw_if_any();
  return request;
}

}  // namespace fabsim::cli
