#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <map>
#include <set>

#include "topologies/topology_spec.hpp"
#include "traces/collectives/ring_planner.hpp"

using namespace fabsim;
using traces::CollectiveOp;

namespace {


traces::CollectivePlan plan(CollectiveOp op, int ranks, core::Bytes bytes, int channels) {
  return traces::plan_ring({op, ranks, bytes, channels, topo::Protocol::kSimple, 4}, testing::simple_protocol());
}

/// Every dependency points backwards (issue order is a topological order).
void check_acyclic(const traces::CollectivePlan& p) {
  for (std::size_t i = 0; i < p.transfers.size(); ++i) {
    const auto& t = p.transfers[i];
    for (auto dep : {t.after_received, t.after_released, t.after_sent}) CHECK(dep < static_cast<std::int32_t>(i));
    if (t.released_by != traces::kNoTransfer) CHECK(t.released_by > static_cast<std::int32_t>(i));
  }
}

}  // namespace

TEST_CASE("ring all-reduce: the ranks send 2(n-1)/n of the buffer each, 2(n-1) S in all", "[plan]") {
  for (int n : {2, 3, 4, 8}) {
    for (core::Bytes S : {96ull << 20, 1000ull * 1000 * 4, 4096ull}) {
      const auto p = plan(CollectiveOp::kAllReduce, n, S, 24);
      core::Bytes total = 0;
      for (auto sent : p.bytes_sent_by_rank()) {
        // Rounding to whole chunks leaves small buffers a little uneven between ranks.
        if (S >= (1u << 20)) CHECK(static_cast<double>(sent) == Approx(2.0 * (n - 1) / n * S).epsilon(0.01));
        total += sent;
      }
      CHECK(total == 2 * static_cast<core::Bytes>(n - 1) * S);  // every chunk reduced once and gathered once
      check_acyclic(p);
    }
  }
}

TEST_CASE("ring all-gather and reduce-scatter: every rank sends (n-1)/n of the total", "[plan]") {
  for (auto op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    const core::Bytes S = 64ull << 20;
    const auto p = plan(op, 8, S, 24);
    for (auto sent : p.bytes_sent_by_rank()) CHECK(static_cast<double>(sent) == Approx(7.0 / 8 * S).epsilon(1e-6));
    check_acyclic(p);
  }
}

TEST_CASE("ring all-reduce has 2(n-1) steps and reduces in the first n-1", "[plan]") {
  const int n = 4;
  const auto p = plan(CollectiveOp::kAllReduce, n, 4096, 1);  // one loop, one slice per step
  REQUIRE(p.transfers.size() == static_cast<std::size_t>(2 * (n - 1) * n));
  int reduced = 0;
  for (const auto& t : p.transfers) {
    CHECK(t.destination == (t.source + 1) % n);
    reduced += t.reduced_on_receipt ? 1 : 0;
  }
  CHECK(reduced == (n - 1) * n);
  check_acyclic(p);
}

TEST_CASE("a connection holds at most NCCL_STEPS/SLICESTEPS slices in flight", "[plan]") {
  const auto p = plan(CollectiveOp::kAllReduce, 2, 64ull << 20, 1);  // 32 slices per connection
  std::map<int, std::vector<std::int32_t>> by_source;
  for (std::size_t i = 0; i < p.transfers.size(); ++i) by_source[p.transfers[i].source].push_back(static_cast<std::int32_t>(i));
  for (const auto& [rank, ids] : by_source) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const auto& t = p.transfers[ids[k]];
      if (k < 4) {
        CHECK(t.after_released == traces::kNoTransfer);
      } else {
        CHECK(t.after_released == ids[k - 4]);
      }
    }
  }
}

TEST_CASE("chunks are 2 MiB and slices 1 MiB at large sizes (Simple)", "[plan]") {
  const auto p = plan(CollectiveOp::kAllReduce, 4, 256ull << 20, 1);
  std::set<core::Bytes> sizes;
  for (const auto& t : p.transfers) sizes.insert(t.payload);
  CHECK(*sizes.rbegin() == 1ull << 20);
}

TEST_CASE("one rank or zero bytes plan no transfers", "[plan]") {
  CHECK(plan(CollectiveOp::kAllReduce, 1, 1 << 20, 4).transfers.empty());
  CHECK(plan(CollectiveOp::kAllReduce, 4, 0, 4).transfers.empty());
}
