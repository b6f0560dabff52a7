#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::source_path;
using fabsim::testing::write_temp;

namespace {
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

TEST_CASE("a sweep runs every point of the axes' product in parallel and records failed points", "[e2e][sweep]") {
  const std::string sweep = write_temp("sweep.json", R"({"format": "fabsim-sweep/1", "base": ")" +
                                                         source_path("configs/scenarios/hgx-h100-allreduce.json") + R"(",
      "axes": [{"path": "/workload/gpus", "values": [2, 4]},
               {"path": "/workload/algo", "values": ["ring", "bogus"]},
               {"path": "/workload/min_bytes", "values": ["1 MiB"]},
               {"path": "/workload/max_bytes", "values": ["4 MiB"]}]})");
  const auto r = run_fabsim("sweep " + sweep + " -j 2");
  CHECK(r.exit_code == 1);  // some points failed
  const auto rows = lines(fabsim::testing::csv_body(r.out));
  REQUIRE(rows.size() == 1 + 2 * 3 + 2);  // header, 2 good points x 3 sizes, 2 failed points
  CHECK(rows[0].rfind("point,/workload/gpus,/workload/algo,", 0) == 0);
  CHECK(rows[1].rfind("0,2,ring,1 MiB,4 MiB,1048576,", 0) == 0);
  CHECK(rows[4].rfind("1,2,bogus,", 0) == 0);
  CHECK_THAT(rows[4], Catch::Contains("failed,\"error: point-0001.json: /workload/algo:"));
  CHECK_THAT(rows[4], Catch::Contains("algorithm 'bogus' is not modelled"));
  CHECK(rows[5].rfind("2,4,ring,", 0) == 0);
}

TEST_CASE("a sweep point gives the same figures as running its scenario alone", "[e2e][sweep]") {
  const std::string sweep = write_temp("sweep_one.json", R"({"format": "fabsim-sweep/1", "base": ")" +
                                                             source_path("configs/scenarios/hgx-h100-allreduce.json") + R"(",
      "axes": [{"path": "/workload/min_bytes", "values": ["64 MiB"]}, {"path": "/workload/max_bytes", "values": ["64 MiB"]}]})");
  const auto swept = lines(fabsim::testing::csv_body(run_fabsim("sweep " + sweep).out));
  const auto alone = run_fabsim("nccl-test --topology " + source_path("topologies/hgx-h100.json") +
                                " --algo ring -b 64M -e 64M --format csv");
  REQUIRE(swept.size() == 2);
  const auto figures = lines(fabsim::testing::csv_body(alone.out))[1];  // bytes,count,time_us,...
  const auto time_alone = figures.substr(figures.find(',', figures.find(',') + 1) + 1, 6);
  CHECK_THAT(swept[1], Catch::Contains("," + time_alone));
}

TEST_CASE("a sweep's CSV carries its points' warnings above the header, each naming its point", "[e2e][sweep]") {
  const std::string base = write_temp("sweep_warned_base.json", R"({"format": "fabsim-scenario/1", "topology": ")" +
                                                                    source_path("topologies/hgx-h100.json") + R"(",
      "workload": {"kind": "nccl-test", "op": "all_reduce", "min_bytes": "1 MiB", "max_bytes": "1 MiB", "nccl_version": "2.30.7"}})");
  const std::string sweep = write_temp("sweep_warned.json", R"({"format": "fabsim-sweep/1", "base": ")" + base + R"(",
      "axes": [{"path": "/workload/nccl_version", "values": ["2.30.7", "2.31.2"]}]})");
  const auto r = run_fabsim("sweep " + sweep);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> warned;
  for (const auto& line : lines(r.out))
    if (line.rfind("# warning: ", 0) == 0) warned.push_back(line);
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].rfind("# warning: point 1: NCCL 2.31.2 is newer than", 0) == 0);
  CHECK(lines(fabsim::testing::csv_body(r.out)).size() == 3);  // the header and one row a point
}
