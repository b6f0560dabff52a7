#pragma once
/// Small text helpers shared by the loaders and the command line.

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace fabsim::core {

/// ASCII lower case: NCCL's names ("LL128", "Ring") are matched case-insensitively.
inline std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The whole of `text` as an integer of type T, or nullopt (not a number,
/// trailing characters, or out of T's range). Never throws, unlike std::stoi.
template <typename T>
std::optional<T> parse_integer(std::string_view text) {
  static_assert(std::is_integral_v<T>);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// The whole of `text` as a finite double, or nullopt ("inf", "nan", 1e999,
/// trailing characters).
inline std::optional<double> parse_finite(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace fabsim::core
