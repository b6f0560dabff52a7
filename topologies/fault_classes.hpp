#pragma once
/// The single failures of a fabric, grouped by its symmetry, so that a
/// what-if study runs one failure per class rather than every one.
///
/// Devices are coloured by colour refinement (1-dimensional Weisfeiler-Lehman):
/// a device starts from its kind, model and whether the run uses it (GPUs of
/// the run are alike: a ring or tree treats its ranks the same), and is
/// refined by the multiset of its neighbours' colours and the links to them
/// until the colouring is stable. Two devices of one colour, or two link
/// bundles whose ends and links have the same colours, are taken as
/// equivalent failures. For the regular fabrics fabsim generates (HGX nodes,
/// rails, fat trees) the classes are the automorphism orbits; what refinement
/// cannot see is the flow-hash ECMP routing of a network, which can make two
/// "equivalent" switches carry different flows (`whatif --all` runs every
/// failure to check).

#include <string>
#include <vector>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

struct FaultClass {
  std::string representative;        ///< the fault run for the class, e.g. "gpu0~nvswitch0=down"
  std::vector<std::string> members;  ///< every fault of the class, the representative first
};

struct FaultScope {
  bool links = true;    ///< every link bundle (all links between two devices) failing
  bool devices = false; ///< every NIC and switch failing
};

/// The single failures of `spec` in `scope`, by class (`merge` false: one
/// class per failure), in the order of their representatives' first link or device.
std::vector<FaultClass> single_fault_classes(const TopologySpec& spec, const std::vector<int>& used_gpus, FaultScope scope, bool merge = true);

}  // namespace fabsim::topo
