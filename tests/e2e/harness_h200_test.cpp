// The CUDA harness on real hardware: four runs on one H200 (2026-12-04,
// configs/calibration/h200-harness-2026-12-04/, machine.txt beside them) and
// the earlier run on another H200 machine (2026-11-30). What one GPU can say
// about the catalogue: the PCIe rate (the same quantity), the GPU's read
// round trip to host memory (a bound on the PCIe path's latencies, which the
// catalogue breaks and a profile fits), NCCL's call on one rank (a lower
// bound on the per-call launch overhead).

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <vector>

#include "test_support.hpp"
#include "topologies/hardware_catalogue.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::source_path;
using fabsim::testing::write_temp;
using nlohmann::json;

namespace {

std::string run_file(int run) { return source_path(fmt::format("configs/calibration/h200-harness-2026-12-04/run{}.json", run)); }

json host_of(const std::string& file) { return json::parse(std::ifstream(file))["host"]; }

json comparison(const json& profile, const std::string& quantity) {
  for (const auto& c : profile["host_comparisons"])
    if (c["quantity"] == quantity) return c;
  FAIL("no host comparison '" << quantity << "'");
  return {};
}

double spread(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / *lo;
}

}  // namespace

TEST_CASE("the H200 harness runs agree with each other and with the earlier machine", "[calibration]") {
  std::vector<double> h2d, d2h, read, launch;
  for (int run = 1; run <= 4; ++run) {
    const json host = host_of(run_file(run));
    h2d.push_back(host["host_to_device_GBps"].get<double>());
    d2h.push_back(host["device_to_host_GBps"].get<double>());
    read.push_back(host["host_read_round_trip_us"].get<double>());
    launch.push_back(host["kernel_launch_us"].get<double>());
  }
  const json earlier = host_of(source_path("configs/calibration/h200-single-gpu-harness.json"));
  fmt::print("H200 harness, 4 runs: H2D spread {:.1f}%, D2H {:.1f}%, host read round trip {:.1f}%, launch {:.1f}%\n", 100 * spread(h2d),
             100 * spread(d2h), 100 * spread(read), 100 * spread(launch));
  CHECK(spread(h2d) < 0.05);
  CHECK(spread(d2h) < 0.02);
  CHECK(spread(read) < 0.03);
  CHECK(spread(launch) < 0.15);
  // Another H200 machine four days earlier: the same PCIe Gen5 x16 rates within 3%.
  CHECK(earlier["host_to_device_GBps"].get<double>() == Approx(h2d[0]).epsilon(0.03));
  CHECK(earlier["device_to_host_GBps"].get<double>() == Approx(d2h[0]).epsilon(0.03));
  CHECK(earlier["kernel_launch_us"].get<double>() == Approx(launch[0]).epsilon(0.15));
}

TEST_CASE("calibrate sets the H200 harness runs beside the catalogue and fits the PCIe path the catalogue makes too slow",
          "[calibration][slow]") {
  const auto profile_path = write_temp("h200-runs-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} -m {} -m {} -m {} -o {}", run_file(1), run_file(2), run_file(3), run_file(4), profile_path));
  REQUIRE(fit.exit_code == 0);
  const json profile = json::parse(std::ifstream(profile_path));
  const auto catalogue = fabsim::topo::load_hardware_catalogue(source_path("configs/hardware/catalogue.json"));

  // The PCIe rate: the same quantity as the catalogue's Gen5 x16 bandwidth x efficiency (nvbandwidth on 8x H200): within 2%.
  const json rate = comparison(profile, "pinned host-device copy rate");
  fmt::print("PCIe host-device rate: harness {:.2f} GB/s, catalogue {:.2f} GB/s ({:+.1f}%)\n", rate["measured"].get<double>(),
             rate["catalogue"].get<double>(), 100 * (rate["ratio"].get<double>() - 1));
  CHECK(rate["runs"] == 8);
  CHECK(rate["ratio"].get<double>() == Approx(1.0).epsilon(0.02));
  CHECK(profile["catalogue_patch"]["links"]["pcie-gen5-x16"]["efficiency"]["value"].get<double>() ==
        Approx(catalogue.links.at("pcie-gen5-x16").efficiency).epsilon(0.02));

  // The read round trip: GPU - PCIe switch - root complex, there and back, is 2.5 us in the
  // catalogue (assumed latencies); the GPU reads host memory in about 1.23 us, host memory included.
  const json read = comparison(profile, "GPU read round trip to host memory");
  fmt::print("GPU read round trip to host memory: harness {:.3f} us, catalogue path {:.3f} us (x{:.2f})\n", read["measured"].get<double>(),
             read["catalogue"].get<double>(), read["ratio"].get<double>());
  CHECK(read["measured"].get<double>() == Approx(1.228).epsilon(0.01));
  CHECK(read["catalogue"].get<double>() == Approx(2.5).epsilon(0.001));
  // The bound is broken, so the profile scales the path's three latencies by 0.49: the modelled round trip then equals the measurement.
  const json& patch = profile["catalogue_patch"];
  CHECK(patch["links"]["pcie-gen5-x16"]["latency"]["value"] == "122.8 ns");
  CHECK(patch["switches"]["pcie-gen5-switch"]["traversal_latency"]["value"] == "73.7 ns");
  CHECK(patch["switches"]["host-root-complex"]["traversal_latency"]["value"] == "294.8 ns");
  CHECK(2 * (2 * 122.8 + 73.7 + 294.8) / 1e3 == Approx(read["measured"].get<double>()).epsilon(0.002));

  // NCCL on one rank costs about 7 us a call: the catalogue's 4-GPU launch overhead (14.88 us) holds it, as a lower bound must.
  const json call = comparison(profile, "NCCL call on one GPU, rows <= 4 KiB");
  fmt::print("NCCL call on one H200: {:.2f} us against the catalogue's per-call launch overhead {:.2f} us\n", call["measured"].get<double>(),
             call["catalogue"].get<double>());
  CHECK(call["measured"].get<double>() == Approx(7.11).epsilon(0.02));
  CHECK(call["ratio"].get<double>() < 1.0);
  CHECK(comparison(profile, "empty kernel, back to back")["ratio"].get<double>() < 1.0);
}

TEST_CASE("calibrate leaves the PCIe path alone when the measured round trip does not break the bound", "[calibration]") {
  json doc = json::parse(std::ifstream(run_file(1)));
  doc["host"]["host_read_round_trip_us"] = 3.0;  // slower than the catalogue's 2.5 us path: host memory may hold the rest
  const auto file = write_temp("slow-host-read.json", doc.dump());
  const auto profile_path = write_temp("slow-host-read-profile.json", "");
  const auto fit = run_fabsim(fmt::format("calibrate -m {} -o {}", file, profile_path));
  REQUIRE(fit.exit_code == 0);
  const json profile = json::parse(std::ifstream(profile_path));
  CHECK(comparison(profile, "GPU read round trip to host memory")["ratio"].get<double>() == Approx(1.2));
  CHECK_FALSE(profile["catalogue_patch"]["links"]["pcie-gen5-x16"].contains("latency"));
  CHECK_FALSE(profile["catalogue_patch"].contains("switches"));
}
