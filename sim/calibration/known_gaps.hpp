#pragma once
/// Runs in a regime where `fabsim validate` finds fabsim far from the only
/// measurements there, and no model change has yet explained why, or where
/// fabsim knowingly departs from how NCCL runs and nothing checks the cost:
/// such a run prints its figures with a warning that says so, since a wrong
/// figure that looks right is the worst outcome (README, Accuracy, Known gaps).

#include <string>
#include <vector>

#include "topologies/nvlink_domains.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/nccl_test_runner.hpp"
#include "traces/replay/replay_engine.hpp"

namespace fabsim::calibration {

class KnownGaps {
 public:
  /// Reads what the gaps depend on from `spec` (its NVLink domains, its NICs); `spec` must outlive this.
  explicit KnownGaps(const topo::TopologySpec& spec);

  /// The warnings for a collective `op` of `min_bytes` to `max_bytes` on the GPUs `gpus` (empty where no gap applies).
  std::vector<std::string> warnings(traces::CollectiveOp op, core::Bytes min_bytes, core::Bytes max_bytes,
                                    const std::vector<int>& gpus) const;

 private:
  topo::NvlinkDomains domains_;
  std::vector<int> pcie_tree_of_gpu_;  ///< by GPU: the PCIe tree (host) it hangs from
  bool tcpxo_ = false;
};

/// The warnings for an nccl-test sweep `test` on the GPUs `ranks` of `spec`.
std::vector<std::string> known_gap_warnings(const topo::TopologySpec& spec, const std::vector<int>& ranks,
                                            const traces::NcclTestConfig& test);

/// The warnings for replaying `jobs` on `spec`: each collective and point-to-point op on the GPUs of its
/// communicator's groups (or its pair), once per warning.
std::vector<std::string> known_gap_warnings(const topo::TopologySpec& spec, const std::vector<traces::ReplayJob>& jobs);

}  // namespace fabsim::calibration
