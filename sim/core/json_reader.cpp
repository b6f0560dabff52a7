#include "sim/core/json_reader.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace fabsim::core {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot open the file (does it exist and is it readable?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset; give line and column, which editors show.
    const std::string text = buffer.str();
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw ConfigError(path, "", fmt::format("invalid JSON at line {}, column {}: expected a JSON document", line, column));
  }
}

namespace {
std::string type_name(const nlohmann::json& j) {
  if (j.is_string()) return fmt::format("the string \"{}\"", j.get<std::string>());
  if (j.is_number()) return fmt::format("the number {}", j.dump());
  return j.type_name();
}
}  // namespace

JsonObject::JsonObject(const nlohmann::json& json, std::string path, Diagnostics& diagnostics)
    : json_(json), path_(std::move(path)), diagnostics_(diagnostics) {
  if (!json_.is_object())
    diagnostics_.error(path_.empty() ? "/" : path_, fmt::format("expected an object, found {}", type_name(json_)));
}

bool JsonObject::has(std::string_view key) const { return json_.is_object() && json_.contains(key); }

std::string JsonObject::path_of(std::string_view key) const { return fmt::format("{}/{}", path_, key); }

const nlohmann::json* JsonObject::fetch(std::string_view key, bool required, std::string_view expected) {
  known_.emplace(key);
  if (!json_.is_object()) return nullptr;
  const auto it = json_.find(key);
  if (it == json_.end()) {
    if (required) diagnostics_.error(path_.empty() ? "/" : path_, fmt::format("missing required key '{}' ({})", key, expected));
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonObject::string(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "a string");
  if (!j) return std::nullopt;
  if (!j->is_string()) {
    diagnostics_.error(path_of(key), fmt::format("expected a string, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<std::string>();
}

std::optional<double> JsonObject::number(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "a number");
  if (!j) return std::nullopt;
  if (!j->is_number()) {
    diagnostics_.error(path_of(key), fmt::format("expected a number, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<double>();
}

std::optional<std::int64_t> JsonObject::integer(std::string_view key, bool required, std::int64_t min) {
  const auto* j = fetch(key, required, "an integer");
  if (!j) return std::nullopt;
  if (!j->is_number_integer()) {
    diagnostics_.error(path_of(key), fmt::format("expected an integer, found {}", type_name(*j)));
    return std::nullopt;
  }
  const auto v = j->get<std::int64_t>();
  if (v < min) {
    diagnostics_.error(path_of(key), fmt::format("expected an integer >= {}, found {}", min, v));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> JsonObject::boolean(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "true or false");
  if (!j) return std::nullopt;
  if (!j->is_boolean()) {
    diagnostics_.error(path_of(key), fmt::format("expected true or false, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<bool>();
}

std::optional<double> JsonObject::quantity(std::string_view key, QuantityKind kind, bool required) {
  const auto* j = fetch(key, required, "a value with a unit");
  if (!j) return std::nullopt;
  if (!j->is_string()) {
    const char* example = kind == QuantityKind::kBytes ? "\"64 MiB\"" : kind == QuantityKind::kTime ? "\"150 ns\"" : "\"25 GB/s\"";
    diagnostics_.error(path_of(key), fmt::format("expected a string with a unit such as {}, found {}", example, type_name(*j)));
    return std::nullopt;
  }
  std::string why;
  const auto v = parse_quantity(j->get<std::string>(), kind, why);
  if (!v) diagnostics_.error(path_of(key), why);
  return v;
}

const nlohmann::json* JsonObject::child(std::string_view key, nlohmann::json::value_t type, bool required) {
  const char* expected = type == nlohmann::json::value_t::array ? "an array" : "an object";
  const auto* j = fetch(key, required, expected);
  if (!j) return nullptr;
  if (j->type() != type) {
    diagnostics_.error(path_of(key), fmt::format("expected {}, found {}", expected, type_name(*j)));
    return nullptr;
  }
  return j;
}

void JsonObject::expect_format(std::string_view expected) {
  if (const auto format = string("format"); format && *format != expected)
    diagnostics_.error(path_of("format"), fmt::format("unsupported format '{}' (expected \"{}\")", *format, expected));
}

void JsonObject::reject_unknown_keys() {
  if (!json_.is_object()) return;
  for (const auto& [key, value] : json_.items()) {
    if (known_.contains(key)) continue;
    if (!allowed_prefix_.empty() && key.starts_with(allowed_prefix_)) continue;
    std::string valid;
    for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    diagnostics_.error(path_of(key), fmt::format("unknown key '{}' (valid keys here: {})", key, valid));
  }
}

}  // namespace fabsim::core
