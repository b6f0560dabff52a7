#include "traces/collectives/pat_planner.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fabsim::traces {

std::vector<PatStep> pat_all_gather_steps(int ranks) {
  std::vector<PatStep> steps;
  if (ranks < 2) return steps;
  int top = 1;
  while (top * 2 < ranks) top *= 2;
  // Rank 0's holdings; by symmetry rank r holds the same set shifted by r.
  std::set<int> held{0};
  for (int d = top; d >= 1; d /= 2) {
    // Rank r sends to r + d what it holds and r + d lacks: H \ (H + d), shifted by r.
    int blocks = 0;
    for (int b : held)
      if (!held.contains(((b - d) % ranks + ranks) % ranks)) ++blocks;
    if (blocks > 0) steps.push_back({d, blocks});
    // Rank 0 receives rank -d's holdings.
    std::set<int> grown = held;
    for (int b : held) grown.insert(((b - d) % ranks + ranks) % ranks);
    held = std::move(grown);
  }
  return steps;
}

using core::div_up;

CollectivePlan plan_pat(const RingRequest& request, const topo::ProtocolParams& p) {
  const bool gather = request.op == CollectiveOp::kAllGather;
  if (!gather && request.op != CollectiveOp::kReduceScatter)
    throw std::invalid_argument("PAT plans all_gather and reduce_scatter only");
  auto plan = CollectivePlan::empty("PAT", topo::protocol_name(request.protocol), request.ranks, request.channels, p.payload_efficiency);
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;
  auto steps = pat_all_gather_steps(n);
  // The reduce-scatter runs the all-gather's trees backwards: nearest first, data flowing down the distances.
  if (!gather) std::reverse(steps.begin(), steps.end());
  int widest = 1;
  for (const auto& s : steps) widest = std::max(widest, s.blocks);
  const core::Bytes block = request.bytes / static_cast<core::Bytes>(n) / request.element_size * request.element_size;
  // A round moves one piece of every block; its widest message fills one slot.
  const core::Bytes piece = std::max(request.element_size, p.slot_bytes / static_cast<core::Bytes>(widest) / request.element_size * request.element_size);
  const int in_flight = std::max(1, p.slots);
  for (int c = 0; c < request.channels; ++c) {
    const core::Bytes begin = block * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
    const core::Bytes end = block * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
    if (end <= begin) continue;
    const auto rounds = div_up(end - begin, piece);
    // Per rank: its last send on this channel (one SM runs them in order), and
    // per step the sends on its connection (FIFO slots).
    std::vector<std::int32_t> last_sent(static_cast<std::size_t>(n), kNoTransfer);
    std::vector<std::vector<std::int32_t>> connection(steps.size() * static_cast<std::size_t>(n));  // [step * n + rank]
    for (core::Bytes round = 0; round < rounds; ++round) {
      const core::Bytes bytes = std::min(piece, end - begin - round * piece);
      // What each rank received earlier in this round: it forwards (or reduces) from it.
      std::vector<std::vector<std::int32_t>> received(static_cast<std::size_t>(n));
      for (std::size_t k = 0; k < steps.size(); ++k) {
        const int d = steps[k].distance;
        for (int r = 0; r < n; ++r) {
          PlannedTransfer t;
          t.channel = c;
          t.source = r;
          t.destination = gather ? (r + d) % n : ((r - d) % n + n) % n;
          t.payload = bytes * static_cast<core::Bytes>(steps[k].blocks);
          t.reduced_on_receipt = !gather;
          const auto& got = received[static_cast<std::size_t>(r)];
          if (!got.empty()) {
            t.after_received = got.front();
            t.also_after_received.assign(got.begin() + 1, got.end());
          }
          auto& slots = connection[k * static_cast<std::size_t>(n) + static_cast<std::size_t>(r)];
          if (static_cast<int>(slots.size()) >= in_flight) t.after_released = slots[slots.size() - static_cast<std::size_t>(in_flight)];
          t.after_sent = last_sent[static_cast<std::size_t>(r)];
          const auto id = static_cast<std::int32_t>(plan.transfers.size());
          plan.transfers.push_back(std::move(t));
          slots.push_back(id);
          last_sent[static_cast<std::size_t>(r)] = id;
        }
        // This step's messages are received before the next step forwards them.
        const std::size_t first = plan.transfers.size() - static_cast<std::size_t>(n);
        for (std::size_t i = first; i < plan.transfers.size(); ++i)
          received[static_cast<std::size_t>(plan.transfers[i].destination)].push_back(static_cast<std::int32_t>(i));
      }
    }
  }
  return plan;
}

}  // namespace fabsim::traces
