#pragma once
/// NVLink domains: the GPUs joined by NVLink (directly or through NVLink
/// switches), i.e. an HGX node or an NVL72 rack. Multi-node collectives are
/// laid out by domain, and a GPU's index inside its domain is its rail.

#include <vector>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

struct NvlinkDomains {
  std::vector<int> domain_of_gpu;  ///< by GPU rank; domains numbered in order of first GPU
  std::vector<int> local_index;    ///< by GPU rank: position among its domain's GPUs (its rail)
  int count = 0;
};

NvlinkDomains nvlink_domains(const TopologySpec& spec);

}  // namespace fabsim::topo
