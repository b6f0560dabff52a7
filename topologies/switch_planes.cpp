#include <algorithm>
#include <limits>

#include "topologies/fabric_backend.hpp"

namespace fabsim::topo {

bool FabricBackend::proxied(int source, int destination) {
  if (source == destination) return false;
  const auto& path = graph().paths(source, destination).front();
  int at = spec().gpus[source];
  for (const auto& hop : path.hops) {
    at = graph().neighbour(at, hop);
    if (spec().devices[at].kind == DeviceKind::kNic) return true;
  }
  return false;
}

std::vector<SwitchPlaneLinks> find_switch_planes(const TopologySpec& spec, const FabricGraph& graph, const std::vector<int>& group) {
  std::vector<SwitchPlaneLinks> planes;
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    const auto& dev = spec.devices[d];
    if (dev.kind != DeviceKind::kSwitch || !spec.catalogue.switches.at(dev.model).in_network_reduction) continue;
    SwitchPlaneLinks plane;
    plane.switch_device = static_cast<int>(d);
    double weight = std::numeric_limits<double>::infinity();
    const auto& switch_ports = graph.ports(static_cast<int>(d));
    for (int gpu : group) {
      const int gpu_dev = spec.gpus[gpu];
      const auto& gpu_ports = graph.ports(gpu_dev);
      // The member's port whose link ends at this switch, and the switch's port back.
      const auto up = std::find_if(gpu_ports.begin(), gpu_ports.end(),
                                   [&](const LinkDirectionRef& p) { return graph.neighbour(gpu_dev, p) == static_cast<int>(d); });
      if (up == gpu_ports.end()) break;
      const auto down = std::find_if(switch_ports.begin(), switch_ports.end(),
                                     [&](const LinkDirectionRef& p) { return p.link == up->link; });
      plane.up.push_back(*up);
      plane.down.push_back(*down);
      plane.up_port.push_back(static_cast<std::uint16_t>(up - gpu_ports.begin()));
      plane.down_port.push_back(static_cast<std::uint16_t>(down - switch_ports.begin()));
      weight = std::min(weight, spec.links[up->link].effective_bandwidth().bytes_per_second);
    }
    if (plane.up.size() != group.size()) continue;
    plane.weight = {weight};
    planes.push_back(std::move(plane));
  }
  return planes;
}

}  // namespace fabsim::topo
