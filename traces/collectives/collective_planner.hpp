#pragma once
/// Turns one collective call on a set of GPUs into the plan and execution
/// parameters the executor runs: NCCL's choice of algorithm, protocol and
/// channels (or the forced ones), the planner for that choice, rings laid out
/// on the rails, flow-level aggregation when the fabric shares bandwidth as
/// flows. nccl-test sweeps and trace replay both call it.

#include <map>
#include <optional>
#include <vector>

#include "topologies/fabric_backend.hpp"
#include "traces/collectives/p2p_planner.hpp"
#include "traces/collectives/tuner.hpp"
#include "traces/executor/plan_executor.hpp"

namespace fabsim::traces {

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  core::Bytes bytes = 0;  ///< nccl-tests' size column: the buffer, or the total for gather-type and all-to-all ops
  int root = 0;
  std::vector<int> gpus;  ///< global GPU index of each communicator rank
  std::optional<Algorithm> algorithm;
  std::optional<topo::Protocol> protocol;
  std::optional<int> channels;
  core::Bytes element_size = 4;
  /// Point-to-point traffic given pair by pair (send/recv, uneven all-to-all);
  /// replaces the flows `op` implies. Ranks index `gpus`.
  std::optional<std::vector<P2PFlow>> flows;
  /// The NCCL release whose tuner chooses; null: the newest (nccl_tuner_tables.hpp).
  const NcclTunerRelease* nccl = nullptr;
};

struct PlannedCall {
  CollectivePlan plan;
  ExecutionParams params;
  /// Host enqueue and kernel launch before the first transfer, and the
  /// reduction's base latency when the plan's GPUs reduce.
  core::TimePs launch_overhead = 0;
};

class CollectivePlanner {
 public:
  /// `fabric` must outlive the planner.
  explicit CollectivePlanner(topo::FabricBackend& fabric);

  /// Throws core::ConfigError when the fabric cannot run the call (NVLS without a SHARP switch).
  PlannedCall plan(const CollectiveCall& call);
  /// Each process drives one GPU (nccl-tests -g 1, torchrun and MPI jobs): calls
  /// take the GPU model's launch_overhead_one_gpu_per_process where it has one.
  /// Off (the default): its launch_overhead, fitted on one thread driving 4 GPUs.
  void set_one_gpu_per_process(bool on) { one_gpu_per_process_ = on; }
  /// The algorithm, protocol and channels `plan` would run `call` with (NCCL's
  /// choice or the forced ones), without building the plan; none for the
  /// calls NCCL runs point to point (send/recv, all-to-all, gather, scatter).
  std::optional<TunerChoice> tuner_choice(const CollectiveCall& call);

 private:
  bool nvls_available(const std::vector<int>& gpus);
  /// What NCCL's tuner knows of `call`: sizes, nodes, the network graph's channels.
  TunerRequest tuner_request(const CollectiveCall& call);
  /// CollNet's heads (the h-th GPU of every node, by `domains` and `rails`) each reach a SHARP tree.
  bool sharp_available(const std::vector<int>& gpus, const std::vector<int>& domains, const std::vector<int>& rails);

  topo::FabricBackend& fabric_;
  std::vector<int> domain_of_gpu_, rail_of_gpu_;
  std::map<std::vector<int>, bool> nvls_cache_;
  double network_per_gpu_gbps_ = 0;  // NIC line rate per GPU
  int nics_per_gpu_ = 0;             // NICs over GPUs, at least one where there are NICs
  bool nic_under_gpu_pcie_switch_ = true;  // every GPU shares a PCIe switch with a NIC (NCCL: path <= PXB)
  core::TimePs plugin_latency_ = 0;  // NicModel::net_latency of the fabric's NICs
  core::TimePs call_latency_ = 0;    // NicModel::net_call_latency of the fabric's NICs
  bool one_gpu_per_process_ = false;
};

}  // namespace fabsim::traces
