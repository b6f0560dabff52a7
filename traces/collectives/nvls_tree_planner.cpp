#include "traces/collectives/nvls_tree_planner.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "traces/collectives/chain_planner.hpp"
#include "traces/collectives/nvls_planner.hpp"
#include "traces/collectives/nvls_setup.hpp"
#include "traces/collectives/tree_planner.hpp"

namespace fabsim::traces {

core::Bytes nvls_tree_chunk_bytes(core::Bytes bytes, int channels, int heads, core::Bytes max_chunk) {
  constexpr core::Bytes kKiB = 1024;
  core::Bytes chunk = max_chunk;
  const core::Bytes concurrent = static_cast<core::Bytes>(channels) * static_cast<core::Bytes>(heads);
  // NCCL's ladder: each rung compares the buffer with the chunk it has so far.
  const struct {
    core::Bytes times, ceiling;
  } ladder[] = {{32, 256 * kKiB}, {16, 128 * kKiB}, {4, 64 * kKiB}, {1, 32 * kKiB}};
  for (const auto& rung : ladder)
    if (bytes < rung.times * concurrent * chunk && chunk > rung.ceiling) chunk = rung.ceiling;
  return chunk;
}

CollectivePlan plan_nvls_tree(const NvlsTreeRequest& request, const topo::NvlsParams& nvls, const topo::ProtocolParams& simple,
                              const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank, bool aggregated) {
  const auto nodes = ranks_by_node(domain_of_rank, rail_of_rank);
  if (nodes.size() < 2) throw std::invalid_argument("NVLSTree runs across nodes: the ranks are all in one NVLink domain");
  auto plan = CollectivePlan::empty("NVLSTree", "Simple", request.ranks, request.channels, simple.payload_efficiency);
  plan.in_switch_efficiency = nvls.tree_payload_efficiency.value_or(nvls.payload_efficiency);
  plan.switch_groups = nodes;
  if (request.bytes == 0) return plan;
  const int node_count = static_cast<int>(nodes.size());
  // Beyond two nodes each node's NICs carry twice what they carry on two,
  // and measured NVLSTree there runs its NICs below the rate either level
  // gives them; the network hops take the measured share (catalogue
  // nvls.network_efficiency_beyond_two_nodes). Two nodes keep the rate.
  if (node_count > 2 && nvls.network_efficiency_beyond_two_nodes)
    plan.payload_efficiency *= *nvls.network_efficiency_beyond_two_nodes;
  std::size_t smallest = nodes.front().size();
  for (const auto& members : nodes) smallest = std::min(smallest, members.size());
  // One head per NIC, at most NCCL_MAX_NVLS_ARITY; fabsim takes one per rank of the smallest node.
  const int heads = nvls_heads(static_cast<int>(smallest));
  const std::vector<int> parents[2] = {binary_tree_parents(node_count, 0), binary_tree_parents(node_count, 1)};
  const TreeShape shapes[2] = {tree_shape(parents[0]), tree_shape(parents[1])};
  const core::Bytes max_chunk = request.max_chunk > 0 ? request.max_chunk : default_nvls_tree_max_chunk(nvls.chunk_bytes, node_count);
  const core::Bytes step_bytes = std::max(nvls_tree_chunk_bytes(request.bytes, request.channels, heads, max_chunk), request.element_size);
  const int in_flight = std::max(1, simple.slots);
  using models::TransferKind;

  const NvlsRequest split{heads, request.bytes, request.channels, request.element_size};
  for (int h = 0; h < heads; ++h) {
    const core::Bytes share = nvls_head_share(split, h);
    auto head_of = [&](int node) { return nodes[static_cast<std::size_t>(node)][static_cast<std::size_t>(h)]; };
    // Flow level: the channels of one tree take the same edges, so one
    // transfer per edge stands for them all (lanes).
    const int lane_sets = aggregated ? std::min(2, request.channels) : request.channels;
    for (int c = 0; c < lane_sets; ++c) {
      core::Bytes begin = share * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
      core::Bytes end = share * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
      std::uint32_t lanes = 1;
      if (aggregated) {
        // Channels c, c + 2, ...: their regions together.
        lanes = static_cast<std::uint32_t>((request.channels - c + 1) / 2);
        core::Bytes total = 0;
        for (int other = c; other < request.channels; other += 2)
          total += share * static_cast<core::Bytes>(other + 1) / static_cast<core::Bytes>(request.channels) -
                   share * static_cast<core::Bytes>(other) / static_cast<core::Bytes>(request.channels);
        end = begin + total;
      }
      const auto& shape = shapes[c % 2];
      const core::Bytes chunk = aggregated ? std::max<core::Bytes>(1, end - begin) : step_bytes;
      // The FIFO connections of this head and channel: per node, its
      // reductions, its multicasts, its send up and the send down to it.
      std::vector<std::vector<std::int32_t>> reduces(static_cast<std::size_t>(node_count)), stores(reduces), ups(reduces), downs(reduces);
      const std::size_t first_transfer = plan.transfers.size();
      for (core::Bytes offset = begin; offset < end; offset += chunk) {
        const core::Bytes bytes = std::min(chunk, end - offset);
        std::vector<std::int32_t> reduced(static_cast<std::size_t>(node_count)), sent_up(static_cast<std::size_t>(node_count), kNoTransfer);
        // Up: each node reduces in its switch, adds its children's sums and sends to its parent.
        for (int node : shape.post_order) {
          const auto n = static_cast<std::size_t>(node);
          reduced[n] = append_hop(plan, in_switch_hop(TransferKind::kReduceInSwitch, c, head_of(node), bytes, node), kNoTransfer, reduces[n], in_flight);
          const int parent = parents[c % 2][n];
          if (parent < 0) continue;
          PlannedTransfer up = chain_hop(c, head_of(node), head_of(parent), bytes, true);
          for (int child : shape.children[n]) up.also_after_received.push_back(sent_up[static_cast<std::size_t>(child)]);
          sent_up[n] = append_hop(plan, std::move(up), reduced[n], ups[n], in_flight);
        }
        // Down: the total leaves the root, and every node stores it to its GPUs through the switch.
        std::function<void(int, std::int32_t, const std::vector<std::int32_t>&)> down = [&](int node, std::int32_t upstream,
                                                                                           const std::vector<std::int32_t>& extra) {
          const auto n = static_cast<std::size_t>(node);
          PlannedTransfer store = in_switch_hop(TransferKind::kMulticastInSwitch, c, head_of(node), bytes, node);
          store.also_after_received = extra;
          append_hop(plan, std::move(store), upstream, stores[n], in_flight);
          for (int child : shape.children[n]) {
            PlannedTransfer send = chain_hop(c, head_of(node), head_of(child), bytes, false);
            send.also_after_received = extra;
            down(child, append_hop(plan, std::move(send), upstream, downs[static_cast<std::size_t>(child)], in_flight), {});
          }
        };
        std::vector<std::int32_t> at_root;
        for (int child : shape.children[static_cast<std::size_t>(shape.root)]) at_root.push_back(sent_up[static_cast<std::size_t>(child)]);
        down(shape.root, reduced[static_cast<std::size_t>(shape.root)], at_root);
      }
      for (std::size_t i = first_transfer; i < plan.transfers.size(); ++i) plan.transfers[i].lanes = lanes;
    }
  }
  if (aggregated) flatten_pipeline(plan, step_bytes);
  return plan;
}

}  // namespace fabsim::traces
