#pragma once
// What the importer tests read of an import: the built trace as plain JSON,
// a rank's ops, and how often a warning was counted.

#include <nlohmann/json.hpp>
#include <string>

#include "traces/import/importers.hpp"

namespace fabsim::testing {

/// The built trace as plain JSON (building dumps it: no invalid UTF-8 may be left).
inline nlohmann::json built(traces::TraceBuilder& b) { return nlohmann::json::parse(b.build().dump()); }

/// The ops of the program running `rank`.
inline nlohmann::json ops_of(const nlohmann::json& doc, int rank) {
  for (const auto& p : doc["programs"])
    for (const auto& r : p["ranks"])
      if (r == rank) return p["ops"];
  return nlohmann::json::array();
}

/// How often the warnings containing `text` were counted.
inline std::uint64_t warnings_containing(const traces::TraceBuilder& b, const std::string& text) {
  std::uint64_t n = 0;
  for (const auto& [what, count] : b.warnings.counts())
    if (what.find(text) != std::string::npos) n += count;
  return n;
}

}  // namespace fabsim::testing
