#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/topology_summary.hpp"

#include <set>
#include <sstream>

using namespace fabsim;

TEST_CASE("HGX H100: every GPU pair has four 2-hop paths, one per NVSwitch, weighted by its links", "[routing]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/hgx-h100.json"));
  topo::FabricGraph graph(spec);
  CHECK(graph.diameter() == 2);
  const double lane = 25e9 * 0.824;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 0; dst < 8; ++dst) {
      if (src == dst) continue;
      const auto& paths = graph.paths(src, dst);
      REQUIRE(paths.size() == 4);
      double total = 0;
      for (const auto& p : paths) {
        CHECK(p.hops.size() == 2);
        CHECK(p.route.out_ports.size() == 2);
        total += p.bottleneck.bytes_per_second;
      }
      CHECK(total == Approx(18 * lane));  // striping uses all 18 links
      CHECK(paths[0].bottleneck.bytes_per_second == Approx(5 * lane));
      CHECK(paths[1].bottleneck.bytes_per_second == Approx(4 * lane));
    }
  }
}

TEST_CASE("a route's ports lead from the source through the switch to the destination", "[routing]") {
  const auto spec = topo::load_topology(testing::star_topology("star3", 3));
  topo::FabricGraph graph(spec);
  const auto& path = graph.paths(0, 2).front();
  // gpu0's only port is its link to the switch; the switch's port 2 is its link to gpu2.
  CHECK(path.route.out_ports == std::vector<std::uint16_t>{0, 2});
  CHECK(spec.links[path.hops[1].link].a == spec.gpus[2]);
  CHECK(path.hops[1].reverse);
}

TEST_CASE("two GPUs wired directly have one 1-hop path", "[routing]") {
  const auto spec = topo::load_topology(testing::star_topology("direct2", 2, true));
  topo::FabricGraph graph(spec);
  REQUIRE(graph.paths(0, 1).size() == 1);
  CHECK(graph.paths(0, 1)[0].hops.size() == 1);
  CHECK(graph.diameter() == 1);
}

TEST_CASE("topo check figures of HGX H100: 450 GB/s injection, 1.8 TB/s bisection per direction", "[routing][summary]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/hgx-h100.json"));
  topo::FabricGraph graph(spec);
  const auto s = topo::summarise(spec, graph);
  CHECK(s.gpus == 8);
  CHECK(s.nvlink_switches == 4);
  CHECK(s.nics == 0);
  CHECK(s.nvlink_domains == 1);
  CHECK(s.links == 8 * 18);
  CHECK(s.injection_line.bytes_per_second == Approx(18 * 25e9));
  CHECK(s.injection_effective.bytes_per_second == Approx(18 * 25e9 * 0.824));
  // DGX H100: 3.6 TB/s bisection counting both directions (hardware-specs.json).
  CHECK(s.bisection_line.bytes_per_second == Approx(4 * 18 * 25e9));
  CHECK(s.diameter == 2);
}

TEST_CASE("bisection of two switches with two GPUs each is the one link between the switches", "[routing][summary]") {
  const auto path = testing::write_temp("chain4.hw.json", testing::ideal_catalogue());
  const std::string devices = R"({"name": "g0", "kind": "gpu", "model": "testgpu"}, {"name": "g1", "kind": "gpu", "model": "testgpu"},
      {"name": "g2", "kind": "gpu", "model": "testgpu"}, {"name": "g3", "kind": "gpu", "model": "testgpu"},
      {"name": "s0", "kind": "switch", "model": "testswitch"}, {"name": "s1", "kind": "switch", "model": "testswitch"})";
  // Two switches, two GPUs each, one link between the switches: the cut is that link.
  const std::string links = R"({"a": "g0", "b": "s0", "model": "testlink"}, {"a": "g1", "b": "s0", "model": "testlink"},
      {"a": "g2", "b": "s1", "model": "testlink"}, {"a": "g3", "b": "s1", "model": "testlink"},
      {"a": "s0", "b": "s1", "model": "testlink"})";
  const auto topology = testing::write_temp("chain4.json", R"({"format": "fabsim-topology/1", "name": "two-switches", "hardware": "chain4.hw.json", "devices": [)" +
                                                                devices + R"(], "links": [)" + links + "]}");
  (void)path;
  const auto spec = topo::load_topology(topology);
  topo::FabricGraph graph(spec);
  const auto s = topo::summarise(spec, graph);
  CHECK(s.bisection_line.bytes_per_second == Approx(100e9));
  CHECK(s.diameter == 3);
}

TEST_CASE("topo show writes Graphviz DOT with every device and link bundle", "[routing][summary]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/hgx-h100.json"));
  topo::FabricGraph graph(spec);
  std::ostringstream dot;
  topo::write_dot(dot, spec, graph);
  const std::string text = dot.str();
  CHECK(text.rfind("graph G {", 0) == 0);
  CHECK_THAT(text, Catch::Contains("gpu7\\nh100-sxm"));
  CHECK_THAT(text, Catch::Contains("5 x nvlink4"));
  CHECK(std::count(text.begin(), text.end(), '\n') > 12 + 32);
}

TEST_CASE("NVLink wins over PCIe: GPUs with both talk through the NVSwitch only", "[routing]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/ib-fat-tree-1024.json"));
  topo::FabricGraph graph(spec);
  for (const auto& path : graph.paths(0, 1)) {
    CHECK(path.hops.size() == 2);
    for (const auto& hop : path.hops) CHECK(spec.links[hop.link].kind == topo::LinkKind::kNvlink);
  }
}

TEST_CASE("rail-optimised fat tree: a GPU reaches the same rail of another node through one leaf, its own NIC", "[routing]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/ib-fat-tree-1024.json"));
  topo::FabricGraph graph(spec);
  const auto& paths = graph.paths(3, 8 + 3);  // node0.gpu3 -> node1.gpu3
  REQUIRE(paths.size() == 1);
  std::vector<std::string> devices;
  int at = spec.gpus[3];
  for (const auto& hop : paths[0].hops) {
    at = graph.neighbour(at, hop);
    devices.push_back(spec.devices[at].name);
  }
  CHECK(devices == std::vector<std::string>{"node0.pcie3", "node0.nic3", "leaf3", "node1.nic3", "node1.pcie3", "node1.gpu3"});
}

TEST_CASE("ECMP: a flow keeps one spine and flows spread over the spines", "[routing]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/ib-fat-tree-1024.json"));
  topo::FabricGraph graph(spec);
  std::set<std::string> spines;
  for (std::uint32_t flow = 0; flow < 64; ++flow) {
    const auto& paths = graph.paths(0, 32 * 8, flow);  // node0.gpu0 -> node32.gpu0: another leaf group
    REQUIRE(paths.size() == 1);
    REQUIRE(paths[0].hops.size() == 8);
    CHECK(&graph.paths(0, 32 * 8, flow) == &paths);  // cached, stable
    spines.insert(spec.devices[graph.neighbour(0, paths[0].hops[3])].name);
  }
  CHECK(spines.size() >= 12);  // 64 flows over 16 spines
  for (const auto& s : spines) CHECK(s.rfind("spine", 0) == 0);
}

TEST_CASE("spray mode stripes one flow over every spine", "[routing]") {
  const std::string text = R"({"format": "fabsim-topology/1", "name": "spray", "hardware": ")" +
                           testing::source_path("configs/hardware/catalogue.json") + R"(", "routing": {"network_ecmp": "spray"},
    "generate": {"nodes": 1024, "node": {"gpus": 1, "gpu_model": "h100-sxm",
       "pcie": {"switch_model": "pcie-gen5-switch", "link_model": "pcie-gen5-x16"}, "nics": {"model": "cx7-ndr400", "per_node": 1}},
       "network": {"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400", "nodes_per_leaf": 32}}})";
  const auto spec = topo::load_topology(testing::write_temp("spray.json", text));
  topo::FabricGraph graph(spec);
  CHECK(graph.paths(0, 1023).size() == 16);  // 32 leaves x 32 up-links: 16 spines, 2 links from each leaf (one bundle)
}

TEST_CASE("a route between two nodes leaves third hosts out, unless one is the only way through", "[routing]") {
  // Hosts a and b hang off different leaves; only host c, with a NIC on each, joins them.
  std::string topology = R"({"format": "fabsim-topology/1", "name": "transit", "hardware": "CATALOGUE",
 "devices": [
  {"name": "a.gpu", "kind": "gpu", "model": "h100-sxm"}, {"name": "b.gpu", "kind": "gpu", "model": "h100-sxm"}, {"name": "c.gpu", "kind": "gpu", "model": "h100-sxm"},
  {"name": "a.pcie", "kind": "switch", "model": "pcie-gen5-switch"}, {"name": "b.pcie", "kind": "switch", "model": "pcie-gen5-switch"}, {"name": "c.pcie", "kind": "switch", "model": "pcie-gen5-switch"},
  {"name": "a.nic", "kind": "nic", "model": "cx7-ndr400"}, {"name": "b.nic", "kind": "nic", "model": "cx7-ndr400"},
  {"name": "c.nic0", "kind": "nic", "model": "cx7-ndr400"}, {"name": "c.nic1", "kind": "nic", "model": "cx7-ndr400"},
  {"name": "leaf0", "kind": "switch", "model": "quantum-2"}, {"name": "leaf1", "kind": "switch", "model": "quantum-2"}],
 "links": [
  {"a": "a.gpu", "b": "a.pcie", "model": "pcie-gen5-x16"}, {"a": "a.nic", "b": "a.pcie", "model": "pcie-gen5-x16"},
  {"a": "b.gpu", "b": "b.pcie", "model": "pcie-gen5-x16"}, {"a": "b.nic", "b": "b.pcie", "model": "pcie-gen5-x16"},
  {"a": "c.gpu", "b": "c.pcie", "model": "pcie-gen5-x16"}, {"a": "c.nic0", "b": "c.pcie", "model": "pcie-gen5-x16"}, {"a": "c.nic1", "b": "c.pcie", "model": "pcie-gen5-x16"},
  {"a": "a.nic", "b": "leaf0", "model": "ib-ndr-400"}, {"a": "c.nic0", "b": "leaf0", "model": "ib-ndr-400"},
  {"a": "c.nic1", "b": "leaf1", "model": "ib-ndr-400"}, {"a": "b.nic", "b": "leaf1", "model": "ib-ndr-400"}]})";
  topology.replace(topology.find("CATALOGUE"), 9, testing::source_path("configs/hardware/catalogue.json"));
  const auto spec = topo::load_topology(testing::write_temp("transit.json", topology));
  topo::FabricGraph graph(spec);
  auto devices_on = [&](int src, int dst) {
    std::vector<std::string> devices;
    int at = spec.gpus[static_cast<std::size_t>(src)];
    for (const auto& hop : graph.paths(src, dst).at(0).hops) devices.push_back(spec.devices[static_cast<std::size_t>(at = graph.neighbour(at, hop))].name);
    return devices;
  };
  // a -> c: the search that leaves other hosts out finds it.
  CHECK(devices_on(0, 2) == std::vector<std::string>{"a.pcie", "a.nic", "leaf0", "c.nic0", "c.pcie", "c.gpu"});
  // a -> b: only through host c's PCIe switch, which the full search then finds.
  CHECK(devices_on(0, 1) ==
        std::vector<std::string>{"a.pcie", "a.nic", "leaf0", "c.nic0", "c.pcie", "c.nic1", "leaf1", "b.nic", "b.pcie", "b.gpu"});
}

namespace {

/// Every hop (link, direction) and output port of a flow's paths, for comparing two searches.
std::vector<std::vector<std::int64_t>> route_signature(const std::vector<topo::FabricPath>& paths) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& p : paths) {
    auto& hops = out.emplace_back();
    for (std::size_t i = 0; i < p.hops.size(); ++i)
      hops.push_back(static_cast<std::int64_t>(p.hops[i].link) * 2 + (p.hops[i].reverse ? 1 : 0) + (std::int64_t{p.route.out_ports[i]} << 40));
  }
  return out;
}

}  // namespace

TEST_CASE("the guided route search (A* with landmarks, resumed per source) finds Dijkstra's routes on every stock multi-node fabric",
          "[routing]") {
  // One-GPU nodes on one leaf too: there a field is searched to its end before its second source's host is entered.
  const std::string one_gpu_nodes = testing::write_temp("one-gpu-nodes-routing.json", R"({"format": "fabsim-topology/1", "name": "one-gpu-nodes",
    "hardware": ")" + testing::source_path("configs/hardware/catalogue.json") + R"(",
    "generate": {"nodes": 6, "node": {"gpus": 1, "gpu_model": "h100-sxm",
      "pcie": {"switch_model": "pcie-gen5-switch", "link_model": "pcie-gen5-x16"}, "nics": {"model": "cx7-ndr400", "per_node": 1}},
      "network": {"tiers": 1, "switch_model": "quantum-2", "link_model": "ib-ndr-400", "nodes_per_leaf": 6}}})");
  for (const std::string name : {"hgx-h100-2node", "dgx-a100", "pcie-8gpu", "roce-rail-2048", "ib-fat-tree-1024", "one-gpu-nodes"}) {
    CAPTURE(name);
    const auto spec = topo::load_topology(name == "one-gpu-nodes" ? one_gpu_nodes : testing::source_path("topologies/" + name + ".json"));
    // `guided` holds only kFieldSlots fields loaded: it evicts and reloads them.
    topo::FabricGraph guided(spec, 64, true, 0), plain(spec, 64, false), roomy(spec);
    const int gpus = static_cast<int>(spec.gpus.size());
    // Destinations with many sources each, near and far, in an order that
    // resumes fields, evicts them (more than kFieldSlots destinations) and
    // reloads them from the kept fields.
    const int stride = std::max(1, gpus / 24);
    std::vector<int> ranks;
    for (int r = 0; r < gpus; r += stride) ranks.push_back(r);
    ranks.push_back(gpus - 1);
    int compared = 0, hashed_differs = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (int dst : ranks)
        for (int src : ranks) {
          if (src == dst) continue;
          for (std::uint32_t flow : {0u, 5u}) {
            const auto a = route_signature(guided.paths_once(src, dst, flow));
            const auto b = route_signature(plain.paths_once(src, dst, flow));
            REQUIRE(!a.empty());
            REQUIRE(a == b);
            REQUIRE(route_signature(roomy.paths_once(src, dst, flow)) == b);
            ++compared;
            if (flow == 5 && a != route_signature(plain.paths_once(src, dst, 0))) ++hashed_differs;
          }
        }
    CHECK(compared > 100);
    if (name == "ib-fat-tree-1024") CHECK(hashed_differs > 0);  // ECMP hashing picks per flow there
  }
}

TEST_CASE("the guided route search resumed in an all-to-all's order finds Dijkstra's routes", "[routing]") {
  // Round k sends rank s to s+k: each destination's fields are resumed for
  // source after source, hosts admitted at a search's tail. A closed leaf queued
  // again for a newly admitted host was dropped when the next source re-aimed
  // the search, and node0.gpu6 -> node2.gpu0 took PXN (cost 22) instead of its
  // own NIC and a spine (cost 20): 26 instead of 48 GB/s on a 256-GPU all-to-all.
  const auto spec = topo::load_topology(testing::source_path("topologies/ib-fat-tree-1024.json"));
  topo::FabricGraph guided(spec), plain(spec, 64, false);
  const int n = 256;
  int differs = 0, compared = 0;
  for (int k = 1; k < 24; ++k)
    for (int s = 0; s < n; ++s) {
      const int d = (s + k) % n;
      const auto flow = static_cast<std::uint32_t>(k - 1);
      if (route_signature(guided.paths_once(s, d, flow)) != route_signature(plain.paths_once(s, d, flow))) ++differs;
      ++compared;
    }
  CHECK(compared == 23 * n);
  CHECK(differs == 0);
}
