#pragma once
/// NCCL's ring broadcast and reduce (device/broadcast.h, reduce.h): a
/// pipelined chain along the ring, from the root (broadcast) or to it
/// (reduce), one step per chunk, every link carrying the buffer once.

#include <utility>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

struct ChainRequest {
  CollectiveOp op = CollectiveOp::kBroadcast;  ///< kBroadcast or kReduce
  int ranks = 2;
  int root = 0;
  core::Bytes bytes = 0;  ///< the buffer
  int channels = 1;
  topo::Protocol protocol = topo::Protocol::kSimple;
  core::Bytes element_size = 4;
};

/// Channel c's share [begin, end) of the request's buffer, in whole elements.
std::pair<core::Bytes, core::Bytes> channel_region(const ChainRequest& request, int channel);

CollectivePlan plan_chain(const ChainRequest& request, const topo::ProtocolParams& protocol);

/// NCCL's Tree all-reduce on one node (device/all_reduce.h, runTreeSplit):
/// the ranks form a chain; each chunk is reduced up the chain to rank 0 and
/// broadcast back down, both phases pipelined at once. Every link carries the
/// buffer once in each direction.
CollectivePlan plan_tree_all_reduce(const ChainRequest& request, const topo::ProtocolParams& protocol);

}  // namespace fabsim::traces
