#include "sim/core/progress.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <ostream>

#include "sim/core/kernel.hpp"
#include "sim/core/units.hpp"

namespace fabsim::core {

namespace {
constexpr double kFirstDrawS = 2.0;     // shorter runs draw nothing
constexpr double kRedrawEveryS = 0.5;   // a terminal redraw is cheap, but not free
}  // namespace

bool parse_progress_mode(const std::string& text, ProgressMode& mode) {
  if (text == "auto") mode = ProgressMode::kAuto;
  else if (text == "always") mode = ProgressMode::kAlways;
  else if (text == "never") mode = ProgressMode::kNever;
  else return false;
  return true;
}

bool progress_wanted(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::kAlways: return true;
    case ProgressMode::kNever: return false;
    case ProgressMode::kAuto: break;
  }
  return isatty(STDERR_FILENO) == 1;
}

ProgressLine::ProgressLine(std::ostream& err, bool enabled, std::string unit) : err_(err), enabled_(enabled), unit_(std::move(unit)) {}

std::string ProgressLine::format(std::uint64_t simulated_ps, std::uint64_t done, std::uint64_t total, const std::string& unit,
                                 double elapsed_s, double work_done) {
  std::string left = "time left not yet known";
  if (work_done > 0 && work_done <= 1) left = fmt::format("about {:.0f} s left", elapsed_s * (1 - work_done) / work_done);
  return fmt::format("fabsim: {} simulated, {} of {} {}, {:.1f} s elapsed, {}", format_time(simulated_ps), done, total, unit, elapsed_s,
                     left);
}

void ProgressLine::update(std::uint64_t done, std::uint64_t total, double work_done) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < kFirstDrawS || (last_drawn_s_ >= 0 && elapsed - last_drawn_s_ < kRedrawEveryS)) return;
  last_drawn_s_ = elapsed;
  std::string line = format(now_ps(), done, total, unit_, elapsed, work_done);
  const std::size_t width = line.size();
  if (width < drawn_width_) line.append(drawn_width_ - width, ' ');  // wipe what a longer line left
  drawn_width_ = width;
  fmt::print(err_, "\r{}", line);
  err_.flush();
}

void ProgressLine::finish() {
  if (!enabled_ || drawn_width_ == 0) return;
  fmt::print(err_, "\r{}\r", std::string(drawn_width_, ' '));
  err_.flush();
  drawn_width_ = 0;
}

std::uint64_t run_with_progress(ProgressLine* line, const std::function<void(ProgressLine&)>& report) {
  if (line == nullptr || !line->enabled()) return run_to_completion();
  const std::uint64_t events = run_to_completion([&] { report(*line); });
  line->finish();
  return events;
}

}  // namespace fabsim::core
