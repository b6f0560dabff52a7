#pragma once
/// Parametric topologies: a node template (GPUs, their NVLink switches or
/// mesh, PCIe switches, root complex, NICs) repeated `nodes` times and joined
/// by a one-, two- or three-tier fat tree, rail-optimised or not, with an
/// oversubscription per tier. A 16,384-GPU cluster is a dozen lines.

#include "sim/core/json_reader.hpp"
#include "topologies/topology_builder.hpp"

namespace fabsim::topo {

/// Reads the "generate" object at `gen` and adds every device and link to
/// the builder; problems become diagnostics at their JSON paths.
void generate_topology(core::JsonObject& gen, TopologyBuilder& builder);

}  // namespace fabsim::topo
