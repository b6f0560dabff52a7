#pragma once
/// The faults of one run as the CLI asks for them (--fault, --fault-detection,
/// a scenario's "faults"), and their preparation against the loaded topology:
/// resolved, the ones from the start applied, reachability checked, and the
/// fidelity the timed ones need chosen.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "topologies/faults.hpp"

namespace CLI {
class App;
}
namespace fabsim::topo {
class FabricBackend;
}

namespace fabsim::cli {

struct FaultRequest {
  std::vector<topo::FaultSpec> faults;
  /// --fault-detection: the delay before traffic on a failed path is re-sent;
  /// none: one InfiniBand retransmit timeout on network links, and NCCL's
  /// abort (no figure) on NVLink and PCIe (see topo::FaultTiming).
  std::optional<core::TimePs> detection;
  std::string detection_where;  ///< where --fault-detection was written, for errors
};

/// Refuses a detection delay without a fault that strikes mid-run (@TIME):
/// it times the re-send after one, so it would change nothing. `origin` names
/// the scenario where the delay came from it. prepare_faults checks it.
void check_detection_has_timed_fault(const FaultRequest& request, const std::string& origin);

/// Adds --fault (repeatable) and --fault-detection to a command.
void add_fault_options(CLI::App& command, std::vector<std::string>& faults, std::string& detection);

/// Parses repeated --fault flags and an optional --fault-detection value
/// (empty: not given); throws core::ConfigError naming the flag.
FaultRequest parse_fault_flags(const std::vector<std::string>& faults, const std::string& detection);

/// Faults to apply for a run: `prepare` fills it.
struct PreparedFaults {
  std::vector<topo::ResolvedFault> timed;  ///< in strike order, for the flow-level fabric
};

/// Resolves `request` against `spec` (exit-2 errors name the fault), applies
/// the faults from the start to `spec`, and checks that the GPUs `ranks`
/// still reach each other with every fault in force. Timed faults need the
/// flow level: with `model` "segment" forced that is an error at
/// `model_where`; otherwise `flow_level` is set and the reason said on `err`.
PreparedFaults prepare_faults(topo::TopologySpec& spec, const FaultRequest& request, const std::vector<int>& ranks,
                              const std::string& origin, bool segment_forced, const std::string& model_where, bool& flow_level,
                              std::ostream& err);

/// Hands the timed faults to the backend (a flow-level fabric) before the run.
void schedule_faults(topo::FabricBackend& backend, const PreparedFaults& prepared, const FaultRequest& request);

}  // namespace fabsim::cli
