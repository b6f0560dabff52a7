#include "sim/core/kernel.hpp"

#include <fmt/format.h>

#include <chrono>
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

namespace {

void check_time_limit() {
  if (now_ps() >= kMaxSimulatedPs)
    throw SimulationError(fmt::format("the simulated time reached fabsim's limit of {} (11.6 days): a size, a duration or a "
                                      "bandwidth in the inputs is out of proportion",
                                      format_time(kMaxSimulatedPs)));
}

}  // namespace

std::uint64_t run_to_completion() {
  sc_core::sc_start();
  check_time_limit();
  return sc_core::sc_delta_count();
}

std::uint64_t run_to_completion(const std::function<void()>& between) {
  using clock = std::chrono::steady_clock;
  constexpr double kTargetSliceS = 0.2;
  double slice_ps = 1e6;  // 1 us to begin with; doubled or halved to keep slices near the target
  do {  // the first slice also runs the kernel's initialisation, before which nothing counts as pending
    const auto begin = clock::now();
    sc_core::sc_start(ps_to_sc(static_cast<TimePs>(slice_ps)), sc_core::SC_EXIT_ON_STARVATION);
    const double took = std::chrono::duration<double>(clock::now() - begin).count();
    if (took < kTargetSliceS / 2 && slice_ps < 1e15) slice_ps *= 2;
    else if (took > kTargetSliceS * 2 && slice_ps > 1e3) slice_ps /= 2;
    between();
  } while (sc_core::sc_pending_activity() && now_ps() < kMaxSimulatedPs);
  check_time_limit();
  return sc_core::sc_delta_count();
}

}  // namespace fabsim::core
