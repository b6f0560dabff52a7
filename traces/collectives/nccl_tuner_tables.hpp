#pragma once
/// NCCL's own tuner constants (src/graph/tuning.cc), release by release:
/// per-architecture bandwidth caps, base and per-hop latencies, the Tree
/// correction factors and how NVLS and NVLSTree bandwidth is priced. They are
/// NCCL's code, not hardware figures: fabsim uses them only to choose an
/// algorithm and protocol the way that NCCL release would, never as a result.
///
/// The releases were read from NCCL's git tags v2.19.1-1 ... v2.30.7-1
/// (github.com/NVIDIA/nccl); each table holds from its first release to the
/// next table's. What changed, and where fabsim's choice depends on it:
/// - 2.21.5: hwLat NVLink NVLS/NVLSTree 23 -> 25 us; Hopper's one-node LL cap 87.7 -> 141 GB/s.
/// - 2.23.4: Tree Simple base latency 0 -> 8.4 us, per hop 28 -> 4.0 (NVLink) and 14 (network) us.
/// - 2.25.1: Blackwell rows.
/// - 2.28.3: NVLS and NVLSTree priced per head with nvlsEfficiency and
///   perChMaxNVLSTreeBws (before: channels x the graph search's speed, halved
///   beyond two nodes for NVLSTree, x 5/6); Blackwell's Tree rows cut.
/// - 2.28.7, 2.29.2, 2.29.7: Blackwell's Ring LL128 per-channel cap.
/// - 2.28.9: hwLat NET NVLSTree 14 -> 20.9 us; Blackwell NVLSTree cap beyond 2 nodes 43.1 -> 43.8.
/// - 2.30.3: Blackwell NVLSTree cap beyond 2 nodes 43.8 -> 80.
/// Besides the tuner, the NVLS channel count NCCL gives Blackwell (src/transport/nvls.cc):
/// - up to 2.26: NVLS_NCHANNELS_SM100 = 32 everywhere;
/// - 2.27.3: 24 (NVLS_NCHANNELS_SM100_NVL) in one NVLink domain, 32 across nodes;
/// - 2.30.3: across nodes ncclNvlsTreeSm100Tuning sets channels and chunks (nvls_setup.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/nccl_version.hpp"

namespace fabsim::traces {

/// Bandwidth caps in GB/s, by node-count index (1 node, 2 nodes, 3 or more).
struct NcclBandwidthCaps {
  double ll_max[3];                 ///< llMaxBws: the architecture's on 1 node, Intel-CPU figures beyond
  double ring_ll128_per_channel[3]; ///< perChMaxRingLL128Bw
  double tree_ll128_per_channel[3]; ///< perChMaxTreeLL128Bw
  double tree_per_channel[3];       ///< perChMaxTreeBw
  double nvls_tree_per_channel[3];  ///< perChMaxNVLSTreeBw (0 where NVLSTree does not run, or before 2.28.3)
};

/// How many NVLS channels (CTAs) a release gives Blackwell (SM100) GPUs.
enum class NcclBlackwellNvls {
  kAlways32,          ///< up to 2.26: NVLS_NCHANNELS_SM100 (32) in one NVLink domain and across nodes
  kFewerInOneDomain,  ///< 2.27-2.29: NVLS_NCHANNELS_SM100_NVL (24) in one NVLink domain, 32 across nodes
  kTunedAcrossNodes,  ///< from 2.30.3: 24 in one domain; across nodes ncclNvlsTreeSm100Tuning
};

/// How a release splits one peer's point-to-point bytes over channels within
/// one node (enqueue.cc scheduleP2pTasksToPlan and addP2pToPlan). Across
/// nodes fabsim follows the newest release's rules in every release.
enum class NcclP2pSplit {
  kQuarterLoad,  ///< 2.13-2.19: at most 4 x p2pnChannels / nRanks channels a peer
  kAllChannels,  ///< from 2.20.3: up to p2pnChannelsPerPeer a peer
};

/// How a release prices NVLS and NVLSTree bandwidth.
enum class NcclNvlsPricing {
  kGraphSpeed,  ///< up to 2.27: channels x the graph search's speed (NVLSTree: halved beyond 2 nodes) x 5/6
  kPerHead,     ///< from 2.28.3: per head, nvlsEfficiency x bwIntra, the NIC, perChMaxNVLSTreeBw
};

/// The constants of one run of NCCL releases.
struct NcclTunerRelease {
  NcclVersion first;                  ///< the first release with these constants
  NcclVersion last;                   ///< the last release read with them (later ones take the newest table)
  double nvls_nvlink_latency_us;      ///< hwLat[NVLINK][NVLS and NVLSTree][Simple]
  double nvls_tree_net_latency_us;    ///< hwLat[NET][NVLSTree][Simple]
  double tree_simple_base_latency_us; ///< baseLat[Tree][Simple]
  double tree_simple_nvlink_latency_us;
  double tree_simple_net_latency_us;
  NcclNvlsPricing nvls_pricing;
  NcclBandwidthCaps hopper;
  NcclBandwidthCaps blackwell;        ///< before 2.25.1 NCCL had no Blackwell rows: 2.25.1's
  bool has_pat;                       ///< PAT (all-gather, reduce-scatter at one GPU per node) came in 2.23.4
  NcclBlackwellNvls blackwell_nvls = NcclBlackwellNvls::kAlways32;
  NcclP2pSplit p2p_split = NcclP2pSplit::kAllChannels;
};

/// The table NCCL `version` ran with: the newest one whose first release is
/// not after it; without a version, the newest. Before 2.19.1, the
/// oldest release whose tuner fabsim has read (nullptr then).
const NcclTunerRelease* nccl_tuner_release(std::optional<NcclVersion> version);
const NcclTunerRelease& newest_nccl_tuner_release();
/// The release a measurement's "nccl_version" text names (parse_nccl_version),
/// when fabsim has its tuner; else nullopt (that run's choice takes the newest).
std::optional<NcclVersion> nccl_version_with_tuner(std::string_view written);
/// Why a user's --nccl-version or "nccl_version" cannot choose: not a release
/// number, or older than any tuner read; nullopt when it can.
std::optional<std::string> nccl_version_problem(std::string_view written);
/// What a report says of the tuner: "2.26.2 (NCCL 2.23.4-2.26.6 tuner
/// constants)", or without a version "2.30.7, the newest read (...)".
std::string nccl_tuner_description(std::optional<NcclVersion> asked);
/// A warning when `asked` is newer than the newest release whose tuner fabsim
/// has read: its choice then takes that release's constants, which the newer
/// one may have changed (a figure that looks checked and is not); else nullopt.
std::optional<std::string> nccl_version_warning(std::optional<NcclVersion> asked);

/// The caps of an architecture ("volta", "ampere", "hopper", "blackwell") in a release.
const NcclBandwidthCaps& nccl_bandwidth_caps(const std::string& architecture, const NcclTunerRelease& release);

/// tuning.cc's node-count index: 0 for one node, 1 for two, 2 for more.
int nccl_node_index(int nodes);
/// NCCL's log2i (utils.h, log2Down): floor(log2(n)), -1 for 0. Its tuner counts a
/// tree's network levels with it and indexes treeCorrectionFactor by log2i(bytes >> 6).
int nccl_log2i(std::uint64_t n);

/// The speed NCCL's graph search settles on for a channel whose path carries
/// at most `path_gbps` (search.cc, sm90/sm100 inter-node speed array, the same
/// from 2.19 to 2.30): the largest entry not above it.
double nccl_search_speed_gbps(double path_gbps);

enum class NcclLinkClass { kNvlink, kNet };

/// Base latency (µs) of Ring or Tree for a protocol.
double nccl_base_latency_us(bool tree, topo::Protocol protocol, const NcclTunerRelease& release);
/// Hardware latency per hop (µs) of Ring or Tree over NVLink or the network.
double nccl_hop_latency_us(bool tree, NcclLinkClass link, topo::Protocol protocol, const NcclTunerRelease& release);
/// NVLSTree's per-hop latency (µs, Simple only): inside the node (NVLS) or across it (NET).
double nccl_nvls_tree_hop_latency_us(NcclLinkClass link, const NcclTunerRelease& release);
/// PAT's base latency and per-hop latency (µs, Simple only).
double nccl_pat_base_latency_us();
double nccl_pat_hop_latency_us(NcclLinkClass link);
/// Tree all-reduce bandwidth correction for a size (treeCorrectionFactor, indexed by log2(bytes / 64);
/// 1 below 64 B and from 512 MiB, where NCCL applies none).
double nccl_tree_correction(topo::Protocol protocol, core::Bytes bytes);

}  // namespace fabsim::traces
