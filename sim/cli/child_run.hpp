#pragma once
/// Runs fabsim itself in a child process. SystemC elaborates one fabric per
/// process, so commands that need several simulations (validate, regress)
/// run each in a process of its own.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fabsim::cli {

/// The path of the running executable.
std::string self_executable();

/// Runs `executable args...` (stderr discarded) and parses its stdout as JSON;
/// throws core::SimulationError when it fails.
nlohmann::json run_json_child(const std::string& executable, const std::vector<std::string>& args);

}  // namespace fabsim::cli
