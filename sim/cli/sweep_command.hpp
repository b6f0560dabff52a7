#pragma once
/// `fabsim sweep SWEEP.json [-j N] [-o OUTDIR]`: runs the Cartesian product of
/// parameter axes over a base scenario, one simulation process per point
/// (SystemC elaborates once per process), N at a time, and writes every axis
/// value with every figure of every point as CSV and JSON. A failed point is
/// recorded with its error and the sweep goes on.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fabsim::cli {

struct SweepOptions {
  std::string sweep;
  std::string out_dir;  ///< empty: CSV on stdout, work files in a temporary folder
  std::string self;
  int jobs = 1;
  std::string calibration;  ///< a calibration profile for every point (overrides the base scenario's)
  std::string command_line;  ///< for the outputs' provenance
  std::vector<std::string> faults;  ///< --fault: added to every point's scenario
  std::string fault_detection;      ///< --fault-detection: every point's
};

/// One swept setting: a JSON pointer into the scenario and its values.
struct Axis {
  std::string path;  ///< e.g. /workload/gpus
  std::vector<nlohmann::json> values;
};

/// A sweep file, checked, with its base scenario read and its relative paths
/// made absolute (points are written elsewhere).
struct SweepDefinition {
  std::vector<Axis> axes;
  std::string base_file;
  nlohmann::json base;
};

/// Reads and checks a sweep (fabsim-sweep/1) and its base scenario; a
/// calibration profile, when given, replaces the base's. Throws core::ConfigError.
SweepDefinition load_sweep(const std::string& path, const std::string& calibration);

/// Returns 0 when every point ran, 1 when some failed (they are in the output).
int run_sweep(const SweepOptions& options, std::ostream& out);

}  // namespace fabsim::cli
