#pragma once
/// One direction of a link (or of a bundle of parallel links striped as one):
/// serialisation at its effective bandwidth, propagation latency, and credits
/// for the input buffer at its far end.

#include <deque>
#include <queue>
#include <systemc>
#include <vector>

#include "models/segment.hpp"
#include "sim/core/units.hpp"

namespace fabsim::models {

/// Parameters of one link direction, already resolved from the catalogue.
struct LinkParams {
  core::Bandwidth raw_bandwidth;  ///< line rate, all lanes of the bundle together
  double efficiency = 1.0;        ///< payload share after encoding and packet headers
  TimePs latency = 0;             ///< propagation + PHY latency, one way
};

/// Per-direction statistics.
struct LinkStats {
  Bytes bytes = 0;           ///< wire bytes serialised
  TimePs busy = 0;           ///< time spent serialising
  std::uint64_t segments = 0;
  TimePs credit_stall = 0;   ///< time segments waited for downstream buffer space
};

/// A link direction. Segments wait in one queue per stream (a connection:
/// Segment::stream) and the serialiser takes them round-robin across
/// streams, one segment at a time, as the link's packet arbitration
/// interleaves concurrent flows: with small segments this converges to fair
/// sharing. Within a stream, transfers go in the order they arrived. A segment's start and
/// arrival times are computed when it is taken, so an idle link costs one
/// kernel event per segment (its delivery) and a busy one two.
class LinkDirection : public sc_core::sc_module, public LinkTransmitter, public CreditReturn {
 public:
  sc_core::sc_export<LinkTransmitter> tx;         ///< the upstream device sends here
  sc_core::sc_export<CreditReturn> credit_in;     ///< the downstream device frees buffer here
  sc_core::sc_port<SegmentSink> out;              ///< the downstream device

  LinkDirection(sc_core::sc_module_name name, const LinkParams& params);

  void transmit(Segment&& segment, TimePs earliest_start, TimePs earliest_end) override;
  void return_credits(Bytes bytes, TimePs freed_at) override;

  const LinkParams& params() const { return params_; }
  core::Bandwidth effective_bandwidth() const { return effective_; }
  const LinkStats& stats() const { return stats_; }
  /// Largest number of downstream buffer bytes ever held at once.
  Bytes peak_buffer_use() const { return peak_in_use_; }

 private:
  struct Waiting {
    Segment segment;
    TimePs earliest_start;
    TimePs earliest_end;
    TimePs queued_at;
  };
  struct InFlight {
    TimePs deliver_at;
    Segment segment;
  };
  struct CreditArrival {
    TimePs at;
    Bytes bytes;
    bool operator>(const CreditArrival& o) const { return at > o.at; }
  };

  /// The segments of one stream waiting here. Slots are reused, so a busy
  /// link allocates nothing once warm (callgrind showed malloc at 28%).
  struct Flow {
    std::vector<Waiting> segments;
    std::size_t head = 0;
  };

  void end_of_elaboration() override;
  void try_commit();
  bool commit_next();
  void deliver();

  LinkParams params_;
  core::Bandwidth effective_;
  bool deliver_at_tail_ = false;
  Bytes capacity_ = 0;  // 0 = unlimited
  Bytes credits_ = 0;
  Bytes in_use_ = 0;
  Bytes peak_in_use_ = 0;
  TimePs free_at_ = 0;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::deque<std::uint32_t> round_robin_;  // active flows; the front is served next
  // Which flow slot each active stream has: an NVLS box's switch ports carry
  // a stream per in-switch transfer (over a hundred at once on 8 GPUs), each
  // segment looks its stream up, and a contiguous scan is cheaper than a
  // hash map's node per activation.
  struct ActiveStream {
    std::uint64_t stream;
    std::uint32_t slot;
  };
  std::vector<ActiveStream> active_;
  sc_core::sc_event serialiser_free_;
  bool committing_ = false;
  std::deque<InFlight> in_flight_;
  std::priority_queue<CreditArrival, std::vector<CreditArrival>, std::greater<>> credit_arrivals_;
  sc_core::sc_event delivery_event_;
  LinkStats stats_;
};

}  // namespace fabsim::models
