#include "traces/collectives/tuner.hpp"

#include "sim/core/text.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
#include "traces/collectives/nvls_planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fabsim::traces {

using topo::Protocol;

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (Protocol p : topo::kAllProtocols)
    if (core::lower_case(topo::protocol_name(p)) == core::lower_case(name)) return p;
  return std::nullopt;
}

std::string algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "Ring";
    case Algorithm::kTree: return "Tree";
    case Algorithm::kNvls: return "NVLS";
    case Algorithm::kNvlsTree: return "NVLSTree";
    case Algorithm::kPat: return "PAT";
    case Algorithm::kCollNetDirect: return "CollNetDirect";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  // NCCL's logs spell some with underscores (NVLS_TREE, COLLNET_DIRECT).
  std::string key = core::lower_case(name);
  std::erase(key, '_');
  if (key == "collnet") return Algorithm::kCollNetDirect;
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls, Algorithm::kNvlsTree, Algorithm::kPat, Algorithm::kCollNetDirect})
    if (core::lower_case(algorithm_name(a)) == key) return a;
  return std::nullopt;
}

bool runs_simple_only(Algorithm algorithm) {
  return algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree || algorithm == Algorithm::kPat ||
         algorithm == Algorithm::kCollNetDirect;
}

bool algorithm_runs(Algorithm algorithm, CollectiveOp op) {
  const bool gather_scatter = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  switch (algorithm) {
    case Algorithm::kRing: return true;
    case Algorithm::kNvls: return op == CollectiveOp::kAllReduce || gather_scatter;
    case Algorithm::kPat: return gather_scatter;
    case Algorithm::kTree:
    case Algorithm::kNvlsTree:
    case Algorithm::kCollNetDirect: return op == CollectiveOp::kAllReduce;
  }
  return false;
}

NvlsSetup nvls_setup(const topo::GpuModel& gpu, const TunerRequest& request) {
  const NvlsCommunicator comm{request.nodes, request.ranks_per_node > 0 ? request.ranks_per_node : request.ranks / std::max(1, request.nodes),
                              request.nic_gbps, request.nic_under_gpu_pcie_switch};
  NvlsSetup setup = nccl_nvls_setup(*gpu.nvls, gpu.architecture, *request.nccl, comm);
  if (request.channels) setup.channels = *request.channels;
  return setup;
}

core::Bytes nvls_tree_max_chunk(const topo::GpuModel& gpu, const TunerRequest& request) {
  const NvlsSetup setup = nvls_setup(gpu, request);
  return std::min(setup.chunk, setup.tree_max_chunk);
}

double nccl_nvls_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request) {
  const auto& nvls = *gpu.nvls;
  const double alg_gbps = nvls_heads(request.ranks) * nvls.tuner_head_bandwidth.gbytes_per_second() * nvls.payload_efficiency;
  return static_cast<double>(nvls.tuner_latency) / 1e6 + static_cast<double>(request.bytes) / (1000.0 * alg_gbps);
}

TunerChoice choose(const topo::GpuModel& gpu, const TunerRequest& request) {
  const bool all_reduce = request.op == CollectiveOp::kAllReduce;
  const bool across_nodes = request.nodes > 1;
  const int nvls_channels = gpu.nvls ? nvls_setup(gpu, request).channels : 0;
  if (request.algorithm) {
    switch (*request.algorithm) {
      case Algorithm::kNvls:
      case Algorithm::kNvlsTree:
      case Algorithm::kPat:
      case Algorithm::kCollNetDirect: {
        // NVLS, NVLSTree, PAT and CollNet run Simple only, NVLS kinds on the NVLS channels.
        TunerRequest simple = request;
        simple.protocol = topo::Protocol::kSimple;
        const bool nvls_kind = *request.algorithm == Algorithm::kNvls || *request.algorithm == Algorithm::kNvlsTree;
        const int channels = nvls_kind ? nvls_channels : choose_ring(gpu, simple).channels;
        return {*request.algorithm, topo::Protocol::kSimple, std::max(1, channels)};
      }
      case Algorithm::kTree:
        if (across_nodes && all_reduce) return choose_tree(gpu, request);
        break;
      case Algorithm::kRing: break;
    }
    TunerChoice choice = choose_ring(gpu, request);
    choice.algorithm = *request.algorithm;
    return choice;
  }
  // NCCL's argmin over the algorithms enabled for this call.
  TunerChoice best = choose_ring(gpu, request);
  double best_time = nccl_ring_model_time_us(gpu, request, best.protocol);
  auto consider = [&](TunerChoice choice, double time) {
    if (time < best_time) {
      best = choice;
      best_time = time;
    }
  };
  // A forced LL or LL128 (NCCL_PROTO) leaves the Simple-only algorithms with
  // no protocol: NCCL does not consider them, so neither does fabsim.
  const bool simple_allowed = !request.protocol || *request.protocol == topo::Protocol::kSimple;
  const bool nvls_possible = simple_allowed && request.nvls_available && gpu.nvls && all_reduce && request.ranks > 1;
  if (nvls_possible && !across_nodes) consider({Algorithm::kNvls, topo::Protocol::kSimple, nvls_channels}, nccl_nvls_model_time_us(gpu, request));
  if (across_nodes && all_reduce) {
    const TunerChoice tree = choose_tree(gpu, request);
    consider(tree, nccl_tree_model_time_us(gpu, request, tree.protocol));
    // NVLSTree needs NVLS in every node and at least 2 NVLS channels.
    if (simple_allowed && request.nvls_in_every_node && gpu.nvls && nvls_channels >= 2)
      consider({Algorithm::kNvlsTree, topo::Protocol::kSimple, nvls_channels}, nccl_nvls_tree_model_time_us(gpu, request));
  }
  // PAT: all-gather and reduce-scatter at one rank per node.
  const bool gather_or_scatter = request.op == CollectiveOp::kAllGather || request.op == CollectiveOp::kReduceScatter;
  if (simple_allowed && request.nccl->has_pat && across_nodes && gather_or_scatter && request.nodes == request.ranks &&
      gpu.protocols.contains(topo::Protocol::kSimple)) {
    TunerRequest simple = request;
    simple.protocol = topo::Protocol::kSimple;
    consider({Algorithm::kPat, topo::Protocol::kSimple, choose_ring(gpu, simple).channels}, nccl_pat_model_time_us(gpu, request));
  }
  return best;
}

namespace {

/// The graph's bus bandwidth across nodes: the NVLink graph's, unless the
/// node's NICs carry less.
double multi_node_bus_gbps(const topo::GpuModel& gpu, const TunerRequest& request) {
  const double intra = gpu.tuner_ring_bus_bandwidth.gbytes_per_second();
  return request.network_bus_gbps > 0 ? std::min(intra, request.network_bus_gbps) : intra;
}

/// A ring's per-hop latency inside a node on more than one node: at least
/// the network progress overhead, 1 us (x3 for Simple; tuning.cc, Intel
/// CPUs). Only rings pay it: NCCL raises intraLat inside its Ring branch, and
/// Tree keeps the bare NVLink latency.
double ring_intra_latency_us(Protocol protocol, const NcclTunerRelease& release) {
  const double overhead = protocol == Protocol::kSimple ? 3.0 : 1.0;
  return std::max(nccl_hop_latency_us(false, NcclLinkClass::kNvlink, protocol, release), overhead);
}

/// A network hop's latency in NCCL's model: the hardware row plus the plugin's
/// reported latency, counted twice with Simple for the GPUDirect flush (tuning.cc).
double with_plugin_latency(double hop_us, const TunerRequest& request, Protocol protocol) {
  return hop_us + request.net_plugin_latency_us * (protocol == Protocol::kSimple ? 2 : 1);
}

/// A tree's network levels in NCCL's latencies (Tree, NVLSTree, PAT): log2i(nNodes), rounding down.
int tree_levels(int nodes) { return nccl_log2i(static_cast<std::uint64_t>(std::max(1, nodes))); }

double ring_multi_node_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
  const auto& caps = nccl_bandwidth_caps(gpu.architecture, *request.nccl);
  const int index = nccl_node_index(request.nodes);
  const int n = request.ranks;
  const int steps = ring_steps(request.op, n);
  const int channels = graph_channels(gpu, request);
  double bus = multi_node_bus_gbps(gpu, request);
  if (protocol == Protocol::kLL) bus = std::min(caps.ll_max[index], 0.5 * bus);
  if (protocol == Protocol::kLL128) bus = std::min(0.92 * bus, channels * caps.ring_ll128_per_channel[index]);
  const int inter_steps = (request.op == CollectiveOp::kAllReduce ? 2 : 1) * (request.nodes - 1);
  const bool one_per_node = request.nodes == n;
  // One rank per node: NCCL takes the Tree's network latency row.
  const double inter = with_plugin_latency(nccl_hop_latency_us(one_per_node, NcclLinkClass::kNet, protocol, *request.nccl), request, protocol);
  const NcclTunerRelease& release = *request.nccl;
  double latency = nccl_base_latency_us(false, protocol, release) + (steps - inter_steps) * ring_intra_latency_us(protocol, release) +
                   inter_steps * inter;
  // The Simple ring's "plateau" once each rank's share of a channel passes 64 bytes.
  if (protocol == Protocol::kSimple && request.op == CollectiveOp::kAllReduce &&
      static_cast<double>(request.bytes) / (runtime_channels(gpu, request) * n) >= 64)  // comm->nChannels
    latency *= 1.4;
  return latency + static_cast<double>(request.bytes) / (1000.0 * bus * n / steps);
}

/// The forced protocol, else the one `model` predicts fastest (NCCL's argmin over protocols).
Protocol cheapest_protocol(const topo::GpuModel& gpu, const TunerRequest& request,
                           double (*model)(const topo::GpuModel&, const TunerRequest&, Protocol)) {
  if (request.protocol) return *request.protocol;
  Protocol choice = Protocol::kSimple;
  double best = std::numeric_limits<double>::infinity();
  for (Protocol p : topo::kAllProtocols) {
    if (!gpu.protocols.contains(p)) continue;
    const double t = model(gpu, request, p);
    if (t < best) {
      best = t;
      choice = p;
    }
  }
  return choice;
}

}  // namespace

double nccl_tree_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
  const auto& caps = nccl_bandwidth_caps(gpu.architecture, *request.nccl);
  const int index = nccl_node_index(request.nodes);
  const int channels = graph_channels(gpu, request);
  const double graph = multi_node_bus_gbps(gpu, request);
  double bus = std::min(0.92 * graph, channels * caps.tree_per_channel[index]);
  if (protocol == Protocol::kLL) bus = std::min(bus / 3.8, caps.ll_max[index]);
  if (protocol == Protocol::kLL128)
    bus = std::min(bus * (request.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * caps.tree_ll128_per_channel[index]);
  const double alg = 0.5 * bus * nccl_tree_correction(protocol, request.bytes);
  const int per_node = std::max(1, request.ranks / std::max(1, request.nodes));
  const NcclTunerRelease& release = *request.nccl;
  const double levels = tree_levels(request.nodes);
  const double latency = nccl_base_latency_us(true, protocol, release) +
                         2 * ((per_node - 1) * nccl_hop_latency_us(true, NcclLinkClass::kNvlink, protocol, release) +
                              levels * with_plugin_latency(nccl_hop_latency_us(true, NcclLinkClass::kNet, protocol, release), request, protocol));
  return latency + static_cast<double>(request.bytes) / (1000.0 * alg);
}

double nccl_nvls_tree_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request) {
  const auto& nvls = *gpu.nvls;
  const int channels = nvls_setup(gpu, request).channels;
  if (channels < 2 || request.nodes < 2) return std::numeric_limits<double>::infinity();
  const NcclTunerRelease& release = *request.nccl;
  const int heads = nvls_heads(std::max(1, request.ranks / request.nodes));
  const double head_nic_gbps = request.network_bus_gbps / heads;
  double alg = 0;
  if (release.nvls_pricing == NcclNvlsPricing::kGraphSpeed) {
    // Up to 2.27: one channel per head at the NVLS graph's speed (bwIntra =
    // bwInter = the search's speed for the head's NIC path), halved beyond
    // two nodes, and algbw = busbw x 5/6 whatever the rank count.
    const double speed = nccl_search_speed_gbps(head_nic_gbps);
    alg = heads * (request.nodes <= 2 ? speed : speed / 2) * 5.0 / 6.0;
  } else {
    // From 2.28.3: per head, the NVLS reduction inside the node (twice:
    // reduce and broadcast), the head's NIC (counted twice on <= 2 nodes,
    // where the tree's two directions use both halves of the link), and
    // perChMaxNVLSTreeBw; algbw = busbw x n / (2 (n - 1)).
    const auto& caps = nccl_bandwidth_caps(gpu.architecture, release);
    const int index = nccl_node_index(request.nodes);
    const double intra = nvls.tuner_head_bandwidth.gbytes_per_second() * nvls.payload_efficiency * (channels - 1) / channels * 2;
    const double inter = head_nic_gbps * (request.nodes <= 2 ? 2 : 1);
    const double bus = heads * std::min({intra, inter, caps.nvls_tree_per_channel[index]});
    alg = bus * request.ranks / ring_steps(request.op, request.ranks);
  }
  const double latency = nccl_nvls_tree_hop_latency_us(NcclLinkClass::kNvlink, release) +
                         2 * tree_levels(request.nodes) *
                             with_plugin_latency(nccl_nvls_tree_hop_latency_us(NcclLinkClass::kNet, release), request, Protocol::kSimple);
  return latency + static_cast<double>(request.bytes) / (1000.0 * alg);
}

double nccl_pat_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request) {
  // tuning.cc: PAT's bus bandwidth is the graph's x 0.75 and, for AG/RS on
  // anything but Ring, is used as the algorithm bandwidth of the total size.
  const double alg = 0.75 * multi_node_bus_gbps(gpu, request);
  const double latency = nccl_pat_base_latency_us() +
                         tree_levels(request.nodes) *
                             with_plugin_latency(nccl_pat_hop_latency_us(NcclLinkClass::kNet), request, Protocol::kSimple) / 3.5 +
                         2.8 * request.ranks;
  return latency + static_cast<double>(request.bytes) / (1000.0 * alg);
}

TunerChoice choose_tree(const topo::GpuModel& gpu, const TunerRequest& request) {
  TunerChoice choice;
  choice.algorithm = Algorithm::kTree;
  choice.protocol = cheapest_protocol(gpu, request, nccl_tree_model_time_us);
  choice.channels = trimmed_channels(gpu, request, choice.protocol, /*ring=*/false);
  return choice;
}

int nccl_built_channels(const topo::GpuModel& gpu, const TunerRequest& request) {
  return std::max(1, request.network_runtime_channels > 0 ? request.network_runtime_channels : gpu.ring_channels);
}

int runtime_channels(const topo::GpuModel& gpu, const TunerRequest& request) {
  return std::max(1, request.channels.value_or(nccl_built_channels(gpu, request)));
}

int graph_channels(const topo::GpuModel& gpu, const TunerRequest& request) {
  // NCCL_MIN/MAX_NCHANNELS change comm->nChannels after the search, not the graph's (init.cc, connect.cc).
  if (request.network_graph_channels > 0) return request.network_graph_channels;
  return std::max(1, gpu.ring_channels / 2);
}

std::optional<core::Bandwidth> ll128_cap_per_cta(const topo::GpuModel& gpu, const TunerRequest& request) {
  const auto& cap = gpu.protocols.at(Protocol::kLL128).channel_cap;
  if (!cap) return std::nullopt;
  return core::Bandwidth{cap->bytes_per_second * graph_channels(gpu, request) / nccl_built_channels(gpu, request)};
}

double nccl_ring_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
  if (request.nodes > 1) return ring_multi_node_time_us(gpu, request, protocol);
  const auto& p = gpu.protocols.at(protocol);
  const int n = request.ranks;
  const int steps = ring_steps(request.op, n);
  const double latency_us = static_cast<double>(p.tuner_base_latency + steps * p.tuner_hop_latency) / 1e6;
  double bus_gbps = gpu.tuner_ring_bus_bandwidth.gbytes_per_second();
  const int channels = graph_channels(gpu, request);
  // tuning.cc's per-protocol corrections for rings.
  if (protocol == Protocol::kLL) bus_gbps = std::min(gpu.tuner_ll_max_bandwidth.gbytes_per_second(), 0.5 * bus_gbps);
  if (protocol == Protocol::kLL128)
    bus_gbps = std::min(0.92 * bus_gbps, channels * gpu.tuner_ll128_channel_max.gbytes_per_second());
  const double alg_gbps = bus_gbps * n / steps;
  return latency_us + static_cast<double>(request.bytes) / (1000.0 * alg_gbps);
}

int trimmed_channels(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol, bool ring) {
  // enqueue.cc: give each channel enough work, dropping channels while
  // nBytes < nChannels x nThreads x threshold. A ring's LL threshold scales
  // with the ranks (tuning.cc: threadThresholds[RING][LL] *= nRanks, since
  // 2.8.3); a tree's does not.
  const auto& p = gpu.protocols.at(protocol);
  const core::Bytes threshold = p.channel_threshold * (ring && protocol == Protocol::kLL ? request.ranks : 1);
  int channels = runtime_channels(gpu, request);
  while (channels > 1 && request.bytes < static_cast<core::Bytes>(channels) * p.threads * threshold) --channels;
  return channels;
}

TunerChoice choose_ring(const topo::GpuModel& gpu, const TunerRequest& request) {
  TunerChoice choice;
  choice.protocol = cheapest_protocol(gpu, request, nccl_ring_model_time_us);
  choice.channels = trimmed_channels(gpu, request, choice.protocol, /*ring=*/true);
  return choice;
}

}  // namespace fabsim::traces
