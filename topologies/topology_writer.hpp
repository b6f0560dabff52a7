#pragma once
/// Writes a TopologySpec back as the explicit topology format, so
/// `fabsim topo expand` shows what a generator made and the output loads again.

#include <iosfwd>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

void write_explicit_topology(std::ostream& out, const TopologySpec& spec);

}  // namespace fabsim::topo
