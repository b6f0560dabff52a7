// Every JSON, CSV and baseline output says what made it: fabsim's version and
// commit, the catalogue (and calibration profile) with their SHA-256, and the
// command line; regress says when a baseline came from another version or catalogue.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli_json.hpp"
#include "sim/core/build_info.hpp"
#include "sim/core/sha256.hpp"
#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::run_json;
using fabsim::testing::source_path;
using fabsim::testing::topology;
using fabsim::testing::write_temp;
using nlohmann::json;

namespace {

void check_provenance(const json& p, const std::string& command_tail) {
  CHECK(p["fabsim_version"] == fabsim::core::fabsim_version());
  CHECK(p["fabsim_commit"] == fabsim::core::fabsim_commit());
  CHECK_THAT(p["command_line"].get<std::string>(), Catch::EndsWith(command_tail));
}

}  // namespace

TEST_CASE("fabsim --version prints the version and the commit it was built from", "[e2e][install]") {
  const auto r = run_fabsim("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "fabsim " + fabsim::core::fabsim_version() + " (commit " + fabsim::core::fabsim_commit() + ")\n");
  CHECK(fabsim::core::fabsim_version() == "0.1.0");
  CHECK((fabsim::core::fabsim_commit() == "unknown" || fabsim::core::fabsim_commit().size() >= 12));
}

TEST_CASE("nccl-test JSON carries its provenance: the catalogue's file and content hash, the calibration's, the command", "[e2e][install]") {
  const std::string profile = source_path("configs/calibration/published-h100-a100.json");
  const json doc = run_json("nccl-test -t " + topology("hgx-h100") + " -b 1M -e 1M --calibration " + profile);
  const json& p = doc["meta"]["provenance"];
  check_provenance(p, "nccl-test -t " + topology("hgx-h100") + " -b 1M -e 1M --calibration " + profile + " --format json");
  REQUIRE(p.contains("catalogue"));
  CHECK(std::filesystem::equivalent(p["catalogue"]["file"].get<std::string>(), source_path("configs/hardware/catalogue.json")));
  CHECK(p["catalogue"]["sha256"] == fabsim::core::file_sha256(source_path("configs/hardware/catalogue.json")));
  CHECK(p["calibration"]["file"] == profile);
  CHECK(p["calibration"]["sha256"] == fabsim::core::file_sha256(profile));
  // A command-line argument with a space is quoted, so the line can be run again.
  std::ifstream in(profile);
  const std::string spaced = write_temp("a profile.json", std::string(std::istreambuf_iterator<char>(in), {}));
  const json quoted = run_json("nccl-test -t " + topology("hgx-h100") + " -b 1M -e 1M --calibration '" + spaced + "'");
  CHECK_THAT(quoted["meta"]["provenance"]["command_line"].get<std::string>(), Catch::Contains(" --calibration '" + spaced + "' "));
}

TEST_CASE("replay JSON, sweep CSV and JSON carry the provenance too", "[e2e][install]") {
  // Flow level: the provenance is the same at either level, and the segment level's 1.8e7 events would add a minute under the sanitizers.
  const json replay = run_json("replay -t " + topology("hgx-h100") + " --model flow " + source_path("configs/traces/dp8-ddp-step.json"));
  check_provenance(replay["meta"]["provenance"], "dp8-ddp-step.json --format json");
  CHECK(replay["meta"]["provenance"]["catalogue"]["sha256"] == fabsim::core::file_sha256(source_path("configs/hardware/catalogue.json")));

  const std::string sweep = write_temp("provenance_sweep.json", R"({"format": "fabsim-sweep/1", "base": ")" +
                                                                     source_path("configs/scenarios/hgx-h100-allreduce.json") + R"(",
      "axes": [{"path": "/workload/min_bytes", "values": ["1 MiB"]}, {"path": "/workload/max_bytes", "values": ["1 MiB"]}]})");
  const auto csv = run_fabsim("sweep " + sweep);
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("# fabsim " + fabsim::core::fabsim_version() + " (commit " + fabsim::core::fabsim_commit() + ")\n# command ", 0) == 0);
  const auto out_dir = std::filesystem::path(sweep).parent_path() / "provenance_sweep_out";
  REQUIRE(run_fabsim("sweep " + sweep + " -o " + out_dir.string()).exit_code == 0);
  const json report = json::parse(std::ifstream(out_dir / "sweep.json"));
  check_provenance(report["meta"]["provenance"], "sweep " + sweep + " -o " + out_dir.string());
  // Each point names the catalogue it ran with (an axis may change it).
  CHECK(report["points"][0]["meta"]["provenance"]["catalogue"]["sha256"] ==
        fabsim::core::file_sha256(source_path("configs/hardware/catalogue.json")));
}

TEST_CASE("regress --update records what made each scenario's figures, and regress says when that was another version or catalogue",
          "[e2e][regress][install]") {
  const std::string scenario = write_temp(
      "provenance_scenario.json", R"({"format": "fabsim-scenario/1", "topology": ")" + topology("hgx-h100") +
                                      R"(", "workload": {"kind": "nccl-test", "op": "all_reduce", "min_bytes": "1 MiB", "max_bytes": "1 MiB"}})");
  const std::string baseline =
      write_temp("provenance_baseline.json", R"({"format": "fabsim-baseline/1", "scenarios": [{"scenario": ")" + scenario + R"("}]})");
  REQUIRE(run_fabsim("regress " + baseline + " --update").exit_code == 0);
  json doc = json::parse(std::ifstream(baseline));
  const json& with = doc["scenarios"][0]["recorded_with"];
  CHECK(with["fabsim_version"] == fabsim::core::fabsim_version());
  CHECK(with["fabsim_commit"] == fabsim::core::fabsim_commit());
  CHECK(with["catalogue_sha256"] == fabsim::core::file_sha256(source_path("configs/hardware/catalogue.json")));
  CHECK_THAT(doc["meta"]["provenance"]["command_line"].get<std::string>(), Catch::EndsWith("regress " + baseline + " --update"));

  const auto same = run_fabsim("regress " + baseline);
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.out, !Catch::Contains("note:"));

  doc["scenarios"][0]["recorded_with"]["fabsim_version"] = "0.0.9";
  doc["scenarios"][0]["recorded_with"]["catalogue_sha256"] = std::string(64, '0');
  std::ofstream(baseline) << doc.dump();
  const auto other = run_fabsim("regress " + baseline);
  CHECK(other.exit_code == 0);  // the figures did not move: a note, not a failure
  CHECK_THAT(other.out, Catch::Contains("note: the baseline was recorded by fabsim 0.0.9 (commit " + fabsim::core::fabsim_commit() +
                                        "), this is " + fabsim::core::fabsim_version()));
  CHECK_THAT(other.out, Catch::Contains("with catalogue sha256 000000000000, now " +
                                        fabsim::core::file_sha256(source_path("configs/hardware/catalogue.json")).substr(0, 12)));
}

TEST_CASE("fabsim list names every stock file with its description, and check loads any input without simulating", "[e2e][install]") {
  const auto topologies = run_fabsim("list topologies");
  REQUIRE(topologies.exit_code == 0);
  CHECK_THAT(topologies.out, Catch::Contains("\nhgx-h100            HGX/DGX H100 8-GPU baseboard: 8 H100 SXM5, 4 third-generation NVSwitch chips;"));
  CHECK(std::count(topologies.out.begin(), topologies.out.end(), '\n') ==
        std::distance(std::filesystem::directory_iterator(source_path("topologies")), std::filesystem::directory_iterator()) -
            std::count_if(std::filesystem::directory_iterator(source_path("topologies")), std::filesystem::directory_iterator(),
                          [](const auto& e) { return e.path().extension() != ".json"; }));
  CHECK_THAT(run_fabsim("list models").out, Catch::Contains("\nnic cx7-ndr400 "));
  CHECK_THAT(run_fabsim("list scenarios").out, Catch::Contains("hgx-h100-allreduce-nccl-default  nccl-tests all_reduce_perf"));
  CHECK_THAT(run_fabsim("list sweeps").out, Catch::Contains("nvlink-domain-size "));
  CHECK_THAT(run_fabsim("list traces").out, Catch::Contains("moe-nvl72-alltoall "));

  const auto checked = run_fabsim("check " + topology("gb200-nvl72") + " " + source_path("configs/traces/dp8-ddp-step.json"));
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.out, Catch::Contains("gb200-nvl72.json: a topology (72 GPUs, "));
  CHECK_THAT(checked.out, Catch::Contains("dp8-ddp-step.json: a trace of 8 ranks"));
}
