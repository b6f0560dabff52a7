// The parametric topology form: oversubscription per tier, rails off,
// expand round trips, and parameter errors at their JSON paths.

#include <catch2/catch.hpp>

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
