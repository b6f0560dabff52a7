#include "traces/collectives/nvls_planner.hpp"

#include <algorithm>
#include <stdexcept>

#include "traces/collectives/chain_planner.hpp"

namespace fabsim::traces {

core::Bytes nvls_chunk_bytes(core::Bytes bytes, int channels, int heads, core::Bytes chunk) {
  const core::Bytes unit = static_cast<core::Bytes>(channels) * static_cast<core::Bytes>(heads) * chunk;
  if (bytes < 2 * unit) return std::max<core::Bytes>(chunk / 8, 1);
  if (bytes < 8 * unit) return std::max<core::Bytes>(chunk / 4, 1);
  if (bytes < 64 * unit) return std::max<core::Bytes>(chunk / 2, 1);
  return chunk;
}

int nvls_heads(int ranks) {
  constexpr int kMaxNvlsArity = 32;
  return std::min(ranks, kMaxNvlsArity);
}

NvlsRequest nvls_head_split(const NvlsRequest& request) {
  return {nvls_heads(request.ranks), request.bytes, request.channels, request.element_size};
}

core::Bytes nvls_head_share(const NvlsRequest& request, int head) {
  const core::Bytes elements = request.bytes / request.element_size;
  const auto n = static_cast<core::Bytes>(request.ranks);
  const core::Bytes first = elements * static_cast<core::Bytes>(head) / n;
  const core::Bytes last = elements * static_cast<core::Bytes>(head + 1) / n;
  return (last - first) * request.element_size;
}

CollectivePlan plan_nvls_all_reduce(const NvlsRequest& request, const topo::NvlsParams& nvls) {
  // NVLS runs the Simple protocol only.
  auto plan = CollectivePlan::empty("NVLS", "Simple", request.ranks, request.channels, nvls.payload_efficiency);
  if (request.ranks == 1 || request.bytes == 0) return plan;
  const NvlsRequest split = nvls_head_split(request);
  const core::Bytes chunk = nvls_chunk_bytes(request.bytes, request.channels, split.ranks, nvls.chunk_bytes);
  for (int head = 0; head < split.ranks; ++head) {
    const core::Bytes share = nvls_head_share(split, head);
    for (int c = 0; c < request.channels; ++c) {
      const core::Bytes begin = share * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
      const core::Bytes end = share * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
      std::int32_t previous_reduce = kNoTransfer, previous_store = kNoTransfer;
      for (core::Bytes offset = begin; offset < end; offset += chunk) {
        const core::Bytes bytes = std::min(chunk, end - offset);
        PlannedTransfer reduce;
        reduce.kind = models::TransferKind::kReduceInSwitch;
        reduce.channel = c;
        reduce.source = head;
        reduce.destination = head;
        reduce.payload = bytes;
        reduce.after_sent = previous_reduce;  // the channel's load-reduce warps go chunk by chunk
        const auto reduce_id = static_cast<std::int32_t>(plan.transfers.size());
        plan.transfers.push_back(reduce);

        PlannedTransfer store = reduce;
        store.kind = models::TransferKind::kMulticastInSwitch;
        store.after_received = reduce_id;  // it stores what the reduction returned
        store.after_sent = previous_store;
        const auto store_id = static_cast<std::int32_t>(plan.transfers.size());
        plan.transfers[reduce_id].released_by = store_id;
        plan.transfers.push_back(store);
        previous_reduce = reduce_id;
        previous_store = store_id;
      }
    }
  }
  return plan;
}

CollectivePlan plan_nvls_gather_scatter(CollectiveOp op, const NvlsRequest& request, const topo::NvlsParams& nvls) {
  const bool gather = op == CollectiveOp::kAllGather;
  if (!gather && op != CollectiveOp::kReduceScatter) throw std::invalid_argument("plan_nvls_gather_scatter plans all_gather and reduce_scatter only");
  auto plan = CollectivePlan::empty("NVLS", "Simple", request.ranks, request.channels, nvls.payload_efficiency);
  const int n = request.ranks;
  if (n == 1 || request.bytes == 0) return plan;
  // Rank r owns block r of the total: nvls_head_share splits it in whole elements.
  const core::Bytes chunk = nvls_chunk_bytes(request.bytes / static_cast<core::Bytes>(n), request.channels, n, nvls.chunk_bytes);
  const auto kind = gather ? models::TransferKind::kMulticastInSwitch : models::TransferKind::kReduceInSwitch;
  for (int owner = 0; owner < n; ++owner) {
    const core::Bytes block = nvls_head_share(request, owner);
    for (int c = 0; c < request.channels; ++c) {
      const core::Bytes begin = block * static_cast<core::Bytes>(c) / static_cast<core::Bytes>(request.channels);
      const core::Bytes end = block * static_cast<core::Bytes>(c + 1) / static_cast<core::Bytes>(request.channels);
      std::int32_t previous = kNoTransfer;  // the channel's multimem operations go chunk by chunk
      for (core::Bytes offset = begin; offset < end; offset += chunk) {
        PlannedTransfer t = in_switch_hop(kind, c, owner, std::min(chunk, end - offset));
        t.after_sent = previous;
        previous = static_cast<std::int32_t>(plan.transfers.size());
        plan.transfers.push_back(std::move(t));
      }
    }
  }
  return plan;
}

}  // namespace fabsim::traces
