#include "traces/collectives/ring_planner.hpp"

#include <algorithm>
#include <stdexcept>

namespace fabsim::traces {

CollectivePlan CollectivePlan::empty(std::string algorithm, std::string protocol, int ranks, int channels,
                                     double payload_efficiency) {
  if (ranks < 1 || channels < 1) throw std::invalid_argument(algorithm + " plan needs ranks >= 1 and channels >= 1");
  CollectivePlan plan;
  plan.algorithm = std::move(algorithm);
  plan.protocol = std::move(protocol);
  plan.ranks = ranks;
  plan.channels = channels;
  plan.payload_efficiency = payload_efficiency;
  return plan;
}

std::vector<core::Bytes> CollectivePlan::bytes_sent_by_rank() const {
  std::vector<core::Bytes> out(static_cast<std::size_t>(ranks), 0);
  for (const auto& t : transfers) out[t.source] += t.payload;
  return out;
}

namespace {

core::Bytes round_up(core::Bytes v, core::Bytes grain) { return (v + grain - 1) / grain * grain; }
using core::div_up;

/// One loop of a channel: the size of each of its chunks (n for all-reduce,
/// one per step otherwise) and the slice size they are cut into.
struct Loop {
  std::vector<core::Bytes> chunks;
  core::Bytes slice = 0;
};

/// The loops one channel runs over its region (NCCL's runRing: realChunkSize
/// and the truncated last chunk of a loop).
std::vector<Loop> channel_loops(core::Bytes region, int ranks, bool all_reduce, const topo::ProtocolParams& p,
                                core::Bytes element_size) {
  const core::Bytes chunk_size = p.slot_bytes * static_cast<core::Bytes>(p.chunk_slots);
  const core::Bytes slice_size = p.slot_bytes * static_cast<core::Bytes>(p.slice_slots);
  const int slices_per_chunk = std::max(1, p.chunk_slots / p.slice_slots);
  std::vector<Loop> loops;
  core::Bytes offset = 0;
  while (offset < region) {
    const core::Bytes remaining = region - offset;
    const int parts = all_reduce ? ranks : 1;
    core::Bytes chunk = std::min(chunk_size, round_up(div_up(remaining, parts), element_size));
    Loop loop;
    const core::Bytes loop_bytes = std::min(remaining, chunk * static_cast<core::Bytes>(parts));
    for (int j = 0; j < parts; ++j) {
      const core::Bytes begin = std::min(loop_bytes, chunk * static_cast<core::Bytes>(j));
      loop.chunks.push_back(std::min(chunk, loop_bytes - begin));
    }
    // NCCL prims: slice = max(chunk / slicesPerChunk, sliceSize / 32), element aligned.
    loop.slice = std::max(round_up(div_up(chunk, slices_per_chunk), element_size), slice_size / 32);
    loops.push_back(std::move(loop));
    offset += loop_bytes;
  }
  return loops;
}

/// The chunk rank r sends at step s (device/all_reduce.h, all_gather.h, reduce_scatter.h).
int chunk_sent(CollectiveOp op, int r, int s, int n) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return s < n - 1 ? ((r - 1 - s) % n + n) % n : ((r - (s - (n - 1))) % n + n) % n;
    case CollectiveOp::kAllGather: return ((r - s) % n + n) % n;
    case CollectiveOp::kReduceScatter: return ((r - 1 - s) % n + n) % n;
    default: throw std::invalid_argument("ring planner: not a ring all-reduce, all-gather or reduce-scatter");
  }
}

std::vector<core::Bytes> slices_of(core::Bytes chunk, core::Bytes slice) {
  std::vector<core::Bytes> out;
  for (core::Bytes done = 0; done < chunk; done += slice) out.push_back(std::min(slice, chunk - done));
  if (out.empty()) out.push_back(0);  // an empty chunk still takes its step (flags move)
  return out;
}

}  // namespace

CollectivePlan plan_ring(const RingRequest& request, const topo::ProtocolParams& p) {
  auto plan = CollectivePlan::empty("Ring", topo::protocol_name(request.protocol), request.ranks, request.channels,
                                    p.payload_efficiency);
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
    for (const auto& loop : loops) {
      // ids[r][k] of the transfers rank r sent in the previous step
      std::vector<std::vector<std::int32_t>> previous(static_cast<std::size_t>(n)), current(static_cast<std::size_t>(n));
      for (int s = 0; s < steps; ++s) {
        for (int r = 0; r < n; ++r) {
          const int prev = (r + n - 1) % n;
          const auto slices = slices_of(all_reduce ? loop.chunks[chunk_sent(request.op, r, s, n)] : loop.chunks[0], loop.slice);
          current[r].clear();
          for (std::size_t k = 0; k < slices.size(); ++k) {
            PlannedTransfer t;
            t.channel = c;
            t.source = r;
            t.destination = (r + 1) % n;
            t.payload = slices[k];
            // All-reduce reduces during its first n-1 steps; reduce-scatter in all of them.
            t.reduced_on_receipt = request.op == CollectiveOp::kReduceScatter ||
                                   (request.op == CollectiveOp::kAllReduce && s < n - 1);
            // It forwards the same chunk's slice that rank r received in the previous step.
            if (s > 0) t.after_received = previous[prev].at(k);
            auto& connection = sent[r];
            if (static_cast<int>(connection.size()) >= in_flight) t.after_released = connection[connection.size() - in_flight];
            if (!connection.empty()) t.after_sent = connection.back();
            const auto id = static_cast<std::int32_t>(plan.transfers.size());
            if (s > 0) plan.transfers[t.after_received].released_by = id;
            current[r].push_back(id);
            connection.push_back(id);
            plan.transfers.push_back(t);
          }
        }
        std::swap(previous, current);
      }
    }
  }
  return plan;
}

}  // namespace fabsim::traces
