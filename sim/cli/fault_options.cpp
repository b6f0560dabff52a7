#include "sim/cli/fault_options.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ostream>

#include "sim/core/error.hpp"
#include "topologies/flow_fabric.hpp"

namespace fabsim::cli {

void add_fault_options(CLI::App& command, std::vector<std::string>& faults, std::string& detection) {
  command.add_option("--fault", faults,
                     "A fault, repeatable: A~B=down (the link bundle between devices A and B fails), A~B=F (it keeps the fraction F "
                     "of its bandwidth), A=down (a NIC or switch fails); @TIME after any strikes it mid-run (e.g. @20ms)");
  command.add_option("--fault-detection", detection,
                     "Delay before traffic on a link that failed mid-run is re-sent (default: one InfiniBand retransmit timeout, "
                     "4.295 s, on network links; NVLink and PCIe: none, NCCL aborts)");
}

namespace {

std::string detection_without_timed_fault() {
  return "sets how long a fault that strikes during the run (A~B=down@TIME) goes unnoticed, and no fault given strikes during "
         "the run: it would change nothing (add @TIME to a fault, or leave it out)";
}

}  // namespace

FaultRequest parse_fault_flags(const std::vector<std::string>& faults, const std::string& detection) {
  FaultRequest request;
  for (const auto& text : faults) request.faults.push_back(topo::parse_fault(text, "command line", "--fault"));
  if (!detection.empty()) {
    std::string why;
    const auto t = core::parse_quantity(detection, core::QuantityKind::kTime, why);
    if (!t) throw core::ConfigError("command line", "--fault-detection", fmt::format("'{}' is not a time ({})", detection, why));
    request.detection = static_cast<core::TimePs>(*t);
    request.detection_where = "--fault-detection";
  }
  return request;
}

void check_detection_has_timed_fault(const FaultRequest& request, const std::string& origin) {
  if (!request.detection) return;
  if (std::any_of(request.faults.begin(), request.faults.end(), [](const topo::FaultSpec& s) { return s.at.has_value(); })) return;
  const bool flag = request.detection_where.starts_with("--");
  throw core::ConfigError(flag ? "command line" : origin, request.detection_where, detection_without_timed_fault());
}

PreparedFaults prepare_faults(topo::TopologySpec& spec, const FaultRequest& request, const std::vector<int>& ranks,
                              const std::string& origin, bool segment_forced, const std::string& model_where, bool& flow_level,
                              std::ostream& err) {
  PreparedFaults prepared;
  check_detection_has_timed_fault(request, origin);
  if (request.faults.empty()) return prepared;
  const auto resolved = topo::resolve_faults(spec, request.faults, origin);
  prepared.timed = topo::apply_faults_from_start(spec, resolved);
  topo::check_reachable_under_faults(spec, resolved, ranks, origin);
  if (!prepared.timed.empty() && !flow_level) {
    if (segment_forced)
      throw core::ConfigError(origin, model_where,
                              fmt::format("fault '{}' strikes during the run (@): faults striking mid-run are modelled at the flow "
                                          "level only; use the flow or auto model", prepared.timed.front().spec.text));
    flow_level = true;
    fmt::print(err, "fabsim: model flow: fault '{}' strikes during the run, which the flow level models\n", prepared.timed.front().spec.text);
  }
  return prepared;
}

void schedule_faults(topo::FabricBackend& backend, const PreparedFaults& prepared, const FaultRequest& request) {
  if (prepared.timed.empty()) return;
  auto* flow = dynamic_cast<topo::FlowFabric*>(&backend);
  if (flow == nullptr) throw core::SimulationError("timed faults need the flow-level fabric");
  topo::FaultTiming timing;
  if (request.detection) timing = {*request.detection, *request.detection};
  flow->schedule_faults(prepared.timed, timing);
}

}  // namespace fabsim::cli
