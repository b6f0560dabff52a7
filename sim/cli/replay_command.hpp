#pragma once
/// `fabsim replay`: loads a topology and one or more traces (jobs placed on
/// GPUs), replays them together and reports per operation, per job and per
/// rank; `fabsim trace check` validates a trace without a fabric.

#include <CLI/CLI.hpp>

#include "sim/cli/commands.hpp"

namespace fabsim::cli {

void register_replay(CLI::App& app, CommandSet& commands);
void register_trace(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
