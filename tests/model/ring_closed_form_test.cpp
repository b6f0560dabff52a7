#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "topologies/fabric.hpp"
#include "traces/nccl_test_runner.hpp"

using namespace fabsim;

namespace {

// ideal_catalogue(): B = 100 GB/s per GPU link, 100 ns per link, 50 ns switch,
// 1 us step latency, one-slot chunks (one slice per ring step), no launch overhead.
void check_ring_all_reduce(int n) {
  const auto spec = topo::load_topology(testing::star_topology("ring" + std::to_string(n), n));
  topo::Fabric fabric(spec, {512 * 1024});
  const core::Bytes S = 24ull << 20;  // divisible by n for n in {2, 3, 4, 8}
  traces::NcclTestConfig config;
  config.min_bytes = config.max_bytes = S;
  config.algorithm = "ring";
  config.protocol = topo::Protocol::kSimple;
  config.channels = 1;
  const auto result = traces::run_nccl_test(fabric, config);
  REQUIRE(result.rows.size() == 1);
  const double B = 100e9;
  const double hop_latency_us = 0.100 + 0.050 + 0.100;
  const double step_latency_us = 1.0;
  // 2(n-1) steps, each moving S/n and then synchronising: 2(n-1)/n * S/B + 2(n-1) * latencies.
  const double expected_us = 2.0 * (n - 1) / n * S / B * 1e6 + 2.0 * (n - 1) * (hop_latency_us + step_latency_us);
  CHECK(result.rows[0].time_us == Approx(expected_us).epsilon(1e-6));
  CHECK(result.rows[0].busbw_gbps == Approx(S / (expected_us * 1e3) * 2.0 * (n - 1) / n).epsilon(1e-6));
}

}  // namespace

TEST_CASE("ring all-reduce of 2 GPUs over ideal links matches the closed form", "[model][ring]") { check_ring_all_reduce(2); }
TEST_CASE("ring all-reduce of 3 GPUs over ideal links matches the closed form", "[model][ring]") { check_ring_all_reduce(3); }
TEST_CASE("ring all-reduce of 4 GPUs over ideal links matches the closed form", "[model][ring]") { check_ring_all_reduce(4); }
TEST_CASE("ring all-reduce of 8 GPUs over ideal links matches the closed form", "[model][ring]") { check_ring_all_reduce(8); }
