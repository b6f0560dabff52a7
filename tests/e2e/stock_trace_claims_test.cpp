// The README's stock-trace figures (its generated block, written by
// scripts/readme-claims), asserted within 0.5%: the step times of the four
// stock traces and the MoE all-to-all alone and beside a gradient all-reduce.
// Labelled slow with the accuracy tests: the 1,024-rank trace replays 100 steps.

#include <catch2/catch.hpp>

#include <algorithm>

#include "cli_json.hpp"

using fabsim::testing::run_json;
using fabsim::testing::source_path;
using fabsim::testing::topology;
using nlohmann::json;

namespace {

json replay(const std::string& trace, const std::string& fabric) {
  return run_json("replay -t " + topology(fabric) + " --model flow " + source_path("configs/traces/" + trace + ".json"));
}

void check_per_step_ms(const json& doc, int steps, double claimed_ms) {
  const double per_step_ms = doc["makespan_us"].get<double>() / 1e3 / steps;
  INFO("per step " << per_step_ms << " ms, claimed " << claimed_ms);
  CHECK(per_step_ms == Approx(claimed_ms).epsilon(0.005));
}

}  // namespace

TEST_CASE("stock traces: the step times the README states", "[claims][replay]") {
  check_per_step_ms(replay("dp8-ddp-step", "hgx-h100"), 3, 76.58);
  check_per_step_ms(replay("tp8-pp2-2node-step", "hgx-h100-2node"), 2, 37.46);
  check_per_step_ms(replay("llm-1024-tp8-dp128", "ib-fat-tree-1024"), 100, 9.03);
}

TEST_CASE("stock traces: the MoE all-to-all takes 53.4 us alone and 72.8 us beside a gradient all-reduce", "[claims][replay]") {
  const json doc = replay("moe-nvl72-alltoall", "gb200-nvl72");
  check_per_step_ms(doc, 2, 27.04);
  double fastest = 1e300, slowest = 0;
  for (const auto& op : doc["ops"])
    if (op["type"] == "alltoall") {
      fastest = std::min(fastest, op["duration_us"].get<double>());
      slowest = std::max(slowest, op["duration_us"].get<double>());
    }
  CHECK(fastest == Approx(53.4).epsilon(0.005));
  CHECK(slowest == Approx(72.8).epsilon(0.005));
}
