#pragma once
/// `fabsim regress BASELINE.json`: re-runs the scenarios a baseline records
/// and compares every row's modelled time and bus bandwidth (and the chosen
/// algorithm and protocol) with the recorded figures, so a model change that
/// moves a prediction is seen in review. `--update` rewrites the baseline.

#include <iosfwd>
#include <string>

namespace fabsim::cli {

struct RegressOptions {
  std::string baseline;
  std::string self;  ///< this executable, run once per scenario
  bool update = false;
};

/// Returns 0 when every figure is within its tolerance (or after --update),
/// 1 when something moved. Malformed baselines throw core::ConfigError.
int run_regress(const RegressOptions& options, std::ostream& out);

}  // namespace fabsim::cli
