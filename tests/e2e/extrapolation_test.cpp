// nccl-test --extrapolate-above: rows above a size are not simulated but
// follow the line through segment-level runs of the same algorithm, protocol
// and channels; the rows it simulates are the plain segment level's.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_json.hpp"
#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::run_json;
using fabsim::testing::source_path;
using nlohmann::json;

namespace {

const std::string kTwoNodes = "nccl-test --topology " + source_path("topologies/hgx-h100-2node.json");

}  // namespace

TEST_CASE("extrapolated rows follow the segment level's line: a 2-node ring at 512 MiB and 1 GiB from runs up to 256 MiB", "[e2e][extrapolate]") {
  const std::string ring = kTwoNodes + " --algo ring --proto Simple";
  const json line = run_json(ring + " -b 64M -e 1G --extrapolate-above 256M");
  const json& rows = line["rows"];
  REQUIRE(rows.size() == 5);
  CHECK(line["meta"]["model"] == "segment");
  CHECK(line["meta"]["extrapolated_above_bytes"] == 256ull << 20);
  CHECK(line["meta"]["warnings"].empty());
  // The rows up to 256 MiB are simulated, as a plain segment-level sweep has them.
  const json plain = run_json(ring + " -b 64M -e 256M --model segment");
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK_FALSE(rows[i].contains("extrapolated"));
    CHECK(rows[i]["time_us"] == plain["rows"][i]["time_us"]);
  }
  // Above it, marked, on the line through 128 and 256 MiB: at 1 GiB within 1.5% of simulating it (+1.2%).
  for (std::size_t i = 3; i < 5; ++i) CHECK(rows[i]["extrapolated"] == true);
  const double per_byte = (rows[2]["time_us"].get<double>() - rows[1]["time_us"].get<double>()) / (128.0 * (1 << 20));
  CHECK(rows[4]["time_us"].get<double>() == Approx(rows[2]["time_us"].get<double>() + per_byte * 768.0 * (1 << 20)).epsilon(1e-6));
  const double simulated = run_json(ring + " -b 1G -e 1G --model segment")["rows"][0]["time_us"].get<double>();
  CHECK(rows[4]["time_us"].get<double>() / simulated - 1 == Approx(0.012).margin(0.003));
}

TEST_CASE("a line not yet straight probes at double the size: NCCL's default on 2 nodes from 128 MiB runs 256 MiB for the line",
          "[e2e][extrapolate]") {
  // NVLSTree's time per MiB from 32 to 64 MiB and from 64 to 128 MiB differs by more than 5%: 256 MiB is run, and its row is
  // the simulated one, not marked.
  const json line = run_json(kTwoNodes + " -b 64M -e 1G --extrapolate-above 128M");
  const json& rows = line["rows"];
  REQUIRE(rows.size() == 5);
  CHECK(line["meta"]["probes"] == 2);  // 32 MiB below the sweep, and 256 MiB, run for the line alone
  CHECK_FALSE(rows[2].contains("extrapolated"));
  CHECK(rows[2]["time_us"] == run_json(kTwoNodes + " -b 256M -e 256M --model segment")["rows"][0]["time_us"]);
  CHECK(rows[3]["extrapolated"] == true);
  CHECK(rows[4]["algorithm"] == "NVLSTree");
}

TEST_CASE("extrapolated rows are marked in the table and in a CSV column of their own", "[e2e][extrapolate]") {
  const auto table = run_fabsim(kTwoNodes + " --algo ring -b 128M -e 512M --extrapolate-above 256M");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("Simple        16  (extrapolated)"));
  CHECK_THAT(table.out, Catch::Contains("# Extrapolated         : rows above 268435456 B marked (extrapolated)"));
  const auto csv = run_fabsim(kTwoNodes + " --algo ring -b 128M -e 512M --extrapolate-above 256M --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK_THAT(csv.out, Catch::Contains("protocol,channels,extrapolated\n"));
  CHECK_THAT(csv.out, Catch::Contains(",Ring,Simple,16,1\n"));
  // Without the option the CSV keeps its columns.
  const auto plain = run_fabsim(kTwoNodes + " --algo ring -b 128M -e 128M --format csv");
  CHECK_THAT(plain.out, Catch::EndsWith(",Ring,Simple,16\n"));
}

TEST_CASE("nccl-test --extrapolate-above refuses what it cannot extrapolate, with exit code 2", "[e2e][extrapolate][errors]") {
  for (const char* args : {"--extrapolate-above 64K", "--extrapolate-above 0", "--extrapolate-above 1G --model flow", "--extrapolate-above 1G --links",
                           "--extrapolate-above 1G --op alltoall", "--extrapolate-above 1G --fault node0.gpu0~node0.nvswitch0=0.5",
                           "--extrapolate-above lots"}) {
    INFO(args);
    CHECK(run_fabsim(kTwoNodes + " -b 1M -e 2G " + args).exit_code == 2);
  }
}

TEST_CASE("nccl-test --extrapolate-above auto: inside one node --model auto's choice, across nodes every row where the sweep fits the budget",
          "[e2e][extrapolate]") {
  const json box = run_json("nccl-test --topology " + source_path("topologies/hgx-h100.json") + " -b 1M -e 1G --extrapolate-above auto");
  CHECK(box["meta"]["model"] == "segment");
  CHECK_FALSE(box["meta"].contains("extrapolated_above_bytes"));
  const json pair = run_json(kTwoNodes + " --algo ring -b 1M -e 64M --extrapolate-above auto");
  CHECK(pair["meta"]["model"] == "segment");
  CHECK_FALSE(pair["meta"].contains("extrapolated_above_bytes"));
  for (const auto& row : pair["rows"]) CHECK_FALSE(row.contains("extrapolated"));
}

TEST_CASE("nccl-test --extrapolate-above auto: across racks of NVL72, --model auto's choice (the flow level here), and it says why",
          "[e2e][extrapolate]") {
  // Two racks' probes would cost about 1.4e8 events at a sixteenth of the usual rate: minutes, not seconds.
  const json out = run_json("nccl-test --topology " + source_path("topologies/gb200-nvl72-2rack.json") + " -b 512M -e 1G --extrapolate-above auto");
  CHECK(out["meta"]["model"] == "flow");
  CHECK_FALSE(out["meta"].contains("extrapolated_above_bytes"));
  REQUIRE(out["rows"].size() == 2);
  for (const auto& row : out["rows"]) CHECK_FALSE(row.contains("extrapolated"));
}
