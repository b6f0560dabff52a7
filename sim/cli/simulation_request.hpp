#pragma once
/// What one `fabsim run` or `fabsim nccl-test` invocation asks for, however
/// it was written (scenario file or flags), and the code that carries it out.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/cli/fault_options.hpp"
#include "sim/core/progress.hpp"
#include "sim/report/nccl_report.hpp"
#include "traces/nccl_test_runner.hpp"

namespace fabsim::cli {

/// Why a segment size is refused at the flow level: it has no segments, so
/// the size would change nothing.
std::string segment_size_with_flow_model();

struct SimulationRequest {
  std::string origin;            ///< the scenario file, or "command line"
  std::string topology_path;
  std::string catalogue_path;    ///< empty = the topology's own or the default
  nlohmann::json topology_patch;  ///< merge patch applied to the topology file (null: none)
  std::string calibration_path;   ///< a calibration profile (fabsim-calibration/1); empty: none
  traces::NcclTestConfig test;
  core::Bytes segment_size = 512 * 1024;
  bool flow_level = false;  ///< flow-level fabric (max-min shared bandwidth) instead of segments
  bool model_auto = true;   ///< choose segment or flow level by the estimated work (--model auto, the default); execute then sets flow_level
  bool model_given = false; ///< --model or the scenario's "model" was written (a forced segment level refuses timed faults)
  bool extrapolate_auto = false;  ///< --extrapolate-above auto: execute chooses test.extrapolate_above (or the flow level)
  FaultRequest faults;      ///< --fault, --fault-detection, the scenario's "faults"
  report::OutputFormat format = report::OutputFormat::kTable;
  bool links = false;
  core::ProgressMode progress = core::ProgressMode::kAuto;  ///< --progress (the command line only)
  std::string command_line;  ///< for the output's provenance
};

/// Loads the topology, elaborates the fabric, runs the sweep and writes the
/// report to `out`; wall time goes to `err`. Throws core::ConfigError or
/// core::SimulationError.
void execute(const SimulationRequest& request, std::ostream& out, std::ostream& err);

/// The GPUs the request's ranks run on: the first `test.gpus`, or all of them (0).
std::vector<int> request_ranks(const SimulationRequest& request, const topo::TopologySpec& spec);

/// The catalogue patch of a calibration profile (null for an empty path);
/// throws core::ConfigError when the file is not a profile.
nlohmann::json calibration_patch(const std::string& profile_path);

/// Reads a scenario file (format fabsim-scenario/1) into a request.
SimulationRequest load_scenario(const std::string& path);

}  // namespace fabsim::cli
