#pragma once
/// How many channels NCCL runs for rings and trees when a communicator spans
/// nodes. NCCL searches a ring graph through each node (GPU -> NVLink -> GPU
/// ... -> NIC) at the fastest speed its NICs and NVLinks allow, then runs two
/// CTAs (runtime channels) per graph channel. Its tuner prices protocols per
/// graph channel; the kernels run per runtime channel.

#include <string>

namespace fabsim::traces {

struct NcclNetRingGraph {
  int graph_channels = 0;       ///< ringGraph->nChannels after ncclTopoDupChannels (what tuning.cc multiplies)
  double speed_gbps = 0;        ///< ringGraph->bwInter: each graph channel's bandwidth
  int runtime_channels = 0;     ///< comm->nChannels after ncclTopoPostset
};

/// NCCL's per-link NVLink bandwidth for an architecture (src/graph/topo.h:
/// SM80 20, SM90 20.6, SM100 40.1 GB/s); 0 for an unknown one.
double nccl_nvlink_link_gbps(const std::string& architecture);

/// The ring graph NCCL builds across nodes of `gpus_per_node` GPUs (at least
/// two), each GPU with `nvlink_gbps` of NVLink (NCCL's totalBw) and the node
/// with `nics_per_node` NICs of `nic_gbps` line rate each (its maxBw):
/// - search.cc ncclTopoCompute: from the architecture's inter-node speed list,
///   the first speed that the NICs (one ring per NIC at that speed, several
///   rings per NIC where it fits them) and the NVLinks (every ring enters and
///   leaves each GPU once) give the most channels x speed, the search going on
///   down the list while the next speed is over 0.49 of the best so far;
/// - ncclTopoDupChannels: doubled (speed halved) from 25 GB/s, except on
///   Hopper and later below 50 GB/s with more than 4 channels;
/// - connect.cc ncclTopoPostset: runtime channels = 2 x graph channels, and
///   on Hopper and later doubled again below 16 when the graph's speed is over 45 GB/s.
/// Graph channels are capped at 32 (MAXCHANNELS / 2), runtime at 64.
NcclNetRingGraph nccl_net_ring_graph(const std::string& architecture, int nics_per_node, double nic_gbps, double nvlink_gbps);

}  // namespace fabsim::traces
