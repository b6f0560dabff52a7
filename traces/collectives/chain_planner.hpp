#pragma once
/// NCCL's ring broadcast and reduce (device/broadcast.h, reduce.h): a
/// pipelined chain along the ring, from the root (broadcast) or to it
/// (reduce), one step per chunk (passed on in pieces with LL and LL128:
/// ChainRequest::forward_grain), every link carrying the buffer once.

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
  /// Segment level inside one NVLink domain: a rank forwards each step in
  /// pieces of this many bytes, each as its lines arrive (line_forward_grain);
  /// 0: whole steps, as Simple's one flag per step makes the receiver wait
  /// for, and as a network proxy sends them. The flow level pipelines its
  /// aggregated transfers itself and leaves it 0.
  core::Bytes forward_grain = 0;
};

/// The bytes an LL or LL128 primitive moves in one round of its threads,
/// the grain at which a receiver passes a step on: every thread of an LL
/// primitive takes one 16-byte line (8 bytes of data) per round
/// (device/prims_ll.h, eltPerTrip = nthreads * EltPerLine), every warp of an
/// LL128 primitive one 2 KiB slice of 16 lines (1,920 bytes of data) per round
/// (device/prims_ll128.h, DataEltPerSlice, wireOffset += WireWordPerSlice *
/// nwarps). Each thread forwards what it read as soon as its flags show it
/// arrived. 0 for Simple, whose receiver waits for a whole step's flag.
core::Bytes line_forward_grain(topo::Protocol protocol, const topo::ProtocolParams& params);

/// Channel c's share [begin, end) of the request's buffer, in whole elements.
std::pair<core::Bytes, core::Bytes> channel_region(const ChainRequest& request, int channel);

/// Appends one hop of a pipelined chain or tree: it forwards `upstream` (once
/// received), reuses its connection's FIFO slots (`in_flight` of them) and
/// follows the sender's previous primitive on that connection. Returns its id.
std::int32_t append_hop(CollectivePlan& plan, PlannedTransfer t, std::int32_t upstream, std::vector<std::int32_t>& connection,
                        int in_flight);

/// Appends one step of a pipelined chain, cut into pieces of `grain` bytes
/// (0: one piece, append_hop's transfer): piece k forwards `upstream`'s piece
/// k (none: the chain's first hop); the first piece reuses the connection's
/// FIFO slot and follows the issue of the previous step's last piece (no
/// fence: lines carry their flags); every later piece follows its
/// predecessor's issue. Returns the pieces' ids; the connection records the
/// last piece of each step.
std::vector<std::int32_t> append_step(CollectivePlan& plan, const PlannedTransfer& step, const std::vector<std::int32_t>& upstream,
                                      std::vector<std::int32_t>& connection, int in_flight, core::Bytes grain);

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
