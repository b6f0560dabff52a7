#pragma once
/// What produced a figure, carried by every JSON, CSV and baseline output:
/// the fabsim version and commit, the catalogue (and calibration profile) with
/// the SHA-256 of their contents, and the command line. With these a figure
/// can be reproduced, and `regress` can tell when a baseline was recorded by
/// another fabsim or catalogue.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace fabsim::report {

struct RunProvenance {
  std::string command_line;      ///< as the shell would take it back (arguments quoted where needed)
  std::string catalogue_file;    ///< the hardware catalogue the run used; empty: none
  std::string calibration_file;  ///< the calibration profile merged into it; empty: none
};

/// {"fabsim_version", "fabsim_commit", "command_line", "catalogue": {"file", "sha256"},
///  "calibration": {"file", "sha256"}} (the last two only when there is one).
nlohmann::json provenance_json(const RunProvenance& provenance);

/// The same as CSV comment lines ("# fabsim: ..."), for the top of a CSV file.
void write_csv_provenance(std::ostream& out, const RunProvenance& provenance);

/// argv as one command line, each argument quoted for a POSIX shell when it needs it.
std::string quoted_command_line(int argc, const char* const* argv);

}  // namespace fabsim::report
