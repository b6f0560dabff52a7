#include "traces/collectives/ring_planner.hpp"

#include <algorithm>
#include <stdexcept>

namespace fabsim::traces {

std::vector<core::Bytes> CollectivePlan::bytes_sent_by_rank() const {
  std::vector<core::Bytes> out(static_cast<std::size_t>(ranks), 0);
  for (const auto& t : transfers) out[t.source] += t.payload;
  return out;
}

namespace {

core::Bytes round_up(core::Bytes v, core::Bytes grain) { return (v + grain - 1) / grain * grain; }
core::Bytes div_up(core::Bytes a, core::Bytes b) { return (a + b - 1) / b; }

/// The chunks one channel moves, one per loop, each as its slices.
std::vector<std::vector<core::Bytes>> channel_loops(core::Bytes region, int ranks, bool all_reduce,
                                                    const topo::ProtocolParams& p, core::Bytes element_size) {
  const core::Bytes chunk_size = p.slot_bytes * static_cast<core::Bytes>(p.chunk_slots);
  const core::Bytes slice_size = p.slot_bytes * static_cast<core::Bytes>(p.slice_slots);
  const int slices_per_chunk = std::max(1, p.chunk_slots / p.slice_slots);
  std::vector<std::vector<core::Bytes>> loops;
  core::Bytes offset = 0;
  while (offset < region) {
    const core::Bytes remaining = region - offset;
    // All-reduce splits each loop into n chunks (one per rank); the others move
    // the per-rank share directly (NCCL's realChunkSize).
    core::Bytes chunk = all_reduce ? std::min(chunk_size, round_up(div_up(remaining, ranks), element_size))
                                   : std::min(chunk_size, remaining);
    chunk = std::max(chunk, element_size);
    // NCCL prims: slice = max(chunk / slicesPerChunk, sliceSize / 32), element aligned.
    const core::Bytes slice = std::max(round_up(div_up(chunk, slices_per_chunk), element_size), slice_size / 32);
    std::vector<core::Bytes> slices;
    for (core::Bytes done = 0; done < chunk; done += slice) slices.push_back(std::min(slice, chunk - done));
    loops.push_back(std::move(slices));
    offset += all_reduce ? chunk * static_cast<core::Bytes>(ranks) : chunk;
  }
  return loops;
}

}  // namespace

CollectivePlan plan_ring(const RingRequest& request, const topo::ProtocolParams& p) {
  if (request.ranks < 1 || request.channels < 1) throw std::invalid_argument("ring plan needs ranks >= 1 and channels >= 1");
  CollectivePlan plan;
  plan.algorithm = "Ring";
  plan.protocol = topo::protocol_name(request.protocol);
  plan.ranks = request.ranks;
  plan.channels = request.channels;
  plan.payload_efficiency = p.payload_efficiency;
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;

  const bool all_reduce = request.op == CollectiveOp::kAllReduce;
  const int steps = ring_steps(request.op, n);
  // Bytes each channel's ring handles per rank: the whole buffer for
  // all-reduce, the per-rank share for all-gather and reduce-scatter.
  const core::Bytes data = all_reduce ? request.bytes : request.bytes / static_cast<core::Bytes>(n);
  const int in_flight = std::max(1, p.slots / p.slice_slots);  // slices a connection can hold

  for (int c = 0; c < request.channels; ++c) {
    const core::Bytes begin = data * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
    const core::Bytes end = data * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
    if (end <= begin) continue;
    const auto loops = channel_loops(end - begin, n, all_reduce, p, request.element_size);

    // Per rank on this channel: transfers it sent, in connection order.
    std::vector<std::vector<std::int32_t>> sent(static_cast<std::size_t>(n));
    for (const auto& slices : loops) {
      const int count = static_cast<int>(slices.size());
      // index of (step, slice) sent by rank r in this loop
      std::vector<std::vector<std::int32_t>> ids(static_cast<std::size_t>(n), std::vector<std::int32_t>(steps * count));
      for (int s = 0; s < steps; ++s) {
        for (int k = 0; k < count; ++k) {
          for (int r = 0; r < n; ++r) {
            PlannedTransfer t;
            t.channel = c;
            t.source = r;
            t.destination = (r + 1) % n;
            t.payload = slices[k];
            // All-reduce reduces during its first n-1 steps; reduce-scatter in all of them.
            t.reduced_on_receipt = request.op == CollectiveOp::kReduceScatter ||
                                   (request.op == CollectiveOp::kAllReduce && s < n - 1);
            const int prev = (r + n - 1) % n;
            if (s > 0) t.after_received = ids[prev][(s - 1) * count + k];
            auto& connection = sent[r];
            if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
            if (!connection.empty()) t.after_sent = connection.back();
            const auto id = static_cast<std::int32_t>(plan.transfers.size());
            if (s > 0) plan.transfers[t.after_received].released_by = id;
            ids[r][s * count + k] = id;
            connection.push_back(id);
            plan.transfers.push_back(t);
          }
        }
      }
    }
  }
  return plan;
}

}  // namespace fabsim::traces
