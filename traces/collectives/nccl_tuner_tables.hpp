#pragma once
/// NCCL's own tuner constants (src/graph/tuning.cc, v2.30.7:
/// per-architecture bandwidth caps,
/// base and per-hop latencies, and the Tree correction factors. They are
/// NCCL's code, not hardware figures: fabsim uses them only to choose an
/// algorithm and protocol the way NCCL would, never as a result.

#include <string>

#include "topologies/hardware_catalogue.hpp"

namespace fabsim::traces {

/// Bandwidth caps in GB/s, by node-count index (1 node, 2 nodes, 3 or more).
struct NcclBandwidthCaps {
  double ll_max[3];                 ///< llMaxBws: the architecture's on 1 node, Intel-CPU figures beyond
  double ring_ll128_per_channel[3]; ///< perChMaxRingLL128Bw
  double tree_ll128_per_channel[3]; ///< perChMaxTreeLL128Bw
  double tree_per_channel[3];       ///< perChMaxTreeBw
  double nvls_tree_per_channel[3];  ///< perChMaxNVLSTreeBw (0 where NVLSTree does not run)
};

/// The caps of an architecture ("volta", "ampere", "hopper", "blackwell").
const NcclBandwidthCaps& nccl_bandwidth_caps(const std::string& architecture);

/// tuning.cc's node-count index: 0 for one node, 1 for two, 2 for more.
int nccl_node_index(int nodes);

enum class NcclLinkClass { kNvlink, kNet };

/// Base latency (µs) of Ring or Tree for a protocol.
double nccl_base_latency_us(bool tree, topo::Protocol protocol);
/// Hardware latency per hop (µs) of Ring or Tree over NVLink or the network.
double nccl_hop_latency_us(bool tree, NcclLinkClass link, topo::Protocol protocol);
/// NVLSTree's per-hop latency (µs, Simple only): inside the node (NVLS) or across it (NET).
double nccl_nvls_tree_hop_latency_us(NcclLinkClass link);
/// PAT's base latency and per-hop latency (µs, Simple only).
double nccl_pat_base_latency_us();
double nccl_pat_hop_latency_us(NcclLinkClass link);
/// Tree all-reduce bandwidth correction for a size (treeCorrectionFactor, indexed by log2(bytes / 64)).
double nccl_tree_correction(topo::Protocol protocol, core::Bytes bytes);

}  // namespace fabsim::traces
