#include "traces/collectives/tuner.hpp"

#include "sim/core/text.hpp"

#include <algorithm>
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
    TunerChoice choice = choose_ring(gpu, request);
    if (request.algorithm == Algorithm::kTree) choice.algorithm = Algorithm::kTree;
    return choice;
  }
  return {Algorithm::kNvls, topo::Protocol::kSimple, request.channels.value_or(gpu.nvls->channels)};
}

double nccl_ring_model_time_us(const topo::GpuModel& gpu, const TunerRequest& request, Protocol protocol) {
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
  if (request.protocol) {
    choice.protocol = *request.protocol;
  } else {
    double best = std::numeric_limits<double>::infinity();
    for (Protocol p : topo::kAllProtocols) {
      if (!gpu.protocols.contains(p)) continue;
      const double t = nccl_ring_model_time_us(gpu, request, p);
      if (t < best) {
        best = t;
        choice.protocol = p;
      }
    }
  }
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
