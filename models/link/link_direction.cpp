#include "models/link/link_direction.hpp"

#include <algorithm>

#include "sim/core/kernel.hpp"

namespace fabsim::models {

LinkDirection::LinkDirection(sc_core::sc_module_name name, const LinkParams& params)
    : sc_core::sc_module(name),
      tx("tx"),
      credit_in("credit_in"),
      out("out"),
      params_(params),
      effective_(params.raw_bandwidth.scaled(params.efficiency)) {
  tx.bind(*this);
  credit_in.bind(*this);
  SC_HAS_PROCESS(LinkDirection);
  SC_METHOD(deliver);
  sensitive << delivery_event_;
  dont_initialize();
  SC_METHOD(try_commit);
  sensitive << serialiser_free_;
  dont_initialize();
}

void LinkDirection::end_of_elaboration() {
  deliver_at_tail_ = out->consumes_at_tail();
  capacity_ = out->input_buffer_bytes();
  credits_ = capacity_;
}

void LinkDirection::transmit(Segment&& segment, TimePs earliest_start, TimePs earliest_end) {
  const std::uint64_t stream = segment.stream;
  const auto active = std::find_if(active_.begin(), active_.end(), [stream](const ActiveStream& a) { return a.stream == stream; });
  std::uint32_t slot = 0;
  if (active != active_.end()) {
    slot = active->slot;
  } else {
    if (free_flows_.empty()) {
      slot = static_cast<std::uint32_t>(flows_.size());
      flows_.emplace_back();
    } else {
      slot = free_flows_.back();
      free_flows_.pop_back();
    }
    active_.push_back({stream, slot});
    round_robin_.push_back(slot);
  }
  flows_[slot].segments.push_back({std::move(segment), earliest_start, earliest_end, core::now_ps()});
  try_commit();
}

void LinkDirection::return_credits(Bytes bytes, TimePs freed_at) {
  // The credit travels back over the reverse direction of the link.
  credit_arrivals_.push({freed_at + params_.latency, bytes});
  try_commit();
}

void LinkDirection::try_commit() {
  if (committing_) return;  // a credit returned from inside a commit: the outer loop continues
  committing_ = true;
  // Take segments only while the serialiser is free now, so flows that
  // arrive meanwhile still get their turn.
  while (!round_robin_.empty() && free_at_ <= core::now_ps() && commit_next()) {
  }
  committing_ = false;
  if (!round_robin_.empty() && free_at_ > core::now_ps()) serialiser_free_.notify(core::ps_to_sc(free_at_ - core::now_ps()));
}

bool LinkDirection::commit_next() {
  const std::uint32_t slot = round_robin_.front();
  Flow& flow = flows_[slot];
  Waiting& w = flow.segments[flow.head];
  const TimePs serialise = effective_.transfer_time(w.segment.wire_bytes);
  TimePs start = std::max({w.earliest_start, free_at_, w.queued_at, core::now_ps()});
  if (w.earliest_end > serialise) start = std::max(start, w.earliest_end - serialise);
  const TimePs unconstrained_start = start;

  Bytes need = 0;
  if (capacity_ != 0) {
    // A segment larger than the whole buffer cannot wait for more than all of it.
    need = std::min(w.segment.wire_bytes, capacity_);
    for (;;) {
      while (!credit_arrivals_.empty() && credit_arrivals_.top().at <= start) {
        credits_ += credit_arrivals_.top().bytes;
        in_use_ -= credit_arrivals_.top().bytes;
        credit_arrivals_.pop();
      }
      if (credits_ >= need) break;
      if (credit_arrivals_.empty()) return false;  // resumes when the downstream returns credits
      start = std::max(start, credit_arrivals_.top().at);
    }
    credits_ -= need;
    in_use_ += need;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
  }

  Segment segment = std::move(w.segment);
  round_robin_.pop_front();
  if (++flow.head == flow.segments.size()) {
    flow.segments.clear();
    flow.head = 0;
    *std::find_if(active_.begin(), active_.end(), [slot](const ActiveStream& a) { return a.slot == slot; }) = active_.back();
    active_.pop_back();
    free_flows_.push_back(slot);
  } else {
    round_robin_.push_back(slot);  // round robin: this flow goes last
  }

  free_at_ = start + serialise;
  stats_.bytes += segment.wire_bytes;
  stats_.busy += serialise;
  stats_.credit_stall += start - unconstrained_start;
  ++stats_.segments;

  // The tail leaves the buffer it was held in when it has been serialised out.
  if (segment.credit_holder != nullptr) segment.credit_holder->return_credits(segment.credit_bytes, free_at_);
  segment.credit_holder = capacity_ != 0 ? this : nullptr;
  segment.credit_bytes = need;
  segment.tail_time = free_at_ + params_.latency;

  const TimePs deliver_at = deliver_at_tail_ ? segment.tail_time : start + params_.latency;
  const bool was_idle = in_flight_.empty();
  in_flight_.push_back({deliver_at, std::move(segment)});
  if (was_idle) delivery_event_.notify(core::ps_to_sc(deliver_at - core::now_ps()));
  return true;
}

void LinkDirection::deliver() {
  const TimePs now = core::now_ps();
  while (!in_flight_.empty() && in_flight_.front().deliver_at <= now) {
    Segment segment = std::move(in_flight_.front().segment);
    in_flight_.pop_front();
    out->receive(std::move(segment));
  }
  if (!in_flight_.empty()) delivery_event_.notify(core::ps_to_sc(in_flight_.front().deliver_at - now));
}

}  // namespace fabsim::models
