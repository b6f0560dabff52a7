#pragma once
/// `fabsim check FILE...`: loads each input file by its format (topology,
/// scenario, sweep, baseline, catalogue, calibration profile, trace,
/// measurements) with every check its loader makes, without simulating.

#include <CLI/CLI.hpp>

#include "sim/cli/commands.hpp"

namespace fabsim::cli {

void register_check(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
