#pragma once
/// NCCL's point-to-point schedule (enqueue.cc): send/recv pairs, all-to-all,
/// gather and scatter become flows between rank pairs, each cut into P2P
/// chunks spread over the channels NCCL gives that peer.

#include <vector>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

/// Bytes one rank sends another.
struct P2PFlow {
  int source = 0;
  int destination = 0;
  core::Bytes bytes = 0;
};

struct P2PRequest {
  CollectiveOp op = CollectiveOp::kSendRecv;  ///< kSendRecv, kAllToAll, kGather or kScatter
  int ranks = 2;
  int root = 0;
  core::Bytes bytes = 0;  ///< nccl-tests size: the buffer (sendrecv) or the total (the others)
};

/// The flows of a point-to-point operation (sendrecv is nccl-tests' ring shift:
/// rank r sends to r+1). A rank's part for itself is a local copy, not a flow.
std::vector<P2PFlow> p2p_flows(const P2PRequest& request);

/// NCCL's protocol for p2p: LL when a peer's bytes fit nChannels x the LL threshold.
topo::Protocol p2p_protocol(const topo::GpuModel& gpu, core::Bytes peer_bytes, int channels_per_peer);

/// Channels NCCL gives each peer: the p2p channels shared by the peers a rank
/// talks to (a power of two), at least 32 KiB of traffic each.
int p2p_channels_per_peer(const topo::GpuModel& gpu, int peers, core::Bytes peer_bytes);

/// With `flow_level`, the plan is aggregated as the flow level runs it: one
/// transfer per pair and channel standing for that channel's chunks (what
/// coalescing the chunk plan gives, without building it), grouped by destination.
CollectivePlan plan_p2p(const P2PRequest& request, const topo::GpuModel& gpu, bool flow_level = false);

/// The same schedule for flows given one by one (ranks index a communicator of `ranks`).
CollectivePlan plan_p2p_flows(const std::vector<P2PFlow>& flows, int ranks, const topo::GpuModel& gpu, bool flow_level = false);

}  // namespace fabsim::traces
