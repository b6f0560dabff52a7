#pragma once
/// The validated, plain description of a fabric: devices and the links
/// between them, every value resolved against the hardware catalogue.

#include <string>
#include <vector>

#include "topologies/hardware_catalogue.hpp"

namespace fabsim::topo {

enum class DeviceKind { kGpu, kSwitch };

struct DeviceSpec {
  std::string name;
  DeviceKind kind = DeviceKind::kGpu;
  std::string model;      ///< key into the catalogue's gpus or switches
  std::string json_path;  ///< where it was declared, for later errors
};

/// A bundle of `count` parallel links between devices a and b, one model,
/// the same figures in both directions. It is simulated as one link per
/// direction at count x the lane rate: the hardware stripes packets over the
/// parallel links, so they behave as one wider pipe.
struct LinkSpec {
  int a = -1;  ///< device index
  int b = -1;
  std::string model;
  int count = 1;
  Bandwidth lane_bandwidth;  ///< one link, one direction, line rate
  double efficiency = 1.0;
  TimePs latency = 0;
  std::string json_path;

  Bandwidth raw_bandwidth() const { return lane_bandwidth.scaled(count); }
  Bandwidth effective_bandwidth() const { return lane_bandwidth.scaled(count * efficiency); }
};

struct TopologySpec {
  std::string file;
  std::string name;
  std::string description;
  HardwareCatalogue catalogue;
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
  std::vector<int> gpus;  ///< device indexes of the GPUs, in declaration order (rank order)

  const GpuModel& gpu_model(int gpu_rank) const { return catalogue.gpus.at(devices[gpus[gpu_rank]].model); }
};

/// Reads and validates a topology file. Every problem in the file is reported
/// at once as a core::ConfigError naming the file and JSON path.
/// `catalogue_override`, when not empty, replaces the file's catalogue.
TopologySpec load_topology(const std::string& path, const std::string& catalogue_override = "");

}  // namespace fabsim::topo
