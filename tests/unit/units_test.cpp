#include <catch2/catch.hpp>

#include "sim/core/units.hpp"

using namespace fabsim::core;

namespace {
double parse(const std::string& text, QuantityKind kind) {
  std::string why;
  const auto v = parse_quantity(text, kind, why);
  REQUIRE(v.has_value());
  return *v;
}
std::string why_not(const std::string& text, QuantityKind kind) {
  std::string why;
  REQUIRE_FALSE(parse_quantity(text, kind, why).has_value());
  return why;
}
}  // namespace

TEST_CASE("bandwidths parse in bytes and bits per second", "[units]") {
  CHECK(parse("450 GB/s", QuantityKind::kBandwidth) == Approx(450e9));
  CHECK(parse("25GB/s", QuantityKind::kBandwidth) == Approx(25e9));
  CHECK(parse("400 Gb/s", QuantityKind::kBandwidth) == Approx(400e9 / 8));
  CHECK(parse("1 GiB/s", QuantityKind::kBandwidth) == Approx(1073741824.0));
}

TEST_CASE("times parse to picoseconds", "[units]") {
  CHECK(parse("150 ns", QuantityKind::kTime) == Approx(150e3));
  CHECK(parse("1.5 us", QuantityKind::kTime) == Approx(1.5e6));
  CHECK(parse("2 ms", QuantityKind::kTime) == Approx(2e9));
}

TEST_CASE("byte sizes parse with decimal and binary prefixes", "[units]") {
  CHECK(parse("64 MiB", QuantityKind::kBytes) == Approx(64.0 * 1024 * 1024));
  CHECK(parse("1 KB", QuantityKind::kBytes) == Approx(1000));
  CHECK(parse("8 B", QuantityKind::kBytes) == Approx(8));
}

TEST_CASE("a value without a unit, with a wrong unit or negative is rejected with the reason", "[units]") {
  CHECK_THAT(why_not("25", QuantityKind::kBandwidth), Catch::Contains("has no unit"));
  CHECK_THAT(why_not("25 ns", QuantityKind::kBandwidth), Catch::Contains("unknown unit 'ns'"));
  CHECK_THAT(why_not("-25 GB/s", QuantityKind::kBandwidth), Catch::Contains("negative"));
  CHECK_THAT(why_not("fast", QuantityKind::kBandwidth), Catch::Contains("not a number"));
}

TEST_CASE("nccl-tests size flags use powers of 1024", "[units]") {
  CHECK(parse_size_flag("8") == 8u);
  CHECK(parse_size_flag("8K") == 8192u);
  CHECK(parse_size_flag("8G") == 8ull << 30);
  CHECK(parse_size_flag("1m") == 1u << 20);
  CHECK_FALSE(parse_size_flag("8X").has_value());
  CHECK_FALSE(parse_size_flag("").has_value());
}

TEST_CASE("serialisation time rounds up to whole picoseconds", "[units]") {
  const Bandwidth b{100e9};
  CHECK(b.transfer_time(100) == 1000);  // 100 B at 100 GB/s = 1 ns
  CHECK(b.transfer_time(1) == 10);
  CHECK(b.transfer_time(0) == 0);
}
