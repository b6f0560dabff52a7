// The network models against perftest: ib_write_lat, 8 bytes, host memory to
// host memory over 400 Gb/s RoCE, is 1.8-1.9 us within a rack (one switch)
// and 3.15-3.25 us across racks (leaf, spine, leaf), per
// roce_400g_ib_perftest_oci_gb200 in configs/measurements/published-measurements.json.
// Those two figures are what cx7-*.message_latency, spectrum-4.traversal_latency
// and the RoCE cable latency were solved from (the catalogue's fitted_on): this
// checks that the model assembles the path as the fit assumed, not accuracy.

#include <catch2/catch.hpp>

#include "fabric_probe.hpp"
#include "test_support.hpp"

using namespace fabsim;

TEST_CASE("consistency: 8-byte RDMA write latency in rack and across racks is the ib_write_lat the NIC and switch latencies were solved from", "[model][network]") {
  // Host memory is stood for by an endpoint on the NIC's PCIe link.
  std::string devices, links;
  for (int h = 0; h < 3; ++h) {
    devices += R"({"name": "host)" + std::to_string(h) + R"(", "kind": "gpu", "model": "h100-sxm"},
                 {"name": "nic)" + std::to_string(h) + R"(", "kind": "nic", "model": "cx7-roce400"},)";
    links += R"({"a": "host)" + std::to_string(h) + R"(", "b": "nic)" + std::to_string(h) + R"(", "model": "pcie-gen5-x16"},)";
  }
  const auto path = testing::write_temp("rack.json", R"({"format": "fabsim-topology/1", "name": "racks", "hardware": ")" +
                                                         testing::source_path("configs/hardware/catalogue.json") + R"(",
    "devices": [)" + devices + R"( {"name": "leaf0", "kind": "switch", "model": "spectrum-4"},
      {"name": "leaf1", "kind": "switch", "model": "spectrum-4"}, {"name": "spine0", "kind": "switch", "model": "spectrum-4"}],
    "links": [)" + links + R"( {"a": "nic0", "b": "leaf0", "model": "roce-400"}, {"a": "nic1", "b": "leaf0", "model": "roce-400"},
      {"a": "nic2", "b": "leaf1", "model": "roce-400"}, {"a": "leaf0", "b": "spine0", "model": "roce-400"},
      {"a": "leaf1", "b": "spine0", "model": "roce-400"}]})");
  const auto spec = topo::load_topology(path);
  testing::FabricProbe probe(spec, 512 * 1024);
  probe.send_at(0, 1, 0, 1, 8);           // host0 -> host1: same leaf
  probe.send_at(0, 2, 0, 2, 8);           // host0 -> host2: leaf, spine, leaf
  probe.run();
  const double in_rack_us = static_cast<double>(probe.done(1)) / 1e6;
  const double cross_rack_us = static_cast<double>(probe.done(2)) / 1e6;
  CHECK(in_rack_us >= 1.8);
  CHECK(in_rack_us <= 1.9);
  CHECK(cross_rack_us >= 3.15);
  CHECK(cross_rack_us <= 3.25);
}
