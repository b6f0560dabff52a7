// fabsim-calibrate: measures this machine's GPUs (peer copies and latency,
// host transfers, device copies, launch latency, NCCL collective sweeps) and
// writes one JSON file for `fabsim calibrate` and `fabsim validate`.
//
//   fabsim-calibrate [-o measurements.json] [--max-bytes N] [--iters N] [--algos auto,Ring,Tree,NVLS] [--quick]

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "benchmarks.hpp"
#include "checks.hpp"
#include "json_out.hpp"
#include "machine_info.hpp"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: fabsim-calibrate [-o FILE] [--max-bytes N] [--iters N] [--algos auto,Ring,Tree,NVLS] [--quick]\n"
               "  --quick: 64 MiB copies, NCCL up to 64 MiB, auto only (a smoke run)\n");
}

}  // namespace

int main(int argc, char** argv) {
  harness::Options options;
  std::string output = "measurements.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-o") output = value();
    else if (a == "--max-bytes") options.nccl_max_bytes = std::stoull(value());
    else if (a == "--iters") options.nccl_iterations = std::stoi(value());
    else if (a == "--algos") {
      options.algorithms.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) options.algorithms.push_back(item);
    } else if (a == "--quick") {
      options.copy_bytes = 64u << 20;
      options.nccl_max_bytes = 64u << 20;
      options.algorithms = {"auto"};
    } else {
      usage();
      return 2;
    }
  }
  try {
    harness::Nvml nvml;
    nlohmann::json skipped_json = nlohmann::json::array();
    const auto machine = harness::describe_machine(nvml, skipped_json);
    std::vector<std::string> skipped;
    for (const auto& s : skipped_json) skipped.push_back(s.get<std::string>());
    const int gpus = machine["gpu_count"].get<int>();
    if (gpus == 0) {
      std::fprintf(stderr, "fabsim-calibrate: no CUDA GPU\n");
      return 3;
    }
    std::fprintf(stderr, "fabsim-calibrate: %d GPU(s), %s\n", gpus, machine["gpus"][0]["name"].get<std::string>().c_str());
    const auto host = harness::measure_host(options);
    std::fprintf(stderr, "host: H2D %.1f GB/s, D2H %.1f GB/s, device copy %.1f GB/s, launch %.2f us back to back, %.2f us one at a time, host read %.3f us\n",
                 host.host_to_device_gbps, host.device_to_host_gbps, host.device_copy_gbps, host.kernel_launch_us, host.launch_round_trip_us,
                 host.host_read_round_trip_us);
    const auto peers = harness::measure_peers(gpus, options, skipped);
    const auto nccl = harness::measure_nccl(gpus, options, skipped);
    std::ofstream(output) << harness::measurements_json(machine, peers, host, nccl, skipped).dump(1) << '\n';
    std::fprintf(stderr, "wrote %s (%zu peer rows, %zu NCCL sweeps, %zu skipped)\n", output.c_str(), peers.size(), nccl.size(), skipped.size());
  } catch (const harness::HarnessError& e) {
    std::fprintf(stderr, "fabsim-calibrate: %s\n", e.what());
    return 3;
  }
  return 0;
}
