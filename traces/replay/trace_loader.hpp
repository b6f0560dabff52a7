#pragma once
/// Reads a native trace file and checks it: structure and ranges first (every
/// problem at its JSON path), then what only all ranks together can show
/// (collective sequences that disagree, unmatched send/recv). Throws
/// core::ConfigError listing every problem found.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/replay/trace.hpp"

namespace fabsim::traces {

/// The format tag and the highest major version this reader understands.
inline constexpr const char* kTraceFormat = "fabsim-trace";
inline constexpr int kTraceVersion = 1;

Trace load_trace(const std::string& path);

/// Parses and checks an already read document; `file` names it in messages.
Trace parse_trace(const nlohmann::json& doc, const std::string& file);

/// The cross-rank checks alone (parse_trace runs them); throws core::ConfigError.
void check_trace_matching(const Trace& trace);

/// Op instances the completion check simulates at most (a few seconds).
inline constexpr std::uint64_t kCompletionCheckBudget = 20'000'000;

/// Runs the trace with replay's blocking semantics and zero durations (its
/// first two iterations): a core::ConfigError naming the stuck operations
/// when it cannot finish; false when it needs more than `budget` steps (not judged).
bool check_trace_completes(const Trace& trace, std::uint64_t budget = kCompletionCheckBudget);

}  // namespace fabsim::traces
