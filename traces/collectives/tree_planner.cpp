#include "traces/collectives/tree_planner.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace fabsim::traces {

namespace {

/// NCCL's binary tree (graph/trees.cc, ncclGetBtree): rank 0 is the root with
/// one child; a rank's lowest set bit gives its level, so odd ranks are leaves.
int btree_parent(int nodes, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < nodes && (bit & rank) == 0) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= nodes) up = rank ^ bit;
  return up;
}

}  // namespace

std::vector<int> binary_tree_parents(int nodes, int tree) {
  std::vector<int> parents(static_cast<std::size_t>(nodes), -1);
  for (int r = 0; r < nodes; ++r) {
    int p = -1;
    if (tree == 0) {
      p = btree_parent(nodes, r);
    } else if (nodes % 2 == 0) {
      // ncclGetDtree: the second tree mirrors the first for an even count...
      const int q = btree_parent(nodes, nodes - 1 - r);
      p = q < 0 ? -1 : nodes - 1 - q;
    } else {
      // ...and shifts it by one for an odd count.
      const int q = btree_parent(nodes, (r - 1 + nodes) % nodes);
      p = q < 0 ? -1 : (q + 1) % nodes;
    }
    parents[static_cast<std::size_t>(r)] = p;
  }
  return parents;
}

TreeShape tree_shape(const std::vector<int>& parents) {
  TreeShape shape;
  shape.children.resize(parents.size());
  for (std::size_t i = 0; i < parents.size(); ++i) {
    if (parents[i] < 0) shape.root = static_cast<int>(i);
    else shape.children[static_cast<std::size_t>(parents[i])].push_back(static_cast<int>(i));
  }
  std::function<void(int)> visit = [&](int node) {
    for (int child : shape.children[static_cast<std::size_t>(node)]) visit(child);
    shape.post_order.push_back(node);
  };
  if (!parents.empty()) visit(shape.root);
  return shape;
}

std::vector<std::vector<int>> ranks_by_node(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank) {
  // Nodes in order of first appearance, each node's ranks in rail order.
  std::vector<std::vector<int>> nodes;
  std::map<int, std::size_t> node_index;
  for (std::size_t r = 0; r < domain_of_rank.size(); ++r) {
    auto [it, inserted] = node_index.try_emplace(domain_of_rank[r], nodes.size());
    if (inserted) nodes.emplace_back();
    nodes[it->second].push_back(static_cast<int>(r));
  }
  for (auto& members : nodes)
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return rail_of_rank[static_cast<std::size_t>(a)] < rail_of_rank[static_cast<std::size_t>(b)];
    });
  return nodes;
}

core::Bytes tree_ll128_chunk_bytes(const ChainRequest& request, core::Bytes slot_bytes, int nodes) {
  const double per_node = static_cast<double>(request.ranks) / std::max(1, nodes);
  int log_nodes = 0;
  while ((2 << log_nodes) <= nodes) ++log_nodes;
  const double steps = 1 + log_nodes + 0.1 * per_node;
  const auto loops = [&](core::Bytes chunk) {  // integer division, as NCCL's
    return static_cast<double>(request.bytes / (static_cast<core::Bytes>(std::max(1, request.channels)) * chunk));
  };
  core::Bytes chunk = slot_bytes;
  while (loops(chunk) < steps * 64 / per_node && chunk > 131072) chunk /= 2;
  while (loops(chunk) < steps * 16 / per_node && chunk > 32768) chunk /= 2;
  constexpr core::Bytes kLl128Grain = 1920;  // NCCL_LL128 line payload unit: chunks are whole lines' worth
  return std::max(kLl128Grain, chunk / kLl128Grain * kLl128Grain);
}

void flatten_pipeline(CollectivePlan& plan, core::Bytes step_bytes) {
  plan.aggregated = true;
  for (auto& t : plan.transfers) {
    // Depth: the longest chain of receipts before it (transfers come in dependency order).
    std::uint32_t depth = 0;
    if (t.after_received != kNoTransfer) depth = plan.transfers[static_cast<std::size_t>(t.after_received)].fill_steps + 1;
    for (auto extra : t.also_after_received) depth = std::max(depth, plan.transfers[static_cast<std::size_t>(extra)].fill_steps + 1);
    t.fill_steps = depth;
    const core::Bytes per_lane = t.payload / std::max<std::uint32_t>(1, t.lanes);
    t.steps = static_cast<std::uint32_t>(std::max<core::Bytes>(1, (per_lane + step_bytes - 1) / step_bytes));
  }
  // The chunks pipeline through the edges: every edge's flow runs at once,
  // its depth paid as fill steps, as coalesce_for_flow does for chains.
  plan.fill_after.assign(plan.transfers.size(), {});
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    auto& t = plan.transfers[i];
    plan.fill_after[i] = t.also_after_received;
    if (t.after_received != kNoTransfer) plan.fill_after[i].push_back(t.after_received);
    t.after_received = t.after_released = t.after_sent = t.after_issued = t.released_by = kNoTransfer;
    t.also_after_received.clear();
  }
}

CollectivePlan plan_double_binary_tree(const ChainRequest& request, const topo::ProtocolParams& p,
                                       const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                                       bool aggregated) {
  const auto nodes = ranks_by_node(domain_of_rank, rail_of_rank);
  if (nodes.size() == 1) {
    // One node is NCCL's nNodes = 1 in the same LL128 chunk rule (enqueue.cc, calcCollChunking).
    if (request.protocol != topo::Protocol::kLL128) return plan_tree_all_reduce(request, p);
    topo::ProtocolParams halved = p;
    halved.slot_bytes = tree_ll128_chunk_bytes(request, p.slot_bytes, 1);
    return plan_tree_all_reduce(request, halved);
  }

  auto plan = CollectivePlan::empty("Tree", topo::protocol_name(request.protocol), request.ranks, request.channels,
                                    p.payload_efficiency);
  if (request.bytes == 0) return plan;
  const int node_count = static_cast<int>(nodes.size());
  const std::vector<int> parents[2] = {binary_tree_parents(node_count, 0), binary_tree_parents(node_count, 1)};
  const core::Bytes step_bytes = std::max<core::Bytes>(
      request.protocol == topo::Protocol::kLL128 ? tree_ll128_chunk_bytes(request, p.slot_bytes, node_count) : p.slot_bytes,
      request.element_size);
  // Flow level: the whole channel region as one transfer per edge.
  const core::Bytes chunk = aggregated ? request.bytes : step_bytes;
  const int in_flight = std::max(1, p.slots);
  std::map<std::pair<int, int>, std::vector<std::int32_t>> connection;  // (source, destination) -> sends, per channel

  auto send = [&](int channel, int source, int destination, core::Bytes bytes, bool reduce, std::int32_t upstream,
                  std::vector<std::int32_t> extra) {
    PlannedTransfer t = chain_hop(channel, source, destination, bytes, reduce);
    t.also_after_received = std::move(extra);
    return append_hop(plan, std::move(t), upstream, connection[{source, destination}], in_flight);
  };

  // Channels that run the same tree over the same chain heads take the same
  // edges. At flow level they are one transfer per edge standing for all of
  // them (lanes), like a node's merged ring channels; each node's NIC caps
  // such an edge as it capped the channels.
  const std::size_t width = nodes.front().size();
  std::map<std::pair<int, std::size_t>, std::vector<int>> same_edges;  // (tree, rotation) -> channels
  for (int c = 0; c < request.channels; ++c) same_edges[{c % 2, static_cast<std::size_t>(c / 2) % width}].push_back(c);
  std::vector<int> lanes_of(static_cast<std::size_t>(request.channels), 1);
  std::vector<bool> planned(static_cast<std::size_t>(request.channels), true);
  if (aggregated)
    for (const auto& [key, members] : same_edges)
      for (std::size_t k = 0; k < members.size(); ++k) {
        lanes_of[static_cast<std::size_t>(members[k])] = k == 0 ? static_cast<int>(members.size()) : 0;
        planned[static_cast<std::size_t>(members[k])] = k == 0;
      }
  for (int c = 0; c < request.channels; ++c) {
    if (!planned[static_cast<std::size_t>(c)]) continue;
    connection.clear();
    const auto& parent = parents[c % 2];
    // Channel pairs rotate each node's chain so that its head, the rank that
    // talks across nodes, takes every rail (NIC) in turn, as NCCL spreads
    // channels over the NICs.
    std::vector<std::vector<int>> order = nodes;
    for (auto& members : order)
      std::rotate(members.begin(), members.begin() + static_cast<std::ptrdiff_t>((c / 2) % members.size()), members.end());
    const TreeShape shape = tree_shape(parent);
    const auto& child_nodes = shape.children;
    const auto& post_order = shape.post_order;
    const int root = shape.root;
    auto [begin, end] = channel_region(request, c);
    if (aggregated) {
      // The lanes' regions together: their bytes, as one transfer per edge.
      core::Bytes total = 0;
      for (int other : same_edges[{c % 2, static_cast<std::size_t>(c / 2) % width}]) {
        const auto [b, e] = channel_region(request, other);
        total += e - b;
      }
      end = begin + total;
    }
    const std::size_t first_transfer = plan.transfers.size();
    for (core::Bytes offset = begin; offset < end; offset += chunk) {
      const core::Bytes bytes = std::min(chunk, end - offset);
      // Reduce: each node's chain to its first rank, which also takes its child nodes' sums.
      std::vector<std::vector<std::int32_t>> received_at(static_cast<std::size_t>(node_count));
      for (int node : post_order) {
        const auto& members = order[static_cast<std::size_t>(node)];
        std::int32_t chain = kNoTransfer;
        for (std::size_t k = members.size() - 1; k >= 1; --k)
          chain = send(c, members[k], members[k - 1], bytes, true, chain, {});
        auto& got = received_at[static_cast<std::size_t>(node)];
        if (chain != kNoTransfer) got.push_back(chain);
        const int up = parent[static_cast<std::size_t>(node)];
        if (up < 0) continue;
        const std::int32_t first = got.empty() ? kNoTransfer : got.front();
        std::vector<std::int32_t> rest(got.size() > 1 ? got.begin() + 1 : got.end(), got.end());
        received_at[static_cast<std::size_t>(up)].push_back(
            send(c, members.front(), order[static_cast<std::size_t>(up)].front(), bytes, true, first, std::move(rest)));
      }
      // Broadcast: from the root's first rank down the trees and every node's chain.
      std::function<void(int, std::int32_t, std::vector<std::int32_t>)> down = [&](int node, std::int32_t upstream,
                                                                                   std::vector<std::int32_t> extra) {
        const auto& members = order[static_cast<std::size_t>(node)];
        for (int child : child_nodes[static_cast<std::size_t>(node)])
          down(child, send(c, members.front(), order[static_cast<std::size_t>(child)].front(), bytes, false, upstream, extra), {});
        std::int32_t chain = upstream;
        std::vector<std::int32_t> chain_extra = extra;
        for (std::size_t k = 0; k + 1 < members.size(); ++k) {
          chain = send(c, members[k], members[k + 1], bytes, false, chain, chain_extra);
          chain_extra.clear();
        }
      };
      const auto& at_root = received_at[static_cast<std::size_t>(root)];
      const std::int32_t first = at_root.empty() ? kNoTransfer : at_root.front();
      std::vector<std::int32_t> rest(at_root.size() > 1 ? at_root.begin() + 1 : at_root.end(), at_root.end());
      down(root, first, rest);
    }
    for (std::size_t i = first_transfer; i < plan.transfers.size(); ++i)
      plan.transfers[i].lanes = static_cast<std::uint32_t>(lanes_of[static_cast<std::size_t>(c)]);
  }
  if (aggregated) flatten_pipeline(plan, step_bytes);
  return plan;
}

}  // namespace fabsim::traces
