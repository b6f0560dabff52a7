// Every stock topology loads, validates and routes, and its figures match
// values worked out by hand from the hardware catalogue.

#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/topology_summary.hpp"

using namespace fabsim;

namespace {

struct Loaded {
  topo::TopologySpec spec;
  topo::TopologySummary summary;
};

Loaded load(const std::string& file) {
  Loaded l{topo::load_topology(testing::source_path("topologies/" + file)), {}};
  topo::FabricGraph graph(l.spec);
  l.summary = topo::summarise(l.spec, graph);
  return l;
}

/// Ports each device uses: the links of its bundles.
std::vector<int> ports_used(const topo::TopologySpec& spec) {
  std::vector<int> ports(spec.devices.size(), 0);
  for (const auto& link : spec.links) {
    ports[static_cast<std::size_t>(link.a)] += link.count;
    ports[static_cast<std::size_t>(link.b)] += link.count;
  }
  return ports;
}

}  // namespace

using fabsim::testing::kGB;

TEST_CASE("hgx-h200: the H100 baseboard with H200 GPUs", "[topology][stock]") {
  const auto [spec, s] = load("hgx-h200.json");
  CHECK(s.gpus == 8);
  CHECK(s.nvlink_switches == 4);
  CHECK(s.links == 8 * 18);
  CHECK(spec.devices[spec.gpus[0]].model == "h200-sxm");
  CHECK(s.injection_line.bytes_per_second == Approx(450 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(4 * 450 * kGB));  // 4 GPUs x 18 links x 25 GB/s
  CHECK(s.diameter == 2);
}

TEST_CASE("hgx-b200: two NVLink switch chips, 9 NVLink5 links from each GPU to each, ports full", "[topology][stock]") {
  const auto [spec, s] = load("hgx-b200.json");
  CHECK(s.nvlink_switches == 2);
  CHECK(s.link_bundles == 16);
  CHECK(s.links == 8 * 18);
  CHECK(s.injection_line.bytes_per_second == Approx(900 * kGB));  // 18 x 50 GB/s
  CHECK(s.bisection_line.bytes_per_second == Approx(4 * 900 * kGB));
}

TEST_CASE("dgx-a100: six NVSwitch gen2 chips, 12 NVLink3 links per GPU", "[topology][stock]") {
  const auto [spec, s] = load("dgx-a100.json");
  CHECK(s.nvlink_switches == 6);
  CHECK(s.injection_line.bytes_per_second == Approx(300 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(4 * 300 * kGB));
}

TEST_CASE("nvlink-mesh-4gpu: six links between every pair, no switch, one hop", "[topology][stock]") {
  const auto [spec, s] = load("nvlink-mesh-4gpu.json");
  CHECK(s.gpus == 4);
  CHECK(s.nvlink_switches == 0);
  CHECK(s.link_bundles == 6);
  CHECK(s.injection_line.bytes_per_second == Approx(18 * 25 * kGB));
  // {gpu0, gpu1} to {gpu2, gpu3}: four pairs x 6 links x 25 GB/s
  CHECK(s.bisection_line.bytes_per_second == Approx(4 * 6 * 25 * kGB));
  CHECK(s.diameter == 1);
}

TEST_CASE("pcie-8gpu: no NVLink, and the halves meet at the root complex over two Gen5 x16 links", "[topology][stock]") {
  const auto [spec, s] = load("pcie-8gpu.json");
  CHECK(s.gpus == 8);
  CHECK(s.pcie_switches == 5);  // four switches and the root complex
  CHECK(s.injection_line.bytes_per_second == 0.0);
  CHECK(s.bisection_line.bytes_per_second == Approx(2 * 63 * kGB));
  CHECK(s.diameter == 4);  // gpu - switch - root complex - switch - gpu
}

TEST_CASE("gb200-nvl72: 72 GPUs, 18 NVLink switch chips with every port used, a NIC per GPU", "[topology][stock]") {
  const auto [spec, s] = load("gb200-nvl72.json");
  CHECK(s.gpus == 72);
  CHECK(s.nvlink_domains == 1);
  CHECK(s.nvlink_switches == 18);
  CHECK(s.nics == 72);
  CHECK(s.links == 72 * 18 + 72 * 2);
  CHECK(s.injection_line.bytes_per_second == Approx(900 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(36 * 900 * kGB));
  CHECK(s.diameter == 2);
}

TEST_CASE("ib-fat-tree-1024: 128 nodes, 32 leaves and 16 spines, non-blocking", "[topology][stock]") {
  const auto [spec, s] = load("ib-fat-tree-1024.json");
  CHECK(s.gpus == 1024);
  CHECK(s.nvlink_domains == 128);
  CHECK(s.nics == 1024);
  CHECK(s.network_switches == 48);
  CHECK(s.pcie_switches == 128 * 9);  // 8 PCIe switches and a root complex per node
  CHECK(s.network_per_gpu.bytes_per_second == Approx(50 * kGB));
  REQUIRE(s.tiers.size() == 2);
  CHECK(s.tiers[0].switches == 32);
  CHECK(s.tiers[0].down.bytes_per_second == Approx(1024 * 50 * kGB));
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].switches == 16);
  CHECK(s.bisection_line.bytes_per_second == Approx(512 * 50 * kGB));  // half the NICs
  CHECK(s.diameter == 8);  // gpu pcie nic leaf spine leaf nic pcie gpu
}

TEST_CASE("ib-fat-tree-16k: three tiers, 512 + 512 + 256 switches, 1:1 at every tier", "[topology][stock]") {
  const auto [spec, s] = load("ib-fat-tree-16k.json");
  CHECK(s.gpus == 16384);
  CHECK(s.nics == 16384);
  REQUIRE(s.tiers.size() == 3);
  CHECK(s.tiers[0].switches == 512);
  CHECK(s.tiers[1].switches == 512);
  CHECK(s.tiers[2].switches == 256);
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].oversubscription() == Approx(1.0));
  CHECK(s.bisection_line.bytes_per_second == Approx(8192 * 50 * kGB));
  CHECK(s.diameter == 10);
  CHECK(s.diameter_sampled);
}

TEST_CASE("ib-fat-tree-98k: 98,304 GPUs on three tiers of 144-port switches, 1,536 + 1,536 + 1,024, 1:1 at every tier", "[topology][stock]") {
  const auto [spec, s] = load("ib-fat-tree-98k.json");
  CHECK(s.gpus == 98304);
  CHECK(s.nics == 98304);
  REQUIRE(s.tiers.size() == 3);
  CHECK(s.tiers[0].switches == 1536);
  CHECK(s.tiers[1].switches == 1536);
  CHECK(s.tiers[2].switches == 1024);
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].oversubscription() == Approx(1.0));
  CHECK(s.bisection_line.bytes_per_second == Approx(49152 * 50 * kGB));  // half the NICs at NDR
  CHECK(s.diameter == 10);
  // No port over the radix: a leaf's 64 + 64, a core's 24 pods x 4 links.
  const auto ports = ports_used(spec);
  int widest = 0;
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].model == "quantum-x800") widest = std::max(widest, ports[d]);
  CHECK(widest == 128);
}

TEST_CASE("roce-rail-2048: a two-tier Spectrum-4 RoCE fabric", "[topology][stock]") {
  const auto [spec, s] = load("roce-rail-2048.json");
  CHECK(s.gpus == 2048);
  CHECK(s.network_switches == 48);
  CHECK(spec.links.back().kind == topo::LinkKind::kEthernet);
  CHECK(s.bisection_line.bytes_per_second == Approx(1024 * 50 * kGB));
}

TEST_CASE("gcp-a3ultra-2node: two HGX H200 VMs, a 400 Gb/s ConnectX-7 RoCE NIC per GPU (3,200 Gb/s per VM, Google's docs)",
          "[topology][stock]") {
  const auto [spec, s] = load("gcp-a3ultra-2node.json");
  CHECK(s.gpus == 16);
  CHECK(s.nvlink_domains == 2);
  CHECK(s.nics == 16);
  CHECK(s.network_switches == 8);  // one per NIC index: the stand-in for GCP's unpublished fabric
  CHECK(spec.devices[spec.gpus[0]].model == "h200-sxm");
  CHECK(s.network_per_gpu.bytes_per_second == Approx(50 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(8 * 50 * kGB));
  CHECK(spec.links.back().kind == topo::LinkKind::kEthernet);
  CHECK(spec.links.back().model == "roce-400");
}

TEST_CASE("aws-p5-32node: 32 p5.48xlarge, a 400 Gb/s EFA device per GPU (four 100 Gb/s interfaces striped by aws-ofi-nccl)",
          "[topology][stock]") {
  const auto [spec, s] = load("aws-p5-32node.json");
  CHECK(s.gpus == 256);
  CHECK(s.nvlink_domains == 32);
  CHECK(s.nics == 256);
  CHECK(s.network_switches == 8);  // one per NIC index: the stand-in for AWS's unpublished fabric
  CHECK(spec.devices[spec.gpus[0]].model == "h100-sxm");
  CHECK(s.network_per_gpu.bytes_per_second == Approx(50 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(128 * 50 * kGB));
  CHECK(spec.links.back().kind == topo::LinkKind::kEthernet);
  CHECK(spec.links.back().model == "efa-400");
  // aws-ofi-nccl sets NCCL_BUFFSIZE=8 MiB on p5: Simple steps of 1 MiB, where NCCL's default makes 512 KiB.
  CHECK(spec.catalogue.gpus.at("h100-sxm").protocols.at(topo::Protocol::kSimple).slot_bytes == (1u << 20));
  CHECK(spec.catalogue.gpus.at("h100-sxm").protocols.at(topo::Protocol::kLL128).slot_bytes ==
        load("hgx-h100-2node.json").spec.catalogue.gpus.at("h100-sxm").protocols.at(topo::Protocol::kLL128).slot_bytes);
  CHECK(load("hgx-h100-2node.json").spec.catalogue.gpus.at("h100-sxm").protocols.at(topo::Protocol::kSimple).slot_bytes == (512u << 10));
}

TEST_CASE("a NIC's plugin_buffsize resizes the Simple steps of every GPU on its fabric, as NCCL_BUFFSIZE does", "[topology]") {
  const nlohmann::json patch = {{"nics", {{"cx7-ndr400", {{"plugin_buffsize", {{"value", "2 MiB"}, {"source", "test"}}}}}}}};
  const auto spec = topo::load_topology(testing::source_path("topologies/hgx-h100-2node.json"), "", nullptr, patch);
  CHECK(spec.catalogue.gpus.at("h100-sxm").protocols.at(topo::Protocol::kSimple).slot_bytes == (256u << 10));  // 2 MiB / 8 steps
}

TEST_CASE("gb200-nvl72-2rack: 144 GPUs in two NVLink domains, four rail switches, a root complex per tray", "[topology][stock]") {
  const auto [spec, s] = load("gb200-nvl72-2rack.json");
  CHECK(s.gpus == 144);
  CHECK(s.nvlink_domains == 2);
  CHECK(s.nvlink_switches == 36);
  CHECK(s.nics == 144);
  CHECK(s.pcie_switches == 2 * (72 + 18));  // a PCIe switch per GPU, a root complex per tray of 4
  REQUIRE(s.tiers.size() == 1);
  CHECK(s.tiers[0].switches == 4);
  CHECK(s.network_per_gpu.bytes_per_second == Approx(50 * kGB));
  CHECK(s.bisection_line.bytes_per_second == Approx(72 * 50 * kGB));  // one rack's NICs
  CHECK(s.diameter == 8);  // gpu nvswitch gpu(PXN relay) pcie nic leaf nic pcie gpu
  // Every rail switch uses 36 of its 64 ports.
  const auto ports = ports_used(spec);
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].model == "quantum-2") CHECK(ports[d] == 36);
}

TEST_CASE("gb200-nvl72-20rack: 1,440 GPUs on three non-blocking tiers of Quantum-2, 80 + 45 + 36 switches", "[topology][stock]") {
  const auto [spec, s] = load("gb200-nvl72-20rack.json");
  CHECK(s.gpus == 1440);
  CHECK(s.nvlink_domains == 20);
  CHECK(s.nics == 1440);
  REQUIRE(s.tiers.size() == 3);
  CHECK(s.tiers[0].switches == 80);  // a leaf per rail per rack
  CHECK(s.tiers[1].switches == 45);  // 5 pods of 4 racks, 9 aggregation switches each
  CHECK(s.tiers[2].switches == 36);
  CHECK(s.tiers[0].oversubscription() == Approx(1.0));
  CHECK(s.tiers[1].oversubscription() == Approx(1.0));
  CHECK(s.bisection_line.bytes_per_second == Approx(720 * 50 * kGB));
  CHECK(s.diameter == 10);
  const auto ports = ports_used(spec);
  int widest = 0;
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (spec.devices[d].model == "quantum-2") widest = std::max(widest, ports[d]);
  CHECK(widest == 64);  // an aggregation switch: 32 down, 32 up
}
