// fabsim calibrate recovers parameters it did not know: measurements are
// made by fabsim itself with known values (a profile), given 1% noise and
// written as nccl-tests text; the fit must find the values again. Then the
// round trip on the published data: the profile must not make validate worse.

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::source_path;
using fabsim::testing::write_temp;
using nlohmann::json;

namespace {

/// `hosts` > 1 spreads the ranks over that many hosts, as a multi-node run prints them;
/// `per_process` is the header's nGpus (nccl-tests -g), by default every GPU.
std::string nccl_tests_text(const std::string& op, int gpus, const json& rows, int seed, int hosts = 1, int per_process = 0) {
  std::string out = fmt::format("# Collective test starting: {}_perf\n# nThread 1 nGpus {} minBytes 8 maxBytes 1 step: 2(factor)\n", op,
                                per_process > 0 ? per_process : gpus);
  for (int g = 0; g < gpus; ++g)
    out += fmt::format("#  Rank {:2} Group  0 Pid  1 on  host{} device {:2} [0000:18:00] NVIDIA H100 80GB HBM3\n", g, g / (gpus / hosts),
                       g % (gpus / hosts));
  int k = seed;
  for (const auto& r : rows) {
    // Deterministic +-1% noise.
    k = (k * 1103515245 + 12345) & 0x7fffffff;
    const double noise = 1.0 + 0.01 * ((k % 2001) / 1000.0 - 1.0);
    const double t = r["time_us"].get<double>() * noise;
    const double busbw = r["busbw_GBps"].get<double>() / noise;
    out += fmt::format("{:>12} {:>13} float sum -1 {:>8.2f} {:>7.2f} {:>7.2f} 0 {:>8.2f} {:>7.2f} {:>7.2f} 0\n", r["bytes"].get<std::uint64_t>(),
                       r["count"].get<std::uint64_t>(), t, 0.0, busbw, t, 0.0, busbw);
  }
  return out;
}

}  // namespace

TEST_CASE("calibrate recovers known efficiency and latencies from noisy synthetic nccl-tests output", "[calibration][slow]") {
  const json truth = {{"format", "fabsim-calibration/1"},
                      {"catalogue_patch",
                       {{"links", {{"nvlink4", {{"efficiency", {{"value", 0.70}, {"source", "test truth"}}}}}}},
                        {"gpus",
                         {{"h100-sxm",
                           {{"launch_overhead", {{"value", "10 us"}, {"source", "test truth"}}},
                            {"reduce_overhead", {{"value", "3 us"}, {"source", "test truth"}}},
                            {"protocols", {{"ll", {{"step_latency", {{"value", "0.5 us"}, {"source", "test truth"}}}}}}}}}}}}}};
  const auto truth_path = write_temp("truth.json", truth.dump());
  const std::string topology = source_path("topologies/hgx-h100.json");
  std::string measurements;
  int seed = 1;
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter"}) {
    const auto r = run_fabsim(fmt::format("nccl-test --topology {} -g 4 --op {} --algo ring -b 8 -e 1G -f 4 --format json --calibration {}",
                                          topology, op, truth_path));
    REQUIRE(r.exit_code == 0);
    const auto file = write_temp(fmt::format("synthetic-{}.txt", op), nccl_tests_text(op, 4, json::parse(r.out)["rows"], seed++));
    measurements += " -m " + file;
  }
  const auto profile_path = write_temp("fitted.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate --topology {}{} -o {}", topology, measurements, profile_path));
  REQUIRE(fit.exit_code == 0);
  INFO(fit.out);
  const json profile = json::parse(std::ifstream(profile_path));
  const json& patch = profile["catalogue_patch"];
  const double efficiency = patch["links"]["nvlink4"]["efficiency"]["value"].get<double>();
  auto micro = [](const json& v) { return std::stod(v["value"].get<std::string>()); };
  CHECK(efficiency == Approx(0.70).epsilon(0.03));
  CHECK(micro(patch["gpus"]["h100-sxm"]["launch_overhead"]) == Approx(10.0).epsilon(0.05));
  CHECK(micro(patch["gpus"]["h100-sxm"]["reduce_overhead"]) == Approx(3.0).epsilon(0.15));
  CHECK(micro(patch["gpus"]["h100-sxm"]["protocols"]["ll"]["step_latency"]) == Approx(0.5).epsilon(0.15));
  const auto& residual = profile["residuals"][0];
  CHECK(residual["median_error_bandwidth_bound"]["after"].get<double>() < 0.02);
  CHECK(residual["median_error_latency_bound"]["after"].get<double>() < 0.02);
}

TEST_CASE("calibrate fits the one-process-per-GPU base from -g 1 runs (nGpus 1), and refuses to fit one base to two launches",
          "[calibration][slow]") {
  const json truth = {{"format", "fabsim-calibration/1"},
                      {"catalogue_patch",
                       {{"gpus", {{"h100-sxm", {{"launch_overhead_one_gpu_per_process", {{"value", "3 us"}, {"source", "test truth"}}}}}}}}}};
  const auto truth_path = write_temp("truth-g1.json", truth.dump());
  const std::string topology = source_path("topologies/hgx-h100.json");
  std::string measurements;
  int seed = 7;
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter"}) {
    const auto r = run_fabsim(fmt::format("nccl-test --topology {} -g 4 --gpus-per-process 1 --op {} --algo ring -b 8 -e 4K --format json "
                                          "--calibration {}", topology, op, truth_path));
    REQUIRE(r.exit_code == 0);
    measurements += " -m " + write_temp(fmt::format("synthetic-g1-{}.txt", op), nccl_tests_text(op, 4, json::parse(r.out)["rows"], seed++, 1, 1));
  }
  const auto profile_path = write_temp("fitted-g1.json", "");
  REQUIRE(run_fabsim(fmt::format("calibrate --topology {}{} --fit latencies -o {}", topology, measurements, profile_path)).exit_code == 0);
  const json gpu = json::parse(std::ifstream(profile_path))["catalogue_patch"]["gpus"]["h100-sxm"];
  CHECK_FALSE(gpu.contains("launch_overhead"));  // the -g 4 base is not what these runs measure
  // With the LL step and reduce overhead free, the three are fitted together: the base within 15%.
  CHECK(std::stod(gpu["launch_overhead_one_gpu_per_process"]["value"].get<std::string>()) == Approx(3.0).epsilon(0.15));
  // A -g 4 run of the same machine beside them: two launches, one base. Refused (exit 2).
  const auto r = run_fabsim(fmt::format("nccl-test --topology {} -g 4 --op all_reduce --algo ring -b 8 -e 4K --format json", topology));
  const auto g4 = write_temp("synthetic-g4.txt", nccl_tests_text("all_reduce", 4, json::parse(r.out)["rows"], 11));
  CHECK(run_fabsim(fmt::format("calibrate --topology {}{} -m {} -o {}", topology, measurements, g4, profile_path)).exit_code == 2);
}

TEST_CASE("calibrate recovers a network's efficiency and per-call latency from a noisy synthetic two-node sweep", "[calibration][slow]") {
  const json truth = {{"format", "fabsim-calibration/1"},
                      {"catalogue_patch",
                       {{"links", {{"tcpxo-200", {{"efficiency", {{"value", 0.80}, {"source", "test truth"}}}}}}},
                        {"nics", {{"gpudirect-tcpxo", {{"net_call_latency", {{"value", "40 us"}, {"source", "test truth"}}}}}}}}}};
  const auto truth_path = write_temp("network-truth.json", truth.dump());
  const std::string topology = source_path("topologies/gcp-a3mega-2node.json");
  const auto r = run_fabsim(fmt::format("nccl-test --topology {} --op all_reduce -b 8 -e 8G -f 4 --format json --calibration {}", topology, truth_path));
  REQUIRE(r.exit_code == 0);
  const auto file = write_temp("synthetic-2node.txt", nccl_tests_text("all_reduce", 16, json::parse(r.out)["rows"], 7, 2));
  const auto profile_path = write_temp("network-fitted.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate --topology {} -m {} -o {}", topology, file, profile_path));
  REQUIRE(fit.exit_code == 0);
  INFO(fit.out);
  const json patch = json::parse(std::ifstream(profile_path))["catalogue_patch"];
  CHECK(patch["links"]["tcpxo-200"]["efficiency"]["value"].get<double>() == Approx(0.80).epsilon(0.02));
  CHECK(std::stod(patch["nics"]["gpudirect-tcpxo"]["net_call_latency"]["value"].get<std::string>()) == Approx(40.0).epsilon(0.05));
  // A multi-node sweep fits the network, not the NVLink values single-node sweeps fix.
  CHECK_FALSE(patch.contains("gpus"));
}

TEST_CASE("consistency: calibrate on the A3 Mega all-reduce refits the catalogue's TCPXO values within 1%, the all-gather held out",
          "[calibration][slow]") {
  const auto profile_path = write_temp("tcpxo-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} --dataset h100_16gpu_2node_all_reduce_gcp_a3mega -o {}",
                                          source_path("configs/measurements/published-measurements.json"), profile_path));
  REQUIRE(fit.exit_code == 0);
  INFO(fit.out);
  CHECK(fit.out.find("h100_16gpu_2node_all_gather_gcp_a3mega_tcpxo_nccl2.28: held out (not named by --dataset)") != std::string::npos);
  const json patch = json::parse(std::ifstream(profile_path))["catalogue_patch"];
  CHECK(patch["links"]["tcpxo-200"]["efficiency"]["value"].get<double>() == Approx(0.9338).epsilon(0.01));
  CHECK(std::stod(patch["nics"]["gpudirect-tcpxo"]["net_call_latency"]["value"].get<std::string>()) == Approx(86.958).epsilon(0.01));
}

TEST_CASE("consistency: calibrate on the sweeps the catalogue was fitted on refits its values within 1%, and the medians move 0.5 points at most",
          "[calibration][slow]") {
  // The least squares minimises the squared error of the rows <= 4 KiB, not the median
  // over the rows below 1 MiB, so a refit may move that median a little (README: 1.4% -> 1.6%).
  std::ifstream in(source_path("configs/measurements/published-measurements.json"));
  REQUIRE(in.good());
  const json all = json::parse(in);
  json subset = {{"collective_datasets", json::array()}};
  for (const auto& ds : all["collective_datasets"])
    if (ds["id"].get<std::string>().rfind("h100_sxm_4of8gpu_", 0) == 0) subset["collective_datasets"].push_back(ds);
  REQUIRE(subset["collective_datasets"].size() == 3);
  const auto measurements = write_temp("published-subset.json", subset.dump());
  const auto profile_path = write_temp("published-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} -o {}", measurements, profile_path));
  REQUIRE(fit.exit_code == 0);
  const json profile = json::parse(std::ifstream(profile_path));
  const auto& r = profile["residuals"][0];
  INFO(fit.out);
  const json& gpu = profile["catalogue_patch"]["gpus"]["h100-sxm"];
  auto micro = [](const json& v) { return std::stod(v["value"].get<std::string>()); };
  CHECK(micro(gpu["launch_overhead"]) == Approx(14.88).epsilon(0.01));
  CHECK(micro(gpu["reduce_overhead"]) == Approx(4.67).epsilon(0.01));
  CHECK(micro(gpu["protocols"]["ll"]["step_latency"]) == Approx(0.36).epsilon(0.025));  // 0.353: 2% of a third of a microsecond
  CHECK(profile["catalogue_patch"]["links"]["nvlink4"]["efficiency"]["value"].get<double>() == Approx(0.824).epsilon(0.01));
  CHECK(gpu["launch_overhead"]["fitted_on"].size() == 3);  // the profile records what it was fitted on
  CHECK(r["median_error_latency_bound"]["after"].get<double>() <= r["median_error_latency_bound"]["before"].get<double>() + 0.005);
  CHECK(r["median_error_bandwidth_bound"]["after"].get<double>() <= r["median_error_bandwidth_bound"]["before"].get<double>() + 0.005);
  // validate takes the profile and reports before and after.
  const auto v = run_fabsim(fmt::format("validate -m {} --calibration {}", measurements, profile_path));
  REQUIRE(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::Contains("# before calibration"));
  CHECK_THAT(v.out, Catch::Contains("# after calibration"));
}

TEST_CASE("harness host transfers fix the PCIe efficiency, and sweeps take a profile", "[calibration][slow]") {
  const json harness = {{"format", "fabsim-measurements/1"},
                        {"machine", {{"gpu_count", 1}}},
                        {"host", {{"host_to_device_GBps", 55.4}, {"device_to_host_GBps", 55.0}, {"device_copy_GBps", 3900.0}, {"kernel_launch_us", 2.3}}},
                        {"skipped", {"peer bandwidth and latency: one GPU only"}}};
  const auto measurements = write_temp("harness.json", harness.dump());
  const auto profile_path = write_temp("pcie-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} -o {}", measurements, profile_path));
  REQUIRE(fit.exit_code == 0);
  const json profile = json::parse(std::ifstream(profile_path));
  CHECK(profile["catalogue_patch"]["links"]["pcie-gen5-x16"]["efficiency"]["value"].get<double>() == Approx(55.2 / 63.0).epsilon(1e-3));

  // The same profile through a sweep: the PCIe-only box gets slower with a lower efficiency.
  const json slow_pcie = {{"format", "fabsim-calibration/1"},
                          {"catalogue_patch", {{"links", {{"pcie-gen5-x16", {{"efficiency", {{"value", 0.44}, {"source", "test"}}}}}}}}}};
  const auto slow_path = write_temp("slow-pcie.json", slow_pcie.dump());
  const auto scenario = write_temp("pcie-scenario.json", json{{"format", "fabsim-scenario/1"}, {"name", "pcie"},
      {"topology", source_path("topologies/pcie-8gpu.json")},
      {"workload", {{"kind", "nccl-test"}, {"op", "all_reduce"}, {"min_bytes", "256 MiB"}, {"max_bytes", "256 MiB"}, {"gpus", 2}}}}.dump());
  const auto sweep = write_temp("pcie-sweep.json", json{{"format", "fabsim-sweep/1"}, {"base", scenario},
      {"axes", {{{"path", "/workload/gpus"}, {"values", {2}}}}}}.dump());
  auto busbw = [](const std::string& csv) {
    const std::string body = fabsim::testing::csv_body(csv);
    const auto line = body.substr(body.find('\n') + 1);
    std::vector<std::string> cells;
    std::string cell;
    for (char c : line) {
      if (c == ',') cells.push_back(cell), cell.clear();
      else cell.push_back(c);
    }
    return std::stod(cells.at(5));  // point, /workload/gpus, bytes, time_us, algbw, busbw
  };
  const auto plain = run_fabsim("sweep " + sweep);
  const auto calibrated = run_fabsim("sweep " + sweep + " --calibration " + slow_path);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(calibrated.exit_code == 0);
  CHECK(busbw(calibrated.out) == Approx(busbw(plain.out) / 2).epsilon(0.05));
}

TEST_CASE("a real H200 harness run confirms the catalogue's PCIe Gen5 efficiency and skips what it cannot fit", "[calibration][slow]") {
  // configs/calibration/h200-single-gpu-harness.json: fabsim-calibrate on one
  // H200 (2026-11-30). One GPU: its NCCL sweeps move nothing between GPUs,
  // and NCCL_ALGO=Tree sweeps of all_gather ran some other algorithm.
  const auto profile_path = write_temp("h200-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} -o {}", source_path("configs/calibration/h200-single-gpu-harness.json"), profile_path));
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, Catch::Contains("harness:all_gather:Tree:1gpu: one GPU moves no data between GPUs"));
  const json profile = json::parse(std::ifstream(profile_path));
  const double measured = profile["catalogue_patch"]["links"]["pcie-gen5-x16"]["efficiency"]["value"].get<double>();
  // The catalogue's 0.88 comes from nvbandwidth on 8x H200 (hardware-specs.json); this independent run agrees within 1%.
  const auto catalogue = fabsim::topo::load_hardware_catalogue(source_path("configs/hardware/catalogue.json"));
  const double cited = catalogue.links.at("pcie-gen5-x16").efficiency;
  fmt::print("PCIe Gen5 x16 efficiency: catalogue {:.4f}, H200 harness {:.4f}, error {:.2f}%\n", cited, measured,
             100.0 * std::abs(cited - measured) / measured);
  CHECK(cited == Approx(measured).epsilon(0.01));
}
