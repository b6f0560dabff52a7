#pragma once
/// NVLink domains: the GPUs joined by NVLink (directly or through NVLink
/// switches), i.e. an HGX node or an NVL72 rack. Multi-node collectives are
/// laid out by domain, and a GPU's index inside its domain is its rail.

#include <cstddef>
#include <vector>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

/// The most GPUs one NVLink baseboard holds (HGX/DGX: 8). NVLink domains above
/// it are racks (NVL72).
inline constexpr std::size_t kLargestBoardGpus = 8;

struct NvlinkDomains {
  std::vector<int> domain_of_gpu;  ///< by GPU rank; domains numbered in order of first GPU
  std::vector<int> local_index;    ///< by GPU rank: position among its domain's GPUs (its rail)
  std::vector<int> size;           ///< by domain: its GPUs
  int count = 0;
};

NvlinkDomains nvlink_domains(const TopologySpec& spec);

}  // namespace fabsim::topo
