#pragma once
/// The subcommands: each registers its flags on the CLI11 app and, once
/// parsed, runs through CommandSet::run.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace fabsim::cli {

/// Holds the action of the subcommand that was chosen.
struct CommandSet {
  std::function<int()> action;
  std::string command_line;  ///< the whole invocation, for the provenance of what it writes
  int run() const { return action ? action() : 0; }
};

void register_commands(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
