// The flow level against the segment level, as the README's generated
// *flow level against segment level* table and its Models section state
// them: the worst |flow / segment - 1| per workload may grow by 0.5 points at
// most. Not validation (no measurement): the two fidelity levels' agreement.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli_json.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::run_json;
using fabsim::testing::source_path;
using nlohmann::json;

namespace {

// Named apart from accuracy_test.cpp's helpers: the target builds as one unity file.
constexpr double kAgreementMargin = 0.005;  // 0.5 points on a difference

json sweep_rows(const std::string& topology, const std::string& args) {
  return run_json("nccl-test --topology " + fabsim::testing::topology(topology) + " " + args)["rows"];
}

/// The worst |flow / segment - 1| over the sizes of two runs of one workload.
double worst_flow_difference(const json& segment, const json& flow) {
  REQUIRE(segment.size() == flow.size());
  double worst = 0;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    const double s = segment[i]["time_us"].get<double>();
    if (s > 0) worst = std::max(worst, std::abs(flow[i]["time_us"].get<double>() / s - 1));
  }
  return worst;
}

/// A workload run at both levels and the worst difference the README claims for it.
struct Workload {
  std::string topology, args;
  double claimed_worst;
};

/// Each workload's worst |flow / segment - 1| is within its claim (plus the margin).
void check_agreement(const std::vector<Workload>& workloads) {
  for (const auto& w : workloads) {
    const double worst = worst_flow_difference(sweep_rows(w.topology, w.args + " --model segment"), sweep_rows(w.topology, w.args + " --model flow"));
    INFO(w.topology << " " << w.args << ": worst flow/segment difference " << 100 * worst << "%");
    CHECK(worst <= w.claimed_worst + kAgreementMargin);
  }
}

}  // namespace

TEST_CASE("accuracy: the flow level agrees with the segment level on the stock scenarios (worst 3.1% and 2.4%)", "[accuracy][flow]") {
  for (const auto& [scenario, claimed_worst] : std::vector<std::pair<std::string, double>>{
           {"configs/scenarios/hgx-h100-allreduce.json", 0.031}, {"configs/scenarios/hgx-h100-allreduce-nccl-default.json", 0.024}}) {
    std::map<std::string, json> by_model;
    for (const char* model : {"segment", "flow"}) {
      const auto r = run_fabsim("run " + source_path(scenario) + " --format json --model " + model);
      REQUIRE(r.exit_code == 0);
      by_model[model] = json::parse(r.out)["rows"];
    }
    const double worst = worst_flow_difference(by_model["segment"], by_model["flow"]);
    INFO(scenario << ": worst flow/segment difference " << 100 * worst << "%");
    CHECK(worst <= claimed_worst + kAgreementMargin);
  }
}

TEST_CASE("accuracy: the flow level against the segment level on the README's seven sweeps (worst 7.0%, 6.2%, 0.0%, 15.9%, 6.7%, 11.8% and 73.0%)",
          "[accuracy][flow]") {
  check_agreement({{"hgx-h100", "--op all_gather -g 8 -b 8 -e 8G", 0.070},
                   {"hgx-h100", "--op reduce_scatter -g 8 -b 8 -e 8G", 0.062},
                   {"hgx-h100", "--op alltoall -g 8 -b 1K -e 1G", 0.000},
                   {"hgx-h100", "--op broadcast -g 8 -b 8 -e 1G", 0.159},
                   {"hgx-h100-2node", "--algo ring -b 8 -e 1G", 0.067},
                   // Known disagreements across nodes (README: Tree chains and heads, the broadcast chain):
                   {"hgx-h100-2node", "-b 8 -e 1G", 0.118},
                   {"hgx-h100-2node", "--op broadcast -b 8 -e 1G", 0.732}});
}

TEST_CASE("accuracy: the flow level against the segment level over GPU counts (rings within 7%, one box within 5%, NCCL's default across nodes within 14.7%)",
          "[accuracy][flow]") {
  // The grid --model auto switches over: 64 KiB - 256 MiB (x4) on 2-32 GPUs, one box and across nodes.
  const std::string sizes = " -b 64K -e 256M -f 4";
  check_agreement({{"hgx-h100", "-g 2" + sizes, 0.034},
                   {"hgx-h100", "-g 4" + sizes, 0.046},
                   {"hgx-h100", "-g 8" + sizes, 0.022},
                   {"hgx-h100", "-g 8 --algo ring" + sizes, 0.022},
                   {"hgx-h100-2node", "-g 16 --algo ring" + sizes, 0.050},
                   {"ib-fat-tree-1024", "-g 32 --algo ring" + sizes, 0.068},
                   // NCCL's default across nodes, Tree then NVLSTree: within 7.1% to 4 MiB, NVLSTree's
                   // 16-64 MiB apart by up to 15%, the flow level the slower (README, Models).
                   {"hgx-h100-2node", "-g 16" + sizes, 0.081},
                   {"ib-fat-tree-1024", "-g 32" + sizes, 0.147}});
}
