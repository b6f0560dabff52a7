#pragma once
/// Reading JSON inputs with locations: every accessor reports problems to a
/// Diagnostics with the JSON path, and unknown keys are reported rather than
/// silently ignored.

#include <functional>
#include <nlohmann/json.hpp>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace fabsim::core {

/// Reads and parses a JSON file; a missing file or a syntax error becomes a
/// ConfigError naming the file (and the byte offset of the syntax error).
/// Duplicate keys and numbers too large for a double are errors at their JSON
/// path; nesting is limited to 256 levels.
nlohmann::json read_json_file(const std::string& path);

/// Parses JSON text with the same checks; `origin` names it in errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

/// What parse_json_streaming hands each element of the streamed array to (its index second).
using ElementSink = std::function<void(nlohmann::json&&, std::size_t)>;

/// parse_json_text for documents too large to hold as a DOM: each element of
/// the array at the root key `key` goes to `sink` as soon as it is complete
/// (with the same checks) and is not kept; the document returned has that
/// array empty. A null sink streams nothing.
nlohmann::json parse_json_streaming(const std::string& text, const std::string& origin, const std::string& key, const ElementSink* sink);

/// Reads a whole file (gzip-compressed or not); a directory, a missing or unreadable file is a ConfigError.
std::string read_text_file(const std::string& path);

/// The integer `j` holds when it is one from min to max (no wrap-around of
/// large unsigned values), else nullopt.
std::optional<std::int64_t> integer_in_range(const nlohmann::json& j, std::int64_t min, std::int64_t max);

/// Every element of the array `j` as an int from min to max, or nullopt
/// (not an array, or an element that is not such an integer).
std::optional<std::vector<int>> int_list_in_range(const nlohmann::json& j, int min, int max);

/// `name` as written in `referencing_file`: a relative path is relative to
/// the folder of the file that names it.
std::string resolve_relative(const std::string& referencing_file, const std::string& name);

/// Why `resolved` (a file that an input names) cannot be read, saying what it
/// is relative to; nullopt when it is a regular file.
std::optional<std::string> unreadable_reference(const std::string& resolved, std::string_view relative_to);

/// A view of one JSON object at a known path. Accessors return nullopt (after
/// recording a diagnostic when the key is required or malformed).
class JsonObject {
 public:
  /// `json` must outlive this view.
  JsonObject(const nlohmann::json& json, std::string path, Diagnostics& diagnostics);

  bool is_object() const { return json_.is_object(); }
  bool has(std::string_view key) const;
  std::string path_of(std::string_view key) const;
  const std::string& path() const { return path_; }
  Diagnostics& diagnostics() const { return diagnostics_; }

  std::optional<std::string> string(std::string_view key, bool required = true);
  std::optional<double> number(std::string_view key, bool required = true);
  /// An integer in [min, max]; anything else (a fraction, a value out of range) is an error.
  std::optional<std::int64_t> integer(std::string_view key, bool required = true, std::int64_t min = 0,
                                      std::int64_t max = std::numeric_limits<std::int64_t>::max());
  std::optional<bool> boolean(std::string_view key, bool required = true);
  /// A string with a unit of the given kind, e.g. "25 GB/s".
  std::optional<double> quantity(std::string_view key, QuantityKind kind, bool required = true);
  /// A nested object or array; marks the key as known.
  const nlohmann::json* child(std::string_view key, nlohmann::json::value_t type, bool required = true);

  /// Requires the "format" key to name `expected` (e.g. "fabsim-topology/1");
  /// another format throws at once (the rest of the file would only add noise).
  void expect_format(std::string_view expected);

  /// Records every key that no accessor asked for, listing the known ones. A
  /// root object may name its JSON Schema with "$schema" (a string).
  void reject_unknown_keys();
  /// Keys starting with `prefix` (e.g. "x-") are extensions: reject_unknown_keys passes them.
  void allow_prefix(std::string prefix) { allowed_prefix_ = std::move(prefix); }

 private:
  const nlohmann::json* fetch(std::string_view key, bool required, std::string_view expected);

  const nlohmann::json& json_;
  std::string path_;
  Diagnostics& diagnostics_;
  std::set<std::string, std::less<>> known_;
  std::string allowed_prefix_;
};

}  // namespace fabsim::core
