#pragma once
/// The validated, plain description of a fabric: devices and the links
/// between them, every value resolved against the hardware catalogue.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topologies/hardware_catalogue.hpp"

namespace fabsim::topo {

/// GPUs are endpoints; switches (NVSwitch, PCIe switch, root complex,
/// InfiniBand or Ethernet switch) and NICs forward.
enum class DeviceKind { kGpu, kSwitch, kNic };
std::string device_kind_name(DeviceKind k);

struct DeviceSpec {
  std::string name;
  DeviceKind kind = DeviceKind::kGpu;
  std::string model;      ///< key into the catalogue's gpus, switches or nics
  std::string json_path;  ///< where it was declared (or the generator section that made it), for later errors
};

/// A bundle of `count` parallel links between devices a and b, one model,
/// the same figures in both directions. It is simulated as one link per
/// direction at count x the lane rate: the hardware stripes packets over the
/// parallel links, so they behave as one wider pipe.
struct LinkSpec {
  int a = -1;  ///< device index
  int b = -1;
  std::string model;
  LinkKind kind = LinkKind::kNvlink;
  int count = 1;
  Bandwidth lane_bandwidth;  ///< one link, one direction, line rate
  double efficiency = 1.0;   ///< payload share of the line rate, packet headers included
  TimePs latency = 0;
  int routing_cost = 1;
  bool bandwidth_overridden = false;  ///< the file set bandwidth, not the model
  bool latency_overridden = false;
  std::string json_path;
  /// Faults in force from the start of the run (topologies/faults.hpp): a
  /// failed bundle carries nothing and no route uses it; a degraded one keeps
  /// `kept` of its bandwidth (lane_bandwidth is already scaled by it).
  bool down = false;
  double kept = 1.0;
  std::string fault;  ///< the fault(s) that struck it, as written; empty when healthy

  Bandwidth raw_bandwidth() const { return lane_bandwidth.scaled(count); }
  Bandwidth effective_bandwidth() const { return lane_bandwidth.scaled(count * efficiency); }
};

/// How traffic picks among equal-cost network paths. NVLink and PCIe
/// traffic always sprays over every equal-cost path (the hardware stripes
/// packets over links and switch planes).
enum class EcmpMode {
  kFlowHash,  ///< one path per flow (source, destination, channel), by a deterministic hash: static IB routes, RoCE ECMP
  kSpray,     ///< every equal-cost path, by bandwidth: adaptive routing / packet spraying
};

struct RoutingSpec {
  EcmpMode network_ecmp = EcmpMode::kFlowHash;
  std::uint64_t hash_seed = 0;
};

struct TopologySpec {
  std::string file;
  std::string name;
  std::string description;
  std::string hardware;  ///< the "hardware" key as written, if any
  HardwareCatalogue catalogue;
  RoutingSpec routing;
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
  std::vector<int> gpus;  ///< device indexes of the GPUs, in declaration order (rank order)

  const GpuModel& gpu_model(int gpu_rank) const { return catalogue.gpus.at(devices[gpus[gpu_rank]].model); }
  bool forwards(int device) const { return devices[device].kind != DeviceKind::kGpu; }
};

/// Reads and validates a topology file, explicit or generated. Every problem
/// in the file is reported at once as a core::ConfigError naming the file and
/// JSON path. `catalogue_override`, when not empty, replaces the file's
/// catalogue. `patch`, when not null, is applied to the file's JSON first as
/// an RFC 7386 merge patch (a scenario's "topology_patch": sweeps vary a
/// generated fabric's parameters through it). `catalogue_patch` is merged into
/// the catalogue the same way (a calibration profile).
TopologySpec load_topology(const std::string& path, const std::string& catalogue_override = "",
                           const nlohmann::json& patch = nullptr, const nlohmann::json& catalogue_patch = nullptr);

}  // namespace fabsim::topo
