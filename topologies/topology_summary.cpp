#include "topologies/topology_summary.hpp"

#include "topologies/nvlink_domains.hpp"

#include <boost/graph/graphviz.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>

namespace fabsim::topo {

namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Integer capacities (bytes per second) keep push-relabel exact: with doubles
// its flow-conservation check fails on rounding in debug builds.
void add_arc(FlowGraph& g, std::size_t from, std::size_t to, std::int64_t capacity) {
  auto capacity_map = boost::get(boost::edge_capacity, g);
  auto reverse_map = boost::get(boost::edge_reverse, g);
  const auto forward = boost::add_edge(from, to, g).first;
  const auto backward = boost::add_edge(to, from, g).first;
  capacity_map[forward] = capacity;
  capacity_map[backward] = 0;
  reverse_map[forward] = backward;
  reverse_map[backward] = forward;
}

double bisection(const TopologySpec& spec) {
  const std::size_t devices = spec.devices.size();
  const std::size_t source = devices, sink = devices + 1;
  const std::size_t half = spec.gpus.size() / 2;
  if (half == 0) return 0.0;
  // side: +1 sending half, -1 receiving half, 0 switches
  std::vector<int> side(devices, 0);
  for (std::size_t r = 0; r < spec.gpus.size(); ++r) side[spec.gpus[r]] = r < half ? 1 : (r < 2 * half ? -1 : 2);
  FlowGraph g(devices + 2);
  // Capacities in kB/s keep the sums of a 16k-GPU fabric far from int64's
  // limit (push-relabel adds up the excess of every source arc). A GPU's
  // source or sink arc is its own links' total: it cannot move more.
  auto kilo = [](Bandwidth b) { return static_cast<std::int64_t>(b.bytes_per_second / 1e3); };
  std::vector<std::int64_t> attached(devices, 0);
  for (const auto& l : spec.links) {
    attached[l.a] += kilo(l.raw_bandwidth());
    attached[l.b] += kilo(l.raw_bandwidth());
  }
  for (std::size_t r = 0; r < 2 * half; ++r) {
    if (r < half) add_arc(g, source, spec.gpus[r], attached[spec.gpus[r]]);
    else add_arc(g, spec.gpus[r], sink, attached[spec.gpus[r]]);
  }
  for (const auto& l : spec.links) {
    const auto c = kilo(l.raw_bandwidth());
    // GPUs do not forward: a sending GPU only sends, a receiving GPU only receives.
    auto may_leave = [&](int d) { return side[d] == 0 || side[d] == 1; };
    auto may_enter = [&](int d) { return side[d] == 0 || side[d] == -1; };
    if (may_leave(l.a) && may_enter(l.b)) add_arc(g, l.a, l.b, c);
    if (may_leave(l.b) && may_enter(l.a)) add_arc(g, l.b, l.a, c);
  }
  return static_cast<double>(boost::push_relabel_max_flow(g, source, sink)) * 1e3;
}

std::vector<NetworkTier> network_tiers(const TopologySpec& spec, const FabricGraph& graph) {
  const auto is_network_switch = [&](int d) {
    return spec.devices[d].kind == DeviceKind::kSwitch && is_network(spec.catalogue.switches.at(spec.devices[d].model).link_kind);
  };
  std::vector<int> tier(spec.devices.size(), 0);  // 0: not a network switch (or unreached)
  std::vector<int> frontier;
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].kind == DeviceKind::kNic)
      for (const auto& p : graph.ports(static_cast<int>(d))) {
        const int w = graph.neighbour(static_cast<int>(d), p);
        if (is_network_switch(w) && tier[w] == 0) {
          tier[w] = 1;
          frontier.push_back(w);
        }
      }
  for (int t = 1; !frontier.empty(); ++t) {
    std::vector<int> next;
    for (int v : frontier)
      for (const auto& p : graph.ports(v)) {
        const int w = graph.neighbour(v, p);
        if (is_network_switch(w) && tier[w] == 0) {
          tier[w] = t + 1;
          next.push_back(w);
        }
      }
    frontier = std::move(next);
  }
  std::vector<NetworkTier> tiers;
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    if (tier[d] == 0) continue;
    if (static_cast<int>(tiers.size()) < tier[d]) tiers.resize(tier[d]);
    auto& t = tiers[tier[d] - 1];
    t.tier = tier[d];
    ++t.switches;
    for (const auto& p : graph.ports(static_cast<int>(d))) {
      const int w = graph.neighbour(static_cast<int>(d), p);
      const double bw = spec.links[p.link].raw_bandwidth().bytes_per_second;
      if (tier[w] > tier[d]) t.up.bytes_per_second += bw;
      else if (tier[w] < tier[d]) t.down.bytes_per_second += bw;  // NICs have tier 0
    }
  }
  return tiers;
}

}  // namespace

TopologySummary summarise(const TopologySpec& spec, FabricGraph& graph) {
  TopologySummary s;
  s.gpus = static_cast<int>(spec.gpus.size());
  for (const auto& d : spec.devices) {
    if (d.kind == DeviceKind::kNic) ++s.nics;
    if (d.kind != DeviceKind::kSwitch) continue;
    const auto kind = spec.catalogue.switches.at(d.model).link_kind;
    if (kind == LinkKind::kNvlink) ++s.nvlink_switches;
    else if (kind == LinkKind::kPcie) ++s.pcie_switches;
    else ++s.network_switches;
  }
  s.link_bundles = static_cast<int>(spec.links.size());
  double line = std::numeric_limits<double>::infinity(), effective = line;
  for (int gpu : spec.gpus) {
    double l = 0, e = 0;
    for (const auto& port : graph.ports(gpu)) {
      if (spec.links[port.link].kind != LinkKind::kNvlink) continue;
      l += spec.links[port.link].raw_bandwidth().bytes_per_second;
      e += spec.links[port.link].effective_bandwidth().bytes_per_second;
    }
    line = std::min(line, l);
    effective = std::min(effective, e);
  }
  double network = 0;
  for (const auto& l : spec.links) {
    s.links += l.count;
    if (is_network(l.kind) && (spec.devices[l.a].kind == DeviceKind::kNic || spec.devices[l.b].kind == DeviceKind::kNic))
      network += l.raw_bandwidth().bytes_per_second;
  }
  s.injection_line = {s.gpus > 0 ? line : 0.0};
  s.injection_effective = {s.gpus > 0 ? effective : 0.0};
  s.network_per_gpu = {s.gpus > 0 ? network / s.gpus : 0.0};
  s.nvlink_domains = nvlink_domains(spec).count;
  s.bisection_line = {bisection(spec)};
  s.tiers = network_tiers(spec, graph);
  s.diameter = graph.diameter();
  s.diameter_sampled = graph.diameter_sampled();
  return s;
}

namespace {

/// Text inside a DOT double-quoted string: quotes and backslashes escaped,
/// control characters dropped, so that any device name gives valid DOT.
std::string dot_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace

void write_dot(std::ostream& out, const TopologySpec& spec, const FabricGraph& graph) {
  auto vertex_writer = [&](std::ostream& o, const auto& v) {
    const auto& d = spec.devices[graph.graph()[v].device];
    o << fmt::format("[label=\"{}\\n{}\", shape={}]", dot_escaped(d.name), dot_escaped(d.model),
                     d.kind == DeviceKind::kGpu ? "box" : (d.kind == DeviceKind::kNic ? "hexagon" : "ellipse"));
  };
  auto edge_writer = [&](std::ostream& o, const auto& e) {
    const auto& l = spec.links[graph.graph()[e].link];
    o << fmt::format("[label=\"{} x {}\"]", l.count, dot_escaped(l.model));
  };
  auto graph_writer = [&](std::ostream& o) { o << fmt::format("label=\"{}\";\n", dot_escaped(spec.name)); };
  boost::write_graphviz(out, graph.graph(), vertex_writer, edge_writer, graph_writer);
}

}  // namespace fabsim::topo
