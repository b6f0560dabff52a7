#include "models/gpu/gpu_endpoint.hpp"

#include "sim/core/kernel.hpp"

namespace fabsim::models {

GpuEndpoint::GpuEndpoint(sc_core::sc_module_name name, std::size_t attached_links, DeliveryListener& listener)
    : sc_core::sc_module(name), in("in"), out("out", attached_links), listener_(listener) {
  in.bind(*this);
}

void GpuEndpoint::inject(Segment&& segment, TimePs at) {
  const std::size_t port = segment.route->out_ports[0];
  segment.hop = 1;
  segment.tail_time = at;
  out[port]->transmit(std::move(segment), at, 0);
}

void GpuEndpoint::receive(Segment&& segment) {
  const TimePs now = core::now_ps();
  // The payload lands in device memory at once; the link's buffer space is free.
  if (segment.credit_holder != nullptr) segment.credit_holder->return_credits(segment.credit_bytes, now);
  if (segment.hop < segment.route->out_ports.size()) {
    // A PXN relay: the segment was staged in this GPU's memory and its NIC
    // sends it on (store and forward, from the tail's arrival).
    const std::size_t port = segment.route->out_ports[segment.hop];
    ++segment.hop;
    segment.credit_holder = nullptr;
    segment.credit_bytes = 0;
    segment.tail_time = now;
    out[port]->transmit(std::move(segment), now, 0);
    return;
  }
  bytes_received_ += segment.wire_bytes;
  if (segment.segments_in_transfer == 1) {
    listener_.on_transfer_delivered(segment.transfer_id, now);
    return;
  }
  auto [it, inserted] = arrived_.try_emplace(segment.transfer_id, 0);
  if (++it->second == segment.segments_in_transfer) {
    arrived_.erase(it);
    listener_.on_transfer_delivered(segment.transfer_id, now);
  }
}

}  // namespace fabsim::models
