#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"

using namespace fabsim;

TEST_CASE("HGX H100: every GPU pair has four 2-hop paths, one per NVSwitch, weighted by its links", "[routing]") {
  const auto spec = topo::load_topology(testing::source_path("topologies/hgx-h100.json"));
  const topo::FabricGraph graph(spec);
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
  const topo::FabricGraph graph(spec);
  const auto& path = graph.paths(0, 2).front();
  // gpu0's only port is its link to the switch; the switch's port 2 is its link to gpu2.
  CHECK(path.route.out_ports == std::vector<std::uint16_t>{0, 2});
  CHECK(spec.links[path.hops[1].link].a == spec.gpus[2]);
  CHECK(path.hops[1].reverse);
}

TEST_CASE("two GPUs wired directly have one 1-hop path", "[routing]") {
  const auto spec = topo::load_topology(testing::star_topology("direct2", 2, true));
  const topo::FabricGraph graph(spec);
  REQUIRE(graph.paths(0, 1).size() == 1);
  CHECK(graph.paths(0, 1)[0].hops.size() == 1);
  CHECK(graph.diameter() == 1);
}
