#include "traces/collectives/collnet_planner.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "traces/collectives/chain_planner.hpp"
#include "traces/collectives/nvls_planner.hpp"
#include "traces/collectives/tree_planner.hpp"

namespace fabsim::traces {

std::vector<std::vector<int>> collnet_head_groups(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank) {
  const auto nodes = ranks_by_node(domain_of_rank, rail_of_rank);
  std::size_t smallest = nodes.empty() ? 0 : nodes.front().size();
  for (const auto& members : nodes) smallest = std::min(smallest, members.size());
  const auto heads = std::min<std::size_t>(kCollNetMaxHeads, smallest);
  std::vector<std::vector<int>> groups(heads);
  for (std::size_t h = 0; h < heads; ++h)
    for (const auto& members : nodes) groups[h].push_back(members[h]);
  return groups;
}

CollectivePlan plan_collnet_direct(const CollNetRequest& request, const topo::ProtocolParams& p,
                                   const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank, bool aggregated) {
  const auto nodes = ranks_by_node(domain_of_rank, rail_of_rank);
  if (nodes.size() < 2) throw std::invalid_argument("CollNet runs across nodes: the ranks are all in one NVLink domain");
  auto plan = CollectivePlan::empty("CollNetDirect", "Simple", request.ranks, request.channels, p.payload_efficiency);
  plan.switch_groups = collnet_head_groups(domain_of_rank, rail_of_rank);
  if (request.bytes == 0) return plan;
  const int heads = static_cast<int>(plan.switch_groups.size());
  const core::Bytes step = std::max<core::Bytes>(p.slot_bytes, request.element_size);  // one step per chunk
  // Flow level: every channel of a head takes the same paths, so one set of
  // transfers, each a whole region, stands for them all (lanes).
  const int lane_sets = aggregated ? 1 : request.channels;
  const int in_flight = std::max(1, p.slots);
  const NvlsRequest split{heads, request.bytes, request.channels, request.element_size};
  for (int c = 0; c < lane_sets; ++c) {
    // Each head's region on this channel, walked chunk by chunk with every head
    // in turn, as the kernel's loop scatters one chunk to all heads at once.
    std::vector<core::Bytes> begin(static_cast<std::size_t>(heads)), end(begin);
    core::Bytes longest = 0;
    for (int h = 0; h < heads; ++h) {
      const core::Bytes share = nvls_head_share(split, h);
      begin[static_cast<std::size_t>(h)] = aggregated ? 0 : share * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
      end[static_cast<std::size_t>(h)] = aggregated ? share : share * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
      longest = std::max(longest, end[static_cast<std::size_t>(h)] - begin[static_cast<std::size_t>(h)]);
    }
    const core::Bytes chunk = aggregated ? std::max<core::Bytes>(1, longest) : step;
    std::map<std::pair<int, int>, std::vector<std::int32_t>> connection;  // (source, destination) -> sends
    std::vector<std::vector<std::int32_t>> network(static_cast<std::size_t>(heads));  // each head's SHARP operations
    // The scatter and broadcast warps of a rank each go chunk by chunk: a
    // rank's sends of one chunk follow the last of its previous chunk's.
    std::vector<std::int32_t> scattered(static_cast<std::size_t>(request.ranks), kNoTransfer), broadcast(scattered);
    for (core::Bytes offset = 0; offset < longest; offset += chunk) {
      std::vector<std::int32_t> scattered_now = scattered, broadcast_now = broadcast;
      for (int h = 0; h < heads; ++h) {
        const auto hs = static_cast<std::size_t>(h);
        if (begin[hs] + offset >= end[hs]) continue;
        const core::Bytes bytes = std::min(chunk, end[hs] - begin[hs] - offset);
        const auto& group = plan.switch_groups[hs];
        // Scatter: every other GPU of a node sends the head its copy, reduced on receipt.
        std::vector<std::int32_t> gathered;
        for (const auto& members : nodes) {
          const int head = members[hs];
          for (int r : members) {
            if (r == head) continue;
            const auto id = append_hop(plan, chain_hop(c, r, head, bytes, true), kNoTransfer, connection[{r, head}], in_flight);
            plan.transfers[static_cast<std::size_t>(id)].after_sent = scattered[static_cast<std::size_t>(r)];
            scattered_now[static_cast<std::size_t>(r)] = id;
            gathered.push_back(id);
          }
        }
        // SHARP: the heads' sums reduced in the switch, the total back to every
        // head. The proxy keeps up to NCCL_STEPS operations in flight.
        PlannedTransfer sharp = in_switch_hop(models::TransferKind::kAllReduceInSwitch, c, group.front(), bytes, h);
        if (!gathered.empty()) {
          sharp.after_received = gathered.front();
          sharp.also_after_received.assign(gathered.begin() + 1, gathered.end());
        }
        auto& posted = network[hs];
        if (static_cast<int>(posted.size()) >= in_flight) sharp.after_released = posted[posted.size() - static_cast<std::size_t>(in_flight)];
        const auto sharp_id = static_cast<std::int32_t>(plan.transfers.size());
        plan.transfers.push_back(std::move(sharp));
        posted.push_back(sharp_id);
        // Broadcast: each head sends the total to the other GPUs of its node.
        for (const auto& members : nodes) {
          const int head = members[hs];
          for (int r : members) {
            if (r == head) continue;
            const auto id = append_hop(plan, chain_hop(c, head, r, bytes, false), sharp_id, connection[{head, r}], in_flight);
            plan.transfers[static_cast<std::size_t>(id)].after_sent = broadcast[static_cast<std::size_t>(head)];
            broadcast_now[static_cast<std::size_t>(head)] = id;
          }
        }
      }
      scattered = std::move(scattered_now);
      broadcast = std::move(broadcast_now);
    }
  }
  if (aggregated) {
    for (auto& t : plan.transfers) t.lanes = static_cast<std::uint32_t>(request.channels);
    flatten_pipeline(plan, step);
  }
  return plan;
}

}  // namespace fabsim::traces
