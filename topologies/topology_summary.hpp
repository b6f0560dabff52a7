#pragma once
/// Figures an architect checks a fabric by: counts, per-GPU injection
/// bandwidth, bisection bandwidth, diameter; and a Graphviz drawing.

#include <iosfwd>
#include <vector>

#include "topologies/fabric_graph.hpp"

namespace fabsim::topo {

/// One tier of network switches: leaves (tier 1) touch NICs, each next tier
/// the one below.
struct NetworkTier {
  int tier = 0;
  int switches = 0;
  Bandwidth down;  ///< line rate of the links toward NICs, all switches of the tier
  Bandwidth up;    ///< line rate of the links toward the next tier (0 at the top)
  double oversubscription() const { return up.bytes_per_second > 0 ? down.bytes_per_second / up.bytes_per_second : 0.0; }
};

struct TopologySummary {
  int gpus = 0;
  int nvlink_switches = 0;
  int pcie_switches = 0;             ///< PCIe switches and root complexes
  int network_switches = 0;
  int nics = 0;
  int nvlink_domains = 0;
  int link_bundles = 0;
  int links = 0;                     ///< physical links (bundle counts added up)
  Bandwidth injection_line;          ///< NVLink per GPU, one direction, line rate (the smallest over GPUs)
  Bandwidth injection_effective;     ///< the same after link efficiency
  Bandwidth network_per_gpu;         ///< NIC network line rate per GPU (all NICs / all GPUs)
  Bandwidth bisection_line;          ///< first half of the GPUs to the second half, one direction, line rate
  std::vector<NetworkTier> tiers;
  int diameter = 0;                  ///< links on the longest least-cost GPU-to-GPU route
  bool diameter_sampled = false;     ///< from a sample of GPUs (large fabrics)
};

/// The bisection cuts the GPUs in rank order (first half, second half), the
/// natural cut of the symmetric fabrics fabsim ships. It is the maximum flow
/// across that cut (Boost.Graph push-relabel) with GPUs as endpoints only.
TopologySummary summarise(const TopologySpec& spec, FabricGraph& graph);

/// Writes the fabric as Graphviz DOT (Boost.Graph's writer): devices as
/// nodes labelled with their model, link bundles as edges labelled count x model.
void write_dot(std::ostream& out, const TopologySpec& spec, const FabricGraph& graph);

}  // namespace fabsim::topo
