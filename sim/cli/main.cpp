/// The fabsim command line: the only place that knows every other folder.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <new>
#include <sstream>
#include <systemc>

#include "sim/cli/commands.hpp"
#include "sim/core/build_info.hpp"
#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"
#include "sim/report/run_provenance.hpp"

namespace {

using fabsim::core::kExitConfigError;
using fabsim::core::kExitInternalError;
using fabsim::core::kExitSimulationError;

int internal_error(const std::string& what) {
  std::cerr << "error: internal error (a bug in fabsim, please report it with the command line): " << what << "\n";
  return kExitInternalError;
}

/// Runs the parsed command. Every exception ends here: an input problem is
/// exit 2, a simulation that cannot finish exit 3, anything else a bug (4).
int run_command(fabsim::cli::CommandSet& commands) {
  using namespace fabsim;
  try {
    return commands.run();
  } catch (const core::ConfigError& e) {
    // Every problem of a file at once, but not a screenful for a file of another kind.
    constexpr std::size_t kShown = 20;
    for (std::size_t i = 0; i < e.items().size() && i < kShown; ++i) std::cerr << e.items()[i].to_string() << "\n";
    if (e.items().size() > kShown) std::cerr << "note: " << e.items().size() - kShown << " more problems not shown\n";
    return kExitConfigError;
  } catch (const core::SimulationError& e) {
    std::cerr << "error: simulation cannot complete: " << e.what() << "\n";
    return kExitSimulationError;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory: the run needs more memory than this machine has (try --model flow, fewer GPUs or "
                 "larger segments)\n";
    return kExitSimulationError;
  } catch (const sc_core::sc_report& e) {
    return internal_error(fmt::format("SystemC: {}", e.what()));
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("an exception of unknown type");
  }
}

int run_cli(int argc, char** argv) {
  using namespace fabsim;
  CLI::App app{"fabsim: interconnect fabric simulator for GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("fabsim {} (commit {})", core::fabsim_version(), core::fabsim_commit()));
  cli::CommandSet commands;
  commands.command_line = report::quoted_command_line(argc, argv);
  cli::register_commands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 says what is wrong ("what is required"), not where to read what is expected.
    std::string command = "fabsim";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      command += " " + sub->get_name();
    }
    if (command == "fabsim" && argc > 1 && argv[1][0] != '-') {
      // CLI11 reports an unknown command word as "A subcommand is required".
      std::string known;
      bool is_known = false;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        known += (known.empty() ? "" : ", ") + sub->get_name();
        is_known = is_known || sub->get_name() == argv[1];
      }
      if (!is_known) {
        std::cerr << "error: command line: unknown command '" << argv[1] << "' (expected one of: " << known << ")\n";
        return kExitConfigError;
      }
    }
    std::cerr << "error: command line: " << e.what() << " (`" << command << " --help` lists what it takes)\n";
    return kExitConfigError;
  }
  // Standard output is held until the command has finished, so that a failure
  // leaves nothing on it (no half table before the error).
  std::ostringstream held;
  std::streambuf* const terminal = std::cout.rdbuf(held.rdbuf());
  const int code = run_command(commands);
  std::cout.rdbuf(terminal);
  if (code != 0 && code != core::kExitCheckFailed) return code;
  std::cout << held.str();
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "error: standard output: cannot write the result (disk full or pipe closed?)\n";
    return kExitConfigError;
  }
  return code;
}

}  // namespace

// SystemC's library calls sc_main; main() runs first so the kernel banner can
// be silenced before the kernel exists.
int sc_main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("an exception of unknown type");
  }
}

int main(int argc, char** argv) {
  fabsim::core::prepare_process_environment();
  return sc_core::sc_elab_and_sim(argc, argv);
}
