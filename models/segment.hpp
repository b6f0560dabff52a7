#pragma once
/// What travels through the fabric: segments of transfers, each carrying its
/// route, and the interfaces modules speak through their ports.

#include <cstdint>
#include <systemc>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::models {

using core::Bytes;
using core::TimePs;

/// A path through the fabric as data: the output port to take at each device
/// along the way, starting with the source GPU's port.
struct Route {
  std::vector<std::uint16_t> out_ports;
};

class CreditReturn;

/// What a switch does with a segment: forward it, combine it with the same
/// piece from every other member of a group (NVLink SHARP ld_reduce, SHARP
/// in an InfiniBand switch), or copy it to every member (multimem store).
/// Reduce and multicast segments travel as unicast until their route ends
/// at the switch that does the operation.
enum class SegmentKind : std::uint8_t { kUnicast, kReduce, kMulticast };

/// The in-switch part of a reduce or multicast, shared by its segments and
/// owned by the fabric.
struct InNetworkOp {
  std::uint16_t fan_in = 0;             ///< reduce: sources combined per piece
  const Route* result_route = nullptr;  ///< reduce: from the switch to the destination (or the parent switch)
  /// Multicast: a route from the switch to every member. A reduce with
  /// these (and no result route) multicasts its result: an all-reduce.
  const std::vector<Route>* multicast_routes = nullptr;
  /// Aggregation trees over several switches: the reduce the parent switch
  /// does with this one's result, and per multicast route the multicast the
  /// child switch at its end does (nullptr: the route ends at a member).
  const InNetworkOp* result_op = nullptr;
  const std::vector<const InNetworkOp*>* multicast_next = nullptr;
};

/// A piece of a transfer. Models forward it hop by hop using its route.
struct Segment {
  std::uint64_t transfer_id = 0;
  /// The connection the segment belongs to. A link serves its waiting
  /// streams round robin and each stream's segments in order, as a NIC
  /// executes one queue pair's RDMA writes in order and an SM writes one
  /// channel's steps in order: a connection's next step queues behind its
  /// previous one rather than sharing the link with it.
  std::uint64_t stream = 0;
  std::uint32_t segments_in_transfer = 1;  ///< the destination completes the transfer after this many
  Bytes wire_bytes = 0;                    ///< bytes serialised on each link (payload + protocol overhead)
  const Route* route = nullptr;            ///< observer; the fabric's route table owns routes
  std::uint16_t hop = 0;                   ///< index into route->out_ports of the next output to take
  TimePs tail_time = 0;                    ///< when the segment's last byte reaches its current position
  CreditReturn* credit_holder = nullptr;   ///< link to credit when this segment leaves its current buffer
  Bytes credit_bytes = 0;                  ///< how many credits the current buffer holds for it
  SegmentKind kind = SegmentKind::kUnicast;
  const InNetworkOp* op = nullptr;         ///< for reduce and multicast segments
  std::uint32_t piece = 0;                 ///< reduce: which piece of the transfer (matches across sources)
};

/// Receives segments from a link. Switches receive at head arrival (cut-through);
/// endpoints at tail arrival (they consume whole segments).
class SegmentSink : public virtual sc_core::sc_interface {
 public:
  virtual void receive(Segment&& segment) = 0;
  /// True when the sink wants delivery at tail arrival rather than head arrival.
  virtual bool consumes_at_tail() const = 0;
  /// Bytes of input buffer behind each port, the credits a link starts with; 0 = unlimited.
  virtual Bytes input_buffer_bytes() const = 0;
};

/// Accepts segments for transmission on one link direction.
class LinkTransmitter : public virtual sc_core::sc_interface {
 public:
  /// Queues `segment`; it starts serialising no earlier than `earliest_start`
  /// and finishes no earlier than `earliest_end` (its tail must have arrived,
  /// for cut-through forwarding).
  virtual void transmit(Segment&& segment, TimePs earliest_start, TimePs earliest_end) = 0;
};

/// Credits flowing back to the link that feeds a buffer.
class CreditReturn : public virtual sc_core::sc_interface {
 public:
  /// `bytes` of the downstream buffer become free at `freed_at` (at the buffer;
  /// the link adds the time the credit takes to travel back).
  virtual void return_credits(Bytes bytes, TimePs freed_at) = 0;
};

}  // namespace fabsim::models
