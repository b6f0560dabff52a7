#pragma once
/// The flow-level fabric: a transfer is one flow per path it is striped
/// over; the flows share every link direction max-min fairly (progressive
/// filling), recomputed whenever a flow starts or ends. A flow finishes when
/// its bytes are through, plus the latency of its path. No SystemC module per
/// device or link: fabrics too large for segments (16k GPUs) run in seconds.
/// It trades the segment model's pipelining, buffering and arbitration
/// details for speed; tests hold the two within 5% on the stock scenarios.

#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/core/timer_queue.hpp"
#include "topologies/fabric_backend.hpp"
#include "topologies/faults.hpp"
#include "topologies/max_min_filling.hpp"

namespace fabsim::topo {

class FlowFabric : public FabricBackend {
 public:
  /// A flow whose end is nearer than this share of its age finishes at the
  /// update before it, at its own projected end: flows of an all-to-all that
  /// end within 0.1% of each other take one re-solve, not one each (the
  /// bandwidth they free is offered to the others that much early).
  static constexpr double kCompletionWindow = 1e-3;

  /// The spec must outlive the fabric. Creates one timer module, `timer_name`
  /// (two fabrics in one simulation need two names): call before sc_start.
  /// `completion_window`: kCompletionWindow, or 0 for every end its own update.
  explicit FlowFabric(const TopologySpec& spec, double completion_window = kCompletionWindow,
                      const char* timer_name = "flow_fabric_timers");

  void send(const models::TransferRequest& request) override;
  void set_completion(models::TransferCompletion* completion) override { completion_ = completion; }

  const TopologySpec& spec() const override { return spec_; }
  FabricGraph& graph() override { return graph_; }
  std::uint64_t units_injected() const override { return flows_started_; }
  std::uint64_t backend_events() const override { return rate_updates_; }
  std::vector<LinkUsage> link_usage(TimePs elapsed) const override;
  std::vector<double> link_bytes() const override;
  bool flow_level() const override { return true; }
  TimePs head_latency(int source, int destination, std::uint32_t flow) override;

  /// Faults striking during the run (FaultSpec::at set): at its time a fault
  /// changes its links' capacity; a failed one also takes the flows on it off
  /// the fabric and, `detection` later, re-sends what they had left over the
  /// routes that remain (FaultTiming). An in-switch (NVLS, SHARP) flow on a failed link,
  /// or a failed NIC with traffic through it, ends the run with a
  /// core::SimulationError saying NCCL aborts there. Call before sc_start.
  void schedule_faults(const std::vector<ResolvedFault>& timed, FaultTiming timing);
  std::vector<FaultEvent> fault_events() const override { return fault_events_; }
  void rethrow_failure() const override { timers_.rethrow_failure(); }

 private:
  /// A flow: its share of the fabric (links, weight, cap, rate) and its progress.
  struct Flow : FilledFlow {
    std::uint64_t transfer = 0;
    int source = -1, destination = -1;  ///< GPU ranks of a point-to-point flow (-1: part of an in-switch transfer)
    std::uint32_t channel = 0;          ///< its ECMP flow id
    double total = 0;        ///< wire bytes it set out with
    double remaining = 0;    ///< wire bytes still to move
    TimePs latency = 0;      ///< head latency of its path
    TimePs start = 0;        ///< when it joined the fabric
  };
  struct Pending {
    int flows = 0;          ///< flows still moving
    TimePs start = 0;
    TimePs data_end = 0;     ///< when its last byte was through
    TimePs path_latency = 0; ///< largest head latency of its flows
    std::uint32_t steps = 1, fill_steps = 0;
    std::uint32_t chunk_fill_steps = 0;  ///< TransferRequest::chunk_fill_steps
    TimePs step_sync = 0;
    TimePs exposed = 0;  ///< paid once (TransferRequest::exposed_latency)
    TimePs fill_latency = 0;  ///< TransferRequest::fill_latency
    std::uint64_t lockstep_group = 0;
    int lockstep_size = 0;
  };
  struct Lockstep {
    std::vector<std::uint64_t> members;  ///< transfers done, waiting for the rest
    Pending paced;                       ///< the group as one transfer: latest data end, mean path latency
    double path_latency_sum = 0;
    double step_sync_sum = 0;  ///< a ring crossing nodes has network steps among its NVLink ones
  };
  /// When a transfer is done: each pipelined step takes the longer of its
  /// latency and its share of the data time, and the last step's shorter part
  /// is exposed too (one step: latency plus data).
  static TimePs completion_time(const Pending& p);

  void add_flow(std::uint64_t transfer, const std::vector<LinkDirectionRef>& hops, int first_device, double bytes, double cap,
                TimePs extra_latency, double weight = 1);
  /// Link latencies along `hops` from `first_device`, with the forwarding of the devices between.
  TimePs path_latency(const std::vector<LinkDirectionRef>& hops, int first_device) const;
  void request_update();
  /// Takes what a flow moved in `seconds` at its rate off its remaining bytes.
  static void advance(Flow& f, double seconds);
  /// Takes what every flow moved since the last update off its remaining bytes.
  void book_progress(core::TimePs now);
  /// Adds what a flow leaving the fabric moved to its links' bytes.
  void book_moved(const Flow& f);
  void update();
  void strike(const ResolvedFault& fault, FaultTiming timing);
  void resend(std::vector<Flow> flows);
  /// The NICs a flow's links pass, in order.
  std::vector<int> nics_on(const std::vector<int>& link_ids, int first_device) const;
  /// The NICs the flow used that its routes from now on do not (a lost RDMA connection).
  std::vector<int> lost_nics(const Flow& f);
  void finish_transfer(std::uint64_t transfer);

  const TopologySpec& spec_;
  FabricGraph graph_;
  core::TimerQueue timers_;
  models::TransferCompletion* completion_ = nullptr;
  std::vector<double> capacity_;  // by link direction id: effective bytes per second
  std::vector<TimePs> forwarding_;  // by device: forwarding_latency (a catalogue lookup by name, once)
  std::vector<Flow> flows_;       // active flows, in start order
  std::vector<double> bytes_;     // by link direction id: bytes the flows that left moved over it
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::unordered_map<std::uint64_t, Lockstep> lockstep_;
  double completion_window_;
  TimePs last_update_ = 0;
  bool update_requested_ = false;
  std::uint64_t wake_generation_ = 0;
  std::uint64_t flows_started_ = 0;
  std::uint64_t rate_updates_ = 0;
  std::vector<FaultEvent> fault_events_;
  std::vector<std::string> timed_fault_;  // by link: the timed faults that struck it, as written
  MaxMinFilling filling_;
  std::vector<std::uint64_t> flowless_;  // transfers sent with no flow: they complete at the next update
};

}  // namespace fabsim::topo
