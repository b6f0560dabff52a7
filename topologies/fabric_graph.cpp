#include "topologies/fabric_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "sim/core/error.hpp"
#include "sim/core/hash.hpp"
#include "topologies/nvlink_domains.hpp"

namespace fabsim::topo {

namespace {

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
  local_index_.assign(spec.devices.size(), -1);
  const auto domains = nvlink_domains(spec);
  for (std::size_t g = 0; g < spec.gpus.size(); ++g) local_index_[static_cast<std::size_t>(spec.gpus[g])] = domains.local_index[g];
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

namespace {

/// Sorts and deduplicates.
void make_set(std::vector<int>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool intersect(const std::vector<int>& x, const std::vector<int>& y) {
  auto i = x.begin();
  auto j = y.begin();
  while (i != x.end() && j != y.end()) {
    if (*i == *j) return true;
    if (*i < *j) ++i;
    else ++j;
  }
  return false;
}

}  // namespace

std::vector<std::pair<int, int>> unreachable_gpu_pairs(const TopologySpec& spec, const std::vector<char>& dead,
                                                       const std::vector<int>& gpus, std::size_t limit) {
  // Two GPUs can talk when a live direct link joins them or when both touch
  // the same connected set of forwarding devices. A GPU forwards only as PXN
  // does (see the header): what reaches it over NVLink leaves over PCIe.
  Components forwarding(spec.devices.size());
  struct Touch {
    int device;
    LinkKind kind;
  };
  std::vector<std::vector<Touch>> neighbours(spec.devices.size());
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    if (dead[l]) continue;
    const auto& link = spec.links[l];
    if (spec.forwards(link.a) && spec.forwards(link.b)) forwarding.join(link.a, link.b);
    if (!spec.forwards(link.a)) neighbours[link.a].push_back({link.b, link.kind});
    if (!spec.forwards(link.b)) neighbours[link.b].push_back({link.a, link.kind});
  }
  // The forwarding sets a GPU device touches: all of them, or over one link kind.
  auto sets = [&](int device, std::optional<LinkKind> kind) {
    std::vector<int> out;
    for (const auto& t : neighbours[static_cast<std::size_t>(device)])
      if (spec.forwards(t.device) && (!kind || t.kind == *kind)) out.push_back(forwarding.find(t.device));
    make_set(out);
    return out;
  };
  const std::size_t n = gpus.size();
  std::vector<std::vector<int>> touches(n);
  std::unordered_map<int, std::size_t> gpus_per_component;
  for (std::size_t g = 0; g < n; ++g) {
    touches[g] = sets(spec.gpus[gpus[g]], std::nullopt);
    for (int c : touches[g]) ++gpus_per_component[c];
  }
  std::vector<std::pair<int, int>> cut;
  for (const auto& [component, count] : gpus_per_component)
    if (count == n) return cut;  // one switched fabric reaches every GPU
  // PXN: what each NVLink set's GPUs (every GPU of the fabric may relay)
  // reach over PCIe, and so what a sender reaches through its NVLink peers.
  std::unordered_map<int, std::vector<int>> relayed_by_plane;
  for (const int dev : spec.gpus) {
    const auto pcie = sets(dev, LinkKind::kPcie);
    for (int plane : sets(dev, LinkKind::kNvlink)) {
      auto& r = relayed_by_plane[plane];
      r.insert(r.end(), pcie.begin(), pcie.end());
    }
  }
  for (auto& [plane, r] : relayed_by_plane) make_set(r);
  std::vector<std::vector<int>> reach(n);
  for (std::size_t g = 0; g < n; ++g) {
    const int dev = spec.gpus[gpus[g]];
    reach[g] = touches[g];
    for (int plane : sets(dev, LinkKind::kNvlink)) {
      const auto& r = relayed_by_plane[plane];
      reach[g].insert(reach[g].end(), r.begin(), r.end());
    }
    for (const auto& t : neighbours[static_cast<std::size_t>(dev)])
      if (!spec.forwards(t.device) && t.kind == LinkKind::kNvlink) {  // an NVLink mesh peer relays too
        const auto pcie = sets(t.device, LinkKind::kPcie);
        reach[g].insert(reach[g].end(), pcie.begin(), pcie.end());
      }
    make_set(reach[g]);
  }
  auto linked = [&](std::size_t x, std::size_t y) {
    const auto& direct = neighbours[static_cast<std::size_t>(spec.gpus[gpus[x]])];
    if (std::any_of(direct.begin(), direct.end(), [&](const Touch& t) { return t.device == spec.gpus[gpus[y]]; })) return true;
    return intersect(reach[x], touches[y]) && intersect(reach[y], touches[x]);
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

std::vector<FabricPath> FabricGraph::walk(int src, int dst, std::uint32_t flow, bool& hashed) const {
  const int src_dev = spec_.gpus[src], dst_dev = spec_.gpus[dst];
  std::vector<FabricPath> out;
  // Sized once for a route's depth (a few hops in any stock fabric): a
  // million-pair all-to-all walks a million routes, and growing these one
  // push at a time was a fifth of its instructions in malloc and free.
  constexpr std::size_t kUsualHops = 16;
  std::vector<LinkDirectionRef> hops;
  hops.reserve(kUsualHops);
  std::vector<std::uint16_t> out_ports;
  out_ports.reserve(kUsualHops);
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
  next.reserve(4 * kUsualHops);
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
    bool network = false, relay_choice = false;
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
      relay_choice = relay_choice || relay;
    }
    std::size_t end = next.size();
    // PXN: of the GPUs that may relay here, the one at the destination's index
    // in its NVLink domain does (NCCL's proxy on the NIC the peer uses).
    if (relay_choice && end - begin > 1) {
      const int wanted = local_index_[static_cast<std::size_t>(dst_dev)];
      for (std::size_t c = begin; c < end; ++c)
        if (local_index_[static_cast<std::size_t>(edges_[first_edge + next[c]].to)] == wanted) {
          next[begin] = next[c];
          end = begin + 1;
          next.resize(end);
          break;
        }
    }
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

const std::vector<FabricPath>& FabricGraph::paths_once(int src, int dst, std::uint32_t flow) {
  if (const auto* cached = find_cached(src, dst, flow)) return *cached;
  bool hashed = false, computed = false;
  auto found = route(src, dst, flow, hashed, computed);
  // Past the cap, still keep what a new field cost: the pair's other flows (a
  // ring's other channels) come back for it after the field has left the cache.
  if (path_cache_.size() < kPathCacheEntries || computed)
    return path_cache_.emplace(cache_key(src, dst, hashed ? flow : kAnyFlow), std::move(found)).first->second;
  uncached_paths_ = std::move(found);
  return uncached_paths_;
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

