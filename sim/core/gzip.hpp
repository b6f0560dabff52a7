#pragma once
/// gzip-compressed inputs (PyTorch's tensorboard_trace_handler writes
/// `.pt.trace.json.gz`): recognised by their magic bytes, whatever the name.

#include <cstddef>
#include <string>

namespace fabsim::core {

/// The largest decompressed input fabsim reads (4 GiB): a bomb is an error, not an out-of-memory.
inline constexpr std::size_t kMaxDecompressedBytes = std::size_t{1} << 32;

bool is_gzip(const std::string& data);

/// The decompressed content of every gzip member in `data`; a core::ConfigError
/// naming `origin` when it is corrupt, truncated or larger than `limit`.
std::string gunzip(const std::string& data, const std::string& origin, std::size_t limit = kMaxDecompressedBytes);

}  // namespace fabsim::core
