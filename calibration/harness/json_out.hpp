#pragma once
// The harness's output, in the fabsim-measurements/1 format that
// `fabsim calibrate` and `fabsim validate` read.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "benchmarks.hpp"

namespace harness {

nlohmann::json measurements_json(const nlohmann::json& machine, const std::vector<PeerResult>& peers, const HostResult& host,
                                 const std::vector<NcclSweep>& nccl, const std::vector<std::string>& skipped);

}  // namespace harness
