#pragma once
/// `fabsim sweep SWEEP.json [-j N] [-o OUTDIR]`: runs the Cartesian product of
/// parameter axes over a base scenario, one simulation process per point
/// (SystemC elaborates once per process), N at a time, and writes every axis
/// value with every figure of every point as CSV and JSON. A failed point is
/// recorded with its error and the sweep goes on.

#include <iosfwd>
#include <string>

namespace fabsim::cli {

struct SweepOptions {
  std::string sweep;
  std::string out_dir;  ///< empty: CSV on stdout, work files in a temporary folder
  std::string self;
  int jobs = 1;
  std::string calibration;  ///< a calibration profile for every point (overrides the base scenario's)
};

/// Returns 0 when every point ran, 1 when some failed (they are in the output).
int run_sweep(const SweepOptions& options, std::ostream& out);

}  // namespace fabsim::cli
