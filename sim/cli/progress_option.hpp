#pragma once
/// --progress on the commands that run a simulation (nccl-test, run, replay).

#include <string>

#include "sim/core/progress.hpp"

namespace CLI {
class App;
}

namespace fabsim::cli {

/// Adds --progress auto|always|never (default auto: only where stderr is a terminal).
void add_progress_option(CLI::App& command, std::string& mode);

/// Parses the flag's value; throws core::ConfigError naming --progress.
core::ProgressMode parse_progress_flag(const std::string& mode);

}  // namespace fabsim::cli
