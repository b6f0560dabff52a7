#include "models/switch/crossbar_switch.hpp"

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace fabsim::models {

CrossbarSwitch::CrossbarSwitch(sc_core::sc_module_name name, const SwitchParams& params, std::size_t attached_links)
    : sc_core::sc_module(name), in("in"), out("out", attached_links), params_(params) {
  in.bind(*this);
}

void CrossbarSwitch::receive(Segment&& segment) {
  // An in-network operation happens where its route ends; on the way there it is forwarded.
  if (segment.kind != SegmentKind::kUnicast && segment.hop >= segment.route->out_ports.size()) {
    if (!params_.in_network_reduction || segment.op == nullptr)
      throw core::SimulationError(std::string(name()) + ": in-network reduction asked of a switch without it");
    if (segment.kind == SegmentKind::kReduce) {
      reduce(std::move(segment));
    } else {
      multicast(std::move(segment));
    }
    return;
  }
  const TimePs tail_ready = segment.tail_time + params_.traversal_latency;
  forward(std::move(segment), tail_ready);
}

void CrossbarSwitch::forward(Segment&& segment, TimePs tail_ready) {
  const auto& ports = segment.route->out_ports;
  if (segment.hop >= ports.size() || ports[segment.hop] >= out.size())
    throw core::SimulationError(std::string(name()) + ": segment arrived with no valid output port in its route");
  const std::size_t port = ports[segment.hop++];
  const TimePs ready = core::now_ps() + params_.traversal_latency;
  ++forwarded_;
  out[port]->transmit(std::move(segment), ready, tail_ready);
}

void CrossbarSwitch::reduce(Segment&& segment) {
  // The reduction engine consumes the piece: its input buffer space is free.
  if (segment.credit_holder != nullptr) segment.credit_holder->return_credits(segment.credit_bytes, core::now_ps());
  auto [it, inserted] = reductions_.try_emplace(PieceKey{segment.transfer_id, segment.piece});
  PartialReduction& partial = it->second;
  partial.last_tail = std::max(partial.last_tail, segment.tail_time);
  if (++partial.arrived < segment.op->fan_in) return;
  // Every source's piece is here: the combined piece streams out to the
  // destination, or to every member (all-reduce).
  const TimePs last_tail = partial.last_tail;  // read before erase: `partial` lives in the erased node
  const TimePs tail_ready = last_tail + params_.traversal_latency;
  reductions_.erase(it);
  if (segment.op->result_route == nullptr) {
    segment.tail_time = last_tail;
    segment.credit_holder = nullptr;  // returned above
    multicast(std::move(segment));
    return;
  }
  // In a tree the partial sum goes on up to the parent switch, to be reduced there.
  segment.kind = segment.op->result_op != nullptr ? SegmentKind::kReduce : SegmentKind::kUnicast;
  segment.route = segment.op->result_route;
  segment.op = segment.op->result_op;
  segment.hop = 0;
  segment.credit_holder = nullptr;
  segment.credit_bytes = 0;
  forward(std::move(segment), tail_ready);
}

void CrossbarSwitch::multicast(Segment&& segment) {
  if (segment.credit_holder != nullptr) segment.credit_holder->return_credits(segment.credit_bytes, core::now_ps());
  const TimePs tail_ready = segment.tail_time + params_.traversal_latency;
  const auto& routes = *segment.op->multicast_routes;
  const auto* next = segment.op->multicast_next;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    Segment copy = segment;
    // A copy bound for a child switch of a tree is multicast again there.
    copy.op = next != nullptr ? (*next)[i] : nullptr;
    copy.kind = copy.op != nullptr ? SegmentKind::kMulticast : SegmentKind::kUnicast;
    copy.route = &routes[i];
    copy.hop = 0;
    copy.credit_holder = nullptr;
    copy.credit_bytes = 0;
    forward(std::move(copy), tail_ready);
  }
}

}  // namespace fabsim::models
