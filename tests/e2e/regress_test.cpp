#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::source_path;
using fabsim::testing::write_temp;

TEST_CASE("regress passes on a fresh baseline and fails, naming the row, when a figure moved", "[e2e][regress]") {
  const std::string scenario = write_temp(
      "regress_scenario.json",
      R"({"format": "fabsim-scenario/1", "topology": ")" + source_path("topologies/hgx-h100.json") +
          R"(", "workload": {"kind": "nccl-test", "op": "all_reduce", "min_bytes": "1 MiB", "max_bytes": "4 MiB", "algo": "ring"}})");
  const std::string baseline =
      write_temp("regress_baseline.json", R"({"format": "fabsim-baseline/1", "scenarios": [{"scenario": ")" + scenario + R"("}]})");
  REQUIRE(run_fabsim("regress " + baseline + " --update").exit_code == 0);
  CHECK(run_fabsim("regress " + baseline).exit_code == 0);

  // Pretend the model used to predict a 10% shorter time for 2 MiB.
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(baseline));
  auto& row = doc["scenarios"][0]["rows"][1];
  REQUIRE(row["bytes"] == 2097152);
  row["time_us"] = row["time_us"].get<double>() * 0.9;
  std::ofstream(baseline) << doc.dump();
  const auto r = run_fabsim("regress " + baseline);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("2097152"));
  CHECK_THAT(r.out, Catch::Contains("MOVED"));
  CHECK_THAT(r.out, Catch::Contains("1 of 3 recorded figures moved"));
}
