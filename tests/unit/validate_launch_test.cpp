// How a measured sweep was launched (nccl-tests -g), and validate's
// latency-bound errors by launch.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/validate_launch.hpp"
#include "sim/core/error.hpp"

using fabsim::calibration::ErrorRow;
using fabsim::cli::gpus_per_process;
using fabsim::cli::latency_by_launch;
using fabsim::cli::launch_description;
using nlohmann::json;

TEST_CASE("a data set's gpus_per_process: absent or null is not recorded, 1 to its GPU count is read, anything else is refused",
          "[validate][launch]") {
  CHECK_FALSE(gpus_per_process(json{{"gpus", 16}}, "m.json", "/collective_datasets/3"));
  CHECK_FALSE(gpus_per_process(json{{"gpus", 16}, {"gpus_per_process", nullptr}}, "m.json", "/collective_datasets/3"));
  CHECK(gpus_per_process(json{{"gpus", 16}, {"gpus_per_process", 1}}, "m.json", "/collective_datasets/3") == 1);
  CHECK(gpus_per_process(json{{"gpus", 8}, {"gpus_per_process", 8}}, "m.json", "/collective_datasets/3") == 8);
  for (const json& bad : {json(0), json(9), json(2.5), json("4"), json(-1)}) {
    INFO(bad.dump());
    try {
      gpus_per_process(json{{"gpus", 8}, {"gpus_per_process", bad}}, "m.json", "/collective_datasets/3");
      FAIL("accepted");
    } catch (const fabsim::core::ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains("m.json"));
      CHECK_THAT(e.what(), Catch::Contains("/collective_datasets/3/gpus_per_process"));
      CHECK_THAT(e.what(), Catch::Contains("an integer from 1 to the data set's 8 GPUs"));
    }
  }
}

TEST_CASE("a launch reads as nccl-tests' -g", "[validate][launch]") {
  CHECK(launch_description(1) == "one process per GPU (nccl-tests -g 1)");
  CHECK(launch_description(4) == "one process drives 4 GPUs (nccl-tests -g 4)");
  CHECK(launch_description(std::nullopt) == "not recorded");
}

TEST_CASE("latency-bound errors by launch: in-sample first, one group per launch, unrecorded last, other regimes left out", "[validate][launch]") {
  const std::vector<ErrorRow> rows = {
      {"a", 1024, 0.30, false, true, "H100", 1},   {"a", 2048, -0.10, false, true, "H100", 1}, {"a", 4096, 0.20, false, true, "H100", 1},
      {"b", 1024, 0.02, true, false, "H100", 4},   {"c", 65536, -0.17, false, false, "H100", 8},
      {"d", 1024, 0.05, true, true, "H100", 0},    {"a", 1u << 30, 0.50, false, true, "H100", 1},  // bandwidth-bound: not here
  };
  const auto groups = latency_by_launch(rows);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].in_sample);
  CHECK(groups[0].gpus_per_process == 4);
  CHECK(groups[0].sizes == 1);
  CHECK(groups[1].in_sample);
  CHECK_FALSE(groups[1].gpus_per_process);
  CHECK_FALSE(groups[2].in_sample);
  CHECK(groups[2].gpus_per_process == 1);
  CHECK(groups[2].sizes == 3);
  CHECK(groups[2].median_error == Approx(0.20));
  CHECK(groups[3].gpus_per_process == 8);
  CHECK(groups[3].median_error == Approx(0.17));
}
