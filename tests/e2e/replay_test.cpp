// Replays through the CLI (each run elaborates its own fabric): hand-checkable
// figures of the replay engine against nccl-test, closed forms and each other.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_json.hpp"

using namespace fabsim;
using nlohmann::json;

namespace {

using testing::run_json;
using testing::topology;

/// A trace of `ranks` ranks in one communicator running `ops` (a JSON list) on every rank.
std::string spmd_trace(const std::string& name, int ranks, const std::string& ops, int iterations = 1) {
  std::string list;
  for (int r = 0; r < ranks; ++r) {
    if (r > 0) list += ',';
    list += std::to_string(r);
  }
  return testing::write_temp(name, R"({"format": "fabsim-trace", "version": 1, "world_size": )" + std::to_string(ranks) +
                                       R"(, "iterations": )" + std::to_string(iterations) +
                                       R"(, "communicators": [{"id": "all", "groups": [[)" + list +
                                       R"(]]}], "programs": [{"ranks": [)" + list + R"(], "ops": )" + ops + "}]}");
}

/// Mean over ranks of an op's duration (us) in a replay's JSON.
double mean_duration(const json& doc, const std::string& id) {
  double sum = 0;
  int n = 0;
  for (const auto& op : doc["ops"])
    if (op["id"] == id) {
      sum += op["duration_us"].get<double>();
      ++n;
    }
  REQUIRE(n > 0);
  return sum / n;
}

}  // namespace

TEST_CASE("A lone all-reduce in a trace takes what nccl-test reports for that size, launched one process per GPU", "[replay]") {
  // A traced job runs a process per GPU (torchrun, MPI), nccl-tests' -g 1.
  for (const char* size : {"4096", "1048576", "67108864"}) {
    INFO(size);
    const auto trace = spmd_trace(std::string("lone-") + size + ".json", 8,
                                  std::string(R"([{"id": "ar", "type": "allreduce", "comm": "all", "bytes": )") + size + "}]");
    const auto replay = run_json("replay -t " + topology("hgx-h100") + " " + trace);
    const auto test = run_json("nccl-test -t " + topology("hgx-h100") + " --gpus-per-process 1 -b " + size + " -e " + size);
    const double expected = test["rows"][0]["time_us"].get<double>();
    CHECK(mean_duration(replay, "ar") == Approx(expected).epsilon(1e-4));
    CHECK(replay["ops"][0]["algorithm"].get<std::string>().rfind(test["rows"][0]["algorithm"].get<std::string>(), 0) == 0);
  }
}

TEST_CASE("Two all-reduces that share every link take about twice as long together", "[replay]") {
  // 256 MiB is bandwidth-bound: alone it takes T; two at once on the same
  // links each get half the bandwidth, so both end near 2T.
  const auto alone = run_json("replay -t " + topology("hgx-h100") + " --algo ring " +
                              spmd_trace("one.json", 8, R"([{"id": "a", "type": "allreduce", "comm": "all", "bytes": 268435456}])"));
  const auto both = run_json("replay -t " + topology("hgx-h100") + " --algo ring " +
                             spmd_trace("two.json", 8, R"([{"id": "a", "type": "allreduce", "comm": "all", "bytes": 268435456, "stream": "s1"},
                                                             {"id": "b", "type": "allreduce", "comm": "all", "bytes": 268435456, "stream": "s2"}])"));
  const double t = alone["makespan_us"].get<double>();
  const double together = both["makespan_us"].get<double>();
  CHECK(mean_duration(both, "a") > 1.8 * mean_duration(alone, "a"));
  CHECK(together > 1.8 * t);
  CHECK(together < 2.2 * t);
}

TEST_CASE("A compute gap longer than the all-reduce hides it completely", "[replay]") {
  // The all-reduce runs on its own stream while 5 ms of compute runs; the
  // next op waits for both, so the step is exactly compute + tail.
  const auto doc = run_json("replay -t " + topology("hgx-h100") + " " +
                            spmd_trace("hidden.json", 8, R"([
      {"id": "ar", "type": "allreduce", "comm": "all", "bytes": 16777216},
      {"id": "mm", "type": "compute", "duration_ns": 5000000},
      {"id": "tail", "type": "compute", "duration_ns": 100000, "deps": ["ar", "mm"]}])"));
  CHECK(doc["makespan_us"].get<double>() == Approx(5000.0 + 100.0).epsilon(1e-9));
  CHECK(mean_duration(doc, "ar") < 5000.0);
  for (const auto& r : doc["jobs"][0]["ranks_overlap"]) CHECK(r["exposed_us"].get<double>() == Approx(0.0).margin(1e-9));
  // The critical path runs through the compute, not the all-reduce.
  for (const auto& step : doc["jobs"][0]["critical_path"]) CHECK(step["type"] == "compute");
}

TEST_CASE("A straggler's slow compute delays every member of the next collective", "[replay]") {
  const std::string ops = R"([{"id": "mm", "type": "compute", "duration_ns": 1000000},
                              {"id": "ar", "type": "allreduce", "comm": "all", "bytes": 1048576, "deps": ["mm"]}])";
  const auto trace = spmd_trace("straggle.json", 8, ops);
  const auto even = run_json("replay -t " + topology("hgx-h100") + " " + trace);
  const auto slow = run_json("replay -t " + topology("hgx-h100") + " " + trace + " --straggler 3=1.5");
  // Rank 3 computes 1.5 ms: everyone's all-reduce ends 0.5 ms later.
  CHECK(slow["makespan_us"].get<double>() - even["makespan_us"].get<double>() == Approx(500.0).epsilon(1e-6));
  // The others waited inside the collective: it lasted 0.5 ms longer on rank 0.
  double rank0_even = 0, rank0_slow = 0;
  for (const auto& op : even["ops"])
    if (op["id"] == "ar" && op["rank"] == 0) rank0_even = op["duration_us"];
  for (const auto& op : slow["ops"])
    if (op["id"] == "ar" && op["rank"] == 0) rank0_slow = op["duration_us"];
  CHECK(rank0_slow - rank0_even == Approx(500.0).epsilon(1e-6));
  // A late start shifts everything by the delay.
  const auto late = run_json("replay -t " + topology("hgx-h100") + " " + trace + " --start-delay 5=250");
  CHECK(late["makespan_us"].get<double>() - even["makespan_us"].get<double>() == Approx(250.0).epsilon(1e-6));
}

TEST_CASE("Two jobs on one fabric contend where their traffic shares links", "[replay]") {
  // pcie-8gpu: two GPUs per PCIe switch, four switches under the root
  // complex. A 4-rank ring on GPUs 0-3 crosses the uplinks of switches 0
  // and 1 only; on GPUs 0,2,4,6 it crosses every uplink.
  const auto trace = spmd_trace("tenant.json", 4, R"([{"id": "ar", "type": "allreduce", "comm": "all", "bytes": 268435456}])");
  const std::string run = "replay -t " + topology("pcie-8gpu") + " --model flow --job " + trace;
  const double packed = run_json(run + "@0-3")["makespan_us"].get<double>();
  const double spread = run_json(run + "@0,2,4,6")["makespan_us"].get<double>();
  // Side by side on separate switches: neither slows the other.
  const auto apart = run_json(run + "@0-3 --job " + trace + "@4-7");
  REQUIRE(apart["jobs"].size() == 2);
  CHECK(apart["jobs"][0]["makespan_us"].get<double>() == Approx(packed).epsilon(1e-6));
  CHECK(apart["jobs"][1]["makespan_us"].get<double>() == Approx(packed).epsilon(1e-6));
  // Interleaved: both rings cross every switch uplink, each gets half of it.
  const auto shared = run_json(run + "@0,2,4,6 --job " + trace + "@1,3,5,7");
  CHECK(shared["jobs"][0]["makespan_us"].get<double>() > 1.9 * spread);
  CHECK(shared["jobs"][1]["makespan_us"].get<double>() > 1.9 * spread);
  int ops_of_job1 = 0;
  for (const auto& op : shared["ops"]) ops_of_job1 += op["job"] == 1 ? 1 : 0;
  CHECK(ops_of_job1 == 4);
}

TEST_CASE("The timeline is a Chrome trace with a track per rank and stream and per busy link", "[replay]") {
  const auto timeline = testing::write_temp("timeline.json", "");
  const auto trace = testing::source_path("configs/traces/dp8-ddp-step.json");
  const auto r = testing::run_fabsim("replay -t " + topology("hgx-h100") + " --model flow " + trace + " --timeline " + timeline);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(timeline);
  const json doc = json::parse(in);
  int ops = 0, counters = 0, threads = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") ++ops;
    if (e["ph"] == "C") ++counters;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++threads;
  }
  CHECK(ops == 8 * 74 * 3);    // every op instance: 8 ranks x 74 ops x 3 iterations
  CHECK(threads == 8 * 2);     // compute and comm:dp on every rank
  CHECK(counters > 100);       // link rates over time
}

TEST_CASE("Stock DP trace: the step is its compute plus the last layer's two bucket all-reduces", "[replay]") {
  const auto doc = run_json("replay -t " + topology("hgx-h100") + " --model flow " + testing::source_path("configs/traces/dp8-ddp-step.json"));
  double compute = 0;  // one rank, one iteration: every compute op
  for (const auto& op : doc["ops"])
    if (op["rank"] == 0 && op["iteration"] == 0 && op["type"] == "compute") compute += op["duration_us"].get<double>();
  // Earlier buckets hide under the next layer's backward (2 ms against ~0.1 ms);
  // the last layer's two run after its backward, one after the other on the dp stream.
  const double tail = mean_duration(doc, "ar0.0") + mean_duration(doc, "ar0.1");
  const auto steps = doc["jobs"][0]["step_times_us"];
  REQUIRE(steps.size() == 3);
  for (const auto& step : steps) CHECK(step.get<double>() == Approx(compute + tail).epsilon(1e-6));
  CHECK(mean_duration(doc, "ar12.0") < 0.1 * mean_duration(doc, "bwd11"));
}

TEST_CASE("Stock TP+PP trace: pipeline messages cross the network, tensor-parallel collectives stay on NVLink", "[replay]") {
  const auto doc = run_json("replay -t " + topology("hgx-h100-2node") + " --model flow " +
                            testing::source_path("configs/traces/tp8-pp2-2node-step.json"));
  // A ConnectX-7 port moves at most 400 Gb/s = 50 GB/s; NVLink4 gives a GPU 450 GB/s.
  double p2p_best = 0, tp_worst = 1e9;
  for (const auto& op : doc["ops"]) {
    const std::string type = op["type"];
    if (type == "send") p2p_best = std::max(p2p_best, op["algbw_GBps"].get<double>());
    if (type == "reducescatter") tp_worst = std::min(tp_worst, op["algbw_GBps"].get<double>());
  }
  CHECK(p2p_best > 0);
  CHECK(p2p_best < 50.0);
  CHECK(tp_worst > 100.0);
  // 16 ranks x 2 iterations, each rank's program fully replayed.
  CHECK(doc["ops"].size() == 2 * 8 * (198 + 198));
}

TEST_CASE("An imported NCCL log replays, and fabsim trace check accepts it", "[replay]") {
  const auto out = testing::write_temp("from-log.json", "");
  const auto imported = testing::run_fabsim("trace import --from nccl-log " +
                                            testing::source_path("tests/data/traces/real/nccl_debug_info_4rank.log") + " -o " + out);
  REQUIRE(imported.exit_code == 0);
  const auto check = testing::run_fabsim("trace check " + out);
  CHECK(check.exit_code == 0);
  CHECK_THAT(check.out, Catch::Contains("4 ranks, 2 communicators"));
  const auto doc = run_json("replay -t " + topology("hgx-h100") + " " + out);
  CHECK(doc["ops"].size() == 20);
  CHECK(doc["makespan_us"].get<double>() > 0);
}
