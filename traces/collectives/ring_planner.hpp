#pragma once
/// NCCL's ring algorithms (device/all_reduce.h, all_gather.h,
/// reduce_scatter.h) as a CollectivePlan: per channel a contiguous region,
/// cut in loops of chunks, chunks cut in slices that are forwarded as soon as
/// they arrive, with NCCL_STEPS FIFO slots per connection.

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

struct RingRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 2;
  core::Bytes bytes = 0;  ///< nccl-tests size: per-rank buffer (all-reduce) or total (all-gather, reduce-scatter)
  int channels = 1;
  topo::Protocol protocol = topo::Protocol::kSimple;
  core::Bytes element_size = 4;
};

/// Plans a ring collective over ranks 0..n-1 in ring order.
CollectivePlan plan_ring(const RingRequest& request, const topo::ProtocolParams& protocol);

}  // namespace fabsim::traces
