#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/collectives/tuner.hpp"

using namespace fabsim;
using topo::Protocol;
using traces::CollectiveOp;

using testing::h100;

TEST_CASE("NCCL's model on 8 H100: LL for small, LL128 in the middle, Simple for large all-reduces", "[tuner]") {
  auto choose = [](core::Bytes b) { return traces::choose_ring(h100(), {CollectiveOp::kAllReduce, 8, b, {}, {}, {}, false}); };
  CHECK(choose(8).protocol == Protocol::kLL);
  CHECK(choose(1 << 20).protocol == Protocol::kLL);
  CHECK(choose(8 << 20).protocol == Protocol::kLL128);
  CHECK(choose(1ull << 30).protocol == Protocol::kSimple);
}

TEST_CASE("NCCL's ring latency model: 8-GPU LL all-reduce costs 6.6 + 14 x 0.6 us", "[tuner]") {
  const double t = traces::nccl_ring_model_time_us(h100(), {CollectiveOp::kAllReduce, 8, 0, {}, {}, {}, false}, Protocol::kLL);
  CHECK(t == Approx(6.6 + 14 * 0.6));
}

TEST_CASE("channels drop for small messages: 24 above 24 x 512 x 64 bytes with Simple", "[tuner]") {
  auto channels = [](core::Bytes b) {
    return traces::choose_ring(h100(), {CollectiveOp::kAllReduce, 8, b, Protocol::kSimple, {}, {}, false}).channels;
  };
  CHECK(channels(24 * 512 * 64) == 24);
  CHECK(channels(24 * 512 * 64 - 1) == 23);
  CHECK(channels(8) == 1);
}

TEST_CASE("forced protocol and channel count are honoured", "[tuner]") {
  const auto c = traces::choose_ring(h100(), {CollectiveOp::kAllGather, 8, 1ull << 30, Protocol::kLL, 8, {}, false});
  CHECK(c.protocol == Protocol::kLL);
  CHECK(c.channels == 8);
  CHECK(traces::parse_protocol("simple") == Protocol::kSimple);
  CHECK(traces::parse_protocol("LL128") == Protocol::kLL128);
  CHECK_FALSE(traces::parse_protocol("ll64").has_value());
}

TEST_CASE("NCCL's choice on 8 H100 with NVLink SHARP: Ring LL to 1 MiB, NVLS from 2 MiB", "[tuner][nvls]") {
  auto choose = [](int n, core::Bytes b) {
    return traces::choose(h100(), {CollectiveOp::kAllReduce, n, b, {}, {}, {}, true});
  };
  CHECK(choose(8, 1 << 20).algorithm == traces::Algorithm::kRing);
  CHECK(choose(8, 2 << 20).algorithm == traces::Algorithm::kNvls);
  CHECK(choose(8, 1ull << 30).algorithm == traces::Algorithm::kNvls);
  CHECK(choose(8, 1ull << 30).channels == 16);
  CHECK(choose(4, 1ull << 30).algorithm == traces::Algorithm::kRing);  // NCCL 2.29 picks Ring at 4 GPUs too
  // Without a SHARP-capable switch, or for all-gather, it is always a ring.
  CHECK(traces::choose(h100(), {CollectiveOp::kAllReduce, 8, 1ull << 30, {}, {}, {}, false}).algorithm == traces::Algorithm::kRing);
  CHECK(traces::choose(h100(), {CollectiveOp::kAllGather, 8, 1ull << 30, {}, {}, {}, true}).algorithm == traces::Algorithm::kRing);
}

TEST_CASE("NCCL's multi-node model on 2 HGX H100 nodes: Tree for small and mid all-reduces, Ring for large", "[tuner]") {
  // 16 ranks on 2 nodes, 8 x 50 GB/s NICs per node: busBw = min(360, 400) = 360 GB/s.
  traces::TunerRequest request{CollectiveOp::kAllReduce, 16, 8, {}, {}, {}, false};
  request.nodes = 2;
  request.network_bus_gbps = 400;
  // Tree LL latency: base 6.8 + 2 x ((8 - 1) x 0.6 NVLink + log2(2) x 5.0 NET) = 25.2 us (the 1 us
  // network overhead raises a ring's intra-node hops only: tuning.cc's Ring branch).
  CHECK(traces::nccl_tree_model_time_us(h100(), request, Protocol::kLL) == Approx(25.2).margin(0.01));
  // Ring LL latency: base 6.6 + (30 - 2) x 1.0 + 2 x 2.7 = 40.0 us (2(n-1) = 30 steps, 2 of them across nodes).
  CHECK(traces::nccl_ring_model_time_us(h100(), request, Protocol::kLL) == Approx(40.0).margin(0.01));
  auto choice = [&](core::Bytes bytes) {
    request.bytes = bytes;
    return traces::choose(h100(), request);
  };
  CHECK(choice(8).algorithm == traces::Algorithm::kTree);
  CHECK(choice(8).protocol == Protocol::kLL);
  CHECK(choice(16 << 20).algorithm == traces::Algorithm::kTree);
  CHECK(choice(16 << 20).protocol == Protocol::kLL128);
  CHECK(choice(1ull << 30).algorithm == traces::Algorithm::kRing);
  CHECK(choice(1ull << 30).protocol == Protocol::kSimple);
  // Forced Ring keeps the ring; forced Tree picks the tree's own protocol.
  request.algorithm = traces::Algorithm::kRing;
  CHECK(choice(8).algorithm == traces::Algorithm::kRing);
  // One node: Tree never wins by default (NCCL's single-node model).
  request.algorithm.reset();
  request.nodes = 1;
  CHECK(choice(8).algorithm == traces::Algorithm::kRing);
}

TEST_CASE("NCCL's multi-node model on 2 HGX H100 nodes with NVLS in each: NVLSTree for large all-reduces", "[tuner]") {
  traces::TunerRequest request{CollectiveOp::kAllReduce, 16, 8, {}, {}, {}, false};
  request.nodes = 2;
  request.network_bus_gbps = 400;
  request.nvls_in_every_node = true;
  // Latency: NVLink 25 + 2 x log2(2) x NET 20.9 = 66.8 us, base 0.
  CHECK(traces::nccl_nvls_tree_model_time_us(h100(), request) == Approx(66.8).margin(0.01));
  // Per head: min(40 x 0.85 x 15/16 x 2 = 63.75, 50 x 2 = 100, perChMaxNVLSTreeBw 57.7) = 57.7 GB/s; 8 heads: busBw 461.6,
  // algbw 461.6 x 16/30 = 246.2 GB/s.
  request.bytes = 1ull << 30;
  CHECK(traces::nccl_nvls_tree_model_time_us(h100(), request) == Approx(66.8 + (1ull << 30) / (1000.0 * 461.6 * 16 / 30)).epsilon(1e-6));
  auto choice = [&](core::Bytes bytes) {
    request.bytes = bytes;
    return traces::choose(h100(), request);
  };
  CHECK(choice(8).algorithm == traces::Algorithm::kTree);
  CHECK(choice(1ull << 30).algorithm == traces::Algorithm::kNvlsTree);
  CHECK(choice(1ull << 30).protocol == Protocol::kSimple);
  CHECK(choice(1ull << 30).channels == 16);
  // Other collectives never take it.
  request.op = CollectiveOp::kAllGather;
  CHECK(choice(1ull << 30).algorithm == traces::Algorithm::kRing);
}

TEST_CASE("NCCL's model picks PAT for small and mid all-gathers at one GPU per node, Ring for large", "[tuner]") {
  traces::TunerRequest request{CollectiveOp::kAllGather, 16, 64 << 10, {}, {}, {}, false};
  request.nodes = 16;
  request.network_bus_gbps = 50;
  // PAT latency: base 8 + log2(16) x 14 / 3.5 + 2.8 x 16 = 68.8 us; bandwidth 0.75 x min(graph, 50 GB/s NIC) = 37.5 GB/s.
  CHECK(traces::nccl_pat_model_time_us(h100(), request) == Approx(68.8 + (64 << 10) / (1000.0 * 37.5)).epsilon(1e-6));
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kPat);
  CHECK(traces::choose(h100(), request).protocol == Protocol::kSimple);
  request.op = CollectiveOp::kReduceScatter;
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kPat);
  request.bytes = 1ull << 30;
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kRing);
  // Two GPUs per node: never PAT.
  request.bytes = 64 << 10;
  request.nodes = 8;
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kRing);
}

TEST_CASE("Algorithm names parse as NCCL_ALGO and NCCL's logs spell them", "[tuner]") {
  CHECK(traces::parse_algorithm("NVLSTree") == traces::Algorithm::kNvlsTree);
  CHECK(traces::parse_algorithm("NVLS_TREE") == traces::Algorithm::kNvlsTree);
  CHECK(traces::parse_algorithm("collnet") == traces::Algorithm::kCollNetDirect);
  CHECK(traces::parse_algorithm("COLLNET_DIRECT") == traces::Algorithm::kCollNetDirect);
  CHECK(traces::parse_algorithm("pat") == traces::Algorithm::kPat);
  CHECK_FALSE(traces::parse_algorithm("CollNetChain"));
  CHECK_FALSE(traces::parse_algorithm("auto"));
}

TEST_CASE("a network plugin's reported latency joins NCCL's model on every network hop, twice with Simple", "[tuner]") {
  // aws-ofi-nccl reports 75 us on p5 (src/platform-aws.cpp); tuning.cc adds latencyInter to
  // interLat, and again for Simple (the GPUDirect flush).
  traces::TunerRequest request{CollectiveOp::kAllReduce, 16, 8, {}, {}, {}, false};
  request.nodes = 2;
  request.network_bus_gbps = 400;
  const double tree_ll = traces::nccl_tree_model_time_us(h100(), request, Protocol::kLL);
  const double ring_ll = traces::nccl_ring_model_time_us(h100(), request, Protocol::kLL);
  const double ring_simple = traces::nccl_ring_model_time_us(h100(), request, Protocol::kSimple);
  request.net_plugin_latency_us = 75;
  // Tree: 2 x log2(2) network hops; Ring all-reduce: 2 (n_nodes - 1) = 2 network steps.
  CHECK(traces::nccl_tree_model_time_us(h100(), request, Protocol::kLL) == Approx(tree_ll + 2 * 75).margin(0.01));
  CHECK(traces::nccl_ring_model_time_us(h100(), request, Protocol::kLL) == Approx(ring_ll + 2 * 75).margin(0.01));
  CHECK(traces::nccl_ring_model_time_us(h100(), request, Protocol::kSimple) == Approx(ring_simple + 2 * 150).margin(0.01));
  // So a ring all-gather on 2 p5-like nodes keeps LL128 longer before Simple's doubled cost pays off.
  request.op = CollectiveOp::kAllGather;
  request.bytes = 256ull << 20;
  request.net_plugin_latency_us = 0;
  const auto without = traces::choose(h100(), request).protocol;
  request.net_plugin_latency_us = 75;
  CHECK(without == Protocol::kSimple);
  CHECK(traces::choose(h100(), request).protocol == Protocol::kLL128);
}

TEST_CASE("a tree's LL channels drop at 512 threads x 8 bytes each, a ring's at 8 bytes x the ranks (enqueue.cc, tuning.cc)", "[tuner]") {
  // tuning.cc multiplies only threadThresholds[RING][LL] by nRanks (since 2.8.3):
  // on 32 ranks a 128 KiB Tree LL all-reduce runs on all 24 channels (4 KiB each
  // is enough), where a ring would drop to one.
  traces::TunerRequest request{CollectiveOp::kAllReduce, 32, 128 << 10, Protocol::kLL, {}, {}, false};
  request.nodes = 4;
  CHECK(traces::trimmed_channels(h100(), request, Protocol::kLL, /*ring=*/false) == 24);
  CHECK(traces::trimmed_channels(h100(), request, Protocol::kLL, /*ring=*/true) == 1);
  CHECK(traces::choose_tree(h100(), request).channels == 24);
  request.bytes = 8 << 10;  // 8 KiB: two channels of 512 threads x 8 bytes
  CHECK(traces::choose_tree(h100(), request).channels == 2);
  request.bytes = 8;
  CHECK(traces::choose_tree(h100(), request).channels == 1);
}
