#pragma once
/// SHA-256 (FIPS 180-4) of bytes, as 64 lower-case hex digits: the content
/// hash that outputs carry for the catalogue and calibration profile they
/// were computed with.

#include <string>
#include <string_view>

namespace fabsim::core {

std::string sha256_hex(std::string_view bytes);

/// The SHA-256 of a file's bytes; throws ConfigError when it cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace fabsim::core
