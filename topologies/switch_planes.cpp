#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

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

namespace {

/// The NVLink planes: switches with in-network reduction one hop from every member.
std::vector<SwitchPlaneLinks> direct_planes(const TopologySpec& spec, const FabricGraph& graph, const std::vector<int>& group) {
  std::vector<SwitchPlaneLinks> planes;
  if (group.empty()) return planes;
  // A plane is one hop from every member, so from the first: its neighbours
  // are the candidates (not every device of a 100k-GPU fabric per node).
  std::vector<int> candidates;
  const int first = spec.gpus[group.front()];
  for (const auto& p : graph.ports(first)) candidates.push_back(graph.neighbour(first, p));
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (const int candidate : candidates) {
    const auto d = static_cast<std::size_t>(candidate);
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
                                   [&](const LinkDirectionRef& p) { return graph.live(p.link) && graph.neighbour(gpu_dev, p) == static_cast<int>(d); });
      if (up == gpu_ports.end()) break;
      const auto down = std::find_if(switch_ports.begin(), switch_ports.end(),
                                     [&](const LinkDirectionRef& p) { return p.link == up->link; });
      plane.up.push_back({*up});
      plane.down.push_back({*down});
      plane.up_route.push_back({{static_cast<std::uint16_t>(up - gpu_ports.begin())}});
      plane.down_route.push_back({{static_cast<std::uint16_t>(down - switch_ports.begin())}});
      weight = std::min(weight, spec.links[up->link].effective_bandwidth().bytes_per_second);
    }
    if (plane.up.size() != group.size()) continue;
    plane.weight = {weight};
    plane.tree.push_back({plane.switch_device, -1, {}, {}, {}, {}});
    plane.attach.assign(group.size(), 0);
    planes.push_back(std::move(plane));
  }
  return planes;
}

bool reduces_in_network(const TopologySpec& spec, int device) {
  const auto& dev = spec.devices[static_cast<std::size_t>(device)];
  return dev.kind == DeviceKind::kSwitch && spec.catalogue.switches.at(dev.model).in_network_reduction;
}

/// The port of `from` whose link leads to `to`, if any.
std::optional<std::size_t> port_towards(const FabricGraph& graph, int from, int to) {
  const auto& ports = graph.ports(from);
  for (std::size_t p = 0; p < ports.size(); ++p)
    if (graph.live(ports[p].link) && graph.neighbour(from, ports[p]) == to) return p;
  return std::nullopt;
}

/// The network plane: each member's leaf is the first switch with in-network
/// reduction on its route to the next member; one leaf is the whole tree,
/// several hang below the first such switch (in the first leaf's port order)
/// that is one hop above every one of them. Deeper trees are not found.
std::optional<SwitchPlaneLinks> network_plane(const TopologySpec& spec, FabricGraph& graph, const std::vector<int>& group) {
  if (group.size() < 2) return std::nullopt;
  SwitchPlaneLinks plane;
  plane.network = true;
  const std::size_t n = group.size();
  std::vector<int> leaf_of(n, -1), leaves;
  std::unordered_set<int> seen_leaves;
  for (std::size_t m = 0; m < n; ++m) {
    // Up: the member's route toward its neighbour in the group, to the first reducing switch.
    const auto& out = graph.paths(group[m], group[(m + 1) % n]).front();
    int at = spec.gpus[group[m]];
    std::size_t hop = 0;
    for (; hop < out.hops.size(); ++hop) {
      at = graph.neighbour(at, out.hops[hop]);
      if (reduces_in_network(spec, at)) break;
    }
    if (hop == out.hops.size()) return std::nullopt;
    leaf_of[m] = at;
    if (seen_leaves.insert(at).second) leaves.push_back(at);
    plane.up.emplace_back(out.hops.begin(), out.hops.begin() + static_cast<std::ptrdiff_t>(hop + 1));
    plane.up_route.push_back({std::vector<std::uint16_t>(out.route.out_ports.begin(), out.route.out_ports.begin() + static_cast<std::ptrdiff_t>(hop + 1))});
    // Down: the tail of the previous member's route to it, from its leaf.
    const auto& in = graph.paths(group[(m + n - 1) % n], group[m]).front();
    int from = spec.gpus[group[(m + n - 1) % n]];
    std::optional<std::size_t> at_leaf;
    for (std::size_t h = 0; h < in.hops.size(); ++h) {
      from = graph.neighbour(from, in.hops[h]);
      if (from == at) at_leaf = h;
    }
    if (!at_leaf) return std::nullopt;
    plane.down.emplace_back(in.hops.begin() + static_cast<std::ptrdiff_t>(*at_leaf + 1), in.hops.end());
    plane.down_route.push_back({std::vector<std::uint16_t>(in.route.out_ports.begin() + static_cast<std::ptrdiff_t>(*at_leaf + 1), in.route.out_ports.end())});
  }
  if (leaves.size() == 1) {
    plane.tree.push_back({leaves.front(), -1, {}, {}, {}, {}});
  } else {
    // The root: a reducing switch one hop above every leaf.
    int root = -1;
    for (const auto& port : graph.ports(leaves.front())) {
      const int candidate = graph.neighbour(leaves.front(), port);
      if (!reduces_in_network(spec, candidate) || seen_leaves.contains(candidate)) continue;
      if (std::all_of(leaves.begin(), leaves.end(), [&](int leaf) { return port_towards(graph, leaf, candidate).has_value(); })) {
        root = candidate;
        break;
      }
    }
    if (root < 0) return std::nullopt;  // a deeper tree
    plane.tree.push_back({root, -1, {}, {}, {}, {}});
    for (int leaf : leaves) {
      AggregationSwitch node;
      node.device = leaf;
      node.parent = 0;
      const auto up = *port_towards(graph, leaf, root);
      const auto up_ref = graph.ports(leaf)[up];
      const auto& root_ports = graph.ports(root);
      const auto down = static_cast<std::size_t>(std::find_if(root_ports.begin(), root_ports.end(), [&](const LinkDirectionRef& p) {
                                                   return p.link == up_ref.link;
                                                 }) - root_ports.begin());
      node.up = {up_ref};
      node.down = {root_ports[down]};
      node.up_route = {{static_cast<std::uint16_t>(up)}};
      node.down_route = {{static_cast<std::uint16_t>(down)}};
      plane.tree.push_back(std::move(node));
    }
  }
  plane.switch_device = plane.tree.front().device;
  for (std::size_t m = 0; m < n; ++m)
    plane.attach.push_back(static_cast<int>(std::find_if(plane.tree.begin(), plane.tree.end(), [&](const AggregationSwitch& s) {
                                              return s.device == leaf_of[m];
                                            }) - plane.tree.begin()));
  double weight = std::numeric_limits<double>::infinity();
  for (const auto& paths : {plane.up, plane.down})
    for (const auto& path : paths)
      for (const auto& h : path) weight = std::min(weight, spec.links[h.link].effective_bandwidth().bytes_per_second);
  for (const auto& node : plane.tree)
    for (const auto& h : node.up) weight = std::min(weight, spec.links[h.link].effective_bandwidth().bytes_per_second);
  plane.weight = {weight};
  return plane;
}

}  // namespace

std::vector<SwitchPlaneLinks> find_switch_planes(const TopologySpec& spec, FabricGraph& graph, const std::vector<int>& group) {
  auto planes = direct_planes(spec, graph, group);
  if (planes.empty())
    if (auto plane = network_plane(spec, graph, group)) planes.push_back(std::move(*plane));
  return planes;
}

const std::vector<SwitchPlaneLinks>& FabricBackend::switch_planes(const std::vector<int>& group) {
  auto it = switch_planes_.find(group);
  if (it == switch_planes_.end()) it = switch_planes_.emplace(group, find_switch_planes(spec(), graph(), group)).first;
  return it->second;
}

bool FabricBackend::supports_in_switch_collectives(const std::vector<int>& group) {
  const auto& planes = switch_planes(group);
  return !planes.empty() && !planes.front().network;
}

bool FabricBackend::supports_network_reduction(const std::vector<int>& group) {
  const auto& planes = switch_planes(group);
  return !planes.empty() && planes.front().network;
}

}  // namespace fabsim::topo
