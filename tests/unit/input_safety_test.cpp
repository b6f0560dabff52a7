// The reading and writing layer every loader and command shares: strict JSON,
// range-checked numbers and atomic outputs.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/scratch_folder.hpp"
#include "sim/core/text.hpp"
#include "sim/core/units.hpp"
#include "test_support.hpp"

using namespace fabsim;

namespace {

core::Diagnostic first_problem(const std::string& text) {
  try {
    (void)core::parse_json_text(text, "t.json");
  } catch (const core::ConfigError& e) {
    REQUIRE(e.items().size() == 1);
    return e.items().front();
  }
  FAIL("the text was accepted");
  return {};
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("duplicate keys are errors at the JSON path of the second one", "[json]") {
  CHECK(first_problem(R"({"a": 1, "a": 2})").json_path == "/a");
  const auto nested = first_problem(R"({"links": [{"a": "x"}, {"b": "y", "model": "m", "b": "z"}]})");
  CHECK(nested.json_path == "/links/1/b");
  CHECK_THAT(nested.message, Catch::Contains("duplicate key 'b'"));
  // Keys with '/' and '~' are escaped as JSON pointers are.
  CHECK(first_problem(R"({"x": {"a/b~c": 1, "a/b~c": 2}})").json_path == "/x/a~1b~0c");
  // The same key in two objects is fine.
  CHECK(core::parse_json_text(R"([{"a": 1}, {"a": 2}])", "t.json").size() == 2);
}

TEST_CASE("a number too large for a double is an error at its path", "[json]") {
  CHECK(first_problem(R"({"count": 1e999})").json_path == "/count");
  CHECK(first_problem(R"({"rows": [1, 2, -1e400]})").json_path == "/rows/2");
  const auto syntax = first_problem("{\n  \"a\": ,\n}");
  CHECK(syntax.json_path.empty());
  CHECK_THAT(syntax.message, Catch::Contains("invalid JSON at line 2"));
}

TEST_CASE("integers are range-checked before any narrowing", "[json]") {
  const auto doc = nlohmann::json::parse(R"({"small": 7, "big": 18446744073709551615, "negative": -3, "fraction": 2.5})");
  core::Diagnostics diag("t.json");
  core::JsonObject o(doc, "", diag);
  CHECK(o.integer("small", true, 1, 10) == 7);
  CHECK_FALSE(o.integer("big", true, 0, core::kMaxGpus).has_value());  // would wrap to -1 as int64
  CHECK_FALSE(o.integer("negative").has_value());
  CHECK_FALSE(o.integer("fraction").has_value());
  REQUIRE(diag.items().size() == 3);
  CHECK_THAT(diag.items()[0].message, Catch::Contains("18446744073709551615 is out of range (expected an integer from 0 to 131072)"));
  CHECK(core::integer_in_range(doc["big"], 0, std::numeric_limits<std::int64_t>::max()) == std::nullopt);
  CHECK(core::integer_in_range(doc["small"], 0, 7) == 7);
}

TEST_CASE("text numbers never throw: out of range, infinite and trailing text are refused", "[text]") {
  CHECK(core::parse_integer<int>("2147483647") == 2147483647);
  CHECK_FALSE(core::parse_integer<int>("2147483648").has_value());
  CHECK_FALSE(core::parse_integer<std::uint64_t>("99999999999999999999999").has_value());
  CHECK_FALSE(core::parse_integer<int>("12abc").has_value());
  CHECK(core::parse_finite("1.5") == 1.5);
  CHECK_FALSE(core::parse_finite("inf").has_value());
  CHECK_FALSE(core::parse_finite("nan").has_value());
  CHECK_FALSE(core::parse_finite("1e999").has_value());
}

TEST_CASE("quantities that do not fit their internal type are errors", "[units]") {
  std::string why;
  CHECK_FALSE(core::parse_quantity("1e308 s", core::QuantityKind::kTime, why).has_value());
  CHECK_THAT(why, Catch::Contains("too long"));
  CHECK(core::parse_quantity("1000000 s", core::QuantityKind::kTime, why) == Approx(1e18));
  CHECK_FALSE(core::parse_quantity("1e-308 GB/s", core::QuantityKind::kBandwidth, why).has_value());
  CHECK_FALSE(core::parse_quantity("1.5 B", core::QuantityKind::kBytes, why).has_value());
  CHECK_FALSE(core::parse_quantity("17 TiB", core::QuantityKind::kBytes, why).has_value());
  CHECK(core::parse_quantity("16 TiB", core::QuantityKind::kBytes, why) == Approx(static_cast<double>(core::kMaxBytes)));
  CHECK_FALSE(core::parse_size_flag("4611686018427387904").has_value());
  CHECK(core::parse_size_flag("16T") == static_cast<core::Bytes>(core::kMaxBytes));
  // Conversions saturate instead of wrapping; the kernel then stops the run.
  CHECK(core::Bandwidth{1.0}.transfer_time(core::kMaxBytes) == core::kMaxSimulatedPs);
  CHECK(core::saturating_ps(std::numeric_limits<double>::quiet_NaN()) == core::kMaxSimulatedPs);
}

TEST_CASE("outputs are written whole or not at all, and never onto an input", "[output]") {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("fabsim-output-test-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string target = (dir / "result.json").string();
  core::write_file_atomically(target, "first\n");
  core::write_file_atomically(target, "second\n");
  CHECK(read(target) == "second\n");
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // no temporary left behind

  CHECK_NOTHROW(core::check_output_path("-o", (dir / "new.json").string()));
  CHECK_THROWS_WITH(core::check_output_path("-o", target, {target}), Catch::Contains("is also an input"));
  // The same file by another name is still the input.
  CHECK_THROWS_WITH(core::check_output_path("-o", (dir / "." / "result.json").string(), {target}), Catch::Contains("is also an input"));
  CHECK_THROWS_WITH(core::check_output_path("-o", dir.string()), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(core::check_output_path("-o", "/dev/full"), Catch::Contains("is not a regular file"));
  CHECK_THROWS_WITH(core::check_output_path("-o", (dir / "missing" / "x.json").string()), Catch::Contains("does not exist"));
  CHECK_THROWS_AS(core::write_file_atomically((dir / "missing" / "x.json").string(), "x"), core::ConfigError);
  CHECK(read(target) == "second\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("A scratch folder goes with its owner, also when an error ends the owner's scope", "[output]") {
  std::filesystem::path kept;
  CHECK_THROWS_WITH(([&] {
                      const core::ScratchFolder scratch("fabsim-scratch-test");
                      kept = scratch.path();
                      std::filesystem::create_directories(kept / "points");
                      std::ofstream(kept / "points" / "point-0000.json") << "{}\n";
                      REQUIRE(std::filesystem::exists(kept / "points" / "point-0000.json"));
                      throw core::SimulationError("a point failed");
                    }()),
                    "a point failed");
  CHECK_FALSE(kept.empty());
  CHECK_FALSE(std::filesystem::exists(kept));

  // A temporary directory that is not there is one clear error, not a filesystem exception.
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", "/nonexistent/fabsim-tmp", 1);
  CHECK_THROWS_WITH(core::ScratchFolder("fabsim-scratch-test"), Catch::Contains("TMPDIR") && Catch::Contains("no temporary directory"));
  if (before) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
}

TEST_CASE("Names that are not valid UTF-8 get U+FFFD for their bad bytes, and say so", "[input]") {
  bool changed = false;
  CHECK(core::valid_utf8("ncclKernel_AllReduce", changed) == "ncclKernel_AllReduce");
  CHECK(core::valid_utf8("µs \xE2\x86\x92 ok", changed) == "µs \xE2\x86\x92 ok");
  CHECK_FALSE(changed);
  CHECK(core::valid_utf8("a\x94\x8e_b", changed) == "a\xEF\xBF\xBD\xEF\xBF\xBD_b");  // stray continuation bytes
  CHECK(changed);
  changed = false;
  CHECK(core::valid_utf8("cut \xE2\x86", changed) == "cut \xEF\xBF\xBD\xEF\xBF\xBD");  // a sequence cut at 60 bytes
  CHECK(core::valid_utf8("\xC0\xAF", changed) == "\xEF\xBF\xBD\xEF\xBF\xBD");         // an overlong '/'
  CHECK(core::valid_utf8("\xED\xA0\x80", changed) == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(changed);
}
