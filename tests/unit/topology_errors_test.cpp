#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/topology_spec.hpp"

using namespace fabsim;
using fabsim::testing::source_path;
using fabsim::testing::write_temp;

namespace {

/// Loads `path` (and builds its routes) expecting a ConfigError; returns all its lines.
std::string load_error(const std::string& path) {
  try {
    const auto spec = topo::load_topology(path);
    topo::FabricGraph graph(spec);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError from " << path);
  return "";
}

std::string topology(const std::string& devices, const std::string& links) {
  return R"({"format": "fabsim-topology/1", "name": "t", "hardware": ")" + source_path("configs/hardware/catalogue.json") +
         R"(", "devices": [)" + devices + R"(], "links": [)" + links + "]}";
}

const std::string kTwoGpus =
    R"({"name": "gpu0", "kind": "gpu", "model": "h100-sxm"}, {"name": "gpu1", "kind": "gpu", "model": "h100-sxm"})";

}  // namespace

TEST_CASE("the stock HGX H100 file loads: 8 GPUs, 4 switches, 18 links per GPU split 5/4/4/5", "[topology]") {
  const auto spec = topo::load_topology(source_path("topologies/hgx-h100.json"));
  CHECK(spec.gpus.size() == 8);
  CHECK(spec.devices.size() == 12);
  std::vector<int> per_gpu(spec.devices.size(), 0), per_switch_from_gpu0(spec.devices.size(), 0);
  for (const auto& l : spec.links) {
    per_gpu[l.a] += l.count;
    if (spec.devices[l.a].name == "gpu0") per_switch_from_gpu0[l.b] = l.count;
    CHECK(l.lane_bandwidth.bytes_per_second == Approx(25e9));
  }
  for (int g : spec.gpus) CHECK(per_gpu[g] == 18);
  CHECK(per_switch_from_gpu0[8] == 5);
  CHECK(per_switch_from_gpu0[9] == 4);
  CHECK(per_switch_from_gpu0[10] == 4);
  CHECK(per_switch_from_gpu0[11] == 5);
}

TEST_CASE("an unknown model names the file, the path and the valid models", "[topology][errors]") {
  const auto path = write_temp("unknown_model.json", topology(R"({"name": "gpu0", "kind": "gpu", "model": "h999"})", ""));
  const auto message = load_error(path);
  CHECK_THAT(message, Catch::Contains(path + ": /devices/0/model: unknown gpu model 'h999'"));
  CHECK_THAT(message, Catch::Contains("h100-sxm"));
}

TEST_CASE("a link to a missing device is reported at its end", "[topology][errors]") {
  const auto path = write_temp("missing.json", topology(kTwoGpus, R"({"a": "gpu0", "b": "gpu7", "model": "nvlink4"})"));
  CHECK_THAT(load_error(path), Catch::Contains(path + ": /links/0/b: link to a missing device 'gpu7'"));
}

TEST_CASE("a value without a unit and a negative bandwidth are rejected", "[topology][errors]") {
  const auto path = write_temp("units.json", topology(kTwoGpus, R"({"a": "gpu0", "b": "gpu1", "model": "nvlink4", "bandwidth": "25", "latency": "-3 ns"})"));
  const auto message = load_error(path);
  CHECK_THAT(message, Catch::Contains("/links/0/bandwidth: '25' has no unit"));
  CHECK_THAT(message, Catch::Contains("/links/0/latency: '-3 ns' is negative"));
}

TEST_CASE("every problem of a file is reported at once", "[topology][errors]") {
  const auto path = write_temp(
      "many.json", topology(R"({"name": "gpu0", "kind": "gpu", "model": "nope"}, {"name": "gpu0", "kind": "cpu", "model": "x"})",
                            R"({"a": "gpu0", "b": "ghost", "model": "nvlink4"}, {"a": "gpu0", "b": "gpu0", "model": "copper", "speed": 3})"));
  const auto message = load_error(path);
  CHECK_THAT(message, Catch::Contains("/devices/0/model: unknown gpu model 'nope'"));
  CHECK_THAT(message, Catch::Contains("/devices/1/kind: unknown device kind 'cpu'"));
  CHECK_THAT(message, Catch::Contains("/devices/1/name: duplicate device name 'gpu0'"));
  CHECK_THAT(message, Catch::Contains("/links/0/b: link to a missing device 'ghost'"));
  CHECK_THAT(message, Catch::Contains("/links/1/speed: unknown key 'speed'"));
  CHECK_THAT(message, Catch::Contains("/links/1/model: unknown link model 'copper'"));
}

TEST_CASE("more links than a device has ports is an error naming the device", "[topology][errors]") {
  const auto path = write_temp("ports.json", topology(kTwoGpus, R"({"a": "gpu0", "b": "gpu1", "model": "nvlink4", "count": 19})"));
  CHECK_THAT(load_error(path), Catch::Contains("/links/0: device 'gpu0' (h100-sxm) has 18 nvlink ports but its links use 19"));
}

TEST_CASE("a GPU that cannot reach another is named", "[topology][errors]") {
  const auto path = write_temp("island.json", topology(kTwoGpus + R"(, {"name": "gpu2", "kind": "gpu", "model": "h100-sxm"})",
                                                       R"({"a": "gpu0", "b": "gpu1", "model": "nvlink4"})"));
  CHECK_THAT(load_error(path), Catch::Contains("/devices/0: gpu 'gpu0' cannot reach gpu 'gpu2'"));
}

TEST_CASE("GPUs do not forward traffic: a chain of three GPUs leaves the ends unreachable", "[topology][errors]") {
  const auto path = write_temp("chain.json", topology(kTwoGpus + R"(, {"name": "gpu2", "kind": "gpu", "model": "h100-sxm"})",
                                                      R"({"a": "gpu0", "b": "gpu1", "model": "nvlink4"}, {"a": "gpu1", "b": "gpu2", "model": "nvlink4"})"));
  CHECK_THAT(load_error(path), Catch::Contains("gpu 'gpu0' cannot reach gpu 'gpu2'"));
}

TEST_CASE("a missing file and invalid JSON are reported with the file name", "[topology][errors]") {
  CHECK_THAT(load_error("/nonexistent/x.json"), Catch::Contains("/nonexistent/x.json: cannot open the file"));
  const auto path = write_temp("syntax.json", "{\n  \"format\": ,\n}");
  CHECK_THAT(load_error(path), Catch::Contains(path + ": invalid JSON at line 2"));
}

TEST_CASE("the stock DGX A100 file loads: 8 GPUs, 6 NVSwitch gen2 chips, 2 NVLink3 links from each GPU to each", "[topology]") {
  const auto spec = topo::load_topology(source_path("topologies/dgx-a100.json"));
  CHECK(spec.gpus.size() == 8);
  CHECK(spec.devices.size() == 14);
  CHECK(spec.links.size() == 48);
  for (const auto& l : spec.links) {
    CHECK(l.count == 2);
    CHECK(l.efficiency == Approx(0.8));
  }
  CHECK_FALSE(spec.catalogue.switches.at("nvswitch-gen2").in_network_reduction);
}
