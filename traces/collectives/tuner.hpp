#pragma once
/// Chooses protocol and channel count the way NCCL does for rings: NCCL's own
/// cost model (graph/tuning.cc) picks the protocol with the smallest predicted
/// time, and enqueue.cc drops channels for small messages. The simulation then
/// runs the choice; the tuner's numbers are never reported as results.

#include <optional>
#include <string>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
#include "traces/collectives/nvls_setup.hpp"

namespace fabsim::traces {

/// NCCL's algorithms as fabsim names them (NCCL_ALGO spellings: Ring, Tree,
/// NVLS, NVLSTree, PAT, CollNetDirect; "CollNet" parses as CollNetDirect).
enum class Algorithm { kRing, kTree, kNvls, kNvlsTree, kPat, kCollNetDirect };
std::string algorithm_name(Algorithm a);
/// Whether NCCL (and fabsim) has `algorithm` for `op`: Ring for the ring
/// collectives, Tree, NVLSTree and CollNetDirect for all-reduce, NVLS for
/// all-reduce, all-gather and reduce-scatter, PAT for the last two.
bool algorithm_runs(Algorithm algorithm, CollectiveOp op);

/// NVLS, NVLSTree, PAT and CollNet run NCCL's Simple protocol only: forcing
/// LL or LL128 with one of them is refused, and NCCL_PROTO=LL leaves them out.
bool runs_simple_only(Algorithm algorithm);

/// Parses NCCL's algorithm names case-insensitively ("ring", "NVLS"); "auto" is not an algorithm.
std::optional<Algorithm> parse_algorithm(std::string_view name);

struct TunerRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 2;
  core::Bytes bytes = 0;                    ///< NCCL's nBytes (= the nccl-tests size column)
  std::optional<topo::Protocol> protocol;   ///< forced, like NCCL_PROTO
  std::optional<int> channels;              ///< forced communicator channel count, like NCCL_MIN/MAX_NCHANNELS
  std::optional<Algorithm> algorithm;       ///< forced, like NCCL_ALGO
  bool nvls_available = false;              ///< the GPUs share a switch with in-network reduction
  int nodes = 1;                            ///< NVLink domains the communicator spans
  double network_bus_gbps = 0;              ///< NIC bandwidth of one node's ranks (GB/s, line rate), when nodes > 1
  /// The latency the network plugin reports (NicModel::net_latency, us): NCCL's
  /// model adds it to every network hop, twice with Simple (tuning.cc, latencyInter).
  double net_plugin_latency_us = 0;
  /// Across nodes: each node's ranks share a switch with in-network
  /// reduction (NVLSTree reduces inside the node with it).
  bool nvls_in_every_node = false;
  /// Across nodes: the channels of NCCL's ring graph through the NICs
  /// (nccl_net_ring_graph); 0 on one node, where the GPU's ring_channels hold.
  int network_graph_channels = 0;
  int network_runtime_channels = 0;
  /// Across nodes, what NCCL's NVLS setup reads (nvls_setup.hpp): the fewest
  /// ranks in a node, one NIC's speed (GB/s) and whether a GPU's NIC sits
  /// under its PCIe switch.
  int ranks_per_node = 0;
  double nic_gbps = 0;
  bool nic_under_gpu_pcie_switch = true;
  /// The NCCL release whose tuner constants choose (nccl_tuner_tables.hpp); never null.
  const NcclTunerRelease* nccl = &newest_nccl_tuner_release();
};

struct TunerChoice {
  Algorithm algorithm = Algorithm::kRing;
  topo::Protocol protocol = topo::Protocol::kSimple;
  int channels = 1;
};

/// NCCL's NVLS channels and chunks for this request (nccl_nvls_setup); the
/// request's forced channel count, if any, replaces the channels.
NvlsSetup nvls_setup(const topo::GpuModel& gpu, const TunerRequest& request);
/// NVLSTree's largest chunk: min(nvlsChunkSize, nvlsTreeMaxChunkSize) (enqueue.cc).
core::Bytes nvls_tree_max_chunk(const topo::GpuModel& gpu, const TunerRequest& request);

/// NCCL's predicted time (us) of an NVLS all-reduce (tuning.cc: latency + nBytes / algbw,
/// algbw = heads x per-head bandwidth x nvlsEfficiency).
double nccl_nvls_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request);

/// Picks algorithm, protocol and channels the way NCCL does. CollNet runs
/// only when forced: NCCL enables it only with NCCL_COLLNET_ENABLE=1 and a
/// SHARP plugin, so its default never picks it. On one node Tree
/// runs only when forced: NCCL's model ranks it below Ring at every size
/// (nccl-model.md section 4, worked example). Across nodes an all-reduce
/// takes whichever of Ring and Tree NCCL's multi-node model predicts faster.
TunerChoice choose(const topo::GpuModel& gpu, const TunerRequest& request);

/// NCCL's predicted time (us) of a ring collective with `protocol` (for tests and the choice).
double nccl_ring_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, topo::Protocol protocol);

TunerChoice choose_ring(const topo::GpuModel& gpu, const TunerRequest& request);

/// The channels NCCL runs a `ring` (else tree) call with `protocol` on: the
/// communicator's, dropped while each would get too little work (enqueue.cc).
int trimmed_channels(const topo::GpuModel& gpu, const TunerRequest& request, topo::Protocol protocol, bool ring);

/// The channels (CTAs) NCCL builds for the communicator: its ring graph's across nodes, else the GPU's ring_channels.
int nccl_built_channels(const topo::GpuModel& gpu, const TunerRequest& request);
/// The communicator's channels (CTAs): forced, else nccl_built_channels.
int runtime_channels(const topo::GpuModel& gpu, const TunerRequest& request);
/// The graph channels NCCL's tuner multiplies its per-channel caps by
/// (tuning.cc: graphs[a]->nChannels, Ring's and Tree's being one count):
/// NCCL's across nodes, else half the GPU's ring_channels (ncclTopoPostset
/// runs two CTAs per graph channel). A forced channel count leaves it.
int graph_channels(const topo::GpuModel& gpu, const TunerRequest& request);
/// What one CTA may move with LL128: NCCL's perChMaxRingLL128Bw is per graph
/// channel (x graphs[a]->nChannels in tuning.cc), and a graph channel runs as
/// the CTAs NCCL builds for it; a forced channel count changes how many CTAs
/// run, not what one moves. Empty when the protocol has no cap.
std::optional<core::Bandwidth> ll128_cap_per_cta(const topo::GpuModel& gpu, const TunerRequest& request);

/// NCCL's predicted time (us) of a Tree all-reduce across request.nodes nodes with `protocol`.
double nccl_tree_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, topo::Protocol protocol);

TunerChoice choose_tree(const topo::GpuModel& gpu, const TunerRequest& request);

/// NCCL's predicted time (us) of an NVLSTree all-reduce across request.nodes
/// nodes (Simple only): NVLS inside each node, a tree across them.
double nccl_nvls_tree_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request);

/// NCCL's predicted time (us) of a PAT all-gather or reduce-scatter at one rank per node (Simple only).
double nccl_pat_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request);

/// Parses NCCL's protocol names case-insensitively ("ll", "LL128", "simple").
std::optional<topo::Protocol> parse_protocol(std::string_view name);

}  // namespace fabsim::traces
