#include "sim/cli/check_command.hpp"

#include <fmt/format.h>

#include <sstream>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>

#include "sim/calibration/measurements.hpp"
#include "sim/cli/regress_command.hpp"
#include "sim/cli/simulation_request.hpp"
#include "sim/cli/sweep_command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/nccl_test_runner.hpp"
#include "traces/replay/trace_loader.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;

/// Checks one file; returns what it is ("a topology of 8 GPUs"), or throws ConfigError.
std::string check_file(const std::string& path) {
  const json doc = core::read_json_file(path);
  if (!doc.is_object()) throw core::ConfigError(path, "", "expected a JSON object (a fabsim input file)");
  const auto format_it = doc.find("format");
  const std::string format = format_it != doc.end() && format_it->is_string() ? format_it->get<std::string>() : "";
  if (format == "fabsim-topology/1") {
    const auto spec = topo::load_topology(path);
    topo::FabricGraph graph(spec);  // routes: every GPU reaches every other
    return fmt::format("a topology ({} GPUs, {} devices)", spec.gpus.size(), spec.devices.size());
  }
  if (format == "fabsim-scenario/1") {
    const SimulationRequest request = load_scenario(path);
    auto spec = topo::load_topology(request.topology_path, request.catalogue_path, request.topology_patch,
                                    calibration_patch(request.calibration_path));
    traces::validate_nccl_test(request.test, spec, request.origin);
    // Its faults name devices and links of the topology and leave the run's GPUs connected.
    const std::vector<int> ranks = request_ranks(request, spec);
    bool flow = true;
    std::ostringstream quiet;
    (void)prepare_faults(spec, request.faults, ranks, request.origin, false, "", flow, quiet);
    return request.faults.faults.empty() ? fmt::format("a scenario on {}", spec.name)
                                         : fmt::format("a scenario on {} with {} fault(s)", spec.name, request.faults.faults.size());
  }
  if (format == "fabsim-sweep/1") {
    const auto sweep = load_sweep(path, "");
    (void)load_scenario(sweep.base_file);
    return fmt::format("a sweep of {} axes over {}", sweep.axes.size(), sweep.base_file);
  }
  if (format == "fabsim-baseline/1") {
    const Baseline baseline = load_baseline(path);
    const json& scenarios = baseline.doc["scenarios"];
    for (std::size_t i = 0; i < scenarios.size(); ++i) {
      const std::string scenario = core::resolve_relative(path, scenarios[i]["scenario"].get<std::string>());
      if (const auto why = core::unreadable_reference(scenario, "the baseline"))
        throw core::ConfigError(path, fmt::format("/scenarios/{}/scenario", i), *why);
    }
    return fmt::format("a baseline of {} scenarios", baseline.tolerances.size());
  }
  if (format == "fabsim-hardware/1") {
    const auto catalogue = topo::load_hardware_catalogue(path);
    return fmt::format("a hardware catalogue ({} GPUs, {} switches, {} links, {} NICs)", catalogue.gpus.size(), catalogue.switches.size(),
                       catalogue.links.size(), catalogue.nics.size());
  }
  if (format == "fabsim-calibration/1") {
    (void)topo::load_hardware_catalogue(topo::default_catalogue_path(), calibration_patch(path));
    return "a calibration profile (its patch applies to the installed catalogue)";
  }
  if (format == "fabsim-trace") {
    const auto trace = traces::load_trace(path);
    return fmt::format("a trace of {} ranks", trace.world_size);
  }
  if (format == "fabsim-measurements/1" || (format.empty() && doc.contains("collective_datasets"))) {
    const auto m = calibration::parse_measurements_json(doc, path);
    return fmt::format("measurements ({} sweeps with per-size rows)", m.sweeps.size());
  }
  throw core::ConfigError(path, "/format",
                          format.empty() ? "no \"format\": not a fabsim input file (measurements have \"collective_datasets\")"
                                         : fmt::format("unknown format '{}' (fabsim reads fabsim-topology/1, fabsim-scenario/1, "
                                                       "fabsim-sweep/1, fabsim-baseline/1, fabsim-hardware/1, fabsim-calibration/1, "
                                                       "fabsim-trace and fabsim-measurements/1)",
                                                       format));
}

}  // namespace

void register_check(CLI::App& app, CommandSet& commands) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("check", "Check input files of any fabsim format with every check of their loaders, without simulating");
  cmd->add_option("file", *files, "Topology, scenario, sweep, baseline, catalogue, calibration profile, trace or measurements")->required();
  cmd->callback([files, &commands] {
    commands.action = [files] {
      std::vector<core::Diagnostic> problems;  // every file is checked, then all problems are reported
      for (const auto& f : *files) {
        try {
          fmt::print(std::cout, "{}: {}\n", f, check_file(f));
        } catch (const core::ConfigError& e) {
          problems.insert(problems.end(), e.items().begin(), e.items().end());
        }
      }
      if (!problems.empty()) throw core::ConfigError(std::move(problems));
      return 0;
    };
  });
}

}  // namespace fabsim::cli
