#include <catch2/catch.hpp>

#include "sim/core/kernel.hpp"
#include "sim/core/timer_queue.hpp"
#include "test_support.hpp"
#include "topologies/fabric.hpp"
#include "traces/executor/plan_executor.hpp"

using namespace fabsim;

TEST_CASE("a plan whose transfers wait on each other stops and names what each waits for", "[model][deadlock]") {
  const auto spec = topo::load_topology(testing::star_topology("deadlock", 2));
  topo::Fabric fabric(spec, {512 * 1024});
  core::TimerQueue timers("timers");
  traces::PlanExecutor executor(fabric, timers);
  auto plan = traces::CollectivePlan::empty("Ring", "Simple", 2, 1, 1.0);
  traces::PlannedTransfer a, b;
  a.source = 0, a.destination = 1, a.payload = 4096;
  b.source = 1, b.destination = 0, b.payload = 4096;
  a.after_received = 1;  // each forwards what the other sends: a cycle
  b.after_received = 0;
  plan.transfers = {a, b};
  bool done = false;
  executor.start(plan, {{0, 1}, 0, {}, false, {}}, 0, [&](const traces::ExecutionResult&) { done = true; });
  core::run_to_completion();
  CHECK_FALSE(done);
  CHECK(executor.outstanding() == 2);
  const std::string why = executor.describe_stuck();
  CHECK_THAT(why, Catch::Contains("transfer 0 (rank 0 -> 1, channel 0, 4096 bytes) waits for the receipt of transfer 1"));
  CHECK_THAT(why, Catch::Contains("transfer 1 (rank 1 -> 0, channel 0, 4096 bytes) waits for the receipt of transfer 0"));
}
