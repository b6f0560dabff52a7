#include <catch2/catch.hpp>

#include <numeric>
#include <set>

#include "test_support.hpp"
#include "traces/collectives/pat_planner.hpp"

using namespace fabsim;

TEST_CASE("PAT's steps: distances fall from the largest power of two below n to 1, and the blocks add up to n - 1", "[plan][pat]") {
  using Steps = std::vector<std::pair<int, int>>;
  auto pairs = [](int n) {
    Steps out;
    for (const auto& s : traces::pat_all_gather_steps(n)) out.emplace_back(s.distance, s.blocks);
    return out;
  };
  CHECK(pairs(8) == Steps{{4, 1}, {2, 2}, {1, 4}});
  CHECK(pairs(3) == Steps{{2, 1}, {1, 1}});
  CHECK(pairs(2) == Steps{{1, 1}});
  for (int n = 2; n <= 100; ++n) {
    INFO(n << " ranks");
    // Play the schedule with explicit sets: every rank sends what it holds
    // and its peer lacks; each rank must end with all n blocks, and each
    // message must carry exactly the step's block count.
    std::vector<std::set<int>> held(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) held[static_cast<std::size_t>(r)].insert(r);
    int total = 0;
    for (const auto& step : traces::pat_all_gather_steps(n)) {
      auto next = held;
      for (int r = 0; r < n; ++r) {
        const int to = (r + step.distance) % n;
        int carried = 0;
        for (int b : held[static_cast<std::size_t>(r)])
          if (!held[static_cast<std::size_t>(to)].contains(b)) {
            CHECK(next[static_cast<std::size_t>(to)].insert(b).second);  // no block arrives twice
            ++carried;
          }
        CHECK(carried == step.blocks);
      }
      held = std::move(next);
      total += step.blocks;
    }
    CHECK(total == n - 1);
    for (const auto& h : held) CHECK(static_cast<int>(h.size()) == n);
  }
}

TEST_CASE("A PAT all-gather or reduce-scatter sends (n-1)/n of the total from every rank, in a DAG", "[plan][pat]") {
  const auto protocol = testing::simple_protocol();
  for (auto op : {traces::CollectiveOp::kAllGather, traces::CollectiveOp::kReduceScatter})
    for (int n : {2, 5, 8, 16}) {
      INFO(traces::collective_name(op) << " on " << n << " ranks");
      const core::Bytes total = static_cast<core::Bytes>(n) * (8ull << 20);
      const auto plan = traces::plan_pat({op, n, total, 4, topo::Protocol::kSimple, 4}, protocol);
      CHECK(plan.algorithm == "PAT");
      for (auto sent : plan.bytes_sent_by_rank()) CHECK(sent == total / static_cast<core::Bytes>(n) * static_cast<core::Bytes>(n - 1));
      for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
        const auto& t = plan.transfers[i];
        CHECK(t.reduced_on_receipt == (op == traces::CollectiveOp::kReduceScatter));
        CHECK(t.after_received < static_cast<std::int32_t>(i));
        for (auto extra : t.also_after_received) CHECK(extra < static_cast<std::int32_t>(i));
      }
      // All-gather: the first step crosses the farthest; reduce-scatter: the first step goes to a neighbour.
      const auto& first = plan.transfers.front();
      const int distance = ((first.destination - first.source) % n + n) % n;
      const int farthest = static_cast<int>(traces::pat_all_gather_steps(n).front().distance);
      if (op == traces::CollectiveOp::kAllGather) CHECK(distance == farthest);
      else CHECK(distance == n - 1);  // to rank r - 1
    }
  CHECK_THROWS_AS(traces::plan_pat({traces::CollectiveOp::kAllReduce, 4, 1 << 20, 1, topo::Protocol::kSimple, 4}, protocol),
                  std::invalid_argument);
}
