#include "sim/cli/progress_option.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace fabsim::cli {

void add_progress_option(CLI::App& command, std::string& mode) {
  command.add_option("--progress", mode,
                     "A progress line on stderr for runs over 2 s (simulated time, work done, time left): auto (the default: "
                     "only on a terminal), always or never");
}

core::ProgressMode parse_progress_flag(const std::string& mode) {
  core::ProgressMode parsed = core::ProgressMode::kAuto;
  if (!mode.empty() && !core::parse_progress_mode(mode, parsed))
    throw core::ConfigError("command line", "--progress", fmt::format("unknown progress mode '{}' (expected auto, always or never)", mode));
  return parsed;
}

}  // namespace fabsim::cli
