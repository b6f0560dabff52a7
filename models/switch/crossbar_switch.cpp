#include "models/switch/crossbar_switch.hpp"

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace fabsim::models {

CrossbarSwitch::CrossbarSwitch(sc_core::sc_module_name name, const SwitchParams& params, std::size_t attached_links)
    : sc_core::sc_module(name), in("in"), out("out", attached_links), params_(params) {
  in.bind(*this);
}

void CrossbarSwitch::receive(Segment&& segment) {
  const auto& ports = segment.route->out_ports;
  if (segment.hop >= ports.size() || ports[segment.hop] >= out.size())
    throw core::SimulationError(std::string(name()) + ": segment arrived with no valid output port in its route");
  const std::size_t port = ports[segment.hop++];
  const TimePs ready = core::now_ps() + params_.traversal_latency;
  const TimePs tail_ready = segment.tail_time + params_.traversal_latency;
  ++forwarded_;
  out[port]->transmit(std::move(segment), ready, tail_ready);
}

}  // namespace fabsim::models
