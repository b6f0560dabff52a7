#pragma once
/// Physical quantities used everywhere in fabsim, with their units in the
/// type names: bytes are integers, time is integer picoseconds (the SystemC
/// resolution), bandwidth is bytes per second.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabsim::core {

/// A byte count.
using Bytes = std::uint64_t;

/// a / b rounded up (b > 0): chunks, slices and steps that cover `a` bytes.
constexpr Bytes div_up(Bytes a, Bytes b) { return (a + b - 1) / b; }

/// Simulated time in picoseconds; the SystemC time resolution is 1 ps.
using TimePs = std::uint64_t;

inline constexpr TimePs kPsPerNs = 1'000;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline constexpr TimePs kPsPerSecond = 1'000'000'000'000;

/// Converts a computed time in picoseconds to TimePs, saturating at
/// kMaxSimulatedPs (core/limits.hpp) so that no conversion overflows; a run
/// that reaches that time is stopped by run_to_completion with an error.
TimePs saturating_ps(double ps);

/// Converts picoseconds to microseconds (for reports).
inline double to_us(TimePs t) { return static_cast<double>(t) / 1e6; }

/// A transfer rate in bytes per second (1 GB/s = 1e9 B/s, as nccl-tests).
struct Bandwidth {
  double bytes_per_second = 0.0;

  /// Time to serialise `bytes` at this rate, rounded up to the next ps.
  TimePs transfer_time(Bytes bytes) const;
  double gbytes_per_second() const { return bytes_per_second / 1e9; }
  Bandwidth scaled(double factor) const { return {bytes_per_second * factor}; }
  static Bandwidth from_gbytes_per_second(double gb) { return {gb * 1e9}; }
};

/// What kind of quantity a config string is expected to hold.
enum class QuantityKind { kBytes, kTime, kBandwidth };

/// Parses "450 GB/s", "400 Gb/s", "25 GiB/s" (bandwidth), "150 ns", "1.5 us"
/// (time), "64 MiB", "8 B", "1 KB" (bytes). Returns std::nullopt and fills
/// `why` when the text is not a quantity of the requested kind or is out of
/// range (core/limits.hpp): bytes must be whole and at most 16 TiB, times at
/// most 1e6 s, bandwidths 0 or 1 B/s to 1 PB/s.
std::optional<double> parse_quantity(std::string_view text, QuantityKind kind, std::string& why);

/// Parses a byte count the way nccl-tests' -b/-e flags do: a bare integer or
/// one with a K, M, G or T suffix (powers of 1024); nullopt above 16 TiB.
std::optional<Bytes> parse_size_flag(std::string_view text);

/// Human-readable strings with units, for reports and error messages.
std::string format_bytes(Bytes bytes);
std::string format_time(TimePs t);

}  // namespace fabsim::core
