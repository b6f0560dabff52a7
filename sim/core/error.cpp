#include "sim/core/error.hpp"

#include <fmt/format.h>

namespace fabsim::core {

std::string Diagnostic::to_string() const {
  if (json_path.empty()) return fmt::format("error: {}: {}", file, message);
  return fmt::format("error: {}: {}: {}", file, json_path, message);
}

void Diagnostics::error(std::string json_path, std::string message) {
  items_.push_back({file_, std::move(json_path), std::move(message)});
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw ConfigError(items_);
}

namespace {
std::string join(const std::vector<Diagnostic>& items) {
  std::string out;
  for (const auto& d : items) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}
}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> items) : std::runtime_error(join(items)), items_(std::move(items)) {}

ConfigError::ConfigError(std::string file, std::string json_path, std::string message)
    : ConfigError(std::vector<Diagnostic>{{std::move(file), std::move(json_path), std::move(message)}}) {}

}  // namespace fabsim::core
