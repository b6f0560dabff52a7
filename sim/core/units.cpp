#include "sim/core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "sim/core/limits.hpp"

namespace fabsim::core {

TimePs saturating_ps(double ps) {
  if (!(ps < static_cast<double>(kMaxSimulatedPs))) return kMaxSimulatedPs;  // also NaN
  return ps <= 0 ? 0 : static_cast<TimePs>(ps);
}

TimePs Bandwidth::transfer_time(Bytes bytes) const {
  if (bytes == 0) return 0;
  const double ps = static_cast<double>(bytes) / bytes_per_second * static_cast<double>(kPsPerSecond);
  return saturating_ps(std::ceil(ps - 1e-6));
}

namespace {

struct UnitEntry {
  std::string_view name;
  double factor;  // to bytes, picoseconds or bytes per second
};

constexpr std::array kByteUnits{
    UnitEntry{"B", 1.0},           UnitEntry{"KB", 1e3},         UnitEntry{"MB", 1e6},
    UnitEntry{"GB", 1e9},          UnitEntry{"TB", 1e12},        UnitEntry{"KiB", 1024.0},
    UnitEntry{"MiB", 1048576.0},   UnitEntry{"GiB", 1073741824.0}, UnitEntry{"TiB", 1099511627776.0},
};
constexpr std::array kTimeUnits{
    UnitEntry{"ps", 1.0}, UnitEntry{"ns", 1e3}, UnitEntry{"us", 1e6},
    UnitEntry{"ms", 1e9}, UnitEntry{"s", 1e12},
};
constexpr std::array kBandwidthUnits{
    UnitEntry{"B/s", 1.0},        UnitEntry{"KB/s", 1e3},          UnitEntry{"MB/s", 1e6},
    UnitEntry{"GB/s", 1e9},       UnitEntry{"TB/s", 1e12},         UnitEntry{"KiB/s", 1024.0},
    UnitEntry{"MiB/s", 1048576.0}, UnitEntry{"GiB/s", 1073741824.0}, UnitEntry{"b/s", 1.0 / 8},
    UnitEntry{"Kb/s", 1e3 / 8},   UnitEntry{"Mb/s", 1e6 / 8},      UnitEntry{"Gb/s", 1e9 / 8},
    UnitEntry{"Tb/s", 1e12 / 8},
};

template <std::size_t N>
std::string unit_list(const std::array<UnitEntry, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

template <std::size_t N>
std::optional<double> lookup(const std::array<UnitEntry, N>& units, std::string_view unit) {
  for (const auto& u : units)
    if (u.name == unit) return u.factor;
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> parse_quantity(std::string_view text, QuantityKind kind, std::string& why) {
  const std::string_view example = kind == QuantityKind::kBytes  ? "\"64 MiB\""
                                   : kind == QuantityKind::kTime ? "\"150 ns\""
                                                                 : "\"25 GB/s\"";
  const std::string units = kind == QuantityKind::kBytes  ? unit_list(kByteUnits)
                            : kind == QuantityKind::kTime ? unit_list(kTimeUnits)
                                                          : unit_list(kBandwidthUnits);
  const std::string_view s = trim(text);
  std::size_t split = 0;
  while (split < s.size() && (std::isdigit(static_cast<unsigned char>(s[split])) || s[split] == '.' ||
                              s[split] == '-' || s[split] == '+' || s[split] == 'e' || s[split] == 'E')) {
    // An 'e' followed by a letter other than a digit/sign starts the unit, not an exponent.
    if ((s[split] == 'e' || s[split] == 'E') &&
        (split + 1 >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[split + 1])) ||
                                    s[split + 1] == '-' || s[split + 1] == '+')))
      break;
    ++split;
  }
  const std::string_view number_text = s.substr(0, split);
  const std::string_view unit = trim(s.substr(split));
  double value = 0.0;
  const auto [end, ec] = std::from_chars(number_text.data(), number_text.data() + number_text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    why = fmt::format("'{}': the number is out of range (expected e.g. {})", text, example);
    return std::nullopt;
  }
  if (number_text.empty() || ec != std::errc{} || end != number_text.data() + number_text.size()) {
    why = fmt::format("'{}' is not a number with a unit (expected e.g. {})", text, example);
    return std::nullopt;
  }
  if (unit.empty()) {
    why = fmt::format("'{}' has no unit (expected e.g. {}; units: {})", text, example, units);
    return std::nullopt;
  }
  std::optional<double> factor;
  switch (kind) {
    case QuantityKind::kBytes: factor = lookup(kByteUnits, unit); break;
    case QuantityKind::kTime: factor = lookup(kTimeUnits, unit); break;
    case QuantityKind::kBandwidth: factor = lookup(kBandwidthUnits, unit); break;
  }
  if (!factor) {
    why = fmt::format("'{}': unknown unit '{}' (expected one of: {})", text, unit, units);
    return std::nullopt;
  }
  if (value < 0) {
    why = fmt::format("'{}' is negative (expected a value >= 0)", text);
    return std::nullopt;
  }
  const double result = value * *factor;
  switch (kind) {
    case QuantityKind::kBytes:
      if (result != std::floor(result)) {
        why = fmt::format("'{}' is not a whole number of bytes", text);
        return std::nullopt;
      }
      if (result > static_cast<double>(kMaxBytes)) {
        why = fmt::format("'{}' is too large (expected at most {} bytes, 16 TiB)", text, kMaxBytes);
        return std::nullopt;
      }
      break;
    case QuantityKind::kTime:
      if (result > static_cast<double>(kMaxDurationNs) * 1e3) {
        why = fmt::format("'{}' is too long (expected at most 1e6 s)", text);
        return std::nullopt;
      }
      break;
    case QuantityKind::kBandwidth:
      if (result != 0.0 && (result < kMinBandwidth || result > kMaxBandwidth)) {
        why = fmt::format("'{}' is out of range (expected 0, or 1 B/s to 1 PB/s)", text);
        return std::nullopt;
      }
      break;
  }
  return result;
}

std::optional<Bytes> parse_size_flag(std::string_view text) {
  const std::string_view s = trim(text);
  if (s.empty()) return std::nullopt;
  Bytes multiplier = 1;
  std::string_view digits = s;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K': multiplier = Bytes{1} << 10; digits.remove_suffix(1); break;
    case 'M': multiplier = Bytes{1} << 20; digits.remove_suffix(1); break;
    case 'G': multiplier = Bytes{1} << 30; digits.remove_suffix(1); break;
    case 'T': multiplier = Bytes{1} << 40; digits.remove_suffix(1); break;
    default: break;
  }
  Bytes value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  if (value > static_cast<Bytes>(kMaxBytes) / multiplier) return std::nullopt;
  return value * multiplier;
}

std::string format_bytes(Bytes bytes) {
  constexpr std::array suffixes{"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t i = 0;
  while (v >= 1024.0 && i + 1 < suffixes.size() && std::fmod(v, 1024.0) == 0.0) {
    v /= 1024.0;
    ++i;
  }
  return fmt::format("{} {}", v, suffixes[i]);
}

std::string format_time(TimePs t) {
  if (t >= kPsPerSecond) return fmt::format("{:.3f} s", static_cast<double>(t) / 1e12);
  if (t >= 1'000'000'000) return fmt::format("{:.3f} ms", static_cast<double>(t) / 1e9);
  if (t >= kPsPerUs) return fmt::format("{:.3f} us", static_cast<double>(t) / 1e6);
  return fmt::format("{:.3f} ns", static_cast<double>(t) / 1e3);
}

}  // namespace fabsim::core
