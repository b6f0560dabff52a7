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

/// Where a child run was asked for: the file and JSON path its errors belong to.
struct ChildOrigin {
  std::string file;
  std::string json_path;
};

/// Runs `executable args...` and parses its stdout as JSON. A child that
/// refuses its input (exit 2) becomes a core::ConfigError at `origin` with the
/// child's message; one that cannot complete (3) a core::SimulationError;
/// anything else is a bug (std::runtime_error).
nlohmann::json run_json_child(const std::string& executable, const std::vector<std::string>& args, const ChildOrigin& origin);

}  // namespace fabsim::cli
