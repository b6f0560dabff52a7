#pragma once
/// Fixed, portable hashes: the same value on every machine and build, so
/// that hashed choices (ECMP paths, symmetry classes) are deterministic.

#include <cstdint>
#include <string_view>

namespace fabsim::core {

/// The splitmix64 finaliser.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// FNV-1a of a string.
inline std::uint64_t hash_text(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace fabsim::core
