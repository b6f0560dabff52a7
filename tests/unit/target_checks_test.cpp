// Issue 15's targets per data set: which rows each range takes, and the medians.

#include <catch2/catch.hpp>

#include "sim/calibration/target_checks.hpp"

using namespace fabsim::calibration;

TEST_CASE("target checks: across nodes every size from 1 KiB within 10%, in one node below 1 MiB, everywhere 5% from 64 MiB",
          "[accuracy-summary]") {
  constexpr std::uint64_t KiB = 1024, MiB = KiB * KiB;
  const std::vector<ErrorRow> rows = {
      // Two nodes: 512 B is below the 1 KiB floor; 1 KiB, 1 MiB and 128 MiB count, 128 MiB also for the 5% target.
      {"pair", 512, 0.50, false, true, "H100"},
      {"pair", KiB, -0.02, false, true, "H100"},
      {"pair", MiB, 0.30, false, true, "H100"},
      {"pair", 128 * MiB, 0.04, false, true, "H100"},
      // One node, in-sample: 8 B and 512 KiB below 1 MiB; 1 MiB counts for no target; 64 MiB for 5%.
      {"box", 8, 0.01, true, false, "H100"},
      {"box", 512 * KiB, -0.15, true, false, "H100"},
      {"box", MiB, 0.90, true, false, "H100"},
      {"box", 64 * MiB, -0.06, true, false, "H100"},
  };
  const auto checks = target_checks(rows);
  REQUIRE(checks.size() == 4);
  CHECK(checks[0].dataset == "pair");
  CHECK(checks[0].range == "from 1 KiB");
  CHECK(checks[0].sizes == 3);
  CHECK(checks[0].median_error == Approx(0.04));
  CHECK(checks[0].met());
  CHECK(checks[1].range == "from 64 MiB");
  CHECK(checks[1].sizes == 1);
  CHECK(checks[1].target == Approx(0.05));
  CHECK(checks[1].met());
  CHECK(checks[2].dataset == "box");
  CHECK(checks[2].in_sample);
  CHECK(checks[2].range == "below 1 MiB");
  CHECK(checks[2].sizes == 2);
  CHECK(checks[2].median_error == Approx(0.08));
  CHECK(checks[2].met());
  CHECK(checks[3].range == "from 64 MiB");
  CHECK(checks[3].median_error == Approx(0.06));
  CHECK_FALSE(checks[3].met());
}

TEST_CASE("target checks: a data set with no row in a range has no check for it", "[accuracy-summary]") {
  const std::vector<ErrorRow> rows = {{"tiny", 8, 0.2, false, true, "H100"}};
  CHECK(target_checks(rows).empty());
}
