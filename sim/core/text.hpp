#pragma once
/// Small text helpers shared by the loaders and the command line.

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
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

/// `text` with every byte that is not part of a valid UTF-8 sequence replaced
/// by U+FFFD (what JSON output needs; names from binary inputs, or cut at a
/// byte count, may not be valid). `changed` is set when anything was replaced.
inline std::string valid_utf8(std::string_view text, bool& changed) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (ok && n > 1) {  // no overlong forms, surrogates or code points past U+10FFFF
      std::uint32_t cp = c & (0xff >> (n + 1));
      for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
      static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[n] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (ok) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      changed = true;
      ++i;
    }
  }
  return out;
}

/// A CSV cell: quoted (quotes doubled, newlines to spaces) when it holds a comma, quote or newline.
inline std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out(1, '"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c == '\n' ? ' ' : c);
  }
  out.push_back('"');
  return out;
}

}  // namespace fabsim::core
