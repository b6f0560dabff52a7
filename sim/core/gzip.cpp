#include "sim/core/gzip.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include "sim/core/error.hpp"

namespace fabsim::core {

bool is_gzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string gunzip(const std::string& data, const std::string& origin, std::size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw ConfigError(origin, "", "cannot start gzip decompression");
  std::string out;
  char buffer[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  std::size_t consumed = 0;
  int rc = Z_OK;
  while (true) {
    // zlib counts input in uInt: feed it in slices.
    if (z.avail_in == 0 && consumed < data.size()) {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + consumed));
      z.avail_in = static_cast<uInt>(std::min<std::size_t>(data.size() - consumed, 1u << 30));
      consumed += z.avail_in;
    }
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      throw ConfigError(origin, "", fmt::format("decompresses to more than {} bytes (the most fabsim reads)", limit));
    }
    if (rc == Z_STREAM_END) {
      // Concatenated members (gzip allows them): go on while input is left.
      if (z.avail_in == 0 && consumed >= data.size()) break;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_in == 0 && consumed < data.size())) {
      inflateEnd(&z);
      throw ConfigError(origin, "", rc == Z_BUF_ERROR ? "the gzip data is truncated" : fmt::format("the gzip data is corrupt ({})", z.msg ? z.msg : "no detail"));
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace fabsim::core
