#include "traces/collectives/flow_plans.hpp"
#include "traces/collectives/chain_planner.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace fabsim::traces {

using core::div_up;

CollectivePlan plan_ring_flow(const RingRequest& request, const topo::ProtocolParams& p, bool merge_channels) {
  auto plan = CollectivePlan::empty("Ring", topo::protocol_name(request.protocol), request.ranks, request.channels,
                                    p.payload_efficiency);
  plan.aggregated = true;
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;
  const bool all_reduce = request.op == CollectiveOp::kAllReduce;
  const int steps = ring_steps(request.op, n);
  const core::Bytes data = all_reduce ? request.bytes : request.bytes / static_cast<core::Bytes>(n);
  const core::Bytes chunk_size = p.slot_bytes * static_cast<core::Bytes>(p.chunk_slots);
  for (int c = 0; c < request.channels; ++c) {
    const core::Bytes begin = data * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
    const core::Bytes end = data * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
    if (end <= begin) continue;
    const core::Bytes region = end - begin;
    // Each step moves one chunk (all-reduce: a 1/n share of a loop); the
    // channel runs ceil(region / loop) loops of `steps` steps.
    const core::Bytes loop = all_reduce ? chunk_size * static_cast<core::Bytes>(n) : chunk_size;
    const auto loops = static_cast<std::uint32_t>(div_up(region, loop));
    const core::Bytes per_rank = all_reduce ? region * static_cast<core::Bytes>(steps) / static_cast<core::Bytes>(n)
                                            : region * static_cast<core::Bytes>(steps);
    if (merge_channels && !plan.transfers.empty()) {
      // Same ring on every channel: this channel's share joins the first's transfers.
      for (auto& t : plan.transfers) {
        t.payload += per_rank;
        t.steps = std::max(t.steps, static_cast<std::uint32_t>(steps) + loops - 1);
        ++t.lanes;
      }
      continue;
    }
    for (int r = 0; r < n; ++r) {
      PlannedTransfer t;
      t.channel = c;
      t.source = r;
      t.destination = (r + 1) % n;
      t.payload = per_rank;
      t.steps = static_cast<std::uint32_t>(steps) + loops - 1;  // the pipeline fills once, then a loop per step time
      t.reduced_on_receipt = request.op != CollectiveOp::kAllGather;
      t.lockstep = static_cast<std::int32_t>(plan.lockstep_sizes.size());
      plan.transfers.push_back(t);
    }
    plan.lockstep_sizes.push_back(n);
  }
  return plan;
}

CollectivePlan plan_nvls_flow(const NvlsRequest& request, const topo::NvlsParams& nvls) {
  auto plan = CollectivePlan::empty("NVLS", "Simple", request.ranks, request.channels, nvls.payload_efficiency);
  plan.aggregated = true;
  if (request.ranks == 1 || request.bytes == 0) return plan;
  const NvlsRequest split = nvls_head_split(request);
  const core::Bytes chunk = nvls_chunk_bytes(request.bytes, request.channels, split.ranks, nvls.chunk_bytes);
  // Every channel of a head does the same on the same links: one flow per
  // head carries them all. A channel's load-reduces go chunk by chunk and its
  // stores trail them by one chunk: the first chunk's reduce and the last
  // chunk's store are exposed, the rest overlap. One chunk: reduce, then store.
  for (int head = 0; head < split.ranks; ++head) {
    const core::Bytes share = nvls_head_share(split, head);
    if (share == 0) continue;
    const core::Bytes per_channel = div_up(share, static_cast<core::Bytes>(request.channels));
    const auto chunks = static_cast<std::uint32_t>(div_up(per_channel, chunk));
    // The exposed wave: half a chunk per channel. Channels and heads drift
    // apart in the device code, so one head's stores overlap another's
    // reduces; a whole exposed chunk over-counts what a single chunk costs.
    const core::Bytes wave = std::max<core::Bytes>(
        request.element_size, std::min(share, chunk * static_cast<core::Bytes>(request.channels) / 2) / request.element_size * request.element_size);
    auto add = [&](models::TransferKind kind, core::Bytes bytes, std::uint32_t steps, std::int32_t after_received,
                   std::int32_t after_sent) {
      PlannedTransfer t = in_switch_hop(kind, 0, head, bytes);
      t.steps = steps;
      t.after_received = after_received;
      t.after_sent = after_sent;
      const auto id = static_cast<std::int32_t>(plan.transfers.size());
      if (after_received != kNoTransfer) plan.transfers[after_received].released_by = id;
      plan.transfers.push_back(t);
      return id;
    };
    using models::TransferKind;
    const auto first_reduce = add(TransferKind::kReduceInSwitch, wave, 1, kNoTransfer, kNoTransfer);
    if (wave == share) {
      add(TransferKind::kMulticastInSwitch, wave, 1, first_reduce, kNoTransfer);
      continue;
    }
    // With one chunk per channel the halves are one operation each: the
    // second halves add no step of their own (steps 0).
    const std::uint32_t rest_steps = chunks - 1;
    const auto rest_reduce = add(TransferKind::kReduceInSwitch, share - wave, rest_steps, kNoTransfer, first_reduce);
    const auto early_stores = add(TransferKind::kMulticastInSwitch, share - wave, std::max<std::uint32_t>(1, rest_steps), first_reduce, kNoTransfer);
    add(TransferKind::kMulticastInSwitch, wave, chunks == 1 ? 0 : 1, rest_reduce, early_stores);
  }
  return plan;
}

CollectivePlan coalesce_for_flow(const CollectivePlan& plan, bool pipeline) {
  auto out = CollectivePlan::empty(plan.algorithm, plan.protocol, plan.ranks, plan.channels, plan.payload_efficiency);
  out.aggregated = true;
  out.ctas = plan.ctas;
  out.in_switch_efficiency = plan.in_switch_efficiency;
  out.switch_groups = plan.switch_groups;
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, int>;  // channel, source, destination, kind
  std::map<Key, std::int32_t> index;
  std::map<std::int32_t, std::int32_t> hops_in_channel;
  // A chunk reaches a hop after crossing every hop it depends on: its depth
  // is the longest chain of receipts before it (transfers come in dependency order).
  std::vector<std::uint32_t> depth_of(plan.transfers.size(), 0);
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    std::uint32_t d = 0;
    if (t.after_received != kNoTransfer) d = depth_of[static_cast<std::size_t>(t.after_received)] + 1;
    for (auto extra : t.also_after_received) d = std::max(d, depth_of[static_cast<std::size_t>(extra)] + 1);
    depth_of[i] = d;
  }
  std::vector<std::uint32_t> merged_depth;
  std::vector<std::int32_t> merged_of(plan.transfers.size(), kNoTransfer);  // chunk -> its merged transfer
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    const Key key{t.channel, t.source, t.destination, static_cast<int>(t.kind)};
    auto [it, inserted] = index.try_emplace(key, static_cast<std::int32_t>(out.transfers.size()));
    merged_of[i] = it->second;
    if (inserted) {
      PlannedTransfer merged;
      merged.kind = t.kind;
      merged.channel = t.channel;
      merged.source = t.source;
      merged.destination = t.destination;
      merged.switch_group = t.switch_group;
      merged.steps = 0;
      // Its first chunk's upstream hops, as merged transfers (they come first).
      auto& fill = out.fill_after.emplace_back();
      if (pipeline) {
        std::vector<std::int32_t> upstream = t.also_after_received;
        if (t.after_received != kNoTransfer) upstream.push_back(t.after_received);
        for (auto u : upstream)
          if (merged_of[static_cast<std::size_t>(u)] != it->second) fill.push_back(merged_of[static_cast<std::size_t>(u)]);
      }
      out.transfers.push_back(merged);
      merged_depth.push_back(depth_of[i]);  // its first chunk's
      ++hops_in_channel[t.channel];
    }
    auto& m = out.transfers[static_cast<std::size_t>(it->second)];
    m.payload += t.payload;
    ++m.steps;
    m.reduced_on_receipt = m.reduced_on_receipt || t.reduced_on_receipt;
  }
  if (!pipeline) return out;
  // A chain's (or tree's) chunks cross its hops in order: the hop at depth
  // d of its channel finishes d steps after the first.
  for (std::size_t i = 0; i < out.transfers.size(); ++i) out.transfers[i].fill_steps = merged_depth[i];
  return out;
}

}  // namespace fabsim::traces
