#pragma once
/// `fabsim validate`: runs every data set of a measurements file (the format
/// of configs/measurements/published-measurements.json) on the matching stock
/// topology and reports measured against predicted figures and the error.

#include <iosfwd>
#include <string>

namespace fabsim::cli {

struct ValidateOptions {
  std::string measurements;
  std::string topology_dir;          ///< where the stock topologies are
  std::string self;                  ///< this executable, run once per data set
  double max_bandwidth_error = 0;    ///< median bound for sizes >= 1 MiB; 0 = no check
  double max_latency_error = 0;      ///< median bound for sizes < 1 MiB; 0 = no check
  bool json = false;
  std::string calibration;           ///< a calibration profile applied to every prediction; empty: none
};

/// Returns the exit code: 0, or 1 when a bound was given and exceeded.
int run_validate(const ValidateOptions& options, std::ostream& out);

}  // namespace fabsim::cli
