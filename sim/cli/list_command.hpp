#pragma once
/// `fabsim list topologies|models|scenarios|sweeps|traces`: what this
/// installation holds, one line each with its description.

#include <CLI/CLI.hpp>

#include "sim/cli/commands.hpp"

namespace fabsim::cli {

void register_list(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
