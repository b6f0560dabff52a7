#pragma once
/// The narrow interface between the collective layer and the fabric:
/// send(transfer) now, be told when it has been delivered. A segment-level
/// fabric implements it; a flow-level or analytical backend could too.

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::models {

/// What a transfer does: move bytes from one GPU to another, reduce the same
/// bytes of every group member into one GPU inside the switch (NVLink SHARP
/// multimem.ld_reduce), copy one GPU's bytes to every group member through
/// the switch (multimem.st), or reduce every member's bytes in the switch
/// and return the sum to every member (SHARP all-reduce in the network).
enum class TransferKind { kPointToPoint, kReduceInSwitch, kMulticastInSwitch, kAllReduceInSwitch };

/// One transfer (global GPU indexes).
struct TransferRequest {
  std::uint64_t id = 0;
  int source = 0;       ///< unused for kReduceInSwitch and kAllReduceInSwitch (every group member sends)
  int destination = 0;  ///< unused for kMulticastInSwitch (every group member receives)
  core::Bytes payload_bytes = 0;
  core::Bytes wire_bytes = 0;  ///< payload plus protocol overhead (LL flags, LL128 flag words)
  TransferKind kind = TransferKind::kPointToPoint;
  std::uint32_t flow = 0;  ///< the connection it belongs to (NCCL channel): network ECMP hashes per flow
  const std::vector<int>* group = nullptr;  ///< GPUs of the communicator, for in-switch kinds; must outlive the transfer
  /// Flow level only: the pipelined steps this aggregated transfer stands
  /// for, and the synchronisation each step costs (the protocol's flag latency).
  /// Step k takes max(its latency, its share of the data time); see FlowFabric.
  std::uint32_t pipeline_steps = 1;
  std::uint32_t fill_steps = 0;  ///< further steps of pipeline fill that move none of its data
  /// Of the fill steps, those that last a whole data step: with NCCL's
  /// Simple protocol an in-switch stage (multimem load-reduce or store, by an
  /// SM) handles a whole chunk before it posts it on, so each such stage
  /// upstream delays the first chunk by a chunk time. The rest (LL and LL128
  /// forward line by line; network sends are the proxy's DMA) cost latency.
  std::uint32_t chunk_fill_steps = 0;
  core::TimePs step_sync = 0;
  /// Flow level only: latency paid once, not per step: the network step of a
  /// transfer whose chunks the proxy pipelines (a tree's, a chain's, a pair's),
  /// which NCCL's model charges per hop of the algorithm, not per chunk.
  core::TimePs exposed_latency = 0;
  /// Flow level only: how long the pipeline's hops upstream of this one take
  /// to pass its first piece on (each its step latency and its path's head
  /// latency; Transport::head_latency). 0: unknown, and each fill step costs
  /// this transfer's own step.
  core::TimePs fill_latency = 0;
  /// Flow level only: a payload rate limit in bytes per second (one SM per channel; 0: none).
  double rate_cap = 0;
  /// Flow level only: the NCCL channels this transfer stands for, which
  /// share links with other traffic as that many flows would.
  double weight = 1;
  /// Flow level only: transfers of one lockstep group (nonzero id) complete
  /// together when the last of its `lockstep_size` members does.
  std::uint64_t lockstep_group = 0;
  int lockstep_size = 0;
};

class TransferCompletion {
 public:
  virtual ~TransferCompletion() = default;
  virtual void on_transfer_complete(std::uint64_t id, core::TimePs at) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts `request` at the current simulated time.
  virtual void send(const TransferRequest& request) = 0;
  /// The observer told of completions; must outlive the transport's use.
  virtual void set_completion(TransferCompletion* completion) = 0;
  /// True when traffic from one GPU to another goes through a NIC: the
  /// sender's SM then only writes a local staging buffer and a proxy thread
  /// drives the network, so the SM moves on before the data lands.
  virtual bool proxied(int /*source*/, int /*destination*/) { return false; }
  /// The time a transfer's first byte takes from one GPU to another over the
  /// path `flow` takes (link latencies and forwarding), where a backend knows it
  /// without moving data; 0 where it does not.
  virtual core::TimePs head_latency(int /*source*/, int /*destination*/, std::uint32_t /*flow*/) { return 0; }
};

}  // namespace fabsim::models
