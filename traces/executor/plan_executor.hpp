#pragma once
/// Runs a CollectivePlan on a Transport: issues each transfer when its
/// dependencies are met, charges the protocol's per-step synchronisation
/// latency on receipt and the channel's injection limit on issue, and reports
/// when every rank has finished.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/transport.hpp"
#include "topologies/hardware_catalogue.hpp"
#include "sim/core/timer_queue.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

/// How the plan's ranks map onto the fabric and what each step costs.
struct ExecutionParams {
  std::vector<int> gpu_of_rank;          ///< global GPU index of each rank
  core::TimePs step_latency = 0;         ///< flag poll + fence before received data is usable
  std::optional<core::Bandwidth> channel_cap;  ///< one SM's throughput per channel, if limited
  /// The transport shares bandwidth as flows: the channel cap becomes each
  /// transfer's rate limit instead of spacing its issues.
  bool flow_level = false;
  /// Channel drift (topo::ChannelDrift): the plan ends this much after its
  /// last transfer, for every rank. Set by the planner for collectives.
  topo::ChannelDrift drift;
  /// A step between GPUs of different NVLink domains (through the NICs) is
  /// usable this much later than one inside a domain: the proxy's per-step
  /// cost and the network plugin's latency (GpuModel protocol net_step_latency,
  /// NicModel::net_latency). `domain_of_gpu` (global GPU index -> NVLink
  /// domain) must outlive the run; none: no step is a network step.
  core::TimePs net_step_latency = 0;
  /// A step into a network connection is posted once its SM has written the
  /// whole step where the proxy sends from; with LL that buffer is in host
  /// memory (NCCL src/transport/net.cc keeps LL send buffers there even with
  /// GPUDirect RDMA), written at this rate per channel (GpuModel protocol
  /// net_staging_rate). None: the write is part of the step latency.
  std::optional<core::Bandwidth> net_staging_rate = std::nullopt;
  const std::vector<int>* domain_of_gpu = nullptr;
};

/// Completion times of one collective, per rank, relative to its start.
struct ExecutionResult {
  std::vector<core::TimePs> rank_finish;  ///< when each rank's last step completed
  std::uint64_t transfers = 0;
};

/// The synchronisation a step from `source` to `destination` rank costs: the
/// protocol's step latency, plus between NVLink domains the network step's
/// extra and the staging of the step's `step_wire` bytes (one channel's).
core::TimePs step_sync(const ExecutionParams& params, int source, int destination, core::Bytes step_wire);

class PlanExecutor : public models::TransferCompletion {
 public:
  /// `transport` and `timers` are observers that must outlive the executor.
  /// It registers itself as the transport's completion observer unless
  /// `observe_transport` is false (then whoever observes must forward this
  /// plan's completions: see ConcurrentPlans).
  PlanExecutor(models::Transport& transport, core::TimerQueue& timers, bool observe_transport = true);

  /// Starts `plan` at absolute time `start`; `done` runs once every transfer
  /// has been received. One plan runs at a time per executor. Transfer ids
  /// are `id_base` + index when given, else follow the previous plan's.
  void start(CollectivePlan plan, ExecutionParams params, core::TimePs start,
             std::function<void(const ExecutionResult&)> done, std::optional<std::uint64_t> id_base = std::nullopt);

  /// Told, as it happens, when a rank's last transfer has been received
  /// (its finish in ExecutionResult); set before start, kept across plans.
  void on_rank_done(std::function<void(int rank, core::TimePs at)> callback) { rank_done_ = std::move(callback); }

  void on_transfer_complete(std::uint64_t id, core::TimePs at) override;

  /// Transfers of the running plan not yet received (0 when it finished).
  std::size_t outstanding() const { return outstanding_; }
  /// Why the running plan cannot go on: the first few transfers never
  /// issued, with what each still waits for. Empty when nothing is stuck.
  std::string describe_stuck(std::size_t limit = 5) const;

 private:
  struct State {
    std::uint32_t unmet = 0;   // dependencies not yet satisfied
    bool issued = false;
    bool received = false;
    bool completed = false;
    bool proxied = false;  // a network send: the SM moved on at issue
  };
  void satisfy(std::int32_t id);
  void issue(std::int32_t id);
  void on_received(std::int32_t id);
  void release(std::int32_t id);
  void rank_received(int rank, core::TimePs at);
  /// The ranks an in-switch transfer involves, in rank order: its switch group's, or all.
  const std::vector<int>& ranks_in(const PlannedTransfer& t) const;

  models::Transport& transport_;
  core::TimerQueue& timers_;
  std::vector<std::vector<int>> switch_group_gpus_;  // the plan's switch groups as GPU indices
  std::vector<std::vector<int>> group_ranks_;        // the plan's switch groups, sorted: the ranks each involves
  std::vector<int> all_ranks_;                       // 0..ranks-1: what a transfer without a group involves
  CollectivePlan plan_;
  ExecutionParams params_;
  core::TimePs start_ = 0;
  std::function<void(const ExecutionResult&)> done_;
  std::vector<State> state_;
  std::vector<std::vector<std::int32_t>> waits_on_received_, waits_on_released_, waits_on_sent_, waits_on_issued_, releases_;
  std::vector<core::TimePs> engine_free_;  // per (rank, channel)
  std::vector<std::uint32_t> chunk_fill_;  // flow level, Simple: store-and-forward hops on each transfer's pipeline path
  std::vector<core::TimePs> fill_latency_;  // flow level: how long the hops upstream take to pass the first piece on
  std::vector<core::TimePs> path_exposed_;  // flow level: network step costs on each transfer's pipeline path, its own included
  std::vector<double> cta_share_;           // flow level, capped pipelines: each transfer's share of its issuing SM's rate
  std::function<void(int, core::TimePs)> rank_done_;
  std::vector<std::uint32_t> rank_pending_;  // transfers each rank still takes part in (with rank_done_ only)
  core::TimePs drift_ = 0;                   // channel drift added to every rank's finish
  std::uint64_t id_base_ = 0;              // transfer ids are unique across plans
  std::size_t outstanding_ = 0;
  ExecutionResult result_;
};

}  // namespace fabsim::traces
