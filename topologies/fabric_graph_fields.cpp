#include "topologies/fabric_graph.hpp"

// FabricGraph's least-cost fields: the slots that hold them, the landmark
// bounds that aim their search, the search itself (Dial's buckets or A*), and
// the cache of fields left behind. The graph, its walks and the path cache
// are in fabric_graph.cpp.

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/error.hpp"

namespace fabsim::topo {

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

}  // namespace fabsim::topo
