#include "sim/core/kernel.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"

namespace fabsim::core {

void prepare_process_environment() { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1); }

void configure_kernel() {
  static bool configured = false;  // the kernel allows setting the resolution once per process
  if (configured) return;
  configured = true;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  // Warnings and infos go to stderr through the default handler's log; the
  // display action would write to stdout and corrupt machine-readable output.
  using sc_core::sc_report_handler;
  sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
  sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
}

std::uint64_t run_to_completion() {
  sc_core::sc_start();
  if (now_ps() >= kMaxSimulatedPs)
    throw SimulationError(fmt::format("the simulated time reached fabsim's limit of {} (11.6 days): a size, a duration or a "
                                      "bandwidth in the inputs is out of proportion",
                                      format_time(kMaxSimulatedPs)));
  return sc_core::sc_delta_count();
}

}  // namespace fabsim::core
