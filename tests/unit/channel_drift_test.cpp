#include <catch2/catch.hpp>

#include <cmath>

#include "traces/collectives/ring_planner.hpp"
#include "traces/executor/channel_drift.hpp"
#include "test_support.hpp"

using namespace fabsim;

TEST_CASE("The normal quantile and the expected largest of n normal draws", "[drift]") {
  CHECK(traces::normal_quantile(0.5) == Approx(0.0).margin(1e-9));
  CHECK(traces::normal_quantile(0.975) == Approx(1.959964).epsilon(1e-6));
  CHECK(traces::normal_quantile(0.001) == Approx(-3.090232).epsilon(1e-6));
  // Exact expected maxima (numerical integration): 1.0294 (4), 1.4236 (8), 1.9477 (24), 2.0697 (32).
  CHECK(traces::expected_normal_maximum(1) == 0.0);
  CHECK(traces::expected_normal_maximum(4) == Approx(1.0294).epsilon(0.02));
  CHECK(traces::expected_normal_maximum(8) == Approx(1.4236).epsilon(0.01));
  CHECK(traces::expected_normal_maximum(24) == Approx(1.9477).epsilon(0.002));
  CHECK(traces::expected_normal_maximum(32) == Approx(2.0697).epsilon(0.002));
}

TEST_CASE("A ring's drift is K x mean + sqrt(K) x sd x z(channels), K the busiest rank's bytes per channel in units", "[drift]") {
  const auto protocol = testing::simple_protocol();
  const core::Bytes size = 256ull << 20;
  auto plan = traces::plan_ring({traces::CollectiveOp::kAllReduce, 4, size, 24, topo::Protocol::kSimple, 4}, protocol);
  const topo::ChannelDrift drift{512 * 1024, 5'000, 7'000'000};  // 5 ns and 7 us per 512 KiB
  const double units = 2.0 * 3 / 4 * static_cast<double>(size) / 24 / (512 * 1024);
  const double expected = units * 5'000 + std::sqrt(units) * 7'000'000 * traces::expected_normal_maximum(24);
  CHECK(static_cast<double>(traces::channel_drift(plan, drift)) == Approx(expected).epsilon(1e-6));
  // No drift when switched off, for other protocols and for point-to-point plans.
  CHECK(traces::channel_drift(plan, {}) == 0);
  plan.protocol = "LL128";
  CHECK(traces::channel_drift(plan, drift) == 0);
  plan.protocol = "Simple";
  plan.algorithm = "P2P";
  CHECK(traces::channel_drift(plan, drift) == 0);
}
