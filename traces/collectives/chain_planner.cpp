#include "traces/collectives/chain_planner.hpp"

#include <algorithm>
#include <stdexcept>

namespace fabsim::traces {

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
    const core::Bytes elements = request.bytes / request.element_size;
    const core::Bytes begin = elements * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels) * request.element_size;
    const core::Bytes end = elements * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels) * request.element_size;
    std::vector<std::vector<std::int32_t>> sent(static_cast<std::size_t>(n));  // by position
    for (core::Bytes offset = begin; offset < end; offset += chunk) {
      const core::Bytes bytes = std::min(chunk, end - offset);
      std::int32_t upstream = kNoTransfer;
      for (int position = 0; position + 1 < n; ++position) {
        PlannedTransfer t;
        t.channel = c;
        t.source = rank_at(position);
        t.destination = rank_at(position + 1);
        t.payload = bytes;
        t.reduced_on_receipt = !broadcast;
        t.after_received = upstream;
        auto& connection = sent[static_cast<std::size_t>(position)];
        if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
        if (!connection.empty()) t.after_sent = connection.back();
        const auto id = static_cast<std::int32_t>(plan.transfers.size());
        if (upstream != kNoTransfer) plan.transfers[upstream].released_by = id;
        connection.push_back(id);
        plan.transfers.push_back(t);
        upstream = id;
      }
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
    const core::Bytes elements = request.bytes / request.element_size;
    const core::Bytes begin = elements * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels) * request.element_size;
    const core::Bytes end = elements * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels) * request.element_size;
    // Connections: up[r] is r -> r-1 (reduce), down[r] is r -> r+1 (broadcast).
    std::vector<std::vector<std::int32_t>> up(static_cast<std::size_t>(n)), down(static_cast<std::size_t>(n));
    auto add = [&](int source, int destination, core::Bytes bytes, bool reduce, std::int32_t upstream,
                   std::vector<std::int32_t>& connection) {
      PlannedTransfer t;
      t.channel = c;
      t.source = source;
      t.destination = destination;
      t.payload = bytes;
      t.reduced_on_receipt = reduce;
      t.after_received = upstream;
      if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
      if (!connection.empty()) t.after_sent = connection.back();
      const auto id = static_cast<std::int32_t>(plan.transfers.size());
      if (upstream != kNoTransfer) plan.transfers[upstream].released_by = id;
      connection.push_back(id);
      plan.transfers.push_back(t);
      return id;
    };
    for (core::Bytes offset = begin; offset < end; offset += chunk) {
      const core::Bytes bytes = std::min(chunk, end - offset);
      std::int32_t upstream = kNoTransfer;
      for (int r = n - 1; r >= 1; --r) upstream = add(r, r - 1, bytes, true, upstream, up[static_cast<std::size_t>(r)]);
      // Rank 0 holds the fully reduced chunk: it goes back down the chain.
      for (int r = 0; r + 1 < n; ++r) upstream = add(r, r + 1, bytes, false, upstream, down[static_cast<std::size_t>(r)]);
    }
  }
  return plan;
}

}  // namespace fabsim::traces
