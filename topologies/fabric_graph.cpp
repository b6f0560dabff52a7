#include "topologies/fabric_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

#include "sim/core/error.hpp"
#include "sim/core/hash.hpp"

namespace fabsim::topo {

namespace {

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kAnyFlow = 0xFFFFFF;

using core::mix64;

std::uint64_t cache_key(int src, int dst, std::uint64_t flow) {
  return (static_cast<std::uint64_t>(src) << 44) | (static_cast<std::uint64_t>(dst) << 24) | (flow & kAnyFlow);
}

/// Union-find over devices, for the connectivity check.
struct Components {
  std::vector<int> parent;
  explicit Components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

}  // namespace

FabricGraph::FabricGraph(const TopologySpec& spec, int max_paths, bool guided, std::size_t field_slot_bytes)
    : spec_(spec), max_paths_(max_paths), graph_(spec.devices.size()), guided_(guided) {
  for (std::size_t d = 0; d < spec.devices.size(); ++d) graph_[d].device = static_cast<int>(d);
  ports_.resize(spec.devices.size());
  dead_.assign(spec.links.size(), 0);
  kept_.assign(spec.links.size(), 1.0);
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    dead_[l] = spec.links[l].down ? 1 : 0;
    const auto& link = spec.links[l];
    boost::add_edge(link.a, link.b, EdgeProps{static_cast<int>(l)}, graph_);
    ports_[link.a].push_back({static_cast<int>(l), false});
    ports_[link.b].push_back({static_cast<int>(l), true});
  }
  // Hosts: what NVLink and PCIe join, without the network.
  host_.resize(spec.devices.size());
  std::iota(host_.begin(), host_.end(), 0);
  auto root = [this](int d) {
    while (host_[d] != d) d = host_[d] = host_[host_[d]];  // path halving: no recursion on 100k devices
    return d;
  };
  for (const auto& link : spec.links)
    if (!is_network(link.kind)) host_[root(link.a)] = root(link.b);
  for (std::size_t d = 0; d < spec.devices.size(); ++d) host_[d] = root(static_cast<int>(d));
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].kind == DeviceKind::kNic) host_nics_[host_[d]].push_back(static_cast<int>(d));
  // What the route search reads of each device and port, packed by device.
  device_class_.resize(spec.devices.size());
  edge_begin_.reserve(spec.devices.size() + 1);
  edges_.reserve(2 * spec.links.size());
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    device_class_[d] = static_cast<std::uint8_t>((spec.forwards(static_cast<int>(d)) ? kForwards : 0) |
                                                 (spec.devices[d].kind == DeviceKind::kNic ? kIsNic : 0));
    edge_begin_.push_back(static_cast<std::uint32_t>(edges_.size()));
    for (const auto& p : ports_[d]) {
      const auto& link = spec.links[static_cast<std::size_t>(p.link)];
      edges_.push_back({neighbour(static_cast<int>(d), p), p.link, static_cast<std::uint32_t>(link.routing_cost), link.kind});
    }
  }
  edge_begin_.push_back(static_cast<std::uint32_t>(edges_.size()));
  // Fields are toward GPUs: as many slots as the budget holds, up to one per GPU.
  const std::size_t slot_bytes = kFieldBytesPerDevice * std::max<std::size_t>(1, spec.devices.size());
  max_slots_ = std::clamp(field_slot_bytes / slot_bytes, kFieldSlots, std::max(kFieldSlots, spec.gpus.size()));
  slots_.reserve(max_slots_);
  slot_of_.assign(spec.devices.size(), -1);
  activate(slot_for(-1));
  check_connected();
}

int FabricGraph::neighbour(int /*device*/, const LinkDirectionRef& port) const {
  const auto& l = spec_.links[port.link];
  return port.reverse ? l.a : l.b;
}

std::vector<std::pair<int, int>> unreachable_gpu_pairs(const TopologySpec& spec, const std::vector<char>& dead,
                                                       const std::vector<int>& gpus, std::size_t limit) {
  // Two GPUs can talk when a live direct link joins them or when both touch
  // the same connected set of forwarding devices (GPUs never forward).
  Components forwarding(spec.devices.size());
  std::vector<std::vector<int>> neighbours(spec.devices.size());
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    if (dead[l]) continue;
    const auto& link = spec.links[l];
    if (spec.forwards(link.a) && spec.forwards(link.b)) forwarding.join(link.a, link.b);
    if (!spec.forwards(link.a)) neighbours[link.a].push_back(link.b);
    if (!spec.forwards(link.b)) neighbours[link.b].push_back(link.a);
  }
  const std::size_t n = gpus.size();
  std::vector<std::vector<int>> touches(n);
  std::unordered_map<int, std::size_t> gpus_per_component;
  for (std::size_t g = 0; g < n; ++g) {
    for (int w : neighbours[spec.gpus[gpus[g]]])
      if (spec.forwards(w)) touches[g].push_back(forwarding.find(w));
    std::sort(touches[g].begin(), touches[g].end());
    touches[g].erase(std::unique(touches[g].begin(), touches[g].end()), touches[g].end());
    for (int c : touches[g]) ++gpus_per_component[c];
  }
  std::vector<std::pair<int, int>> cut;
  for (const auto& [component, count] : gpus_per_component)
    if (count == n) return cut;  // one switched fabric reaches every GPU
  auto linked = [&](std::size_t x, std::size_t y) {
    const auto& direct = neighbours[spec.gpus[gpus[x]]];
    if (std::find(direct.begin(), direct.end(), spec.gpus[gpus[y]]) != direct.end()) return true;
    std::vector<int> common;
    std::set_intersection(touches[x].begin(), touches[x].end(), touches[y].begin(), touches[y].end(), std::back_inserter(common));
    return !common.empty();
  };
  for (std::size_t x = 0; x < n && cut.size() < limit; ++x)
    for (std::size_t y = x + 1; y < n && cut.size() < limit; ++y)
      if (!linked(x, y)) cut.emplace_back(gpus[x], gpus[y]);
  return cut;
}

void FabricGraph::check_connected() {
  // Faults are checked for the GPUs a run uses (check_reachable_under_faults);
  // a failed bundle may leave a GPU the run does not use cut off.
  if (std::find(dead_.begin(), dead_.end(), 1) != dead_.end()) return;
  std::vector<int> all(spec_.gpus.size());
  std::iota(all.begin(), all.end(), 0);
  const auto cut = unreachable_gpu_pairs(spec_, dead_, all, 8);
  core::Diagnostics diag(spec_.file);
  for (const auto& [x, y] : cut) {
    const auto& a = spec_.devices[spec_.gpus[x]];
    diag.error(a.json_path, fmt::format("gpu '{}' cannot reach gpu '{}' (no path through switches connects them)", a.name,
                                        spec_.devices[spec_.gpus[y]].name));
  }
  diag.throw_if_any();
}

void FabricGraph::fail_link(int link) {
  dead_[static_cast<std::size_t>(link)] = 1;
  path_cache_.clear();
  field_cache_.clear();  // costs change around the failed link
  field_cache_bytes_ = 0;
  for (auto& slot : slots_) slot.destination = -1;
}

void FabricGraph::degrade_link(int link, double kept) {
  kept_[static_cast<std::size_t>(link)] *= kept;
  path_cache_.clear();
}

FabricGraph::Field* FabricGraph::slot_holding(int destination) {
  if (destination < 0) return nullptr;
  const int at = slot_of_[static_cast<std::size_t>(destination)];
  if (at < 0 || slots_[static_cast<std::size_t>(at)].destination != destination) return nullptr;
  return &slots_[static_cast<std::size_t>(at)];
}

void FabricGraph::set_destination(Field& field, int destination) {
  field.destination = destination;
  slot_of_[static_cast<std::size_t>(destination)] = static_cast<int>(&field - slots_.data());
}

FabricGraph::Field& FabricGraph::slot_for(int destination) {
  if (auto* slot = slot_holding(destination)) return *slot;
  if (slots_.size() < max_slots_) {
    auto& slot = slots_.emplace_back();
    const std::size_t n = spec_.devices.size();
    slot.cost.assign(n, kUnreached);
    slot.hops.assign(n, std::numeric_limits<std::uint16_t>::max());
    slot.relay.assign(n, 0);
    slot.via_nic.assign(n, 0);
    slot.closed.assign(n, 0);
    slot.targeted.assign(n, 0);
    slot.admitted.assign(n, 0);
    return slot;
  }
  // The least recently used slot goes; what it held is kept for its destination's next sources.
  auto& oldest = *std::min_element(slots_.begin(), slots_.end(), [](const Field& a, const Field& b) { return a.used < b.used; });
  if (oldest.destination >= 0) keep_field(oldest);
  return oldest;
}

void FabricGraph::activate(Field& field) {
  active_ = static_cast<std::size_t>(&field - slots_.data());
  field.used = ++use_clock_;
}

void FabricGraph::reset_scratch() {
  auto& f = slots_[active_];
  for (int v : f.touched) {
    f.cost[v] = kUnreached;
    f.hops[v] = std::numeric_limits<std::uint16_t>::max();
    f.relay[v] = f.via_nic[v] = f.closed[v] = 0;
  }
  for (int h : f.hosts) f.admitted[h] = 0;
  for (int t : f.targets) f.targeted[t] = 0;
  f.touched.clear();
  f.hosts.clear();
  f.targets.clear();
  f.open.reset(true);
  f.aim.clear();
  f.complete = false;
  f.all_hosts = true;
  f.destination = -1;
  f.resumes = 0;
}

void FabricGraph::plain_costs(int from, std::vector<std::uint32_t>& out) const {
  out.assign(spec_.devices.size(), kUnreached);
  SearchQueue open;
  open.push(0, 0, from);
  out[static_cast<std::size_t>(from)] = 0;
  while (!open.empty()) {
    const auto [c, v] = open.pop();
    if (c != out[static_cast<std::size_t>(v)]) continue;
    for (const auto& p : ports_[v]) {
      const int w = neighbour(v, p);
      const std::uint32_t cw = c + static_cast<std::uint32_t>(spec_.links[p.link].routing_cost);
      if (cw >= out[static_cast<std::size_t>(w)]) continue;
      out[static_cast<std::size_t>(w)] = cw;
      open.push(cw, cw, w);
    }
  }
}

void FabricGraph::ensure_landmarks() {
  if (landmarks_ >= 0) return;
  // Landmarks for the search's lower bound (A* with landmarks, Goldberg and
  // Harrelson 2005): GPUs spread by farthest-point choice, so that on a fat
  // tree each pod holds one and a field toward one pod does not spread into
  // the others. Costs are those of the whole graph, failed links and the
  // relay rules ignored: never more than a route's, so the bound holds.
  const std::size_t n = spec_.devices.size();
  const int wanted = std::min<int>(kLandmarks, static_cast<int>(spec_.gpus.size()));
  landmarks_ = guided_ && wanted >= 2 ? wanted : 0;
  if (landmarks_ == 0) return;
  const auto k = static_cast<std::size_t>(landmarks_);
  landmark_cost_.assign(n * k, 0);
  std::vector<std::uint32_t> nearest(spec_.gpus.size(), kUnreached), costs;
  int next = spec_.gpus.front();
  for (std::size_t l = 0; l < k; ++l) {
    plain_costs(next, costs);
    for (std::size_t d = 0; d < n; ++d) landmark_cost_[d * k + l] = costs[d];
    std::size_t farthest = 0;
    for (std::size_t g = 0; g < spec_.gpus.size(); ++g) {
      nearest[g] = std::min(nearest[g], costs[static_cast<std::size_t>(spec_.gpus[g])]);
      if (nearest[g] != kUnreached && nearest[g] > nearest[farthest]) farthest = g;
    }
    next = spec_.gpus[farthest];
  }
}

std::uint32_t FabricGraph::estimate(const Field& f, int device) const {
  if (f.aim.empty()) return 0;
  const auto k = static_cast<std::size_t>(landmarks_);
  const std::uint32_t* at = &landmark_cost_[static_cast<std::size_t>(device) * k];
  std::uint32_t bound = 0;
  for (std::size_t l = 0; l < k; ++l) {
    if (at[l] == kUnreached || f.aim[l] == kUnreached) continue;
    bound = std::max(bound, at[l] > f.aim[l] ? at[l] - f.aim[l] : f.aim[l] - at[l]);
  }
  return bound;
}

void FabricGraph::push(Field& f, int device) const {
  f.open.push(f.cost[device] + estimate(f, device), f.cost[device], device);
}

void FabricGraph::aim_at(int target) {
  auto& f = slots_[active_];
  f.aim.clear();
  if (target >= 0 && landmarks_ > 0) {
    const auto k = static_cast<std::size_t>(landmarks_);
    f.aim.assign(landmark_cost_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(target) * k),
                 landmark_cost_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(target) * k + k));
  }
  // The open devices' keys depend on the target: order them again.
  f.open.reset(f.aim.empty());
  for (int v : f.touched)
    if (!f.closed[v]) push(f, v);
}

void FabricGraph::compute_field(int destination, int stop_at, bool skip_other_hosts) {
  reset_scratch();
  auto& f = slots_[active_];
  set_destination(f, destination);
  f.all_hosts = !skip_other_hosts;
  admit_host(host_[destination]);
  if (stop_at >= 0) admit_host(host_[stop_at]);
  f.cost[destination] = 0;
  f.hops[destination] = 0;
  f.touched.push_back(destination);
  aim_at(stop_at);
  settle(stop_at);
}

void FabricGraph::admit_host(int host) {
  auto& f = slots_[active_];
  if (f.admitted[host]) return;
  f.admitted[host] = 1;
  f.hosts.push_back(host);
  if (f.all_hosts) return;
  // The host's NICs were kept out of the search so far: the settled switches
  // that lead to them search again.
  const auto it = host_nics_.find(host);
  if (it == host_nics_.end()) return;
  for (int nic : it->second)
    for (const auto& p : ports_[nic]) {
      const int w = neighbour(nic, p);
      // Open again, not just queued: a later aim_at orders the open devices
      // afresh and would drop a closed one still waiting in the queue.
      if (is_network(spec_.links[p.link].kind) && f.closed[w]) {
        f.closed[w] = 0;
        push(f, w);
      }
    }
}

void FabricGraph::settle(int stop_at) {
  auto& f = slots_[active_];
  const int destination = f.destination, destination_host = host_[destination];
  auto& field_cost = f.cost;
  auto& field_hops = f.hops;
  auto& relays = f.relay;
  auto& via_nics = f.via_nic;
  // Best first by (cost + lower bound to the target, cost): a device comes
  // after every device on a least-cost route to it (the bound is consistent
  // and every link costs at least 1), so its hops and relay marks are final
  // when it is searched from, as in Dijkstra's order.
  while (!f.open.empty()) {
    // Once the target is settled, every device on a least-cost route from it
    // has a key no larger than its cost: the field holds all of them.
    if (stop_at >= 0 && f.closed[stop_at] && f.open.top_key() > field_cost[stop_at]) {
      if (!f.targeted[stop_at]) {
        f.targeted[stop_at] = 1;
        f.targets.push_back(stop_at);
      }
      return;
    }
    const auto [c, v] = f.open.pop();
    if (field_cost[v] != c) continue;  // stale: the device costs less now
    f.closed[v] = 1;
    // A GPU ends a route; it relays one only as PXN does (kPxnRelayCost):
    // traffic for a NIC, taken in over NVLink.
    const std::uint8_t v_class = device_class_[static_cast<std::size_t>(v)];
    const bool relay = v != destination && (v_class & kForwards) == 0;
    if (relay && !relays[v]) continue;
    const bool through_nic = via_nics[v] != 0 || (v_class & kIsNic) != 0;
    // A source's host ends the search: no route from it leaves and comes
    // back, so what it reaches of the network is not searched from it, and
    // the network's costs stay those of every other source's field.
    const bool source_host = !f.all_hosts && host_[v] != destination_host && f.admitted[host_[v]];
    for (std::uint32_t e = edge_begin_[static_cast<std::size_t>(v)]; e < edge_begin_[static_cast<std::size_t>(v) + 1]; ++e) {
      const Edge& edge = edges_[e];
      if (dead_[static_cast<std::size_t>(edge.link)]) continue;
      const bool network = is_network(edge.kind);
      if (relay && edge.kind != LinkKind::kNvlink) continue;
      if (source_host && network) continue;
      const int w = edge.to;
      const std::uint8_t w_class = device_class_[static_cast<std::size_t>(w)];
      if (!f.all_hosts && network && (w_class & kIsNic) != 0 && !f.admitted[host_[w]]) continue;
      const std::uint32_t cw = c + edge.cost + (relay ? kPxnRelayCost : 0);
      const auto h = static_cast<std::uint16_t>(field_hops[v] + 1);
      const bool may_relay = w != destination && (w_class & kForwards) == 0 && edge.kind == LinkKind::kPcie && through_nic && (v_class & kForwards) != 0;
      if (cw < field_cost[w] || (cw == field_cost[w] && h < field_hops[w])) {
        if (field_cost[w] == kUnreached) f.touched.push_back(w);
        const bool improved = cw < field_cost[w];
        field_cost[w] = cw;
        field_hops[w] = h;
        relays[w] = may_relay ? 1 : 0;
        via_nics[w] = through_nic ? 1 : 0;
        if (improved) {
          f.closed[w] = 0;
          push(f, w);
        }
      } else if (cw == field_cost[w] && h == field_hops[w]) {
        relays[w] = static_cast<char>(relays[w] | (may_relay ? 1 : 0));
        via_nics[w] = static_cast<char>(via_nics[w] | (through_nic ? 1 : 0));
      }
    }
  }
  // Nothing left to search: every route to the destination from the hosts it may enter is in the field.
  f.complete = true;
  if (stop_at >= 0 && f.closed[stop_at] && !f.targeted[stop_at]) {
    f.targeted[stop_at] = 1;
    f.targets.push_back(stop_at);
  }
}

bool FabricGraph::holds_routes_from(const Field& f, int source) const {
  if (f.targeted[source]) return true;
  return f.complete && f.cost[source] != kUnreached && (f.all_hosts || f.admitted[host_[source]]);
}

std::vector<FabricPath> FabricGraph::walk(int src, int dst, std::uint32_t flow, bool& hashed) const {
  const int src_dev = spec_.gpus[src], dst_dev = spec_.gpus[dst];
  std::vector<FabricPath> out;
  std::vector<LinkDirectionRef> hops;
  std::vector<std::uint16_t> out_ports;
  const bool spray_network = spec_.routing.network_ecmp == EcmpMode::kSpray;
  const auto& field_cost = slots_[active_].cost;
  const auto& field_hops = slots_[active_].hops;
  const auto& relays = slots_[active_].relay;
  // A field searched without third hosts (its usual kind) has no route that
  // enters another host's NIC from the network: skip those ports before
  // reading their costs (a leaf's dozens of NICs, each a cache miss).
  const bool skip_other_hosts = !slots_[active_].all_hosts;
  const int dst_host = host_[static_cast<std::size_t>(dst_dev)];
  // Depth-first down the cost field: branch where the hardware sprays, pick
  // one next hop by hash where ECMP hashes flows. Each step's candidate ports
  // go on one shared stack (indexes, not a vector per step): a million-pair
  // all-to-all walks a million routes.
  std::vector<std::uint16_t> next;
  auto step = [&](auto& self, int v) -> void {
    if (static_cast<int>(out.size()) >= max_paths_) return;
    if (v == dst_dev) {
      FabricPath path;
      path.hops = hops;
      path.route.out_ports = out_ports;
      double bottleneck = std::numeric_limits<double>::infinity();
      for (const auto& h : hops)
        bottleneck = std::min(bottleneck, spec_.links[h.link].effective_bandwidth().bytes_per_second * kept_[static_cast<std::size_t>(h.link)]);
      path.bottleneck = {bottleneck};
      out.push_back(std::move(path));
      return;
    }
    const std::size_t begin = next.size();  // this step's candidates: next[begin, end)
    bool network = false;
    const std::uint32_t first_edge = edge_begin_[static_cast<std::size_t>(v)];
    for (std::uint32_t e = first_edge; e < edge_begin_[static_cast<std::size_t>(v) + 1]; ++e) {
      const Edge& edge = edges_[e];
      if (dead_[static_cast<std::size_t>(edge.link)]) continue;
      const int w = edge.to;
      if (skip_other_hosts && (device_class_[static_cast<std::size_t>(w)] & kIsNic) != 0 && is_network(edge.kind) &&
          host_[static_cast<std::size_t>(w)] != dst_host)
        continue;
      const bool relay = w != dst_dev && (device_class_[static_cast<std::size_t>(w)] & kForwards) == 0;  // a PXN relay: entered over NVLink
      if (relay && (!relays[w] || edge.kind != LinkKind::kNvlink)) continue;
      if (field_cost[w] == kUnreached) continue;
      if (field_cost[w] + edge.cost + (relay ? kPxnRelayCost : 0) != field_cost[v]) continue;
      if (field_hops[w] + 1 != field_hops[v]) continue;
      next.push_back(static_cast<std::uint16_t>(e - first_edge));
      network = network || is_network(edge.kind);
    }
    std::size_t end = next.size();
    if (network && !spray_network && end - begin > 1) {
      hashed = true;
      const std::uint64_t h = mix64(spec_.routing.hash_seed ^ mix64(static_cast<std::uint64_t>(src) * 0x100000001B3ull ^
                                                               static_cast<std::uint64_t>(dst) << 21 ^
                                                               static_cast<std::uint64_t>(flow) << 42 ^
                                                               static_cast<std::uint64_t>(v)));
      next[begin] = next[begin + h % (end - begin)];
      end = begin + 1;
      next.resize(end);
    }
    for (std::size_t c = begin; c < end; ++c) {
      const std::uint16_t port = next[c];
      hops.push_back(ports_[v][port]);
      out_ports.push_back(port);
      self(self, edges_[first_edge + port].to);
      hops.pop_back();
      out_ports.pop_back();
    }
    next.resize(begin);
  };
  step(step, src_dev);
  return out;
}

bool FabricGraph::load_field(int destination_device, int source_device) {
  ensure_landmarks();
  if (auto* slot = slot_holding(destination_device); slot != nullptr && holds_routes_from(*slot, source_device)) {
    activate(*slot);
    return false;
  }
  activate(slot_for(destination_device));
  auto& f = slots_[active_];
  if (f.destination != destination_device) {
    if (const auto it = field_cache_.find(destination_device); it != field_cache_.end()) {
      reset_scratch();
      const auto& kept = it->second;
      set_destination(f, destination_device);
      f.all_hosts = kept.all_hosts;
      f.complete = kept.complete;
      for (const auto& s : kept.settled) {
        f.cost[s.device] = s.cost;
        f.hops[s.device] = s.hops;
        f.relay[s.device] = s.relay;
        f.via_nic[s.device] = s.via_nic;
        f.closed[s.device] = s.closed;
        f.touched.push_back(s.device);
      }
      for (int h : kept.hosts) {
        f.admitted[h] = 1;
        f.hosts.push_back(h);
      }
      for (int t : kept.targets) {
        f.targeted[t] = 1;
        f.targets.push_back(t);
      }
      if (holds_routes_from(f, source_device)) return false;
    }
  }
  // Settle what routes from the source need and little more: every device on
  // a least-cost route from it, searched toward it (a cross-node route settles
  // its leaves and spines, not the other pods' or nodes'). A field already begun
  // toward the destination resumes from where it stopped (a tree's children, a
  // peer's many senders).
  // The search does not enter a third host from the network: RDMA traffic between
  // two nodes does not cross another node's PCIe, and leaving those hosts out
  // keeps a cross-node field to the network and the hosts it serves (on a 16k-GPU fat
  // tree, not all 16k NICs and PCIe switches). A fabric whose only route runs
  // through a third host still gets it from the full search.
  bool computed = false;
  if (f.destination == destination_device) {
    // Aimed at each new source, the search orders its open devices again; a
    // destination of many sources (an all-to-all's peer) goes on unaimed
    // after a few: its order then stays, and each source costs only what it adds.
    if (++f.resumes <= kAimedResumes) {
      aim_at(source_device);
    } else if (!f.aim.empty()) {
      aim_at(-1);
    }
    admit_host(host_[source_device]);
    settle(source_device);
  } else {
    compute_field(destination_device, source_device, true);
    computed = true;
  }
  if (f.cost[source_device] == kUnreached && !f.all_hosts) compute_field(destination_device, source_device, false);
  if (f.cost[source_device] == kUnreached)
    throw core::SimulationError(fmt::format("no route from gpu '{}' to gpu '{}'", spec_.devices[static_cast<std::size_t>(source_device)].name,
                                            spec_.devices[static_cast<std::size_t>(destination_device)].name));
  return computed;
}

void FabricGraph::keep_field(const Field& f) {
  const int destination_device = f.destination;
  auto& kept = field_cache_[destination_device];
  field_cache_bytes_ -= kept.settled.size() * sizeof(Settled);
  if (field_cache_bytes_ + f.touched.size() * sizeof(Settled) > kFieldCacheBytes) {
    // Over budget: start over rather than track use (the fields are recomputable).
    field_cache_.clear();
    field_cache_bytes_ = 0;
  }
  auto& fresh = field_cache_[destination_device];
  fresh.complete = f.complete;
  fresh.all_hosts = f.all_hosts;
  fresh.hosts = f.hosts;
  fresh.targets = f.targets;
  fresh.settled.clear();
  fresh.settled.reserve(f.touched.size());
  for (int v : f.touched) fresh.settled.push_back({v, f.cost[v], f.hops[v], f.relay[v], f.via_nic[v], f.closed[v]});
  field_cache_bytes_ += fresh.settled.size() * sizeof(Settled);
}

const std::vector<FabricPath>* FabricGraph::find_cached(int src, int dst, std::uint32_t flow) const {
  if (auto it = path_cache_.find(cache_key(src, dst, kAnyFlow)); it != path_cache_.end()) return &it->second;
  if (auto it = path_cache_.find(cache_key(src, dst, flow)); it != path_cache_.end()) return &it->second;
  return nullptr;
}

std::vector<FabricPath> FabricGraph::route(int src, int dst, std::uint32_t flow, bool& hashed, bool& computed) {
  computed = load_field(spec_.gpus[dst], spec_.gpus[src]);
  hashed = false;
  auto found = walk(src, dst, flow, hashed);
  if (computed && hashed) {
    // A field just computed is the costly part of a route (a cross-node one
    // settles most of a large fabric): walk the other flows of its block
    // from it now, since the other channels of a ring ask for the same pair
    // long after the field has left the cache (16k-GPU ring, README).
    const std::uint32_t base = flow / kFlowsPerField * kFlowsPerField;
    for (std::uint32_t f = base; f < base + kFlowsPerField; ++f) {
      if (f == flow || path_cache_.contains(cache_key(src, dst, f))) continue;
      bool h = false;
      path_cache_.emplace(cache_key(src, dst, f), walk(src, dst, f, h));
    }
  }
  return found;
}

const std::vector<FabricPath>& FabricGraph::paths(int src, int dst, std::uint32_t flow) {
  if (const auto* cached = find_cached(src, dst, flow)) return *cached;
  bool hashed = false, computed = false;
  auto found = route(src, dst, flow, hashed, computed);
  return path_cache_.emplace(cache_key(src, dst, hashed ? flow : kAnyFlow), std::move(found)).first->second;
}

std::vector<FabricPath> FabricGraph::paths_once(int src, int dst, std::uint32_t flow) {
  if (const auto* cached = find_cached(src, dst, flow)) return *cached;
  bool hashed = false, computed = false;
  auto found = route(src, dst, flow, hashed, computed);
  // Past the cap, still keep what a new field cost: the pair's other flows (a
  // ring's other channels) come back for it after the field has left the cache.
  if (path_cache_.size() < kPathCacheEntries || computed) path_cache_.emplace(cache_key(src, dst, hashed ? flow : kAnyFlow), found);
  return found;
}

int FabricGraph::diameter(int exact_limit) {
  const int gpus = static_cast<int>(spec_.gpus.size());
  int sources = gpus;
  diameter_sampled_ = false;
  if (gpus > exact_limit) {
    sources = std::max(1, exact_limit / 32);
    diameter_sampled_ = true;
  }
  int longest = 0;
  for (int i = 0; i < sources; ++i) {
    const int g = static_cast<int>(static_cast<std::int64_t>(i) * gpus / sources);
    // Routes are symmetric (undirected graph, symmetric costs): the field to g gives every route from g.
    activate(slot_for(spec_.gpus[g]));
    compute_field(spec_.gpus[g]);
    auto& field = slots_[active_];
    for (int other : spec_.gpus)
      if (other != spec_.gpus[g] && field.cost[other] != kUnreached) longest = std::max<int>(longest, field.hops[other]);
    field.destination = -1;  // a full field a route would not reuse: not kept
  }
  return longest;
}

}  // namespace fabsim::topo

