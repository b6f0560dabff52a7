// Fault specifications: their syntax, their resolution against a topology,
// and the symmetry classes a what-if study runs one failure of each.

#include <catch2/catch.hpp>

#include <numeric>

#include "sim/core/error.hpp"
#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/fault_classes.hpp"
#include "topologies/faults.hpp"

using fabsim::core::ConfigError;
using fabsim::testing::source_path;
namespace topo = fabsim::topo;

namespace {
topo::FaultSpec parse(const std::string& text) { return topo::parse_fault(text, "command line", "--fault"); }
std::vector<int> ranks(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}
}  // namespace

TEST_CASE("fault syntax: bundles down or degraded, devices down, with an optional strike time", "[faults]") {
  auto f = parse("gpu0~nvswitch0=down");
  CHECK(f.kind == topo::FaultKind::kLinkDown);
  CHECK(f.a == "gpu0");
  CHECK(f.b == "nvswitch0");
  CHECK_FALSE(f.at.has_value());
  f = parse("node3.nic5~leaf12=0.25@20ms");
  CHECK(f.kind == topo::FaultKind::kLinkDegraded);
  CHECK(f.fraction == 0.25);
  REQUIRE(f.at.has_value());
  CHECK(*f.at == 20'000'000'000ull);
  f = parse("spine3=down@1.5 us");
  CHECK(f.kind == topo::FaultKind::kDeviceDown);
  CHECK(*f.at == 1'500'000ull);
  for (const char* bad : {"gpu0~nvswitch0", "gpu0~nvswitch0=1", "gpu0~nvswitch0=0", "gpu0~nvswitch0=1.5", "gpu0~nvswitch0=-0.5",
                          "gpu0~nvswitch0=half", "gpu0=0.5", "gpu0~gpu0=down", "~nvswitch0=down", "a~b~c=down",
                          "gpu0~nvswitch0=down@soon", "=down"})
    CHECK_THROWS_AS(parse(bad), ConfigError);
  try {
    parse("gpu0~nvswitch0=1.5");
  } catch (const ConfigError& e) {
    CHECK(e.items().front().json_path == "--fault");
    CHECK_THAT(e.items().front().message, Catch::Contains("'1.5' is neither \"down\" nor a fraction strictly between 0 and 1"));
  }
}

TEST_CASE("faults resolve against the topology, and names that are not there are errors naming the fault", "[faults]") {
  const auto spec = topo::load_topology(source_path("topologies/hgx-h100.json"));
  const auto resolved = topo::resolve_faults(spec, {parse("nvswitch2~gpu5=down"), parse("nvswitch1=down")}, "command line");
  REQUIRE(resolved.size() == 2);
  CHECK(resolved[0].links.size() == 1);  // one bundle, either order of names
  CHECK(resolved[1].links.size() == 8);  // a switch takes every bundle it has
  auto message = [&](const std::string& text) {
    try {
      topo::resolve_faults(spec, {parse(text)}, "command line");
    } catch (const ConfigError& e) {
      return e.items().front().message;
    }
    return std::string("no error");
  };
  CHECK_THAT(message("gpu0~nvswitch9=down"), Catch::Contains("no device named 'nvswitch9'"));
  CHECK_THAT(message("gpu0~gpu1=down"), Catch::Contains("no link joins 'gpu0' and 'gpu1'"));
  CHECK_THAT(message("gpu3=down"), Catch::Contains("'gpu3' is a GPU; a failed GPU ends the job"));
}

TEST_CASE("faults from the start mark their bundles down or scale them, and a GPU cut off is refused", "[faults]") {
  auto spec = topo::load_topology(source_path("topologies/hgx-h100.json"));
  const auto resolved = topo::resolve_faults(spec, {parse("gpu0~nvswitch0=down"), parse("gpu1~nvswitch1=0.5"), parse("gpu2~nvswitch2=down@1ms")},
                                             "command line");
  const double before = spec.links[static_cast<std::size_t>(resolved[1].links[0])].effective_bandwidth().bytes_per_second;
  const auto timed = topo::apply_faults_from_start(spec, resolved);
  REQUIRE(timed.size() == 1);
  CHECK(timed[0].spec.text == "gpu2~nvswitch2=down@1ms");
  CHECK(spec.links[static_cast<std::size_t>(resolved[0].links[0])].down);
  CHECK(spec.links[static_cast<std::size_t>(resolved[1].links[0])].effective_bandwidth().bytes_per_second == Approx(before / 2));
  CHECK_FALSE(spec.links[static_cast<std::size_t>(resolved[2].links[0])].down);  // strikes later
  // Routes avoid the failed bundle: gpu0's paths to gpu1 cross 3 NVSwitches.
  topo::FabricGraph graph(spec);
  CHECK(graph.paths(0, 1).size() == 3);
  // Every bundle of gpu7 failing leaves it unreachable: refused, naming the faults.
  auto cut = topo::load_topology(source_path("topologies/hgx-h100.json"));
  std::vector<topo::FaultSpec> all;
  for (int s = 0; s < 4; ++s) all.push_back(parse("gpu7~nvswitch" + std::to_string(s) + "=down"));
  const auto r = topo::resolve_faults(cut, all, "command line");
  CHECK_THROWS_WITH(topo::check_reachable_under_faults(cut, r, ranks(8), "command line"),
                    Catch::Contains("'gpu0' cannot reach 'gpu7'"));
  CHECK_NOTHROW(topo::check_reachable_under_faults(cut, r, ranks(7), "command line"));  // a run on GPUs 0-6 does not need it
}

TEST_CASE("symmetry classes: HGX H100 has two kinds of NVLink bundle, a 1,024-GPU fat tree a handful of failure classes", "[faults]") {
  const auto hgx = topo::load_topology(source_path("topologies/hgx-h100.json"));
  const auto classes = topo::single_fault_classes(hgx, ranks(8), {true, false});
  REQUIRE(classes.size() == 2);
  CHECK(classes[0].members.size() == 16);  // gpuN~nvswitch0 and gpuN~nvswitch3: 5 links each
  CHECK(classes[1].members.size() == 16);  // nvswitch1 and nvswitch2: 4 links
  CHECK(classes[0].representative == "gpu0~nvswitch0=down");
  CHECK(std::find(classes[0].members.begin(), classes[0].members.end(), "gpu6~nvswitch3=down") != classes[0].members.end());
  // A run on GPUs 0-3 only: the bundles of GPUs it uses differ from the others.
  CHECK(topo::single_fault_classes(hgx, ranks(4), {true, false}).size() == 4);
  // Devices: the two kinds of NVSwitch.
  CHECK(topo::single_fault_classes(hgx, ranks(8), {false, true}).size() == 2);
  CHECK(topo::single_fault_classes(hgx, ranks(8), {true, true}, false).size() == 36);

  const auto tree = topo::load_topology(source_path("topologies/ib-fat-tree-1024.json"));
  const auto tree_classes = topo::single_fault_classes(tree, ranks(1024), {true, true});
  std::size_t members = 0;
  for (const auto& c : tree_classes) members += c.members.size();
  std::size_t bundles = 0;  // bundles (device pairs) plus the non-GPU devices
  {
    std::set<std::pair<int, int>> pairs;
    for (const auto& l : tree.links) pairs.insert(std::minmax(l.a, l.b));
    bundles = pairs.size();
  }
  CHECK(members == bundles + (tree.devices.size() - tree.gpus.size()));
  CHECK(tree_classes.size() <= 16);
}
