#include "topologies/network_segments.hpp"

#include "topologies/hardware_catalogue.hpp"

namespace fabsim::topo {

Bytes network_segment_size(const TopologySpec& spec, Bytes segment_size) {
  Bytes smallest = segment_size;
  for (const auto& device : spec.devices) {
    if (device.kind != DeviceKind::kSwitch) continue;
    const auto& model = spec.catalogue.switches.at(device.model);
    if (is_network(model.link_kind)) smallest = std::min(smallest, network_segment_limit(model.input_buffer, segment_size));
  }
  return smallest;
}

}  // namespace fabsim::topo
