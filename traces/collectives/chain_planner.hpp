#pragma once
/// NCCL's ring broadcast and reduce (device/broadcast.h, reduce.h): a
/// pipelined chain along the ring, from the root (broadcast) or to it
/// (reduce), one step per chunk, every link carrying the buffer once.

#include <utility>
#include <vector>

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

/// Appends one hop of a pipelined chain or tree: it forwards `upstream` (once
/// received), reuses its connection's FIFO slots (`in_flight` of them) and
/// follows the sender's previous primitive on that connection. Returns its id.
std::int32_t append_hop(CollectivePlan& plan, PlannedTransfer t, std::int32_t upstream, std::vector<std::int32_t>& connection,
                        int in_flight);

/// One chunk from `source` to `destination` on `channel`, reduced on receipt or not.
PlannedTransfer chain_hop(int channel, int source, int destination, core::Bytes bytes, bool reduce);

/// One in-switch operation (`kind`) issued by `head` on `channel` over the
/// ranks of switch group `group` (-1: the whole communicator).
PlannedTransfer in_switch_hop(models::TransferKind kind, int channel, int head, core::Bytes bytes, int group = -1);

CollectivePlan plan_chain(const ChainRequest& request, const topo::ProtocolParams& protocol);

/// NCCL's Tree all-reduce on one node (device/all_reduce.h, runTreeSplit):
/// the ranks form a chain; each chunk is reduced up the chain to rank 0 and
/// broadcast back down, both phases pipelined at once. Every link carries the
/// buffer once in each direction.
CollectivePlan plan_tree_all_reduce(const ChainRequest& request, const topo::ProtocolParams& protocol);

}  // namespace fabsim::traces
