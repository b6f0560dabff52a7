#pragma once
// Helpers shared by the tests: temporary input files, a small catalogue with
// round figures for closed-form checks, and running the fabsim binary.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/scratch_folder.hpp"
#include "topologies/hardware_catalogue.hpp"

namespace fabsim::testing {

/// NCCL's Simple protocol figures: 512 KiB slots, 8 of them, 2 MiB chunks, 1 MiB slices.
inline topo::ProtocolParams simple_protocol() {
  topo::ProtocolParams p;
  p.slot_bytes = 512 * 1024;
  p.slots = 8;
  p.chunk_slots = 4;
  p.slice_slots = 2;
  return p;
}

/// NVLS figures of an H100: 128 KiB chunks, 0.85 efficiency.
inline topo::NvlsParams nvls_params() {
  topo::NvlsParams p;
  p.chunk_bytes = 128 * 1024;
  p.payload_efficiency = 0.85;
  return p;
}

/// Ranks 0..nodes x per_node - 1, node by node: each rank's node (domain) and rail.
struct NodeLayout {
  std::vector<int> domain, rail;
};
inline NodeLayout node_layout(int nodes, int per_node) {
  NodeLayout l;
  for (int r = 0; r < nodes * per_node; ++r) {
    l.domain.push_back(r / per_node);
    l.rail.push_back(r % per_node);
  }
  return l;
}

/// This test process's temporary folder, removed with everything in it when the process exits.
/// Every Catch2 test case runs in a process of its own, so a folder left behind per process
/// would leave one per case in the temporary directory at every run of the suite.
inline const std::filesystem::path& temp_folder() {
  static const core::ScratchFolder folder("fabsim-tests");
  return folder.path();
}

/// Writes `content` to a fresh file in this process's temporary folder.
inline std::string write_temp(const std::string& name, const std::string& content) {
  const auto path = temp_folder() / name;
  std::ofstream(path) << content;
  return path.string();
}

inline std::string source_path(const std::string& relative) { return std::string(FABSIM_SOURCE_DIR) + "/" + relative; }

inline constexpr double kGB = 1e9;  ///< bytes per second in a GB/s

/// A GPU model of the stock catalogue (configs/hardware/catalogue.json), loaded once.
inline const topo::GpuModel& stock_gpu(const std::string& name) {
  static const auto catalogue = topo::load_hardware_catalogue(source_path("configs/hardware/catalogue.json"));
  return catalogue.gpus.at(name);
}
inline const topo::GpuModel& h100() { return stock_gpu("h100-sxm"); }

/// CSV output without its leading "# " provenance lines: the header and the rows.
inline std::string csv_body(const std::string& csv) {
  std::size_t at = 0;
  while (at < csv.size() && csv[at] == '#') {
    const auto end = csv.find('\n', at);
    at = end == std::string::npos ? csv.size() : end + 1;
  }
  return csv.substr(at);
}

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout only
};

/// Runs the fabsim binary with `args` (a shell-quoted string), stderr discarded.
inline CommandResult run_fabsim(const std::string& args) {
  const std::string command = std::string(FABSIM_BINARY) + " " + args + " 2>/dev/null";
  CommandResult result;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe.release());
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// A catalogue with round figures for closed-form tests: a 100 GB/s link with
/// efficiency 1 and 100 ns latency, a switch with 50 ns traversal, and a GPU
/// whose protocols have one-slot chunks, 1 us step latency, no launch overhead.
inline std::string ideal_catalogue(const std::string& input_buffer = "1 MiB") {
  const std::string src = R"("source": "test figure")";
  auto q = [&](const std::string& v) { return "{\"value\": " + v + ", " + src + "}"; };
  auto proto = [&](const std::string& efficiency) {
    return "{\"payload_efficiency\": " + q(efficiency) + ", \"step_latency\": " + q("\"1 us\"") +
           ", \"slot_bytes\": " + q("\"64 MiB\"") + ", \"slots\": " + q("8") + ", \"chunk_slots\": " + q("1") +
           ", \"slice_slots\": " + q("1") + ", \"threads\": " + q("512") + ", \"channel_threshold\": " + q("\"1 B\"") +
           ", \"tuner_base_latency\": " + q("\"1 us\"") + ", \"tuner_hop_latency\": " + q("\"1 us\"") + "}";
  };
  return std::string("{\"format\": \"fabsim-hardware/1\",") +
         "\"links\": {\"testlink\": {\"description\": \"ideal\", \"kind\": \"nvlink\", \"bandwidth\": " + q("\"100 GB/s\"") +
         ", \"efficiency\": " + q("1.0") + ", \"latency\": " + q("\"100 ns\"") + ", \"routing_cost\": " + q("1") + "}}," +
         "\"switches\": {\"testswitch\": {\"description\": \"ideal\", \"link_kind\": \"nvlink\", \"ports\": " + q("64") +
         ", \"traversal_latency\": " + q("\"50 ns\"") + ", \"input_buffer\": " + q("\"" + input_buffer + "\"") + ", \"in_network_reduction\": " + q("true") + "}}," +
         "\"gpus\": {\"testgpu\": {\"description\": \"ideal\", \"link_ports\": " + q("18") + ", \"pcie_ports\": " + q("1") +
         ", \"launch_overhead\": " + q("\"0 us\"") + ", \"reduce_overhead\": " + q("\"0 us\"") +
         ", \"ring_channels\": " + q("1") + ", \"p2p_channels\": " + q("1") + ", \"p2p_chunk\": " + q("\"64 MiB\"") +
         ", \"p2p_ll_threshold\": " + q("\"1 B\"") + ", \"tuner_ring_bus_bandwidth\": " + q("\"100 GB/s\"") +
         ", \"tuner_ll_max_bandwidth\": " + q("\"100 GB/s\"") + ", \"tuner_ll128_channel_max\": " + q("\"100 GB/s\"") +
         ", \"protocols\": {\"ll\": " + proto("0.5") + ", \"ll128\": " + proto("0.9375") + ", \"simple\": " + proto("1.0") +
         "}, \"nvls\": {\"payload_efficiency\": " + q("1.0") + ", \"step_latency\": " + q("\"1 us\"") +
         ", \"chunk_bytes\": " + q("\"64 MiB\"") + ", \"channels\": " + q("1") + ", \"tuner_latency\": " + q("\"1 us\"") +
         ", \"tuner_head_bandwidth\": " + q("\"100 GB/s\"") + "}}}}";
}

/// A topology of `gpus` GPUs on one switch (or two GPUs wired directly when
/// `direct`), using ideal_catalogue() written next to it.
inline std::string star_topology(const std::string& name, int gpus, bool direct = false,
                                 const std::string& input_buffer = "1 MiB") {
  write_temp(name + ".hw.json", ideal_catalogue(input_buffer));
  std::string devices, links;
  for (int g = 0; g < gpus; ++g) {
    devices += "{\"name\": \"gpu" + std::to_string(g) + "\", \"kind\": \"gpu\", \"model\": \"testgpu\"},";
    if (!direct) links += std::string(links.empty() ? "" : ",") + "{\"a\": \"gpu" + std::to_string(g) +
                          "\", \"b\": \"sw\", \"model\": \"testlink\"}";
  }
  if (direct) {
    links = "{\"a\": \"gpu0\", \"b\": \"gpu1\", \"model\": \"testlink\"}";
    devices.pop_back();
  } else {
    devices += "{\"name\": \"sw\", \"kind\": \"switch\", \"model\": \"testswitch\"}";
  }
  return write_temp(name + ".json", "{\"format\": \"fabsim-topology/1\", \"name\": \"" + name + "\", \"hardware\": \"" +
                                        name + ".hw.json\", \"devices\": [" + devices + "], \"links\": [" + links + "]}");
}

}  // namespace fabsim::testing
