#include "traces/collectives/chain_planner.hpp"

#include <algorithm>
#include <stdexcept>

namespace fabsim::traces {

std::pair<core::Bytes, core::Bytes> channel_region(const ChainRequest& r, int c) {
  const core::Bytes elements = r.bytes / r.element_size;
  const auto channels = static_cast<core::Bytes>(r.channels);
  return {elements * static_cast<core::Bytes>(c) / channels * r.element_size,
          elements * static_cast<core::Bytes>(c + 1) / channels * r.element_size};
}

std::int32_t append_hop(CollectivePlan& plan, PlannedTransfer t, std::int32_t upstream, std::vector<std::int32_t>& connection,
                        int in_flight) {
  t.after_received = upstream;
  if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
  if (!connection.empty()) t.after_sent = connection.back();
  const auto id = static_cast<std::int32_t>(plan.transfers.size());
  if (upstream != kNoTransfer) plan.transfers[upstream].released_by = id;
  connection.push_back(id);
  plan.transfers.push_back(t);
  return id;
}

core::Bytes line_forward_grain(topo::Protocol protocol, const topo::ProtocolParams& params) {
  constexpr core::Bytes kLlDataPerLine = 8;          // of a 16-byte line: 8 of data, 8 of flags
  constexpr core::Bytes kLl128DataPerSlice = 1920;   // 16 lines of 128 bytes, each with one 8-byte flag word
  constexpr int kWarpSize = 32;
  const auto threads = static_cast<core::Bytes>(std::max(1, params.threads));
  switch (protocol) {
    case topo::Protocol::kLL: return threads * kLlDataPerLine;
    case topo::Protocol::kLL128: return std::max<core::Bytes>(1, threads / kWarpSize) * kLl128DataPerSlice;
    default: return 0;
  }
}

std::vector<std::int32_t> append_step(CollectivePlan& plan, const PlannedTransfer& step, const std::vector<std::int32_t>& upstream,
                                      std::vector<std::int32_t>& connection, int in_flight, core::Bytes grain) {
  const core::Bytes pieces = grain == 0 ? 1 : std::max<core::Bytes>(1, core::div_up(step.payload, grain));
  if (!upstream.empty() && upstream.size() != pieces)
    throw std::logic_error("append_step: the upstream step was cut into a different number of pieces");
  std::vector<std::int32_t> ids;
  ids.reserve(pieces);
  core::Bytes left = step.payload;
  for (core::Bytes k = 0; k < pieces; ++k) {
    PlannedTransfer t = step;
    t.payload = k + 1 == pieces ? left : std::min(left, grain);
    left -= t.payload;
    const auto id = static_cast<std::int32_t>(plan.transfers.size());
    t.after_received = upstream.empty() ? kNoTransfer : upstream[k];
    if (t.after_received != kNoTransfer) plan.transfers[static_cast<std::size_t>(t.after_received)].released_by = id;
    if (k > 0) {
      t.after_issued = ids.back();
      t.continues_step = true;
    } else {
      if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
      // Whole steps land before the next starts (Simple's fence); streamed
      // lines carry their own flags, so only the FIFO slot holds them back.
      if (!connection.empty()) (grain > 0 ? t.after_issued : t.after_sent) = connection.back();
    }
    plan.transfers.push_back(std::move(t));
    ids.push_back(id);
  }
  connection.push_back(ids.back());
  return ids;
}

PlannedTransfer chain_hop(int channel, int source, int destination, core::Bytes bytes, bool reduce) {
  PlannedTransfer t;
  t.channel = channel;
  t.source = source;
  t.destination = destination;
  t.payload = bytes;
  t.reduced_on_receipt = reduce;
  return t;
}

PlannedTransfer in_switch_hop(models::TransferKind kind, int channel, int head, core::Bytes bytes, int group) {
  PlannedTransfer t;
  t.kind = kind;
  t.channel = channel;
  t.source = head;
  t.destination = head;
  t.payload = bytes;
  t.switch_group = group;
  return t;
}

CollectivePlan plan_chain(const ChainRequest& request, const topo::ProtocolParams& p) {
  if (request.op != CollectiveOp::kBroadcast && request.op != CollectiveOp::kReduce)
    throw std::invalid_argument("plan_chain plans broadcast and reduce only");
  auto plan = CollectivePlan::empty("Ring", topo::protocol_name(request.protocol), request.ranks, request.channels,
                                    p.payload_efficiency);
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;

  // Broadcast flows root, root+1, ..., root+n-1; reduce flows root+1, ..., root.
  const bool broadcast = request.op == CollectiveOp::kBroadcast;
  auto rank_at = [&](int position) { return (request.root + position + (broadcast ? 0 : 1)) % n; };
  const core::Bytes chunk = std::max<core::Bytes>(p.slot_bytes, request.element_size);  // one step per chunk
  const int in_flight = std::max(1, p.slots);

  for (int c = 0; c < request.channels; ++c) {
    const auto [begin, end] = channel_region(request, c);
    std::vector<std::vector<std::int32_t>> sent(static_cast<std::size_t>(n));  // by position
    for (core::Bytes offset = begin; offset < end; offset += chunk) {
      const core::Bytes bytes = std::min(chunk, end - offset);
      std::vector<std::int32_t> upstream;
      for (int position = 0; position + 1 < n; ++position)
        upstream = append_step(plan, chain_hop(c, rank_at(position), rank_at(position + 1), bytes, !broadcast), upstream,
                               sent[static_cast<std::size_t>(position)], in_flight, request.forward_grain);
    }
  }
  return plan;
}

CollectivePlan plan_tree_all_reduce(const ChainRequest& request, const topo::ProtocolParams& p) {
  auto plan = CollectivePlan::empty("Tree", topo::protocol_name(request.protocol), request.ranks, request.channels,
                                    p.payload_efficiency);
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;
  const core::Bytes chunk = std::max<core::Bytes>(p.slot_bytes, request.element_size);  // one step per chunk
  const int in_flight = std::max(1, p.slots);
  for (int c = 0; c < request.channels; ++c) {
    const auto [begin, end] = channel_region(request, c);
    // Connections: up[r] is r -> r-1 (reduce), down[r] is r -> r+1 (broadcast).
    std::vector<std::vector<std::int32_t>> up(static_cast<std::size_t>(n)), down(static_cast<std::size_t>(n));
    for (core::Bytes offset = begin; offset < end; offset += chunk) {
      const core::Bytes bytes = std::min(chunk, end - offset);
      const core::Bytes grain = request.forward_grain;
      std::vector<std::int32_t> upstream;
      for (int r = n - 1; r >= 1; --r)
        upstream = append_step(plan, chain_hop(c, r, r - 1, bytes, true), upstream, up[static_cast<std::size_t>(r)], in_flight, grain);
      // Rank 0 holds the fully reduced chunk: it goes back down the chain.
      for (int r = 0; r + 1 < n; ++r)
        upstream = append_step(plan, chain_hop(c, r, r + 1, bytes, false), upstream, down[static_cast<std::size_t>(r)], in_flight, grain);
    }
  }
  return plan;
}

}  // namespace fabsim::traces
