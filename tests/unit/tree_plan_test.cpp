#include <catch2/catch.hpp>

#include <numeric>

#include "test_support.hpp"
#include "traces/collectives/tree_planner.hpp"

using namespace fabsim;

TEST_CASE("NCCL's double binary tree: node 0 roots tree 0, the mirror roots tree 1, and no node is interior in both", "[tree]") {
  CHECK(traces::binary_tree_parents(4, 0) == std::vector<int>{-1, 2, 0, 2});
  CHECK(traces::binary_tree_parents(4, 1) == std::vector<int>{1, 3, 1, -1});
  for (int n = 2; n <= 32; ++n) {
    INFO(n << " nodes");
    std::vector<int> children[2] = {std::vector<int>(static_cast<std::size_t>(n), 0), std::vector<int>(static_cast<std::size_t>(n), 0)};
    for (int t = 0; t < 2; ++t) {
      const auto parents = traces::binary_tree_parents(n, t);
      int roots = 0;
      for (int i = 0; i < n; ++i) {
        const int p = parents[static_cast<std::size_t>(i)];
        if (p < 0) ++roots;
        else ++children[t][static_cast<std::size_t>(p)];
      }
      CHECK(roots == 1);
      for (int c : children[t]) CHECK(c <= 2);
    }
    if (n % 2 == 0)
      for (int i = 0; i < n; ++i) CHECK((children[0][static_cast<std::size_t>(i)] == 0 || children[1][static_cast<std::size_t>(i)] == 0));
  }
}

TEST_CASE("A tree all-reduce across nodes moves each channel's share 2(n-1) times: once up and once down every edge", "[tree]") {
  const auto protocol = testing::simple_protocol();
  const int nodes = 4, per_node = 2, n = nodes * per_node;
  std::vector<int> domain(static_cast<std::size_t>(n)), rail(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    domain[static_cast<std::size_t>(r)] = r / per_node;
    rail[static_cast<std::size_t>(r)] = r % per_node;
  }
  const core::Bytes size = 64ull << 20;
  const auto plan = traces::plan_double_binary_tree({traces::CollectiveOp::kAllReduce, n, 0, size, 4, topo::Protocol::kSimple, 4},
                                                    protocol, domain, rail);
  CHECK(plan.algorithm == "Tree");
  const auto sent = plan.bytes_sent_by_rank();
  CHECK(std::accumulate(sent.begin(), sent.end(), core::Bytes{0}) == 2 * static_cast<core::Bytes>(n - 1) * size);
  // Every transfer depends only on earlier ones: the plan is a DAG in order.
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    CHECK(t.after_received < static_cast<std::int32_t>(i));
    for (auto extra : t.also_after_received) CHECK(extra < static_cast<std::int32_t>(i));
  }
  // A node's head waits for its chain and its child nodes before sending up: some sends have two or three receipts to wait for.
  std::size_t joins = 0;
  for (const auto& t : plan.transfers) joins += t.also_after_received.empty() ? 0 : 1;
  CHECK(joins > 0);
}

TEST_CASE("Tree LL128's chunk shrinks for mid sizes as NCCL's calcCollChunking shrinks it", "[plan][tree]") {
  const core::Bytes step = 576000;  // LL128's payload per step (catalogue slot_bytes)
  auto chunk = [&](int ranks, int nodes, core::Bytes bytes) {
    traces::ChainRequest r;
    r.op = traces::CollectiveOp::kAllReduce;
    r.ranks = ranks;
    r.bytes = bytes;
    r.channels = 24;
    r.protocol = topo::Protocol::kLL128;
    return traces::tree_ll128_chunk_bytes(r, step, nodes);
  };
  // 4 nodes of 8: (1 + 2 + 0.8) x 64 / 8 = 30.4 chunks per channel wanted, then 7.6.
  CHECK(chunk(32, 4, 4ull << 20) == 17280);  // 576000 -> 72000 -> 18000, in whole 1920 B grains
  CHECK(chunk(32, 4, 16ull << 30) == step);  // large buffers keep the whole step
  // 2 nodes of 8: 22.4 then 5.6 chunks per channel.
  CHECK(chunk(16, 2, 8ull << 20) == 34560);  // 576000 -> 72000 -> 36000
  CHECK(chunk(16, 2, 2ull << 20) == 17280);  // ...and never under 32 KiB before the grain
}

TEST_CASE("Tree LL128 on one node takes NCCL's chunk rule at one node", "[plan][tree]") {
  topo::ProtocolParams p;
  p.slot_bytes = 576000;
  p.slots = 8;
  traces::ChainRequest r;
  r.op = traces::CollectiveOp::kAllReduce;
  r.ranks = 8;
  r.bytes = 4ull << 20;
  r.channels = 24;
  r.protocol = topo::Protocol::kLL128;
  const auto layout = testing::node_layout(1, 8);
  const auto plan = traces::plan_double_binary_tree(r, p, layout.domain, layout.rail, false);
  // (1 + 0 + 0.8) x 64 / 8 = 14.4 chunks per channel wanted, then 3.6: 576000 -> 72000 -> 36000 -> 34560 in 1920 B grains.
  const core::Bytes chunk = traces::tree_ll128_chunk_bytes(r, p.slot_bytes, 1);
  CHECK(chunk == 34560);
  core::Bytes largest = 0;
  for (const auto& t : plan.transfers) largest = std::max(largest, t.payload);
  CHECK(largest == chunk);
}
