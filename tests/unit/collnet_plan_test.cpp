#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "traces/collectives/collnet_planner.hpp"

using namespace fabsim;
using models::TransferKind;

TEST_CASE("CollNetDirect: heads gather their share inside the node, SHARP reduces it once across nodes, heads send it back",
          "[plan][collnet]") {
  const auto protocol = testing::simple_protocol();
  for (int per_node : {1, 4, 8}) {
    INFO(per_node << " GPUs per node");
    const int nodes = 3, n = nodes * per_node;
    const core::Bytes S = 32ull << 20;
    const auto layout = testing::node_layout(nodes, per_node);
    const auto plan = traces::plan_collnet_direct({n, S, 4, 4}, protocol, layout.domain, layout.rail);
    CHECK(plan.algorithm == "CollNetDirect");
    REQUIRE(plan.switch_groups.size() == static_cast<std::size_t>(per_node));
    for (const auto& group : plan.switch_groups) {
      CHECK(group.size() == static_cast<std::size_t>(nodes));
      for (int r : group) CHECK(layout.rail[static_cast<std::size_t>(r)] == layout.rail[static_cast<std::size_t>(group.front())]);
    }
    core::Bytes in_network = 0, scattered = 0, broadcast = 0;
    for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
      const auto& t = plan.transfers[i];
      CHECK(t.after_received < static_cast<std::int32_t>(i));
      for (auto extra : t.also_after_received) CHECK(extra < static_cast<std::int32_t>(i));
      if (t.kind == TransferKind::kAllReduceInSwitch) {
        in_network += t.payload;
        continue;
      }
      REQUIRE(t.kind == TransferKind::kPointToPoint);
      CHECK(layout.domain[static_cast<std::size_t>(t.source)] == layout.domain[static_cast<std::size_t>(t.destination)]);  // inside a node
      (t.reduced_on_receipt ? scattered : broadcast) += t.payload;
    }
    // The network reduces the buffer once; each node moves (ppn - 1) S to its heads and back.
    CHECK(in_network == S);
    CHECK(scattered == static_cast<core::Bytes>(nodes * (per_node - 1)) * S);
    CHECK(broadcast == scattered);
  }
}

TEST_CASE("CollNetDirect takes at most 8 heads per node", "[plan][collnet]") {
  const auto layout = testing::node_layout(2, 16);
  const auto groups = traces::collnet_head_groups(layout.domain, layout.rail);
  CHECK(groups.size() == 8u);
  CHECK_THROWS_AS(traces::plan_collnet_direct({8, 1 << 20, 1, 4}, testing::simple_protocol(), testing::node_layout(1, 8).domain, testing::node_layout(1, 8).rail),
                  std::invalid_argument);
}

TEST_CASE("CollNetDirect at flow level: the same bytes, one transfer per hop and head standing for every channel", "[plan][collnet]") {
  const auto protocol = testing::simple_protocol();
  const auto layout = testing::node_layout(4, 8);
  const core::Bytes S = 1ull << 30;
  const auto segment = traces::plan_collnet_direct({32, S, 24, 4}, protocol, layout.domain, layout.rail);
  const auto flow = traces::plan_collnet_direct({32, S, 24, 4}, protocol, layout.domain, layout.rail, true);
  CHECK(flow.aggregated);
  core::Bytes segment_total = 0, flow_total = 0;
  for (const auto& t : segment.transfers) segment_total += t.payload;
  for (const auto& t : flow.transfers) {
    flow_total += t.payload;
    CHECK(t.lanes == 24u);
    CHECK(t.after_received == traces::kNoTransfer);
  }
  CHECK(flow_total == segment_total);
  // Per head: 4 nodes x 7 sends in, one SHARP operation, 4 x 7 sends out.
  CHECK(flow.transfers.size() == 8u * (28 + 1 + 28));
}
