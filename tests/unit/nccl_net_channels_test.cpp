#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "traces/collectives/nccl_net_channels.hpp"
#include "traces/collectives/tuner.hpp"

using namespace fabsim;
using topo::Protocol;
using traces::CollectiveOp;
using traces::nccl_net_ring_graph;

TEST_CASE("NCCL's ring graph across HGX H100 nodes: 8 channels at 45 GB/s, run as 16", "[tuner][channels]") {
  // 18 NVLinks x 20.6 GB/s = 370.8 hold 7 rings at 48 GB/s but 8 at 45 (360, the better product);
  // Hopper keeps 8 channels under 50 GB/s undoubled, and ncclTopoPostset runs two per graph
  // channel: 16, as a three-node HGX H100 log prints (nccl#1453, "Channel 00/16").
  const auto h100 = nccl_net_ring_graph("hopper", 8, 50.0, 18 * traces::nccl_nvlink_link_gbps("hopper"));
  CHECK(h100.graph_channels == 8);
  CHECK(h100.speed_gbps == 45.0);
  CHECK(h100.runtime_channels == 16);
}

TEST_CASE("NCCL's ring graph across nodes on other machines", "[tuner][channels]") {
  const struct {
    const char* why;
    const char* architecture;
    int nics;
    double nic_gbps, nvlink_gbps;
    int graph_channels;
    double speed_gbps;
    int runtime_channels;
  } cases[] = {
      {"DGX A100: 8 HDR NICs of 25 GB/s take 24 GB/s each; under 25 GB/s no doubling", "ampere", 8, 25.0, 12 * 20.0, 8, 24.0, 16},
      {"B200, 8 x 400 Gb/s: SM100's list starts at 96 GB/s, above the NICs; 8 rings at 48", "blackwell", 8, 50.0, 18 * 40.1, 8, 48.0, 16},
      {"two NICs per node: 2 rings at 48 GB/s, doubled to 4 at 24 (4 channels or fewer always double)", "hopper", 2, 50.0, 18 * 20.6, 4, 24.0, 8},
      {"100 Gb/s NICs: 12 GB/s per ring; two rings per NIC at 6 give no more", "hopper", 8, 12.5, 18 * 20.6, 8, 12.0, 16},
      {"six NICs: 6 rings at 48 kept (under 50, more than 4); 12 CTAs over 45 GB/s doubled again (connect.cc)", "hopper", 6, 50.0,
       18 * 20.6, 6, 48.0, 24},
  };
  for (const auto& c : cases) {
    INFO(c.why);
    const auto graph = nccl_net_ring_graph(c.architecture, c.nics, c.nic_gbps, c.nvlink_gbps);
    CHECK(graph.graph_channels == c.graph_channels);
    CHECK(graph.speed_gbps == c.speed_gbps);
    CHECK(graph.runtime_channels == c.runtime_channels);
  }
}

TEST_CASE("across nodes NCCL prices Ring LL128 per graph channel: 8 x 36.7 GB/s on HGX H100", "[tuner][channels]") {
  traces::TunerRequest request{CollectiveOp::kAllReduce, 32, 1ull << 30, {}, {}, {}, false};
  request.nodes = 4;
  request.network_bus_gbps = 400;
  request.network_graph_channels = 8;
  request.network_runtime_channels = 16;
  const double at_8 = traces::nccl_ring_model_time_us(testing::h100(), request, Protocol::kLL128);
  const double steps = 2.0 * 31;
  // busBw = min(0.92 x 360, 8 x 36.7 = 293.6); algbw = busBw x n / steps.
  const double transfer_us = static_cast<double>(1ull << 30) / (1000.0 * 293.6 * 32 / steps);
  request.bytes = 0;
  const double latency_us = traces::nccl_ring_model_time_us(testing::h100(), request, Protocol::kLL128);
  CHECK(at_8 == Approx(latency_us + transfer_us).epsilon(1e-9));
  // The runtime channels are what the kernels run; a forced count changes them, not the graph's.
  CHECK(traces::runtime_channels(testing::h100(), request) == 16);
  CHECK(traces::graph_channels(testing::h100(), request) == 8);
  request.channels = 32;
  CHECK(traces::runtime_channels(testing::h100(), request) == 32);
  CHECK(traces::graph_channels(testing::h100(), request) == 8);
  // The CTAs NCCL builds per graph channel, which share its LL128 cap, do not follow the forced count.
  CHECK(traces::nccl_built_channels(testing::h100(), request) == 16);
  // So one CTA's LL128 cap is 36.7 x 8 / 16 GB/s, forced channels or not.
  CHECK(traces::ll128_cap_per_cta(testing::h100(), request)->bytes_per_second == Approx(18.35e9));
  // On one node: the GPU's 24 ring channels, 12 graph channels, the same cap per CTA.
  traces::TunerRequest one{CollectiveOp::kAllReduce, 8, 1ull << 30, {}, {}, {}, false};
  CHECK(traces::runtime_channels(testing::h100(), one) == 24);
  CHECK(traces::graph_channels(testing::h100(), one) == 12);
  one.channels = 8;
  CHECK(traces::ll128_cap_per_cta(testing::h100(), one)->bytes_per_second == Approx(18.35e9));
}
