#pragma once
/// Figures an architect checks a fabric by: counts, per-GPU injection
/// bandwidth, bisection bandwidth, diameter; and a Graphviz drawing.

#include <iosfwd>

#include "topologies/fabric_graph.hpp"

namespace fabsim::topo {

struct TopologySummary {
  int gpus = 0;
  int switches = 0;
  int link_bundles = 0;
  int links = 0;                     ///< physical links (bundle counts added up)
  Bandwidth injection_line;          ///< per GPU, one direction, line rate (the smallest over GPUs)
  Bandwidth injection_effective;     ///< the same after link efficiency
  Bandwidth bisection_line;          ///< first half of the GPUs to the second half, one direction, line rate
  int diameter = 0;                  ///< links on the longest shortest GPU-to-GPU path
};

/// The bisection cuts the GPUs in rank order (first half, second half), the
/// natural cut of the symmetric fabrics fabsim ships. It is the maximum flow
/// across that cut (Boost.Graph push-relabel) with GPUs as endpoints only.
TopologySummary summarise(const TopologySpec& spec, const FabricGraph& graph);

/// Writes the fabric as Graphviz DOT (Boost.Graph's writer): devices as
/// nodes labelled with their model, link bundles as edges labelled count x model.
void write_dot(std::ostream& out, const TopologySpec& spec, const FabricGraph& graph);

}  // namespace fabsim::topo
