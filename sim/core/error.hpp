#pragma once
/// Error types. Configuration problems are user errors (exit code 2); a
/// simulation that cannot complete is a SimulationError (exit code 3);
/// anything else escaping is a bug (exit code 4).

#include <stdexcept>
#include <string>
#include <vector>

namespace fabsim::core {

/// One problem found in an input file, located by its JSON path.
struct Diagnostic {
  std::string file;       ///< the input file, as the user named it
  std::string json_path;  ///< JSON pointer, e.g. "/links/7/bandwidth"; empty for the whole file
  std::string message;    ///< what is wrong and what was expected

  /// "error: FILE: PATH: MESSAGE", the one format every error uses.
  std::string to_string() const;
};

/// Accumulates every problem of one input so they are reported at once.
class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void error(std::string json_path, std::string message);
  bool empty() const { return items_.empty(); }
  const std::string& file() const { return file_; }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Throws ConfigError with everything collected, if anything was.
  void throw_if_any() const;

 private:
  std::string file_;
  std::vector<Diagnostic> items_;
};

/// A malformed or impossible configuration, topology, scenario or trace.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> items);
  ConfigError(std::string file, std::string json_path, std::string message);
  const std::vector<Diagnostic>& items() const { return items_; }

 private:
  std::vector<Diagnostic> items_;
};

/// A simulation that cannot finish (deadlock, unroutable traffic).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Exit codes shared by every command: 0 success; 1 a check that ran and
/// failed (regress, validate bounds, failed sweep points), its report on
/// stdout; 2 an input problem; 3 a simulation that cannot complete; 4 a bug.
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitConfigError = 2;
inline constexpr int kExitSimulationError = 3;
inline constexpr int kExitInternalError = 4;

}  // namespace fabsim::core
