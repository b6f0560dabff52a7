// The measurement parsers: nccl-tests text, the published-measurements JSON
// and the harness's JSON, with their errors.

#include <catch2/catch.hpp>

#include "sim/calibration/measurements.hpp"
#include "sim/core/error.hpp"
#include "test_support.hpp"

using namespace fabsim;

TEST_CASE("nccl-tests text: header, devices and every out-of-place row", "[calibration][parser]") {
  // The shared fixture is synthetic: its numbers only exercise the parser.
  const auto m = calibration::load_measurements(testing::source_path("tests/data/traces/real/nccl_tests_format_sample_synthetic.txt"));
  REQUIRE(m.sweeps.size() == 1);
  const auto& s = m.sweeps[0];
  CHECK(s.op == traces::CollectiveOp::kAllReduce);
  CHECK(s.gpus == 8);
  CHECK(s.nodes == 1);
  CHECK(s.gpu == "NVIDIA H100 80GB HBM3");
  REQUIRE(s.rows.size() == 11);
  CHECK(s.rows.front().bytes == 1024);
  CHECK(s.rows.front().time_us == Approx(11.60));
  CHECK(s.rows.back().bytes == 1073741824);
  CHECK(s.rows.back().busbw_gbps == Approx(428.86));
}

TEST_CASE("nccl-tests text: a malformed row is named by its line", "[calibration][parser][errors]") {
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#  Rank  0 Group  0 Pid  1 on     a device  0 [0000:18:00] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid  1 on     b device  0 [0000:18:00] NVIDIA H100\n"
      "        1024           128     float    none      -1    10.00    0.10    0.05       0\n"
      "        2048    oops\n";
  try {
    calibration::parse_nccl_tests_text(text, "bad.txt");
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("bad.txt: line 5: expected a result row"));
  }
  const auto ok = calibration::parse_nccl_tests_text(text.substr(0, text.rfind("        2048")), "ok.txt");
  CHECK(ok.sweeps[0].op == traces::CollectiveOp::kAllGather);
  CHECK(ok.sweeps[0].gpus == 2);
  CHECK(ok.sweeps[0].nodes == 2);  // two hosts
}

TEST_CASE("published measurements: per-size data sets kept, summaries skipped with a reason, P2P rows read", "[calibration][parser]") {
  const auto m = calibration::load_measurements(testing::source_path("configs/measurements/published-measurements.json"));
  CHECK(m.sweeps.size() >= 13);
  CHECK(!m.skipped.empty());
  bool found = false;
  for (const auto& s : m.sweeps)
    if (s.id == "h100_sxm_4gpu_all_reduce_ring_256M-8G_nccl2.29") {
      found = true;
      CHECK(s.algorithm == "ring");
      CHECK(s.gpus == 4);
      CHECK(s.nccl_version == "2.29.2");  // "2.29.2 (nccl_version.txt; ...)": calibrate chooses with 2.29's tuner
    }
  CHECK(found);
  for (const auto& s : m.sweeps) {
    INFO(s.id);
    if (s.id == "h100_16gpu_2node_all_gather_gcp_a3mega_tcpxo_nccl2.28") CHECK(s.nccl_version == "2.28.7");
    if (s.id == "h100_16gpu_2node_all_reduce_gcp_a3mega") CHECK(s.nccl_version.empty());  // names none
  }
  REQUIRE(!m.peers.empty());
  CHECK(m.peers.front().unidirectional_gbps == Approx(371.02));
}

TEST_CASE("harness JSON: peers, host figures, NCCL sweeps, and unknown keys are errors", "[calibration][parser]") {
  const nlohmann::json doc = {
      {"format", "fabsim-measurements/1"},
      {"machine", {{"gpus", 2}}},
      {"peers", {{{"source", 0}, {"destination", 1}, {"engine", "copy-engine"}, {"unidirectional_GBps", 370.5}, {"latency_us", 2.1}}}},
      {"host", {{"host_to_device_GBps", 55.1}, {"device_to_host_GBps", 54.9}, {"device_copy_GBps", 3900.0}, {"kernel_launch_us", 2.4}}},
      {"nccl", {{{"id", "h200:all_reduce"}, {"gpu", "NVIDIA H200"}, {"gpus", 2}, {"nodes", 1}, {"collective", "all_reduce"},
                 {"algorithm", "Ring"}, {"rows", {{{"bytes", 1024}, {"time_us", 10.5}, {"busbw_GBps", 0.1}}}}}}},
      {"skipped", {"NVML: no NVLink on this GPU"}}};
  const auto m = calibration::parse_measurements_json(doc, "h.json");
  REQUIRE(m.peers.size() == 1);
  CHECK(m.peers[0].latency_us == Approx(2.1));
  CHECK(*m.launch_latency_us == Approx(2.4));
  REQUIRE(m.sweeps.size() == 1);
  CHECK(m.sweeps[0].algorithm == "ring");
  CHECK(m.skipped.size() == 1);
  auto bad = doc;
  bad["host"]["bogus"] = 1;
  CHECK_THROWS_WITH(calibration::parse_measurements_json(bad, "h.json"), Catch::Contains("/host/bogus: unknown key"));
}

TEST_CASE("recorded choices: NCCL's Algorithm/Protocol spellings, refused where NCCL lacks the pair", "[calibration][parser]") {
  using traces::CollectiveOp;
  const auto tree = calibration::parse_recorded_choice("Tree/LL128", CollectiveOp::kAllReduce);
  REQUIRE(tree);
  CHECK(tree->algorithm == "tree");
  CHECK(tree->protocol == "LL128");
  const auto nvls_tree = calibration::parse_recorded_choice("NVLS_TREE/simple", CollectiveOp::kAllReduce);  // NCCL's log spelling
  REQUIRE(nvls_tree);
  CHECK(nvls_tree->algorithm == "nvlstree");
  CHECK(nvls_tree->protocol == "Simple");
  CHECK_FALSE(calibration::parse_recorded_choice("NVLSTree/LL", CollectiveOp::kAllReduce));  // Simple only
  CHECK_FALSE(calibration::parse_recorded_choice("Tree/Simple", CollectiveOp::kAllGather));  // no tree all-gather
  CHECK_FALSE(calibration::parse_recorded_choice("Ring", CollectiveOp::kAllReduce));
  CHECK_FALSE(calibration::parse_recorded_choice("Ring/LL256", CollectiveOp::kAllReduce));
}

TEST_CASE("recorded choices: one run per choice spanning its sizes, rows without one together", "[calibration][parser]") {
  const auto runs = calibration::choice_runs({{32u << 20, "tree/LL128"},
                                              {64u << 20, "ring/LL128"},
                                              {512u << 20, "nvlstree/Simple"},
                                              {2048u << 20, "ring/LL128"},
                                              {4096ull << 20, "nvlstree/Simple"},
                                              {8192ull << 20, ""}});
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].choice == "tree/LL128");
  CHECK(runs[1].choice == "ring/LL128");
  CHECK(runs[1].lo == (64u << 20));
  CHECK(runs[1].hi == (2048u << 20));
  CHECK(runs[2].lo == (512u << 20));
  CHECK(runs[2].hi == (4096ull << 20));
  CHECK(runs[3].choice.empty());
  CHECK(calibration::choice_arguments(runs[0], "auto") == std::vector<std::string>{"--algo", "tree", "--proto", "LL128"});
  CHECK(calibration::choice_arguments(runs[3], "ring") == std::vector<std::string>{"--algo", "ring"});
}

TEST_CASE("AWS p5 EFA sweeps: rows carry aws-ofi-nccl's choice beyond two nodes, NCCL's own below", "[calibration][parser]") {
  const auto m = calibration::load_measurements(testing::source_path("configs/measurements/aws-p5-efa.json"));
  REQUIRE(m.sweeps.size() == 10);
  for (const auto& s : m.sweeps) {
    INFO(s.id);
    CHECK(s.nccl_version == "2.27.7");
    CHECK(s.algorithm.empty());
    const bool plugin_chose = s.op == traces::CollectiveOp::kAllReduce && s.nodes > 2;
    for (const auto& r : s.rows) CHECK(r.choice.empty() != plugin_chose);
    if (s.id == "h100_32gpu_4node_all_reduce_aws_p5_efa_nccl2.27") {
      REQUIRE(s.rows.size() == 9);
      CHECK(s.rows[0].choice == "tree/LL128");    // 32 MiB
      CHECK(s.rows[5].choice == "ring/LL128");    // 1 GiB
      CHECK(s.rows[6].choice == "ring/Simple");   // 2 GiB: busbw 280 -> 348 GB/s
      CHECK(s.rows[6].time_us == Approx(11971.03));  // 2 GiB / 179.39 GB/s algbw
    }
  }
}

TEST_CASE("timings apart: a row whose out-of-place and in-place times disagree past 15% is not fitted on", "[calibration][parser]") {
  CHECK(calibration::disagreeing_timings(24.70, 24.96).empty());
  CHECK(calibration::disagreeing_timings(100.0, 115.0).empty());  // 15% is the edge, still one operation's time
  CHECK(calibration::disagreeing_timings(100.0, std::nullopt).empty());
  CHECK(calibration::disagreeing_timings(0.0, 20.0).empty());  // a zero-byte row's 0 says nothing
  CHECK(calibration::disagreeing_timings(68.52, 24.70) == "out of place 68.52 us, in place 24.70 us: 177% apart");
  CHECK(calibration::disagreeing_timings(24.70, 68.52) == "out of place 24.70 us, in place 68.52 us: 177% apart");

  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid  1 on     a device  0 [0000:18:00] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid  1 on     a device  1 [0000:2a:00] NVIDIA H100\n"
      "           8             2     float     sum      -1    68.52    0.00    0.00       0    24.70    0.00    0.00       0\n"
      "          16             4     float     sum      -1    24.96    0.00    0.00       0    24.80    0.00    0.00       0\n"
      "          32             8     float     sum      -1    24.93    0.00    0.00       0\n";
  const auto m = calibration::parse_nccl_tests_text(text, "spike.txt");
  REQUIRE(m.sweeps.size() == 1);
  REQUIRE(m.sweeps[0].rows.size() == 2);  // 16 B, and 32 B without an in-place time
  CHECK(m.sweeps[0].rows[0].bytes == 16);
  REQUIRE(m.skipped.size() == 1);
  CHECK(m.skipped[0] == "line 4, 8 B: out of place 68.52 us, in place 24.70 us: 177% apart (not fitted on)");

  const nlohmann::json doc = {{"collective_datasets",
                               {{{"id", "spiky"}, {"gpu", "H100"}, {"gpus", 16}, {"nodes", 2}, {"collective", "all_reduce"},
                                 {"rows",
                                  {{{"bytes", 256}, {"time_us", 94.40}, {"inplace_time_us", 25.90}},
                                   {{"bytes", 512}, {"time_us", 26.0}, {"inplace_time_us", 26.31}}}}}}}};
  const auto j = calibration::parse_measurements_json(doc, "spiky.json");
  REQUIRE(j.sweeps.size() == 1);
  REQUIRE(j.sweeps[0].rows.size() == 1);
  CHECK(j.sweeps[0].rows[0].bytes == 512);
  CHECK(j.skipped == std::vector<std::string>{"spiky at 256 B: out of place 94.40 us, in place 25.90 us: 264% apart (not fitted on)"});
}
