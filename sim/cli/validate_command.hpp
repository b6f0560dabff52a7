#pragma once
/// `fabsim validate`: runs every data set of a measurements file (the format
/// of configs/measurements/published-measurements.json) on the matching stock
/// topology and reports measured against predicted figures and the error.
/// Data sets the catalogue's parameters were fitted on (their `fitted_on`
/// lists, widened to every data set of the same run) are reported apart, as
/// in-sample; only the rest is a measure of accuracy. Repeats of one run count
/// once. `--refit` predicts each in-sample data set again with the parameters
/// it fixed refitted without its run (leave one run out).

#include <iosfwd>
#include <string>

namespace fabsim::cli {

struct ValidateOptions {
  std::string measurements;
  std::string topology_dir;          ///< where the stock topologies are
  std::string self;                  ///< this executable, run once per data set
  double max_bandwidth_error = 0;    ///< bound on the out-of-sample bandwidth-bound median; 0 = no check
  double max_latency_error = 0;      ///< bound on the out-of-sample latency-bound median; 0 = no check
  bool json = false;
  bool refit = false;                ///< leave-one-run-out refits of the in-sample data sets
  /// Each prediction with nccl-test's --extrapolate-above auto: across nodes the
  /// segment level, its largest rows extrapolated, where --model auto takes the flow level.
  bool extrapolate = false;
  std::string calibration;           ///< a calibration profile applied to every prediction; empty: none
  std::string command_line;          ///< for the JSON's provenance
};

/// Returns the exit code: 0, or 1 when a bound was given and exceeded.
int run_validate(const ValidateOptions& options, std::ostream& out);

}  // namespace fabsim::cli
