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
  /// The child runs the user's own command line (whatif's healthy run): its
  /// refusal is the user's error and is passed on as the child printed it,
  /// not wrapped as a problem of `file` and `json_path`.
  bool runs_the_users_command_line = false;
};

/// Runs `executable args...` and parses its stdout as JSON. A child that
/// refuses its input (exit 2) becomes a core::ConfigError at `origin` with the
/// child's message (or the child's own diagnostics, when it runs the user's
/// command line); one that cannot complete (3) a core::SimulationError;
/// anything else is a bug (std::runtime_error).
nlohmann::json run_json_child(const std::string& executable, const std::vector<std::string>& args, const ChildOrigin& origin);

}  // namespace fabsim::cli
