#pragma once
/// `fabsim calibrate`: fits the parameters measurements determine and writes
/// a calibration profile (fabsim-calibration/1) whose "catalogue_patch"
/// replaces the fitted catalogue values, each with the data that fixed it.
///
/// Fitted per GPU model and its NVLink link model:
/// - the link efficiency, from the bandwidth-bound rows (>= 64 MiB) of the
///   collective sweeps (measured / predicted busbw, median), else from
///   peer-to-peer copy bandwidth;
/// - launch overhead, LL step latency and reduce latency, by linear least
///   squares over the latency-bound rows (<= 4 KiB), with each parameter's
///   effect on every row measured by simulating it perturbed (the model is
///   linear in them there), lightly regularised toward the catalogue when the
///   rows cannot tell the parameters apart.
/// Every prediction is a fabsim simulation run in a child process.

#include <iosfwd>
#include <string>
#include <vector>

namespace fabsim::cli {

struct CalibrateOptions {
  std::vector<std::string> measurements;
  std::string topology;      ///< used for every sweep when set
  std::string topology_dir;  ///< stock topologies, chosen by GPU model otherwise
  std::string output;
  std::string self;
};

int run_calibrate(const CalibrateOptions& options, std::ostream& out);

}  // namespace fabsim::cli
