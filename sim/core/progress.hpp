#pragma once
/// A progress line on stderr for runs that take more than a couple of
/// seconds: simulated time, operations done of total, wall time so far and
/// an estimate of what is left. Only where stderr is a terminal (or forced),
/// so that logs and piped output stay one line per result.

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace fabsim::core {

/// --progress: auto (a terminal only), always or never.
enum class ProgressMode { kAuto, kAlways, kNever };

/// Parses "auto", "always" or "never"; false on anything else.
bool parse_progress_mode(const std::string& text, ProgressMode& mode);

/// True where a progress line should be drawn on stderr in `mode`.
bool progress_wanted(ProgressMode mode);

class ProgressLine {
 public:
  /// `unit` names what is counted ("sizes", "ops"). Disabled lines do nothing.
  ProgressLine(std::ostream& err, bool enabled, std::string unit);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }

  /// Called between kernel slices: redraws the line at most every half
  /// second, and only once the run has taken 2 s of wall time. `work_done`
  /// (0-1) is the driver's estimate of the fraction of the work behind it
  /// (a sweep's sizes double, so its bytes, not its count, tell the time left).
  void update(std::uint64_t done, std::uint64_t total, double work_done);

  /// Clears the line (if one was drawn) so the run's own output follows cleanly.
  void finish();

  /// The line as drawn, for tests: "fabsim: 1.25 ms simulated, 3 of 10 sizes, 4.0 s elapsed, about 9 s left".
  static std::string format(std::uint64_t simulated_ps, std::uint64_t done, std::uint64_t total, const std::string& unit,
                            double elapsed_s, double work_done);

 private:
  std::ostream& err_;
  bool enabled_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_drawn_s_ = -1.0;
  std::size_t drawn_width_ = 0;
};

/// Runs the kernel to completion. With an enabled `line`, `report` updates it
/// between slices of the run and the line is cleared at the end; otherwise
/// the kernel runs in one go. Returns what run_to_completion returns.
std::uint64_t run_with_progress(ProgressLine* line, const std::function<void(ProgressLine&)>& report);

}  // namespace fabsim::core
