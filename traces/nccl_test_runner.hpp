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
};

struct NcclTestResult {
  std::vector<NcclTestRow> rows;
  core::TimePs simulated = 0;      ///< total simulated time of the sweep
  std::uint64_t segments = 0;      ///< segments (or flows, at flow level) injected into the fabric
  std::uint64_t timer_events = 0;  ///< executor wake-ups
};

/// The sizes nccl-tests would run for -b/-e/-f.
std::vector<core::Bytes> nccl_test_sizes(const NcclTestConfig& config);

/// Checks the config against the topology; throws core::ConfigError naming
/// `origin` (a file or "command line") for anything impossible.
void validate_nccl_test(const NcclTestConfig& config, const topo::TopologySpec& spec, const std::string& origin);

/// Runs the sweep; the fabric must be freshly elaborated (sc_start not yet called).
/// `progress`, where given, is redrawn as the sweep goes (sizes done of total).
NcclTestResult run_nccl_test(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress = nullptr);

}  // namespace fabsim::traces
