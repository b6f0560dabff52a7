#include "traces/collectives/nccl_version.hpp"

#include <cctype>

#include <fmt/format.h>

namespace fabsim::traces {

namespace {
/// Reads decimal digits at `pos` (at most 4, so no overflow); nullopt when there are none.
std::optional<int> read_number(std::string_view text, std::size_t& pos) {
  const std::size_t start = pos;
  int value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && pos - start < 4)
    value = value * 10 + (text[pos++] - '0');
  if (pos == start || (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))) return std::nullopt;
  return value;
}
}  // namespace

std::optional<NcclVersion> parse_nccl_version(std::string_view text) {
  std::size_t pos = 0;
  NcclVersion v;
  const auto major = read_number(text, pos);
  if (!major || pos >= text.size() || text[pos] != '.') return std::nullopt;
  ++pos;
  const auto minor = read_number(text, pos);
  if (!minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const auto patch = read_number(text, pos);
    if (!patch) return std::nullopt;
    v.patch = *patch;
  }
  // A package suffix ("-1") or a remark after a space may follow; nothing else.
  if (pos < text.size() && text[pos] == '-') {
    ++pos;
    if (!read_number(text, pos)) return std::nullopt;
  }
  if (pos < text.size() && text[pos] != ' ') return std::nullopt;
  return v;
}

std::string nccl_version_name(const NcclVersion& version) {
  return fmt::format("{}.{}.{}", version.major, version.minor, version.patch);
}

}  // namespace fabsim::traces
