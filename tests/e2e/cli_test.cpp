#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_json.hpp"
#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::run_json;
using fabsim::testing::source_path;
using nlohmann::json;

namespace {
const std::string kTopology = "--topology " + source_path("topologies/hgx-h100.json");
}  // namespace

TEST_CASE("nccl-test --format json prints only the JSON document with the nccl-tests columns", "[e2e]") {
  const json doc = run_json("nccl-test " + kTopology + " --op all_reduce --algo ring -b 8 -e 8G -f 2");
  REQUIRE(doc["rows"].size() == 31);  // 8 B .. 8 GiB by factors of 2
  for (const auto& row : doc["rows"])
    for (const char* key : {"bytes", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol"}) CHECK(row.contains(key));
  const auto& last = doc["rows"].back();
  CHECK(last["bytes"] == 8589934592ull);
  // nccl-tests: algbw = S / t, busbw = algbw x 2(n-1)/n for all-reduce.
  CHECK(last["algbw_GBps"].get<double>() == Approx(8589934592.0 / (last["time_us"].get<double>() * 1e3)).epsilon(1e-4));
  CHECK(last["busbw_GBps"].get<double>() == Approx(last["algbw_GBps"].get<double>() * 14.0 / 8).epsilon(1e-4));
  CHECK(doc["meta"]["kernel_events"].get<std::uint64_t>() > 0);
}

TEST_CASE("all-gather and reduce-scatter sizes are the total buffer, busbw factor (n-1)/n", "[e2e]") {
  for (const char* op : {"all_gather", "reduce_scatter"}) {
    const json doc = run_json(std::string("nccl-test ") + kTopology + " --op " + op + " -b 1G -e 1G -g 4");
    const auto& row = doc["rows"][0];
    CHECK(row["bytes"] == 1073741824);
    CHECK(row["count"] == 1073741824 / 4 / 4);  // nccl-tests prints the per-rank count
    CHECK(row["busbw_GBps"].get<double>() == Approx(row["algbw_GBps"].get<double>() * 3.0 / 4).epsilon(1e-4));
  }
}

TEST_CASE("csv output carries the same rows", "[e2e]") {
  const auto r = run_fabsim("nccl-test " + kTopology + " -b 1M -e 4M --format csv");
  REQUIRE(r.exit_code == 0);
  // Provenance first, as comment lines: version and commit, the catalogue and its hash, the command.
  CHECK(r.out.rfind("# fabsim ", 0) == 0);
  CHECK_THAT(r.out, Catch::Contains("\n# catalogue ") && Catch::Contains(" sha256 ") && Catch::Contains("\n# command "));
  const std::string body = fabsim::testing::csv_body(r.out);
  CHECK(body.rfind("bytes,count,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels\n", 0) == 0);
  CHECK(std::count(body.begin(), body.end(), '\n') == 4);
}

TEST_CASE("the flags algo, proto and channels force NCCL's choices, case-insensitively", "[e2e]") {
  const json doc = run_json("nccl-test " + kTopology + " -b 64M -e 64M --algo RING --proto ll --channels 8");
  CHECK(doc["rows"][0]["algorithm"] == "Ring");
  CHECK(doc["rows"][0]["protocol"] == "LL");
  CHECK(doc["rows"][0]["channels"] == 8);
}

TEST_CASE("point-to-point ops report NCCL's p2p channels by size and release, and take a forced channel count", "[e2e][p2p]") {
  // sendrecv on 8 GPUs: 8 channels a peer at 128 MiB, 32 from 512 MiB (NCCL 2.20.3 on); up to 2.19 at most 16.
  const json newest = run_json("nccl-test " + kTopology + " --op sendrecv -b 128M -e 512M -f 4");
  CHECK(newest["rows"][0]["channels"] == 8);
  CHECK(newest["rows"][1]["channels"] == 32);
  const json old = run_json("nccl-test " + kTopology + " --op sendrecv -b 512M -e 512M --nccl-version 2.19.3");
  CHECK(old["rows"][0]["channels"] == 16);
  // all-to-all: 7 peers of 8 channels each share NCCL's 32 p2p CTAs.
  CHECK(run_json("nccl-test " + kTopology + " --op alltoall -b 1G -e 1G")["rows"][0]["channels"] == 32);
  // --channels 6: 8 p2p channels (the next power of two), all of them for the one peer at 1 GiB.
  CHECK(run_json("nccl-test " + kTopology + " --op sendrecv -b 1G -e 1G --channels 6")["rows"][0]["channels"] == 8);
}

TEST_CASE("a release newer than any tuner read runs with the newest table and says so", "[e2e][nccl-version]") {
  const json newer = run_json("nccl-test " + kTopology + " -b 1M -e 1M --nccl-version 2.31.2");
  const json newest = run_json("nccl-test " + kTopology + " -b 1M -e 1M --nccl-version 2.30.7");
  CHECK(newer["rows"][0]["time_us"] == newest["rows"][0]["time_us"]);
  REQUIRE(newer["meta"]["warnings"].size() == 1);
  CHECK(newer["meta"]["warnings"][0].get<std::string>().find("NCCL 2.31.2 is newer than") == 0);
  CHECK_FALSE(newest["meta"].contains("warnings"));
}

TEST_CASE("the flag g (N GPUs) uses the first N GPUs", "[e2e]") {
  const json two = run_json("nccl-test " + kTopology + " -b 1G -e 1G -g 2");
  const json eight = run_json("nccl-test " + kTopology + " -b 1G -e 1G -g 8");
  CHECK(two["meta"]["gpus"] == 2);
  // 2 GPUs move S per rank, 8 GPUs 1.75 S: the 2-GPU run is faster.
  CHECK(two["rows"][0]["time_us"].get<double>() < eight["rows"][0]["time_us"].get<double>());
}

TEST_CASE("the table keeps nccl-tests' columns and reports link use with --links", "[e2e]") {
  const auto r = run_fabsim("nccl-test " + kTopology + " -b 1M -e 1M --links");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("size         count    type   redop    root        time     algbw     busbw"));
  CHECK_THAT(r.out, Catch::Contains("gpu0->nvswitch0"));
}

TEST_CASE("bandwidth-bound results converge as segments shrink", "[e2e][convergence]") {
  for (const char* size : {"64M", "256M"}) {
    std::vector<double> times;
    for (const char* seg : {"512K", "128K", "32K", "8K"}) {
      const json doc = run_json("nccl-test " + kTopology + " -b " + size + " -e " + size + " --segment-size " + seg);
      times.push_back(doc["rows"][0]["time_us"].get<double>());
    }
    for (std::size_t i = 0; i + 1 < times.size(); ++i) {
      INFO(size << ": " << times[i] << " us -> " << times[i + 1] << " us");
      CHECK(std::abs(times[i + 1] - times[i]) / times[i + 1] < 0.01);
    }
  }
}

TEST_CASE("LL and LL128 broadcasts and reduces converge as segments shrink: receivers pass lines on as they arrive", "[e2e][convergence]") {
  // Before the chain forwarded LL128 steps piece by piece, an 8 MiB broadcast
  // took 52.0, 65.9 and 88.6 us at these segment sizes (store and forward of
  // whole 576,000-byte steps, fairly shared links).
  for (const char* op : {"broadcast", "reduce"})
    for (const char* proto : {"LL", "LL128"}) {
      std::vector<double> times;
      for (const char* seg : {"512K", "64K", "16K"}) {
        const json doc = run_json(std::string("nccl-test ") + kTopology + " --op " + op + " --proto " + proto +
                                  " -b 8M -e 8M --model segment --segment-size " + seg);
        times.push_back(doc["rows"][0]["time_us"].get<double>());
      }
      INFO(op << " " << proto << ": " << times[0] << ", " << times[1] << ", " << times[2] << " us");
      CHECK(std::abs(times[2] - times[0]) / times[2] < 0.01);
      CHECK(std::abs(times[1] - times[0]) / times[1] < 0.01);
    }
}

TEST_CASE("the stock scenario matches its reviewed golden file", "[e2e][golden]") {
  const json doc = run_json("run " + source_path("configs/scenarios/hgx-h100-allreduce.json"));
  std::ifstream in(source_path("tests/e2e/golden/hgx-h100-allreduce.json"));
  REQUIRE(in.good());
  const json golden = json::parse(in);
  REQUIRE(doc["rows"].size() == golden["rows"].size());
  for (std::size_t i = 0; i < golden["rows"].size(); ++i) {
    const auto& got = doc["rows"][i];
    const auto& want = golden["rows"][i];
    INFO("row " << i << " bytes " << want["bytes"]);
    CHECK(got["bytes"] == want["bytes"]);
    CHECK(got["protocol"] == want["protocol"]);
    CHECK(got["time_us"].get<double>() == Approx(want["time_us"].get<double>()).epsilon(0.005));
  }
}

TEST_CASE("NVLS moves (n+1)/n of the buffer over each GPU port and direction", "[e2e][nvls]") {
  const int n = 4;
  const std::string topology = fabsim::testing::star_topology("nvls_star", n);
  const json doc = run_json("nccl-test --topology " + topology + " --algo nvls -b 64M -e 64M --links");
  REQUIRE(doc["rows"][0]["algorithm"] == "NVLS");
  const double S = 64.0 * 1024 * 1024;
  for (const auto& link : doc["links"]) {
    INFO(link["link"]);
    // up: S of reduction sources + S/n of the head's store; down: S/n of reduced result + S of stores
    CHECK(link["bytes"].get<double>() == Approx(S * (n + 1) / n).epsilon(1e-9));
  }
}

TEST_CASE("NVLS is refused where no switch can reduce", "[e2e][nvls]") {
  const std::string topology = fabsim::testing::star_topology("nvls_direct", 2, true);
  const auto r = run_fabsim("nccl-test --topology " + topology + " --algo nvls -b 1M -e 1M");
  CHECK(r.exit_code == 2);
}

TEST_CASE("every nccl-tests operation runs with its size and busbw conventions", "[e2e]") {
  const std::vector<std::pair<std::string, double>> ops{{"broadcast", 1.0}, {"reduce", 1.0}, {"sendrecv", 1.0},
                                                        {"alltoall", 7.0 / 8}, {"gather", 7.0 / 8}, {"scatter", 7.0 / 8}};
  for (const auto& [op, factor] : ops) {
    const json doc = run_json("nccl-test " + kTopology + " --op " + op + " -b 256M -e 256M");
    const auto& row = doc["rows"][0];
    INFO(op);
    CHECK(row["bytes"] == 268435456);
    CHECK(row["busbw_GBps"].get<double>() == Approx(row["algbw_GBps"].get<double>() * factor).epsilon(1e-4));
    // Each is bounded by one GPU port: busbw between 80% and 100% of 18 x 25 GB/s x 0.824.
    CHECK(row["busbw_GBps"].get<double>() < 371.0);
    CHECK(row["busbw_GBps"].get<double>() > 0.8 * 371.0);
  }
}

TEST_CASE("forced Tree all-reduce moves 2S per GPU port: algbw is half the port bandwidth at large sizes", "[e2e][tree]") {
  const json doc = run_json("nccl-test " + kTopology + " --algo tree -b 4G -e 4G");
  const auto& row = doc["rows"][0];
  CHECK(row["algorithm"] == "Tree");
  CHECK(row["algbw_GBps"].get<double>() < 0.5 * 18 * 25 * 0.824);
  CHECK(row["algbw_GBps"].get<double>() > 0.45 * 18 * 25 * 0.824);
}

TEST_CASE("model auto takes the segment level within its budget and the flow level above it", "[e2e][model]") {
  // 8 GPUs, 8 B - 8 GiB ring: about 1.8e6 estimated events, within the 3e7 budget.
  const json box = run_json("nccl-test " + kTopology + " -b 8 -e 8G --algo ring --model auto");
  CHECK(box["meta"]["model"] == "segment");
  CHECK(box["rows"].back()["time_us"] == run_json("nccl-test " + kTopology + " -b 8G -e 8G --algo ring")["rows"][0]["time_us"]);
  // A GB200 NVL72 rack, NCCL's default (NVLS): about 8e7, over it.
  const json rack = run_json("nccl-test --topology " + source_path("topologies/gb200-nvl72.json") + " -b 8 -e 8G --model auto");
  CHECK(rack["meta"]["model"] == "flow");
  CHECK(rack["meta"]["segment_size_bytes"] == 0);
}

TEST_CASE("model auto is the default: no --model takes the level the estimate chooses", "[e2e][model]") {
  const auto box = run_fabsim("nccl-test " + kTopology + " -b 1M -e 64M --format json");
  REQUIRE(box.exit_code == 0);
  CHECK(json::parse(box.out)["meta"]["model"] == "segment");
  // 1 GiB ring on 1,024 GPUs: about 3e8 estimated events, the flow level (cheap enough for the sanitizer pass).
  const auto cluster = run_fabsim("nccl-test --topology " + source_path("topologies/ib-fat-tree-1024.json") +
                                  " -b 1G -e 1G --algo ring --format json");
  REQUIRE(cluster.exit_code == 0);
  CHECK(json::parse(cluster.out)["meta"]["model"] == "flow");
  // --model segment still forces, and still refuses what would take too long.
  const auto forced = run_fabsim("nccl-test " + kTopology + " -b 64M -e 64M --segment-size 1 --model segment");
  CHECK(forced.exit_code == 2);
}

TEST_CASE("a progress line changes no figure: the kernel run in slices takes its events in the same order", "[e2e][progress]") {
  // 8 B - 256 MiB on 8 GPUs at segment level, NCCL's default (Ring, then NVLS pieces): over a million events, many slices.
  const std::string sweep = "nccl-test " + kTopology + " -b 8 -e 256M --model segment --format json --progress ";
  const auto whole = run_fabsim(sweep + "never"), sliced = run_fabsim(sweep + "always");
  REQUIRE(whole.exit_code == 0);
  REQUIRE(sliced.exit_code == 0);
  CHECK(json::parse(whole.out)["rows"] == json::parse(sliced.out)["rows"]);
  // The replay at flow level: its 230 ms of simulated time still runs in many slices (each at most double the one
  // before), launches and compute gaps crossing their edges, without the segment level's 1.8e7 events (the sweep has those).
  const std::string replay = "replay --topology " + source_path("topologies/hgx-h100.json") + " " +
                             source_path("configs/traces/dp8-ddp-step.json") + " --model flow --format json --progress ";
  const auto replay_whole = run_fabsim(replay + "never"), replay_sliced = run_fabsim(replay + "always");
  REQUIRE(replay_whole.exit_code == 0);
  REQUIRE(replay_sliced.exit_code == 0);
  CHECK(json::parse(replay_whole.out)["ops"] == json::parse(replay_sliced.out)["ops"]);
  CHECK(json::parse(replay_whole.out)["makespan_us"] == json::parse(replay_sliced.out)["makespan_us"]);
}

TEST_CASE("model auto on a replay: the 8-GPU DDP step at segment level, the NVL72 MoE trace at flow level", "[e2e][model]") {
  const auto small = run_fabsim("replay --topology " + source_path("topologies/hgx-h100.json") + " " +
                                source_path("configs/traces/dp8-ddp-step.json") + " --model auto --format json");
  REQUIRE(small.exit_code == 0);
  CHECK(json::parse(small.out)["model"] == "segment");
  // About 4e7 estimated events: over the 3e7 budget.
  const auto large = run_fabsim("replay --topology " + source_path("topologies/gb200-nvl72.json") + " " +
                                source_path("configs/traces/moe-nvl72-alltoall.json") + " --model auto --format json");
  REQUIRE(large.exit_code == 0);
  CHECK(json::parse(large.out)["model"] == "flow");
}

TEST_CASE("validate: a bound on an out-of-sample median that is exceeded fails the run with exit 1 and says which", "[cli][validate]") {
  // One held-out bandwidth-bound data set (6 sizes, median 6.5%) against a 0.01% bound, then a bound it meets.
  const std::string measurements = source_path("tests/errors/bandwidth_only_measurements.json");
  const auto failed = run_fabsim("validate --measurements " + measurements + " --max-bandwidth-error 0.0001");
  CHECK(failed.exit_code == 1);
  CHECK_THAT(failed.out, Catch::Contains("check: out-of-sample bandwidth-bound median over every GPU 6.53% (bound 0.01%): FAILED"));
  const auto passed = run_fabsim("validate --measurements " + measurements + " --max-bandwidth-error 0.1");
  CHECK(passed.exit_code == 0);
  CHECK_THAT(passed.out, Catch::Contains("(bound 10.00%): passed"));
}

TEST_CASE("validate: a row whose out-of-place and in-place timings are over 15% apart is shown with both and not counted", "[cli][validate]") {
  // The held-out 2-GPU ring set, its 256 MiB row given an in-place time twice its own (a stall in one of the two).
  std::ifstream in(source_path("tests/errors/bandwidth_only_measurements.json"));
  json doc = json::parse(in);
  doc["collective_datasets"][0]["rows"][0]["inplace_time_us"] = 1786.70;
  const std::string measurements = fabsim::testing::write_temp("timings_apart.json", doc.dump());
  const auto text = run_fabsim("validate --measurements " + measurements);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("(not counted: out of place 893.35 us, in place 1786.70 us: 100% apart)"));
  CHECK_THAT(text.out, Catch::Contains("are not counted (1 here, marked above)"));
  const auto report = json::parse(run_fabsim("validate --json --measurements " + measurements).out);
  REQUIRE(report["left_out_rows"].size() == 1);
  CHECK(report["left_out_rows"][0]["bytes"] == 268435456);
  REQUIRE(report["summary"].size() == 1);
  CHECK(report["summary"][0]["sizes"] == 5);  // of 6
  CHECK(report["datasets"][0]["rows"][0]["counted"] == false);
  // Each row says what gave its prediction: the 2-GPU ring at the segment level, simulated.
  const auto& row = report["datasets"][0]["rows"][1];
  CHECK(row["algorithm"] == "Ring");
  CHECK(row["protocol"] == "Simple");
  CHECK(row["model"] == "segment");
  CHECK(row["extrapolated"] == false);
}

TEST_CASE("validate: each run says how it was launched (nccl-tests -g), and a launch that is not a GPU count is refused with exit 2",
          "[cli][validate]") {
  std::ifstream in(source_path("tests/errors/bandwidth_only_measurements.json"));
  json doc = json::parse(in);
  doc["collective_datasets"][0]["gpus_per_process"] = 2;
  const std::string measurements = fabsim::testing::write_temp("launched.json", doc.dump());
  const auto text = run_fabsim("validate --measurements " + measurements);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("; launch: one process drives 2 GPUs (nccl-tests -g 2)"));
  CHECK_THAT(text.out, Catch::Contains("latency-bound sizes by launch (nccl-tests -g;"));
  const auto report = json::parse(run_fabsim("validate --json --measurements " + measurements).out);
  CHECK(report["datasets"][0]["gpus_per_process"] == 2);
  CHECK(report["latency_by_launch"].empty());  // no latency-bound rows in this set
  doc["collective_datasets"][0]["gpus_per_process"] = "all";
  const auto refused = run_fabsim("validate --measurements " + fabsim::testing::write_temp("launched_badly.json", doc.dump()));
  CHECK(refused.exit_code == 2);
}

TEST_CASE("a run where validate finds fabsim far off the only measurement there carries a warning that says so",
          "[e2e][accuracy]") {
  const auto warnings = [](const json& doc) { return doc["meta"].value("warnings", json::array()); };
  // Two A3 Mega VMs over GPUDirect-TCPXO: 1.3-3.2x faster than the measured all-reduce sweep from 1 MiB to 256 MiB.
  const std::string tcpxo = "nccl-test --topology " + source_path("topologies/gcp-a3mega-2node.json");
  const json mid = run_json(tcpxo + " -b 16M -e 16M");
  REQUIRE(warnings(mid).size() == 1);
  CHECK_THAT(warnings(mid)[0].get<std::string>(), Catch::Contains("GPUDirect-TCPXO"));
  CHECK(warnings(run_json(tcpxo + " -b 1G -e 1G")).empty());         // bandwidth-bound: within 8%
  CHECK(warnings(run_json(tcpxo + " -g 8 -b 16M -e 16M")).empty());  // one VM: no TCPXO on the path
  CHECK(warnings(run_json("nccl-test --topology " + source_path("topologies/hgx-h100-2node.json") + " -b 16M -e 16M")).empty());
  // Racks of NVL72: tests/unit/known_gaps_test.cpp (their runs are too long for the sanitizer pass).
}
