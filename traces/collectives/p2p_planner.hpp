#pragma once
/// NCCL's point-to-point schedule (enqueue.cc): send/recv pairs, all-to-all,
/// gather and scatter become flows between rank pairs, each cut into P2P
/// chunks spread over the channels NCCL gives that peer.

#include <optional>
#include <vector>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
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

/// What sets a communicator's p2p channels besides the sizes (nccl
/// src/graph/paths.cc ncclTopoComputeP2pChannels): p2pnChannels, the next
/// power of two of its channel count (the GPU's, or one forced as with
/// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS); p2pnChannelsPerPeer, the most
/// one NVLink peer takes (2 per NVLink, a power of two, at most
/// p2pnChannels: on every modelled GPU its p2p channel count); and the
/// release's split rule.
struct P2PChannelSetup {
  int p2p_channels = 32;  ///< p2pnChannels
  int per_peer = 32;      ///< p2pnChannelsPerPeer for peers in the same NVLink domain
  NcclP2pSplit split = NcclP2pSplit::kAllChannels;
};
/// The setup of a GPU model's communicator; `forced_channels` as --channels gives
/// it, `release` null for the newest.
P2PChannelSetup p2p_channel_setup(const topo::GpuModel& gpu, std::optional<int> forced_channels, const NcclTunerRelease* release);

/// Channels NCCL gives one peer within an NVLink domain, for a communicator
/// of `ranks` ranks and a peer moving `peer_bytes` (enqueue.cc
/// scheduleP2pTasksToPlan, addP2pToPlan): from the fewest that let every
/// rank have its own (nChannelsMin), doubled while a channel's part exceeds
/// 32 P2P chunks, up to p2pnChannelsPerPeer (2.13-2.19: at most
/// 4 x p2pnChannels / ranks); no more than parts of an eighth of a chunk fill.
int p2p_single_node_channels(const topo::GpuModel& gpu, const P2PChannelSetup& setup, int ranks, core::Bytes peer_bytes);

/// How NCCL runs point-to-point in a communicator that spans nodes (nccl
/// src/init.cc computeBuffSizes, src/graph/paths.cc ncclTopoGetNchannels and
/// ncclTopoComputeP2pChannels, src/enqueue.cc addP2pToPlan; nccl-model.md
/// section 2.6): every pair moves P2P_NET_CHUNKSIZE chunks, NVLink pairs too;
/// a pair gets at most the channels a network peer gets; pairs through the
/// network shrink their chunk for small messages and never use LL (NCCL
/// allocates no LL buffers for network P2P unless told to).
struct P2PNetwork {
  std::vector<int> domain_of_rank;  ///< NVLink domain of each rank: pairs in different ones cross the network
  int channels_per_net_peer = 1;    ///< max(the GPU's NICs, ceil(their bandwidth / 14 GB/s)): p2p_net_peer_channels

  /// Whether the pair's ranks sit in different NVLink domains.
  bool crosses(const P2PFlow& f) const {
    return domain_of_rank.at(static_cast<std::size_t>(f.source)) != domain_of_rank.at(static_cast<std::size_t>(f.destination));
  }
};

/// NCCL's channels for a network peer: at least one per local NIC, and one
/// per 14 GB/s of NIC bandwidth (NCCL_P2P_PER_CHANNEL_NET_BW).
int p2p_net_peer_channels(int nics_per_gpu, double nic_gbytes_per_second_per_gpu);

/// Channels each pair of a multi-node call of `ranks` ranks gets when the
/// largest pair moves `peer_bytes` (NCCL: p2pnChannelsPerPeer, then the
/// per-operation split of addP2pToPlan with parts between half a chunk and one).
/// `setup` null: the GPU's own (p2p_channel_setup without a forced count, the newest release).
int p2p_multi_node_channels(const topo::GpuModel& gpu, const P2PNetwork& network, int ranks, core::Bytes peer_bytes,
                            const P2PChannelSetup* setup = nullptr);

/// With `flow_level`, the plan is aggregated as the flow level runs it: one
/// transfer per pair and channel standing for that channel's chunks (what
/// coalescing the chunk plan gives, without building it), grouped by destination.
/// `network`, when not null, is the communicator's spread over nodes (see P2PNetwork);
/// `setup`, when not null, its channel setup (else the GPU's own, newest release).
CollectivePlan plan_p2p(const P2PRequest& request, const topo::GpuModel& gpu, bool flow_level = false, const P2PNetwork* network = nullptr,
                        const P2PChannelSetup* setup = nullptr);

/// The same schedule for flows given one by one (ranks index a communicator of `ranks`).
CollectivePlan plan_p2p_flows(const std::vector<P2PFlow>& flows, int ranks, const topo::GpuModel& gpu, bool flow_level = false,
                              const P2PNetwork* network = nullptr, const P2PChannelSetup* setup = nullptr);

}  // namespace fabsim::traces
