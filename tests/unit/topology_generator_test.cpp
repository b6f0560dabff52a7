// The parametric topology form: oversubscription per tier, rails off,
// expand round trips, and parameter errors at their JSON paths.

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/topology_summary.hpp"
#include "topologies/topology_writer.hpp"

using namespace fabsim;

using fabsim::testing::kGB;

namespace {

std::string cluster(int nodes, const std::string& network, int gpus = 8, int nics = 8) {
  return R"({"format": "fabsim-topology/1", "name": "gen", "hardware": ")" + testing::source_path("configs/hardware/catalogue.json") +
         R"(", "generate": {"nodes": )" + std::to_string(nodes) + R"(, "node": {"gpus": )" + std::to_string(gpus) +
         R"(, "gpu_model": "h100-sxm",
            "pcie": {"switch_model": "pcie-gen5-switch", "link_model": "pcie-gen5-x16", "host_model": "host-root-complex"},
            "nics": {"model": "cx7-ndr400", "per_node": )" + std::to_string(nics) + R"(}},
          "network": )" + network + "}}";
}

topo::TopologySummary summary_of(const std::string& name, const std::string& text) {
  const auto spec = topo::load_topology(testing::write_temp(name, text));
  topo::FabricGraph graph(spec);
  return topo::summarise(spec, graph);
}

/// The error of loading `text` and building its graph (where reachability is checked).
std::string load_error_of_graph(const std::string& name, const std::string& text) {
  try {
    const auto spec = topo::load_topology(testing::write_temp(name, text));
    topo::FabricGraph graph(spec);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

/// Racks of `trays` trays of 4 NVLink-switched GPUs, a NIC per GPU on rails by
/// tray position, a root complex per tray: the NVL72 structure, scaled down.
std::string racks(int nodes, int trays, const std::string& network, const std::string& nics_extra = R"(, "rails": 4)") {
  return R"({"format": "fabsim-topology/1", "name": "racks", "hardware": ")" + testing::source_path("configs/hardware/catalogue.json") +
         R"(", "generate": {"nodes": )" + std::to_string(nodes) + R"(, "node": {"gpus": )" + std::to_string(4 * trays) +
         R"(, "gpu_model": "b200",
            "nvlink": {"switch_model": "nvswitch-gen4", "link_model": "nvlink5", "switches": 2, "links_per_switch": 1},
            "pcie": {"switch_model": "pcie-gen5-switch", "link_model": "pcie-gen5-x16", "host_model": "host-root-complex", "gpus_per_host": 4},
            "nics": {"model": "cx7-ndr400", "per_node": )" + std::to_string(4 * trays) + nics_extra + R"(}},
          "network": )" + network + "}}";
}

int device_named(const topo::TopologySpec& spec, const std::string& name) {
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].name == name) return static_cast<int>(d);
  return -1;
}

/// The names of the devices a path passes, from the first hop on.
std::vector<std::string> devices_along(const topo::TopologySpec& spec, const topo::FabricGraph& graph, int src, const topo::FabricPath& path) {
  std::vector<std::string> names;
  int at = spec.gpus[static_cast<std::size_t>(src)];
  for (const auto& hop : path.hops) {
    at = graph.neighbour(at, hop);
    names.push_back(spec.devices[static_cast<std::size_t>(at)].name);
  }
  return names;
}

std::set<std::string> linked_below(const topo::TopologySpec& spec, int device) {
  std::set<std::string> names;
  for (const auto& link : spec.links)
    if (link.b == device) names.insert(spec.devices[static_cast<std::size_t>(link.a)].name);
  return names;
}

const char* kRailOnly = R"({"tiers": 1, "switch_model": "quantum-2", "link_model": "ib-ndr-400", "nodes_per_leaf": 2})";

std::string load_error(const std::string& name, const std::string& text) {
  try {
    topo::load_topology(testing::write_temp(name, text));
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("2:1 at the leaves halves the up-links, the spines and the bisection", "[topology][generator]") {
  const auto s = summary_of("os2.json", cluster(128, R"({"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400",
                                                      "nodes_per_leaf": 32, "oversubscription": [2]})"));
  REQUIRE(s.tiers.size() == 2);
  CHECK(s.tiers[0].switches == 32);
  CHECK(s.tiers[0].oversubscription() == Approx(2.0));
  CHECK(s.tiers[1].switches == 8);  // 32 leaves x 16 up-links / 64 ports
  CHECK(s.bisection_line.bytes_per_second == Approx(512 * 50 * kGB / 2));
}

TEST_CASE("three tiers with 2:1 at the aggregation tier", "[topology][generator]") {
  const auto s = summary_of("os12.json", cluster(256, R"({"tiers": 3, "switch_model": "quantum-2", "link_model": "ib-ndr-400",
                                                       "nodes_per_leaf": 32, "nodes_per_pod": 128, "oversubscription": [1, 2]})"));
  REQUIRE(s.tiers.size() == 3);
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].oversubscription() == Approx(2.0));
  // Two pods; half of each pod's traffic can leave it.
  CHECK(s.bisection_line.bytes_per_second == Approx(1024 * 50 * kGB / 2));
}

TEST_CASE("rails off: every NIC of a node on the same leaf", "[topology][generator]") {
  const auto text = cluster(16, R"({"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400", "rails": false,
                                    "nodes_per_leaf": 4})");
  const auto spec = topo::load_topology(testing::write_temp("norails.json", text));
  topo::FabricGraph graph(spec);
  const auto s = topo::summarise(spec, graph);
  CHECK(s.tiers[0].switches == 4);  // 16 nodes x 8 NICs / 32 down-ports
  // GPU 0 of node 0 reaches GPU 3 of node 1 through their shared leaf: no spine.
  const auto& path = graph.paths(0, 8 + 3).front();
  CHECK(path.hops.size() == 6);
}

TEST_CASE("topo expand writes an explicit file that loads to the same fabric", "[topology][generator]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/ib-fat-tree-1024.json"));
  std::ostringstream out;
  topo::write_explicit_topology(out, spec);
  const auto again = topo::load_topology(testing::write_temp("expanded.json", out.str()));
  REQUIRE(again.devices.size() == spec.devices.size());
  REQUIRE(again.links.size() == spec.links.size());
  for (std::size_t i = 0; i < spec.links.size(); i += 97) {
    CHECK(again.devices[again.links[i].a].name == spec.devices[spec.links[i].a].name);
    CHECK(again.links[i].count == spec.links[i].count);
    CHECK(again.links[i].effective_bandwidth().bytes_per_second == Approx(spec.links[i].effective_bandwidth().bytes_per_second));
  }
}

TEST_CASE("generator parameters that cannot be built are named at their JSON path", "[topology][generator][errors]") {
  CHECK_THAT(load_error("bad1.json", cluster(64, R"({"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400",
                                                    "nodes_per_leaf": 32, "oversubscription": [3]})")),
             Catch::Contains("/generate/network/oversubscription/0: 32 leaf down-links do not divide by 3:1"));
  CHECK_THAT(load_error("bad2.json", cluster(2048, R"({"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400",
                                                      "nodes_per_leaf": 32})")),
             Catch::Contains("/generate/network/tiers: two tiers of 64-port switches cannot join 512 leaves; use three tiers"));
  CHECK_THAT(load_error("bad3.json", cluster(4, R"({"tiers": 4, "switch_model": "quantum-2", "link_model": "ib-ndr-400",
                                                   "nodes_per_leaf": 4})")),
             Catch::Contains("/generate/network/tiers: expected 1, 2 or 3 tiers, found 4"));
  CHECK_THAT(load_error("bad4.json", cluster(4, R"({"tiers": 2, "switch_model": "quantum-9", "link_model": "ib-ndr-400",
                                                   "nodes_per_leaf": 4})")),
             Catch::Contains("/generate/network/switch_model: unknown switch model 'quantum-9'"));
}

TEST_CASE("NICs on rails by tray position: NIC k of every node on rail k mod 4, a root complex per tray", "[topology][generator]") {
  const auto spec = topo::load_topology(testing::write_temp("racks.json", racks(2, 3, kRailOnly)));
  topo::FabricGraph graph(spec);
  const auto s = topo::summarise(spec, graph);
  CHECK(s.gpus == 24);
  CHECK(s.nvlink_domains == 2);
  REQUIRE(s.tiers.size() == 1);
  CHECK(s.tiers[0].switches == 4);  // four rails, not twelve
  // Rail r's leaf holds NICs r, r + 4 and r + 8 of both nodes.
  for (int r = 0; r < 4; ++r) {
    const int leaf = device_named(spec, fmt::format("leaf{}", r));
    REQUIRE(leaf >= 0);
    CHECK(linked_below(spec, leaf) == std::set<std::string>{fmt::format("node0.nic{}", r), fmt::format("node0.nic{}", r + 4),
                                                            fmt::format("node0.nic{}", r + 8), fmt::format("node1.nic{}", r),
                                                            fmt::format("node1.nic{}", r + 4), fmt::format("node1.nic{}", r + 8)});
  }
  // A root complex per tray of 4 GPUs, over its tray's 4 PCIe switches.
  for (int h = 0; h < 3; ++h) {
    const int host = device_named(spec, fmt::format("node1.host{}", h));
    REQUIRE(host >= 0);
    CHECK(linked_below(spec, host) == std::set<std::string>{fmt::format("node1.pcie{}", 4 * h), fmt::format("node1.pcie{}", 4 * h + 1),
                                                            fmt::format("node1.pcie{}", 4 * h + 2), fmt::format("node1.pcie{}", 4 * h + 3)});
  }
}

TEST_CASE("a rail-only network joins racks through PXN: over NVLink to the GPU on the destination's rail, out of its NIC",
          "[topology][generator][routing]") {
  // No root complex: a tray's PCIe switches meet only through NVLink and the GPUs.
  const auto no_hosts = [](const std::string& text) {
    return std::regex_replace(text, std::regex(R"(, "host_model": "host-root-complex", "gpus_per_host": 4)"), "");
  };
  const auto spec = topo::load_topology(testing::write_temp("railonly.json", no_hosts(racks(2, 2, kRailOnly))));
  topo::FabricGraph graph(spec);  // throws when its check finds GPUs cut off
  // node0.gpu0 (rail 0) -> node1.gpu1 (rail 1): relayed by node0.gpu1.
  const auto through = devices_along(spec, graph, 0, graph.paths(0, 8 + 1).front());
  REQUIRE(through.size() == 8);
  CHECK(through[1] == "node0.gpu1");
  CHECK(through[3] == "node0.nic1");
  CHECK(through[4] == "leaf1");
  CHECK(through[5] == "node1.nic1");
  CHECK(through.back() == "node1.gpu1");
  // The same rail needs no relay: node0.gpu1 -> node1.gpu5 (both rail 1).
  CHECK(devices_along(spec, graph, 1, graph.paths(1, 8 + 5).front()).size() == 6);
  // Without NVLink nothing relays: the same rails leave GPUs cut off, named.
  const std::string no_nvlink = std::regex_replace(no_hosts(racks(2, 2, kRailOnly)), std::regex(R"("nvlink": \{[^}]*\},)"), "");
  CHECK_THAT(load_error_of_graph("nonvlink.json", no_nvlink), Catch::Contains("gpu 'node0.gpu0' cannot reach gpu 'node0.gpu1'"));
}

TEST_CASE("rails and hosts per tray that cannot be built are named at their JSON path", "[topology][generator][errors]") {
  CHECK_THAT(load_error("rails3.json", racks(2, 2, kRailOnly, R"(, "rails": 3)")),
             Catch::Contains("/generate/node/nics/rails: 8 NICs per node do not divide into 3 rails evenly"));
  CHECK_THAT(load_error("host3.json", std::regex_replace(racks(1, 2, kRailOnly), std::regex(R"("gpus_per_host": 4)"),
                                                         R"("gpus_per_host": 3, "gpus_per_switch": 2)")),
             Catch::Contains("/generate/node/pcie/gpus_per_host: 3 GPUs per host is not a multiple of 2 GPUs per PCIe switch"));
  CHECK_THAT(load_error("onehost.json", std::regex_replace(racks(1, 18, kRailOnly), std::regex(R"(, "gpus_per_host": 4)"), "")),
             Catch::Contains("/generate/node/pcie: a root complex ('host-root-complex', 16 PCIe ports) cannot take 72 PCIe switches: set "
                             "\"gpus_per_host\""));
  CHECK_THAT(load_error("nohost.json", std::regex_replace(racks(1, 2, kRailOnly), std::regex(R"("host_model": "host-root-complex", )"), "")),
             Catch::Contains("/generate/node/pcie/gpus_per_host: GPUs per host need a \"host_model\""));
}

TEST_CASE("twenty NVL72 racks fit two tiers of 144-port Quantum-X800 but need three of 64-port Quantum-2", "[topology][generator]") {
  auto doc = nlohmann::json::parse(std::ifstream(testing::source_path("topologies/gb200-nvl72-20rack.json")));
  doc["hardware"] = testing::source_path("configs/hardware/catalogue.json");
  doc.erase("$schema");
  // A leaf per rail per 4 racks: 4 x 18 = 72 NICs down, 72 up; 20 leaves.
  doc["generate"]["network"] = {{"tiers", 2}, {"switch_model", "quantum-x800"}, {"link_model", "ib-ndr-400"}, {"nodes_per_leaf", 4}};
  const auto s = summary_of("x800.json", doc.dump());
  REQUIRE(s.tiers.size() == 2);
  CHECK(s.tiers[0].switches == 20);
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].switches == 12);  // 20 leaves x 6 links = 120 of 144 ports
  CHECK(s.bisection_line.bytes_per_second == Approx(720 * 50 * kGB));
  doc["generate"]["network"]["switch_model"] = "quantum-2";
  doc["generate"]["network"]["nodes_per_leaf"] = 1;
  CHECK_THAT(load_error("q2.json", doc.dump()), Catch::Contains("/generate/network/tiers: two tiers of 64-port switches cannot join 80 leaves"));
}
