// The segment-level work estimate behind --model auto and the refusal of
// runs too long to finish: a replay counts NVLS's extra events where NCCL may
// choose it, as an nccl-test run does.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/cli/simulation_request.hpp"
#include "sim/cli/work_estimate.hpp"
#include "topologies/topology_spec.hpp"
#include "test_support.hpp"
#include "traces/replay/trace_loader.hpp"

using namespace fabsim;

namespace {

/// An nccl-test of one `bytes` row on the stock `topology`, at the segment level, reported as JSON.
cli::SimulationRequest segment_level_request(const std::string& topology, core::Bytes bytes) {
  cli::SimulationRequest request;
  request.topology_path = testing::source_path(topology);
  request.test.min_bytes = request.test.max_bytes = bytes;
  request.model_auto = false;
  request.format = report::OutputFormat::kJson;
  return request;
}

/// Kernel events the run takes over those its work estimate gave.
double events_run_over_estimated(const cli::SimulationRequest& request) {
  const double estimated = cli::estimate_run_events(request, topo::load_topology(request.topology_path));
  std::ostringstream out, err;
  cli::execute(request, out, err);
  return nlohmann::json::parse(out.str())["meta"]["kernel_events"].get<double>() / estimated;
}

}  // namespace

TEST_CASE("a replay's all-reduces on a fabric that reduces in its switches count NVLS's events unless another algorithm is forced",
          "[estimate]") {
  const auto trace = traces::load_trace(testing::source_path("configs/traces/dp8-ddp-step.json"));  // 25 MiB all-reduces
  const std::vector<const traces::Trace*> jobs{&trace};
  constexpr std::uint64_t kSegment = 128 << 10;

  const auto hgx = topo::load_topology(testing::source_path("topologies/hgx-h100.json"));  // NVSwitch gen3: NVLink SHARP
  const double nccl_choice = cli::estimate_replay_events(jobs, hgx, kSegment);
  const double ring = cli::estimate_replay_events(jobs, hgx, kSegment, traces::Algorithm::kRing);
  CHECK(ring > 0);
  CHECK(nccl_choice == Approx(6 * ring));  // NCCL runs NVLS at 25 MiB on 8 H100s: about 6x a ring's events
  CHECK(cli::estimate_replay_events(jobs, hgx, kSegment, traces::Algorithm::kNvls) == Approx(nccl_choice));

  const auto a100 = topo::load_topology(testing::source_path("topologies/dgx-a100.json"));  // NVSwitch gen2: no reduction in the switch
  CHECK(cli::estimate_replay_events(jobs, a100, kSegment) == Approx(cli::estimate_replay_events(jobs, a100, kSegment, traces::Algorithm::kRing)));
}

TEST_CASE("across nodes the estimate counts the network's smaller segments: a ring over two HGX H100 nodes takes within "
          "a factor of 2 of the events estimated",
          "[estimate]") {
  // Paths through an InfiniBand switch are cut into 64 KiB segments (1/16 of its 1 MiB input buffer), eight times
  // the 512 KiB elsewhere; 2 of the ring's 16 hops cross the network. Counting every segment at 512 KiB put the
  // estimate at 0.45 of the run.
  auto request = segment_level_request("topologies/hgx-h100-2node.json", 256ull << 20);
  request.test.algorithm = "ring";
  const double ratio = events_run_over_estimated(request);
  CHECK(ratio > 0.5);
  CHECK(ratio < 2.0);
}

TEST_CASE("a broadcast forced onto LL counts its 4 KiB pieces: within a factor of 2 of the events run", "[estimate]") {
  // LL receivers pass a step on per round of 512 threads (4 KiB of data):
  // counted in 512 KiB segments the estimate was about 1/110 of the run
  // (9.2e3 against 1.03e6 events).
  auto request = segment_level_request("topologies/hgx-h100.json", 64ull << 20);
  request.test.op = traces::CollectiveOp::kBroadcast;
  request.test.protocol = topo::Protocol::kLL;
  const double ratio = events_run_over_estimated(request);
  CHECK(ratio > 0.5);
  CHECK(ratio < 2.0);
}
