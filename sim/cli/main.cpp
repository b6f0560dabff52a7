/// The fabsim command line: the only place that knows every other folder.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace {

int run_cli(int argc, char** argv) {
  using namespace fabsim;
  CLI::App app{"fabsim: interconnect fabric simulator for GPU clusters"};
  app.require_subcommand(1);
  cli::CommandSet commands;
  cli::register_commands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: command line: " << e.what() << "\n";
    return core::kExitConfigError;
  }
  try {
    return commands.run();
  } catch (const core::ConfigError& e) {
    for (const auto& d : e.items()) std::cerr << d.to_string() << "\n";
    return core::kExitConfigError;
  } catch (const core::SimulationError& e) {
    std::cerr << "error: simulation cannot complete: " << e.what() << "\n";
    return core::kExitSimulationError;
  }
}

}  // namespace

// SystemC's library calls sc_main; main() runs first so the kernel banner can
// be silenced before the kernel exists.
int sc_main(int argc, char** argv) { return run_cli(argc, argv); }

int main(int argc, char** argv) {
  fabsim::core::prepare_process_environment();
  return sc_core::sc_elab_and_sim(argc, argv);
}
