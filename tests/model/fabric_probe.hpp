#pragma once
// Drives a Fabric directly with raw transfers and records when each completes.

#include <map>
#include <memory>

#include "models/transport.hpp"
#include "sim/core/kernel.hpp"
#include "sim/core/timer_queue.hpp"
#include "topologies/fabric.hpp"
#include "topologies/flow_fabric.hpp"

namespace fabsim::testing {

/// The figures of ideal_catalogue() (test_support.hpp): 100 GB/s links of
/// efficiency 1 and 100 ns latency, switches of 50 ns traversal.
inline constexpr double kIdealBandwidth = 100e9;
inline constexpr core::TimePs kIdealLinkLatency = 100'000;
inline constexpr core::TimePs kIdealTraversal = 50'000;
/// Serialisation time of `bytes` on an ideal link, in picoseconds.
inline double ideal_serialise_ps(core::Bytes bytes) { return static_cast<double>(bytes) / kIdealBandwidth * 1e12; }

/// Drives the segment-level Fabric, or (with segment_size 0) the FlowFabric.
class FabricProbe : public models::TransferCompletion {
 public:
  /// `name` tells two probes in one simulation apart (module names must differ).
  /// `completion_window` and `flow_timers` reach the FlowFabric (two in one simulation need two names).
  FabricProbe(const topo::TopologySpec& spec, core::Bytes segment_size, const char* name = "probe_timers",
              double completion_window = topo::FlowFabric::kCompletionWindow, const char* flow_timers = "flow_fabric_timers")
      : backend_(segment_size == 0
                     ? std::unique_ptr<topo::FabricBackend>(std::make_unique<topo::FlowFabric>(spec, completion_window, flow_timers))
                     : std::make_unique<topo::Fabric>(spec, topo::FabricOptions{segment_size})),
        fabric_(*backend_),
        timers_(name) {
    fabric_.set_completion(this);
  }
  /// Sends `bytes` from GPU `src` to GPU `dst` at absolute time `at`.
  void send_at(core::TimePs at, std::uint64_t id, int src, int dst, core::Bytes bytes) {
    timers_.schedule(at, [this, id, src, dst, bytes] { fabric_.send({id, src, dst, bytes, bytes}); });
  }
  /// Sends `request` (its id, GPUs and pipeline fields as given) at absolute time `at`.
  void send_request_at(core::TimePs at, const models::TransferRequest& request) {
    timers_.schedule(at, [this, request] { fabric_.send(request); });
  }
  void run() { core::run_to_completion(); }
  core::TimePs done(std::uint64_t id) const { return completed_.at(id); }
  topo::FabricBackend& fabric() { return fabric_; }

  void on_transfer_complete(std::uint64_t id, core::TimePs at) override { completed_[id] = at; }

 private:
  std::unique_ptr<topo::FabricBackend> backend_;
  topo::FabricBackend& fabric_;
  core::TimerQueue timers_;
  std::map<std::uint64_t, core::TimePs> completed_;
};

}  // namespace fabsim::testing
