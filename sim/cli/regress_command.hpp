#pragma once
/// `fabsim regress BASELINE.json`: re-runs the scenarios a baseline records
/// and compares every row's modelled time and bus bandwidth (and the chosen
/// algorithm and protocol) with the recorded figures, so a model change that
/// moves a prediction is seen in review. `--update` rewrites the baseline.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fabsim::cli {

struct RegressOptions {
  std::string baseline;
  std::string self;  ///< this executable, run once per scenario
  bool update = false;
  std::string command_line;  ///< recorded in the baseline's meta by --update
};

/// How far a recorded figure may move, relative (0.005 = 0.5%).
struct Tolerance {
  double time = 0.005;
  double busbw = 0.005;
};

/// A baseline file, checked: every scenario names a string, every recorded
/// row has its figures, every tolerance is from 0 to 10.
struct Baseline {
  nlohmann::json doc;                ///< the file as read (rewritten by --update)
  std::vector<Tolerance> tolerances;  ///< one per scenario
};

/// Reads and checks a baseline (fabsim-baseline/1); throws core::ConfigError.
Baseline load_baseline(const std::string& path);

/// Returns 0 when every figure is within its tolerance (or after --update),
/// 1 when something moved. Malformed baselines throw core::ConfigError.
int run_regress(const RegressOptions& options, std::ostream& out);

}  // namespace fabsim::cli
