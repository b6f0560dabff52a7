#include <catch2/catch.hpp>

#include <map>

#include "test_support.hpp"
#include "traces/collectives/nvls_setup.hpp"
#include "traces/collectives/nvls_tree_planner.hpp"

using namespace fabsim;
using models::TransferKind;

TEST_CASE("NVLSTree: each node reduces and stores the buffer once in its switch, and every tree edge carries it once each way",
          "[plan][nvls]") {
  for (int nodes : {2, 3, 4}) {
    INFO(nodes << " nodes");
    const int per_node = 4, n = nodes * per_node;
    const core::Bytes S = 64ull << 20;
    const auto layout = testing::node_layout(nodes, per_node);
    const auto plan = traces::plan_nvls_tree({n, S, 16, 4}, testing::nvls_params(), testing::simple_protocol(), layout.domain, layout.rail);
    CHECK(plan.algorithm == "NVLSTree");
    REQUIRE(plan.switch_groups.size() == static_cast<std::size_t>(nodes));
    std::map<int, core::Bytes> reduced, stored;  // by node
    core::Bytes network = 0;
    std::map<int, core::Bytes> head_sent;  // p2p bytes by head (local index)
    for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
      const auto& t = plan.transfers[i];
      // A DAG in order.
      CHECK(t.after_received < static_cast<std::int32_t>(i));
      for (auto extra : t.also_after_received) CHECK(extra < static_cast<std::int32_t>(i));
      if (t.kind == TransferKind::kReduceInSwitch) {
        REQUIRE(t.switch_group >= 0);
        CHECK(layout.domain[static_cast<std::size_t>(t.destination)] == t.switch_group);  // its head is in its node
        reduced[t.switch_group] += t.payload;
      } else if (t.kind == TransferKind::kMulticastInSwitch) {
        stored[t.switch_group] += t.payload;
      } else {
        // Only heads of the same local index talk across nodes.
        CHECK(layout.domain[static_cast<std::size_t>(t.source)] != layout.domain[static_cast<std::size_t>(t.destination)]);
        CHECK(layout.rail[static_cast<std::size_t>(t.source)] == layout.rail[static_cast<std::size_t>(t.destination)]);
        network += t.payload;
        head_sent[layout.rail[static_cast<std::size_t>(t.source)]] += t.payload;
      }
    }
    for (int node = 0; node < nodes; ++node) {
      CHECK(reduced[node] == S);
      CHECK(stored[node] == S);
    }
    // Two trees, each with nodes - 1 edges, each carrying half the buffer up and down.
    CHECK(network == 2 * static_cast<core::Bytes>(nodes - 1) * S);
    // The four heads share the network traffic evenly.
    for (const auto& [head, bytes] : head_sent) CHECK(bytes == network / per_node);
  }
}

TEST_CASE("NVLSTree at flow level: the same bytes as one transfer per edge and tree, with its pipeline depth", "[plan][nvls]") {
  const int nodes = 4, per_node = 8, n = nodes * per_node;
  const core::Bytes S = 1ull << 30;
  const auto layout = testing::node_layout(nodes, per_node);
  const auto segment = traces::plan_nvls_tree({n, S, 16, 4}, testing::nvls_params(), testing::simple_protocol(), layout.domain, layout.rail);
  const auto flow = traces::plan_nvls_tree({n, S, 16, 4}, testing::nvls_params(), testing::simple_protocol(), layout.domain, layout.rail, true);
  CHECK(flow.aggregated);
  core::Bytes segment_total = 0, flow_total = 0;
  for (const auto& t : segment.transfers) segment_total += t.payload;
  std::uint32_t deepest = 0;
  for (const auto& t : flow.transfers) {
    flow_total += t.payload;
    CHECK(t.lanes == 8);  // 16 channels, two trees
    CHECK(t.after_received == traces::kNoTransfer);
    deepest = std::max(deepest, t.fill_steps);
  }
  CHECK(flow_total == segment_total);
  // 8 heads x 2 trees x (4 reduces + 3 ups + 3 downs + 4 stores).
  CHECK(flow.transfers.size() == 8u * 2 * 14);
  // Deepest: reduce at a leaf, two hops up, two hops down (4 nodes: depth 2 trees), store.
  CHECK(deepest == 5);
}

TEST_CASE("NVLSTree's chunk is NCCL's: 128 KiB below 4 nodes, 64 KiB from 4, stepping down for small buffers", "[plan][nvls]") {
  const core::Bytes kib = 1024, nvls_chunk = 128 * kib;
  // 16 channels x 8 heads = 128 chunks in flight.
  auto chunk = [&](core::Bytes bytes, int nodes) {
    return traces::nvls_tree_chunk_bytes(bytes, 16, 8, traces::default_nvls_tree_max_chunk(nvls_chunk, nodes));
  };
  CHECK(chunk(16ull << 30, 2) == 128 * kib);
  CHECK(chunk(64ull << 20, 2) == 128 * kib);  // 64 MiB is not under 4 x 128 x 128 KiB
  CHECK(chunk(32ull << 20, 2) == 64 * kib);
  CHECK(chunk(8ull << 20, 2) == 64 * kib);    // not under 1 x 128 x 64 KiB
  CHECK(chunk(4ull << 20, 2) == 32 * kib);
  CHECK(chunk(16ull << 30, 4) == 64 * kib);   // NCCL_NVLS_TREE_MAXCHUNKSIZE's default at 4 nodes or more
  CHECK(chunk(4ull << 20, 8) == 32 * kib);
}

TEST_CASE("NVLSTree needs two nodes", "[plan][nvls]") {
  const auto layout = testing::node_layout(1, 8);
  CHECK_THROWS_AS(traces::plan_nvls_tree({8, 1 << 20, 16, 4}, testing::nvls_params(), testing::simple_protocol(), layout.domain, layout.rail), std::invalid_argument);
}

TEST_CASE("NVLSTree's network efficiency beyond two nodes: at both levels, on the network hops only",
          "[plan][nvls]") {
  auto nvls = testing::nvls_params();
  nvls.tree_payload_efficiency = 0.775;
  nvls.network_efficiency_beyond_two_nodes = 0.9;
  const auto simple = testing::simple_protocol();
  for (int nodes : {2, 3, 4, 8}) {
    const auto layout = testing::node_layout(nodes, 8);
    for (bool flow_level : {false, true}) {
      INFO(nodes << " nodes, " << (flow_level ? "flow" : "segment") << " level");
      const auto plan = traces::plan_nvls_tree({nodes * 8, 1ull << 30, 16, 4}, nvls, simple, layout.domain, layout.rail, flow_level);
      const double network = nodes > 2 ? simple.payload_efficiency * 0.9 : simple.payload_efficiency;
      CHECK(plan.payload_efficiency == Approx(network));
      // The switch's reductions and stores keep NVLSTree's in-node efficiency.
      for (const auto& t : plan.transfers) {
        if (t.kind == TransferKind::kPointToPoint) {
          CHECK(plan.efficiency_of(t) == Approx(network));
        } else {
          CHECK(plan.efficiency_of(t) == Approx(0.775));
        }
      }
    }
  }
  // Absent, every level keeps the rate.
  const auto layout = testing::node_layout(4, 8);
  const auto plan = traces::plan_nvls_tree({32, 1ull << 30, 16, 4}, testing::nvls_params(), simple, layout.domain, layout.rail, true);
  CHECK(plan.payload_efficiency == Approx(simple.payload_efficiency));
}
