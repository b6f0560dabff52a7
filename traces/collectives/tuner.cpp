#include "traces/collectives/tuner.hpp"

#include "sim/core/text.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"

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
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls})
    if (core::lower_case(algorithm_name(a)) == core::lower_case(name)) return a;
  return std::nullopt;
}

double nccl_nvls_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request) {
  const auto& nvls = *gpu.nvls;
  const double alg_gbps = request.ranks * nvls.tuner_head_bandwidth.gbytes_per_second() * nvls.payload_efficiency;
  return static_cast<double>(nvls.tuner_latency) / 1e6 + static_cast<double>(request.bytes) / (1000.0 * alg_gbps);
}

TunerChoice choose(const topo::GpuModel& gpu, const TunerRequest& request) {
  const bool nvls_possible = request.nvls_available && gpu.nvls && request.op == CollectiveOp::kAllReduce && request.ranks > 1;
  bool use_nvls = request.algorithm == Algorithm::kNvls;
  if (!request.algorithm && nvls_possible) {
    const TunerChoice ring = choose_ring(gpu, request);
    use_nvls = nccl_nvls_model_time_us(gpu, request) < nccl_ring_model_time_us(gpu, request, ring.protocol);
  }
  if (!use_nvls) {
    const bool across_nodes = request.nodes > 1 && request.op == CollectiveOp::kAllReduce;
    if (request.algorithm == Algorithm::kTree && across_nodes) return choose_tree(gpu, request);
    TunerChoice choice = choose_ring(gpu, request);
    if (request.algorithm == Algorithm::kTree) choice.algorithm = Algorithm::kTree;
    if (!request.algorithm && across_nodes) {
      const TunerChoice tree = choose_tree(gpu, request);
      if (nccl_tree_model_time_us(gpu, request, tree.protocol) < nccl_ring_model_time_us(gpu, request, choice.protocol)) return tree;
    }
    return choice;
  }
  return {Algorithm::kNvls, topo::Protocol::kSimple, request.channels.value_or(gpu.nvls->channels)};
}

namespace {

/// The graph's bus bandwidth across nodes: the NVLink graph's, unless the
/// node's NICs carry less.
double multi_node_bus_gbps(const topo::GpuModel& gpu, const TunerRequest& request) {
  const double intra = gpu.tuner_ring_bus_bandwidth.gbytes_per_second();
  return request.network_bus_gbps > 0 ? std::min(intra, request.network_bus_gbps) : intra;
}

/// Per-hop latency inside a node on more than one node: at least the
/// network progress overhead, 1 us (x3 for Simple; tuning.cc, Intel CPUs).
double intra_latency_us(bool tree, Protocol protocol) {
  const double overhead = protocol == Protocol::kSimple ? 3.0 : 1.0;
  return std::max(nccl_hop_latency_us(tree, NcclLinkClass::kNvlink, protocol), overhead);
}

double ring_multi_node_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
  const auto& caps = nccl_bandwidth_caps(gpu.architecture);
  const int index = nccl_node_index(request.nodes);
  const int n = request.ranks;
  const int steps = ring_steps(request.op, n);
  const int channels = request.channels.value_or(gpu.ring_channels);
  double bus = multi_node_bus_gbps(gpu, request);
  if (protocol == Protocol::kLL) bus = std::min(caps.ll_max[index], 0.5 * bus);
  if (protocol == Protocol::kLL128) bus = std::min(0.92 * bus, channels * caps.ring_ll128_per_channel[index]);
  const int inter_steps = (request.op == CollectiveOp::kAllReduce ? 2 : 1) * (request.nodes - 1);
  const bool one_per_node = request.nodes == n;
  // One rank per node: NCCL takes the Tree's network latency row.
  const double inter = nccl_hop_latency_us(one_per_node, NcclLinkClass::kNet, protocol);
  double latency = nccl_base_latency_us(false, protocol) + (steps - inter_steps) * intra_latency_us(false, protocol) + inter_steps * inter;
  // The Simple ring's "plateau" once each rank's share of a channel passes 64 bytes.
  if (protocol == Protocol::kSimple && request.op == CollectiveOp::kAllReduce &&
      static_cast<double>(request.bytes) / (channels * n) >= 64)
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
  const auto& caps = nccl_bandwidth_caps(gpu.architecture);
  const int index = nccl_node_index(request.nodes);
  const int channels = request.channels.value_or(gpu.ring_channels);
  const double graph = multi_node_bus_gbps(gpu, request);
  double bus = std::min(0.92 * graph, channels * caps.tree_per_channel[index]);
  if (protocol == Protocol::kLL) bus = std::min(bus / 3.8, caps.ll_max[index]);
  if (protocol == Protocol::kLL128)
    bus = std::min(bus * (request.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * caps.tree_ll128_per_channel[index]);
  const double alg = 0.5 * bus * nccl_tree_correction(protocol, request.bytes);
  const int per_node = std::max(1, request.ranks / std::max(1, request.nodes));
  const double latency = nccl_base_latency_us(true, protocol) +
                         2 * ((per_node - 1) * intra_latency_us(true, protocol) +
                              std::log2(static_cast<double>(std::max(1, request.nodes))) * nccl_hop_latency_us(true, NcclLinkClass::kNet, protocol));
  return latency + static_cast<double>(request.bytes) / (1000.0 * alg);
}

TunerChoice choose_tree(const topo::GpuModel& gpu, const TunerRequest& request) {
  TunerChoice choice;
  choice.algorithm = Algorithm::kTree;
  choice.protocol = cheapest_protocol(gpu, request, nccl_tree_model_time_us);
  TunerRequest forced = request;
  forced.protocol = choice.protocol;
  choice.channels = choose_ring(gpu, forced).channels;  // enqueue.cc's channel trimming is the same
  return choice;
}

double nccl_ring_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
  if (request.nodes > 1) return ring_multi_node_time_us(gpu, request, protocol);
  const auto& p = gpu.protocols.at(protocol);
  const int n = request.ranks;
  const int steps = ring_steps(request.op, n);
  const double latency_us = static_cast<double>(p.tuner_base_latency + steps * p.tuner_hop_latency) / 1e6;
  double bus_gbps = gpu.tuner_ring_bus_bandwidth.gbytes_per_second();
  const int channels = request.channels.value_or(gpu.ring_channels);
  // tuning.cc's per-protocol corrections for rings.
  if (protocol == Protocol::kLL) bus_gbps = std::min(gpu.tuner_ll_max_bandwidth.gbytes_per_second(), 0.5 * bus_gbps);
  if (protocol == Protocol::kLL128)
    bus_gbps = std::min(0.92 * bus_gbps, channels * gpu.tuner_ll128_channel_max.gbytes_per_second());
  const double alg_gbps = bus_gbps * n / steps;
  return latency_us + static_cast<double>(request.bytes) / (1000.0 * alg_gbps);
}

TunerChoice choose_ring(const topo::GpuModel& gpu, const TunerRequest& request) {
  TunerChoice choice;
  choice.protocol = cheapest_protocol(gpu, request, nccl_ring_model_time_us);
  // enqueue.cc: give each channel enough work, dropping channels while
  // nBytes < nChannels x nThreads x threshold (LL's threshold scales with ranks).
  const auto& p = gpu.protocols.at(choice.protocol);
  const core::Bytes threshold = p.channel_threshold * (choice.protocol == Protocol::kLL ? request.ranks : 1);
  int channels = std::max(1, request.channels.value_or(gpu.ring_channels));
  while (channels > 1 && request.bytes < static_cast<core::Bytes>(channels) * p.threads * threshold) --channels;
  choice.channels = channels;
  return choice;
}

}  // namespace fabsim::traces
