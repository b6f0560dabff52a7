#pragma once
/// Runs in a regime where `fabsim validate` finds fabsim far from the only
/// measurements there, and no model change has yet explained why: such a run
/// prints its figures with a warning that says so, since a wrong figure that
/// looks right is the worst outcome (README, Accuracy, Known gaps).

#include <string>
#include <vector>

#include "topologies/topology_spec.hpp"
#include "traces/nccl_test_runner.hpp"

namespace fabsim::calibration {

/// The warnings for an nccl-test sweep `test` on the GPUs `ranks` of `spec`
/// (empty where no known gap applies).
std::vector<std::string> known_gap_warnings(const topo::TopologySpec& spec, const std::vector<int>& ranks,
                                            const traces::NcclTestConfig& test);

}  // namespace fabsim::calibration
