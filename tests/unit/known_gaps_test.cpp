// Runs in a regime where validate finds fabsim far off the only measurement
// there are told so (the end-to-end test covers GPUDirect-TCPXO).

#include <catch2/catch.hpp>

#include <numeric>

#include "sim/calibration/known_gaps.hpp"
#include "test_support.hpp"
#include "traces/replay/trace.hpp"

using namespace fabsim;

namespace {
std::vector<int> first_ranks(std::size_t n) {
  std::vector<int> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}
}  // namespace

TEST_CASE("an all-reduce over more than two NVL72 racks is warned of: the one measurement reaches a quarter to a half of "
          "fabsim's busbw, where two racks and other collectives are not",
          "[accuracy]") {
  const auto twenty = topo::load_topology(testing::source_path("topologies/gb200-nvl72-20rack.json"));
  traces::NcclTestConfig test;
  test.min_bytes = test.max_bytes = 1ull << 30;
  const auto all = calibration::known_gap_warnings(twenty, first_ranks(twenty.gpus.size()), test);
  REQUIRE(all.size() == 1);
  CHECK_THAT(all[0], Catch::Contains("beyond two NVL72 racks"));
  CHECK(calibration::known_gap_warnings(twenty, first_ranks(3 * 72), test).size() == 1);  // three racks of the twenty
  CHECK(calibration::known_gap_warnings(twenty, first_ranks(2 * 72), test).empty());
  test.op = traces::CollectiveOp::kAllGather;  // warnings follow measurements: none of this one
  CHECK(calibration::known_gap_warnings(twenty, first_ranks(twenty.gpus.size()), test).empty());

  const auto two = topo::load_topology(testing::source_path("topologies/gb200-nvl72-2rack.json"));
  test.op = traces::CollectiveOp::kAllReduce;
  CHECK(calibration::known_gap_warnings(two, first_ranks(two.gpus.size()), test).empty());
}

TEST_CASE("a replay is warned of once for its all-reduces over more than two NVL72 racks, by the GPUs its ranks run on",
          "[accuracy]") {
  const auto twenty = topo::load_topology(testing::source_path("topologies/gb200-nvl72-20rack.json"));
  traces::Trace trace;
  trace.world_size = 216;  // three racks' worth of ranks
  traces::Communicator world;
  world.groups.push_back(first_ranks(216));
  trace.communicators.push_back(world);
  traces::Program program;
  program.ranks = first_ranks(216);
  for (core::Bytes bytes : {1ull << 20, 1ull << 30}) {
    traces::TraceOp op;
    op.type = traces::TraceOpType::kAllReduce;
    op.comm = 0;
    op.bytes = bytes;
    program.ops.push_back(op);
  }
  trace.programs.push_back(program);

  traces::ReplayJob job;
  job.trace = &trace;
  job.gpu_of_rank = first_ranks(216);  // racks 0-2
  const auto spread = calibration::known_gap_warnings(twenty, std::vector<traces::ReplayJob>{job});
  REQUIRE(spread.size() == 1);  // two all-reduces, one warning
  CHECK_THAT(spread[0], Catch::Contains("beyond two NVL72 racks"));
  for (std::size_t r = 144; r < 216; ++r) job.gpu_of_rank[r] = static_cast<int>(r - 144);  // the third rack's ranks on rack 0
  CHECK(calibration::known_gap_warnings(twenty, std::vector<traces::ReplayJob>{job}).empty());
}

TEST_CASE("GPUs of one host without NVLink between them are warned of for every op: NCCL counts one node per host, fabsim "
          "one per NVLink domain",
          "[accuracy]") {
  const auto pcie = topo::load_topology(testing::source_path("topologies/pcie-8gpu.json"));
  traces::NcclTestConfig test;
  test.op = traces::CollectiveOp::kSendRecv;
  test.min_bytes = test.max_bytes = 1 << 20;
  const auto warned = calibration::known_gap_warnings(pcie, first_ranks(2), test);
  REQUIRE(warned.size() == 1);
  CHECK_THAT(warned[0], Catch::Contains("one node per host"));
  CHECK(calibration::known_gap_warnings(pcie, first_ranks(1), test).empty());  // one GPU: nothing between hosts or domains
  // An HGX node (one NVLink domain) and two of them (two hosts, two domains: NCCL's two nodes too) are not.
  const auto hgx = topo::load_topology(testing::source_path("topologies/hgx-h100-2node.json"));
  CHECK(calibration::known_gap_warnings(hgx, first_ranks(16), test).empty());
  // NVL72: one NVLink domain over 18 hosts (trays), as NCCL's MNNVL runs it.
  const auto rack = topo::load_topology(testing::source_path("topologies/gb200-nvl72.json"));
  CHECK(calibration::known_gap_warnings(rack, first_ranks(72), test).empty());
}

TEST_CASE("a one-rank call from 32 MiB is warned of: NCCL copies the buffer, which fabsim does not time", "[accuracy]") {
  const auto hgx = topo::load_topology(testing::source_path("topologies/hgx-h200.json"));
  traces::NcclTestConfig test;
  test.min_bytes = 8;
  test.max_bytes = 1ull << 30;
  const auto warned = calibration::known_gap_warnings(hgx, first_ranks(1), test);
  REQUIRE(warned.size() == 1);
  CHECK_THAT(warned[0], Catch::Contains("ncclLaunchOneRank"));
  test.max_bytes = 16ull << 20;  // the harness's rows stay at the per-call floor up to 16 MiB
  CHECK(calibration::known_gap_warnings(hgx, first_ranks(1), test).empty());
  test.max_bytes = 1ull << 30;
  CHECK(calibration::known_gap_warnings(hgx, first_ranks(2), test).empty());
}
