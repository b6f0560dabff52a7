#pragma once
// fabsim runs through the CLI whose JSON output a test reads.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "test_support.hpp"

namespace fabsim::testing {

/// Runs `fabsim ARGS --format json`, which must succeed, and parses its output.
inline nlohmann::json run_json(const std::string& args) {
  const auto r = run_fabsim(args + " --format json");
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

/// The path of a stock topology by name ("hgx-h100").
inline std::string topology(const std::string& name) { return source_path("topologies/" + name + ".json"); }

}  // namespace fabsim::testing
