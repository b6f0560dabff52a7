#pragma once
/// The only place that configures the SystemC kernel: time resolution,
/// banner, report routing, and conversions between TimePs and sc_time.

#include <functional>
#include <systemc>

#include "sim/core/units.hpp"

namespace fabsim::core {

/// Must run first in main(), before any SystemC object exists: silences the
/// kernel banner so machine-readable stdout stays clean.
void prepare_process_environment();

/// Sets 1 ps resolution and sends kernel reports to stderr. Call once per
/// process before elaborating modules.
void configure_kernel();

/// Current simulated time in picoseconds.
inline TimePs now_ps() { return sc_core::sc_time_stamp().value(); }

/// A delay in picoseconds as an sc_time.
inline sc_core::sc_time ps_to_sc(TimePs t) { return sc_core::sc_time::from_value(t); }

/// Runs the kernel until no event is left. Returns the number of timed
/// notifications the kernel processed (delta cycles count too).
std::uint64_t run_to_completion();

/// The same, but returning to `between` after every slice of simulated time,
/// about every 0.2 s of wall time (the slice adapts), for a progress line.
/// The kernel takes its events in the same order either way: a slice ends
/// after every event of its last instant, and the next begins where it ended.
std::uint64_t run_to_completion(const std::function<void()>& between);

}  // namespace fabsim::core
