#pragma once
/// The subcommands: each registers its flags on the CLI11 app and, once
/// parsed, runs through CommandSet::run.

#include <CLI/CLI.hpp>
#include <functional>

namespace fabsim::cli {

/// Holds the action of the subcommand that was chosen.
struct CommandSet {
  std::function<int()> action;
  int run() const { return action ? action() : 0; }
};

void register_commands(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
