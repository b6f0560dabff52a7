#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "traces/collectives/nvls_planner.hpp"

using namespace fabsim;
using models::TransferKind;

TEST_CASE("NVLS all-reduce: every byte is reduced once into its head and multicast once, with at most NCCL's 32 heads",
          "[plan][nvls]") {
  CHECK(traces::nvls_heads(8) == 8);
  CHECK(traces::nvls_heads(72) == 32);  // an NVL72 rack: NCCL_MAX_NVLS_ARITY
  for (int n : {2, 4, 8, 72}) {
    const int heads = traces::nvls_heads(n);
    const core::Bytes S = 256ull << 20;
    const auto plan = traces::plan_nvls_all_reduce({n, S, 16, 4}, testing::nvls_params());
    CHECK(plan.algorithm == "NVLS");
    core::Bytes reduced = 0, stored = 0;
    std::vector<core::Bytes> per_head(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
      const auto& t = plan.transfers[i];
      if (t.kind == TransferKind::kReduceInSwitch) {
        reduced += t.payload;
        per_head[t.destination] += t.payload;
      } else {
        REQUIRE(t.kind == TransferKind::kMulticastInSwitch);
        stored += t.payload;
        // A store sends what its reduction returned.
        REQUIRE(t.after_received != traces::kNoTransfer);
        CHECK(plan.transfers[t.after_received].kind == TransferKind::kReduceInSwitch);
        CHECK(plan.transfers[t.after_received].payload == t.payload);
      }
    }
    CHECK(reduced == S);
    CHECK(stored == S);
    for (int r = 0; r < n; ++r)  // the first `heads` ranks are the heads; the rest reduce and store nothing
      CHECK(static_cast<double>(per_head[static_cast<std::size_t>(r)]) ==
            Approx(r < heads ? static_cast<double>(S) / heads : 0.0).epsilon(1e-6));
  }
}

TEST_CASE("NVLS chunks are 128 KiB for large buffers and shrink for small ones", "[plan][nvls]") {
  CHECK(traces::nvls_chunk_bytes(1ull << 30, 16, 8, 128 * 1024) == 128 * 1024);
  CHECK(traces::nvls_chunk_bytes(1ull << 20, 16, 8, 128 * 1024) == 16 * 1024);
  CHECK(traces::nvls_chunk_bytes(20ull << 20, 16, 8, 128 * 1024) == 16 * 1024);   // < 2 x 16 x 8 x 128 KiB
  CHECK(traces::nvls_chunk_bytes(64ull << 20, 16, 8, 128 * 1024) == 32 * 1024);   // < 8 x ...
  CHECK(traces::nvls_chunk_bytes(512ull << 20, 16, 8, 128 * 1024) == 64 * 1024);  // < 64 x ...
}

TEST_CASE("NVLS all-gather stores each rank's block once through the multicast, reduce-scatter pulls each block once, reduced",
          "[plan][nvls]") {
  const int n = 8;
  const core::Bytes S = 256ull << 20;  // the total, as nccl-tests sizes all-gather
  for (auto op : {traces::CollectiveOp::kAllGather, traces::CollectiveOp::kReduceScatter}) {
    const auto plan = traces::plan_nvls_gather_scatter(op, {n, S, 16, 4}, testing::nvls_params());
    CHECK(plan.algorithm == "NVLS");
    std::vector<core::Bytes> per_owner(static_cast<std::size_t>(n), 0);
    for (const auto& t : plan.transfers) {
      CHECK(t.kind == (op == traces::CollectiveOp::kAllGather ? TransferKind::kMulticastInSwitch : TransferKind::kReduceInSwitch));
      CHECK(t.payload <= 128u * 1024);
      per_owner[static_cast<std::size_t>(t.issuer())] += t.payload;
    }
    for (auto bytes : per_owner) CHECK(bytes == S / n);
  }
  CHECK_THROWS_AS(traces::plan_nvls_gather_scatter(traces::CollectiveOp::kBroadcast, {n, S, 16, 4}, testing::nvls_params()),
                  std::invalid_argument);
}
