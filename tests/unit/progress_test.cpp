#include <catch2/catch.hpp>

#include <sstream>

#include "sim/core/progress.hpp"

using namespace fabsim::core;

TEST_CASE("progress line: simulated time, work done of total, elapsed and the time left from the work fraction", "[unit][progress]") {
  // A quarter of the work behind it after 4 s: three quarters left, 12 s.
  CHECK(ProgressLine::format(1'250'000'000, 3, 10, "sizes", 4.0, 0.25) ==
        "fabsim: 1.250 ms simulated, 3 of 10 sizes, 4.0 s elapsed, about 12 s left");
  CHECK(ProgressLine::format(0, 0, 1, "sizes", 2.5, 0.0) == "fabsim: 0.000 ns simulated, 0 of 1 sizes, 2.5 s elapsed, time left not yet known");
}

TEST_CASE("progress line: nothing is drawn when disabled, nor in a run's first 2 s", "[unit][progress]") {
  std::ostringstream err;
  ProgressLine off(err, false, "sizes");
  off.update(1, 2, 0.5);
  off.finish();
  ProgressLine young(err, true, "sizes");
  young.update(1, 2, 0.5);
  young.finish();
  CHECK(err.str().empty());
}

TEST_CASE("progress mode: auto, always and never, nothing else", "[unit][progress]") {
  ProgressMode mode = ProgressMode::kAuto;
  CHECK(parse_progress_mode("always", mode));
  CHECK(mode == ProgressMode::kAlways);
  CHECK(parse_progress_mode("never", mode));
  CHECK(mode == ProgressMode::kNever);
  CHECK_FALSE(parse_progress_mode("yes", mode));
  CHECK(progress_wanted(ProgressMode::kAlways));
  CHECK_FALSE(progress_wanted(ProgressMode::kNever));
}
