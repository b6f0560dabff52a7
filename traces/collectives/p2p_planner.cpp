#include "traces/collectives/p2p_planner.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <stdexcept>

namespace fabsim::traces {

std::vector<P2PFlow> p2p_flows(const P2PRequest& r) {
  const int n = r.ranks;
  std::vector<P2PFlow> flows;
  if (n < 2) return flows;
  const core::Bytes part = r.bytes / static_cast<core::Bytes>(n);
  switch (r.op) {
    case CollectiveOp::kSendRecv:
      for (int s = 0; s < n; ++s) flows.push_back({s, (s + 1) % n, r.bytes});
      break;
    case CollectiveOp::kAllToAll:
      // Peers in NCCL's round order: round k pairs rank s with s+k.
      for (int k = 1; k < n; ++k)
        for (int s = 0; s < n; ++s) flows.push_back({s, (s + k) % n, part});
      break;
    case CollectiveOp::kGather:
      for (int s = 0; s < n; ++s)
        if (s != r.root) flows.push_back({s, r.root, part});
      break;
    case CollectiveOp::kScatter:
      for (int d = 0; d < n; ++d)
        if (d != r.root) flows.push_back({r.root, d, part});
      break;
    default: throw std::invalid_argument("p2p_flows: not a point-to-point operation");
  }
  return flows;
}

topo::Protocol p2p_protocol(const topo::GpuModel& gpu, core::Bytes peer_bytes, int channels_per_peer) {
  return peer_bytes <= static_cast<core::Bytes>(channels_per_peer) * gpu.p2p_ll_threshold ? topo::Protocol::kLL
                                                                                          : topo::Protocol::kSimple;
}

P2PChannelSetup p2p_channel_setup(const topo::GpuModel& gpu, std::optional<int> forced_channels, const NcclTunerRelease* release) {
  P2PChannelSetup setup;
  const int own = std::max(1, gpu.p2p_channels);
  setup.p2p_channels = forced_channels ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(1, *forced_channels)))) : own;
  setup.per_peer = std::min(own, setup.p2p_channels);
  setup.split = (release ? *release : newest_nccl_tuner_release()).p2p_split;
  return setup;
}

namespace {

/// addP2pToPlan's split of one peer's bytes: from `fewest` channels (fewer
/// where parts would fall under `min_part`), doubled while a part exceeds
/// `max_part`, up to `most`.
int split_over_channels(core::Bytes peer_bytes, int fewest, int most, core::Bytes min_part, core::Bytes max_part) {
  if (peer_bytes <= 0) return 1;
  int channels = static_cast<int>(std::min<core::Bytes>(static_cast<core::Bytes>(fewest), core::div_up(peer_bytes, min_part)));
  core::Bytes part = std::max(min_part, core::div_up(peer_bytes, static_cast<core::Bytes>(channels)));
  while (part > max_part && channels <= most / 2) {
    channels *= 2;
    part = core::div_up(peer_bytes, static_cast<core::Bytes>(channels));
  }
  return channels;
}

}  // namespace

int p2p_single_node_channels(const topo::GpuModel& gpu, const P2PChannelSetup& setup, int ranks, core::Bytes peer_bytes) {
  const int n = std::max(1, ranks);
  int most = std::max(1, setup.per_peer);
  // "Avoid overloading channels with 8+ operations" (2.13-2.19)
  if (setup.split == NcclP2pSplit::kQuarterLoad)
    while (most * n > setup.p2p_channels * 4 && most > 1) most /= 2;
  int fewest = std::max(1, setup.per_peer);  // "Try to use all channels, but one channel per operation"
  while (fewest * n > setup.p2p_channels && fewest > 1) fewest /= 2;
  const core::Bytes chunk = std::max<core::Bytes>(8, gpu.p2p_chunk);
  return split_over_channels(peer_bytes, fewest, most, chunk / 8, chunk * 32);
}

int p2p_net_peer_channels(int nics_per_gpu, double nic_gbytes_per_second_per_gpu) {
  constexpr int kPerChannelNetGbps = 14;  // NCCL_P2P_PER_CHANNEL_NET_BW (paths.cc)
  const int bandwidth = static_cast<int>(nic_gbytes_per_second_per_gpu);  // NCCL truncates the NIC's GB/s
  return std::max({1, nics_per_gpu, (bandwidth + kPerChannelNetGbps - 1) / kPerChannelNetGbps});
}

int p2p_multi_node_channels(const topo::GpuModel& gpu, const P2PNetwork& network, int ranks, core::Bytes peer_bytes,
                            const P2PChannelSetup* setup) {
  const int p2p_channels = setup ? setup->p2p_channels : std::max(1, gpu.p2p_channels);
  // p2pnChannelsPerPeer: the fewest any peer gets, a power of two. NVLink
  // peers get two per NVLink's worth of bandwidth (18 on an H100), more than
  // a network peer, so the network peer sets it.
  int per_peer = 1;
  while (per_peer < network.channels_per_net_peer) per_peer *= 2;
  constexpr int kP2pPerBatch = 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH (device.h)
  const int batches = (std::max(1, ranks) + kP2pPerBatch - 1) / kP2pPerBatch;
  while (per_peer * batches > p2p_channels && per_peer > 1) per_peer /= 2;
  int fewest = per_peer;  // scheduleP2pTasksToPlan: one channel per operation when all ranks must fit
  while (fewest * ranks > p2p_channels && fewest > 1) fewest /= 2;
  // addP2pToPlan across nodes: parts between half a chunk and one chunk.
  return split_over_channels(peer_bytes, fewest, per_peer, std::max<core::Bytes>(1, gpu.p2p_net_chunk / 2), gpu.p2p_net_chunk);
}

namespace {

/// The chunk a pair moves: across nodes NCCL's network chunk for every pair,
/// tuned down for small messages on network connections (addP2pToPlan);
/// within a node the GPU's NVLink chunk (Simple) or the protocol's slot (LL).
core::Bytes pair_chunk(const P2PFlow& f, const topo::GpuModel& gpu, const P2PNetwork* network, core::Bytes single_node_chunk) {
  if (!network) return single_node_chunk;
  const core::Bytes step = gpu.p2p_net_chunk;
  if (!network->crosses(f)) return step;
  if (f.bytes < step) return std::max<core::Bytes>(1, step / 4);
  if (f.bytes < 8 * step) return std::max<core::Bytes>(1, step / 2);
  return step;
}

/// Chunk k of a flow goes to channel base + k % per_peer: channel c of the
/// flow carries every per_peer-th chunk from c, the last one short. Pairs are
/// independent and issued at once: grouped by destination, the route search
/// walks each destination's field while it is warm in cache (a million pairs
/// on 1,024 GPUs), not a different one per pair as NCCL's round order would.
void plan_aggregated_p2p(CollectivePlan& plan, const std::vector<P2PFlow>& flows, int per_peer, const std::function<core::Bytes(const P2PFlow&)>& chunk_of) {
  plan.aggregated = true;
  std::map<int, int> next_channel_base;  // by source: channels used so far
  for (const auto& f : flows) {
    const core::Bytes chunk = chunk_of(f);
    const int base = next_channel_base[f.source];
    next_channel_base[f.source] += per_peer;
    const core::Bytes chunks = core::div_up(f.bytes, chunk);
    const core::Bytes short_by = chunks * chunk - f.bytes;  // the last chunk's
    for (core::Bytes c = 0; c < std::min<core::Bytes>(chunks, static_cast<core::Bytes>(per_peer)); ++c) {
      PlannedTransfer t;
      t.channel = base + static_cast<int>(c);
      t.source = f.source;
      t.destination = f.destination;
      t.steps = static_cast<std::uint32_t>(core::div_up(chunks - c, static_cast<core::Bytes>(per_peer)));
      t.payload = t.steps * chunk - ((chunks - 1) % static_cast<core::Bytes>(per_peer) == c ? short_by : 0);
      plan.transfers.push_back(t);
    }
  }
  std::stable_sort(plan.transfers.begin(), plan.transfers.end(),
                   [](const PlannedTransfer& a, const PlannedTransfer& b) { return a.destination < b.destination; });
}

}  // namespace

CollectivePlan plan_p2p(const P2PRequest& request, const topo::GpuModel& gpu, bool flow_level, const P2PNetwork* network,
                        const P2PChannelSetup* setup) {
  return plan_p2p_flows(p2p_flows(request), request.ranks, gpu, flow_level, network, setup);
}

CollectivePlan plan_p2p_flows(const std::vector<P2PFlow>& flows, int ranks, const topo::GpuModel& gpu, bool flow_level, const P2PNetwork* network,
                              const P2PChannelSetup* setup) {
  const P2PChannelSetup own = setup ? *setup : p2p_channel_setup(gpu, std::nullopt, nullptr);
  std::map<int, int> peers_of;  // sends per rank, to size its channels
  core::Bytes largest = 0;
  for (const auto& f : flows) {
    ++peers_of[f.source];
    largest = std::max(largest, f.bytes);
  }
  int peers = 1;
  for (const auto& [rank, count] : peers_of) peers = std::max(peers, count);
  const int per_peer = network ? p2p_multi_node_channels(gpu, *network, ranks, largest, &own) : p2p_single_node_channels(gpu, own, ranks, largest);
  // A pair through the network runs Simple (no LL buffers for network P2P by
  // default: NCCL_ALLOC_P2P_NET_LL_BUFFERS=0); the plan has one protocol, so
  // then every pair does, the NVLink ones too.
  const bool any_crossing = network && std::any_of(flows.begin(), flows.end(), [&](const P2PFlow& f) { return network->crosses(f); });
  const topo::Protocol proto = any_crossing ? topo::Protocol::kSimple : p2p_protocol(gpu, largest, per_peer);
  const auto& p = gpu.protocols.at(proto);

  auto plan = CollectivePlan::empty("P2P", topo::protocol_name(proto), std::max(1, ranks), std::max(1, per_peer * peers),
                                    p.payload_efficiency);
  plan.ctas = std::min(plan.channels, std::max(1, own.p2p_channels));
  const core::Bytes single_node_chunk = proto == topo::Protocol::kSimple ? gpu.p2p_chunk : p.slot_bytes;
  const auto chunk_of = [&](const P2PFlow& f) {
    return proto == topo::Protocol::kSimple ? pair_chunk(f, gpu, network, single_node_chunk) : single_node_chunk;
  };
  if (flow_level) {
    plan_aggregated_p2p(plan, flows, per_peer, chunk_of);
    return plan;
  }
  std::map<std::pair<int, int>, std::vector<std::int32_t>> connection;  // (channel, source) -> sends
  std::map<int, int> next_channel_base;                                  // by source: channels used so far
  for (const auto& f : flows) {
    const int base = next_channel_base[f.source];
    next_channel_base[f.source] += per_peer;
    const core::Bytes chunk = chunk_of(f);
    int k = 0;
    for (core::Bytes offset = 0; offset < f.bytes; offset += chunk, ++k) {
      PlannedTransfer t;
      t.channel = base + k % per_peer;
      t.source = f.source;
      t.destination = f.destination;
      t.payload = std::min(chunk, f.bytes - offset);
      auto& sent = connection[{t.channel, f.source}];
      if (static_cast<int>(sent.size()) >= p.slots) t.after_released = sent[sent.size() - static_cast<std::size_t>(p.slots)];
      if (!sent.empty()) t.after_sent = sent.back();
      sent.push_back(static_cast<std::int32_t>(plan.transfers.size()));
      plan.transfers.push_back(t);
    }
  }
  return plan;
}

}  // namespace fabsim::traces
