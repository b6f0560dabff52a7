#pragma once
/// Runs an nccl-tests style sweep (sizes from min to max by a factor) on an
/// elaborated fabric, one collective after another in one simulation, and
/// returns the rows nccl-tests would print.

#include <optional>
#include <string>
#include <vector>

#include "topologies/fabric_backend.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/nccl_version.hpp"

namespace fabsim::core {
class ProgressLine;
}

namespace fabsim::traces {

struct NcclTestConfig {
  CollectiveOp op = CollectiveOp::kAllReduce;
  core::Bytes min_bytes = 8;
  core::Bytes max_bytes = 8;
  double factor = 2.0;                     ///< -f: multiply the size by this each row
  int gpus = 0;                            ///< -g: first N GPUs of the topology; 0 = all
  int root = 0;                            ///< -r: root rank of broadcast, reduce, gather, scatter
  std::string algorithm = "auto";          ///< "ring", "nvls" or "auto" (NCCL's choice)
  std::optional<topo::Protocol> protocol;  ///< forced, else NCCL's choice
  std::optional<int> channels;             ///< forced channel count, else NCCL's
  core::Bytes element_size = 4;            ///< float, as nccl-tests' default -d float
  std::optional<NcclVersion> nccl_version; ///< whose tuner chooses (NCCL_ALGO/PROTO aside); else the newest fabsim has read
  /// nccl-tests' own -g: GPUs one process (one thread) drives. 1 takes the GPU
  /// model's launch_overhead_one_gpu_per_process where the catalogue has it;
  /// more, or none given, its launch_overhead (fitted on one thread driving 4 GPUs).
  std::optional<int> gpus_per_process;
  /// Rows above this size are not simulated: each is extrapolated along the
  /// line through runs at this size and its half with the row's algorithm,
  /// protocol and channels (a quarter checks the line). 0: every row simulated.
  core::Bytes extrapolate_above = 0;
};

struct NcclTestRow {
  core::Bytes bytes = 0;      ///< the size column
  std::uint64_t count = 0;    ///< elements
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  std::uint64_t transfers = 0;
  bool extrapolated = false;  ///< from the probes of NcclTestConfig::extrapolate_above, not simulated
};

struct NcclTestResult {
  std::vector<NcclTestRow> rows;
  core::TimePs simulated = 0;      ///< total simulated time of the sweep
  std::uint64_t segments = 0;      ///< segments (or flows, at flow level) injected into the fabric
  std::uint64_t timer_events = 0;  ///< executor wake-ups
  std::uint64_t probes = 0;        ///< collectives simulated only to extrapolate from (not rows of the sweep)
  /// Extrapolations to doubt: where the probes' time per byte differs by more
  /// than kExtrapolationTolerance between the lower and the upper pair.
  std::vector<std::string> warnings;
};

/// How far the time per byte of the lower probe pair (a quarter to a half of
/// NcclTestConfig::extrapolate_above) may stray from the upper pair's before
/// an extrapolation is reported as doubtful.
inline constexpr double kExtrapolationTolerance = 0.05;

/// The sizes nccl-tests would run for -b/-e/-f.
std::vector<core::Bytes> nccl_test_sizes(const NcclTestConfig& config);

/// Checks the config against the topology; throws core::ConfigError naming
/// `origin` (a file or "command line") for anything impossible.
void validate_nccl_test(const NcclTestConfig& config, const topo::TopologySpec& spec, const std::string& origin);

/// How `config` launches its calls on `gpu`, and the catalogue parameter that
/// prices each call's launch: "one process per GPU (--gpus-per-process 1):
/// gpus/h100-sxm/launch_overhead_one_gpu_per_process", and so on. `setting`
/// names where the GPUs per process were (or would be) given: the flag, or a
/// scenario's JSON path ("/workload/gpus_per_process").
std::string launch_description(const NcclTestConfig& config, const topo::GpuModel& gpu,
                               const std::string& setting = "--gpus-per-process");

/// Runs the sweep; the fabric must be freshly elaborated (sc_start not yet called).
/// `progress`, where given, is redrawn as the sweep goes (sizes done of total).
NcclTestResult run_nccl_test(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress = nullptr);

}  // namespace fabsim::traces
