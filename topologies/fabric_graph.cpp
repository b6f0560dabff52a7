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

FabricGraph::FabricGraph(const TopologySpec& spec, int max_paths)
    : spec_(spec), max_paths_(max_paths), graph_(spec.devices.size()) {
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
  cost_.assign(spec.devices.size(), kUnreached);
  hops_.assign(spec.devices.size(), std::numeric_limits<std::uint16_t>::max());
  relay_.assign(spec.devices.size(), 0);
  via_nic_.assign(spec.devices.size(), 0);
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
  loaded_destination_ = -1;
}

void FabricGraph::degrade_link(int link, double kept) {
  kept_[static_cast<std::size_t>(link)] *= kept;
  path_cache_.clear();
}

void FabricGraph::reset_scratch() {
  for (int v : touched_) {
    cost_[v] = kUnreached;
    hops_[v] = std::numeric_limits<std::uint16_t>::max();
    relay_[v] = via_nic_[v] = 0;
  }
  touched_.clear();
}

void FabricGraph::compute_field(int destination, std::uint32_t bound, int stop_at, bool skip_other_hosts) {
  reset_scratch();
  const int source_host = stop_at >= 0 ? host_[stop_at] : -1, destination_host = host_[destination];
  loaded_destination_ = destination;
  loaded_bound_ = bound;
  for (auto& b : buckets_) b.clear();
  auto push = [&](int v, std::uint32_t c) {
    if (c >= buckets_.size()) buckets_.resize(c + 1);
    buckets_[c].push_back(v);
  };
  cost_[destination] = 0;
  hops_[destination] = 0;
  touched_.push_back(destination);
  push(destination, 0);
  for (std::uint32_t c = 0; c < buckets_.size() && c <= bound; ++c) {
    // Entries are (device, cost) by bucket: a stale one's device now costs less.
    for (std::size_t i = 0; i < buckets_[c].size(); ++i) {
      const int v = buckets_[c][i];
      if (cost_[v] != c) continue;
      // A GPU ends a route; it relays one only as PXN does (kPxnRelayCost):
      // traffic for a NIC, taken in over NVLink.
      const bool relay = v != destination && !spec_.forwards(v);
      if (relay && !relay_[v]) continue;
      const bool through_nic = via_nic_[v] != 0 || spec_.devices[v].kind == DeviceKind::kNic;
      for (const auto& p : ports_[v]) {
        if (dead_[static_cast<std::size_t>(p.link)]) continue;
        const auto& link = spec_.links[p.link];
        if (relay && link.kind != LinkKind::kNvlink) continue;
        const int w = neighbour(v, p);
        if (skip_other_hosts && spec_.devices[w].kind == DeviceKind::kNic && host_[w] != source_host && host_[w] != destination_host &&
            is_network(link.kind))
          continue;
        const std::uint32_t cw = c + static_cast<std::uint32_t>(link.routing_cost) + (relay ? kPxnRelayCost : 0);
        const auto h = static_cast<std::uint16_t>(hops_[v] + 1);
        const bool may_relay = w != destination && !spec_.forwards(w) && link.kind == LinkKind::kPcie && through_nic && spec_.forwards(v);
        if (cw < cost_[w] || (cw == cost_[w] && h < hops_[w])) {
          if (cost_[w] == kUnreached) touched_.push_back(w);
          const bool improved = cw < cost_[w];
          cost_[w] = cw;
          hops_[w] = h;
          relay_[w] = may_relay ? 1 : 0;
          via_nic_[w] = through_nic ? 1 : 0;
          if (improved) push(w, cw);
        } else if (cw == cost_[w] && h == hops_[w]) {
          relay_[w] = static_cast<char>(relay_[w] | (may_relay ? 1 : 0));
          via_nic_[w] = static_cast<char>(via_nic_[w] | (through_nic ? 1 : 0));
        }
      }
    }
    // Every device of cost c is now final: once the source is among them, the
    // field holds every least-cost route from it (each costs less on the way).
    if (stop_at >= 0 && cost_[stop_at] <= c) {
      loaded_bound_ = c;
      return;
    }
  }
}

std::vector<FabricPath> FabricGraph::walk(int src, int dst, std::uint32_t flow, bool& hashed) const {
  const int src_dev = spec_.gpus[src], dst_dev = spec_.gpus[dst];
  std::vector<FabricPath> out;
  std::vector<LinkDirectionRef> hops;
  std::vector<std::uint16_t> out_ports;
  const bool spray_network = spec_.routing.network_ecmp == EcmpMode::kSpray;
  // Depth-first down the cost field: branch where the hardware sprays, pick
  // one next hop by hash where ECMP hashes flows.
  std::function<void(int)> step = [&](int v) {
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
    std::vector<std::uint16_t> next;  // port indexes on least-cost routes
    bool network = false;
    for (std::size_t i = 0; i < ports_[v].size(); ++i) {
      const auto& p = ports_[v][i];
      if (dead_[static_cast<std::size_t>(p.link)]) continue;
      const int w = neighbour(v, p);
      const bool relay = w != dst_dev && !spec_.forwards(w);  // a PXN relay: entered over NVLink
      if (relay && (!relay_[w] || spec_.links[p.link].kind != LinkKind::kNvlink)) continue;
      if (cost_[w] == kUnreached) continue;
      if (cost_[w] + static_cast<std::uint32_t>(spec_.links[p.link].routing_cost) + (relay ? kPxnRelayCost : 0) != cost_[v]) continue;
      if (hops_[w] + 1 != hops_[v]) continue;
      next.push_back(static_cast<std::uint16_t>(i));
      network = network || is_network(spec_.links[p.link].kind);
    }
    if (network && !spray_network && next.size() > 1) {
      hashed = true;
      const std::uint64_t h = mix64(spec_.routing.hash_seed ^ mix64(static_cast<std::uint64_t>(src) * 0x100000001B3ull ^
                                                               static_cast<std::uint64_t>(dst) << 21 ^
                                                               static_cast<std::uint64_t>(flow) << 42 ^
                                                               static_cast<std::uint64_t>(v)));
      next = {next[h % next.size()]};
    }
    for (const auto port : next) {
      hops.push_back(ports_[v][port]);
      out_ports.push_back(port);
      step(neighbour(v, ports_[v][port]));
      hops.pop_back();
      out_ports.pop_back();
    }
  };
  step(src_dev);
  return out;
}

bool FabricGraph::load_field(int destination_device, int source_device) {
  if (loaded_destination_ == destination_device && cost_[source_device] <= loaded_bound_) return false;
  if (const auto it = field_cache_.find(destination_device); it != field_cache_.end()) {
    reset_scratch();
    for (const auto& s : it->second.settled) {
      cost_[s.device] = s.cost;
      hops_[s.device] = s.hops;
      relay_[s.device] = s.relay;
      via_nic_[s.device] = s.via_nic;
      touched_.push_back(s.device);
    }
    loaded_destination_ = destination_device;
    loaded_bound_ = it->second.bound;
    if (cost_[source_device] <= loaded_bound_) return false;
  }
  // Settle everything up to the source's cost and no further: every device on
  // a least-cost route from it costs no more (a cross-node route settles its
  // leaf and spines, not the other nodes' GPUs).
  // First without entering a third host from the network: RDMA traffic between
  // two nodes does not cross another node's PCIe, and leaving those hosts out
  // keeps a cross-node field to the network and the two hosts (on a 16k-GPU fat
  // tree, not all 16k NICs and PCIe switches). A fabric whose only route runs
  // through a third host still gets it from the full search.
  compute_field(destination_device, kUnreached - 1, source_device, true);
  if (cost_[source_device] == kUnreached) compute_field(destination_device, kUnreached - 1, source_device, false);
  if (cost_[source_device] == kUnreached)
    throw core::SimulationError(fmt::format("no route from gpu '{}' to gpu '{}'", spec_.devices[static_cast<std::size_t>(source_device)].name,
                                            spec_.devices[static_cast<std::size_t>(destination_device)].name));
  const std::uint32_t bound = loaded_bound_;
  auto& kept = field_cache_[destination_device];
  field_cache_bytes_ -= kept.settled.size() * sizeof(Settled);
  if (field_cache_bytes_ + touched_.size() * sizeof(Settled) > kFieldCacheBytes) {
    // Over budget: start over rather than track use (the fields are recomputable).
    field_cache_.clear();
    field_cache_bytes_ = 0;
  }
  auto& fresh = field_cache_[destination_device];
  fresh.bound = bound;
  fresh.settled.clear();
  fresh.settled.reserve(touched_.size());
  for (int v : touched_) fresh.settled.push_back({v, cost_[v], hops_[v], relay_[v], via_nic_[v]});
  field_cache_bytes_ += fresh.settled.size() * sizeof(Settled);
  return true;
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
    compute_field(spec_.gpus[g], kUnreached - 1);
    for (int other : spec_.gpus)
      if (other != spec_.gpus[g] && cost_[other] != kUnreached) longest = std::max<int>(longest, hops_[other]);
  }
  return longest;
}

}  // namespace fabsim::topo
