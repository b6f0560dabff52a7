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
  // DGX A100: 8 HDR NICs of 25 GB/s take 24 GB/s each; under 25 GB/s no doubling.
  const auto a100 = nccl_net_ring_graph("ampere", 8, 25.0, 12 * traces::nccl_nvlink_link_gbps("ampere"));
  CHECK(a100.graph_channels == 8);
  CHECK(a100.speed_gbps == 24.0);
  CHECK(a100.runtime_channels == 16);
  // B200, 8 x 400 Gb/s: SM100's list starts at 96 GB/s, above the NICs; 8 rings at 48.
  const auto b200 = nccl_net_ring_graph("blackwell", 8, 50.0, 18 * traces::nccl_nvlink_link_gbps("blackwell"));
  CHECK(b200.graph_channels == 8);
  CHECK(b200.speed_gbps == 48.0);
  CHECK(b200.runtime_channels == 16);
  // Two GPUs (and NICs) per node: 2 rings at 48 GB/s, doubled to 4 at 24 (4 channels or fewer
  // always double), 8 at run time.
  const auto pair = nccl_net_ring_graph("hopper", 2, 50.0, 18 * 20.6);
  CHECK(pair.graph_channels == 4);
  CHECK(pair.speed_gbps == 24.0);
  CHECK(pair.runtime_channels == 8);
  // 100 Gb/s NICs: 12 GB/s per ring; two rings per NIC at 6 give no more, so 8 channels, 16 at run time.
  const auto slow = nccl_net_ring_graph("hopper", 8, 12.5, 18 * 20.6);
  CHECK(slow.graph_channels == 8);
  CHECK(slow.speed_gbps == 12.0);
  CHECK(slow.runtime_channels == 16);
  // Six NICs: 6 rings at 48 GB/s, kept (Hopper, under 50, more than 4); 12 runtime channels at
  // over 45 GB/s are doubled again on Hopper ("4 compute channels per search channel", connect.cc).
  const auto six = nccl_net_ring_graph("hopper", 6, 50.0, 18 * 20.6);
  CHECK(six.graph_channels == 6);
  CHECK(six.speed_gbps == 48.0);
  CHECK(six.runtime_channels == 24);
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
  // On one node: the GPU's 24 ring channels, 12 graph channels.
  traces::TunerRequest one{CollectiveOp::kAllReduce, 8, 1ull << 30, {}, {}, {}, false};
  CHECK(traces::runtime_channels(testing::h100(), one) == 24);
  CHECK(traces::graph_channels(testing::h100(), one) == 12);
}
