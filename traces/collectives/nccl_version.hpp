#pragma once
/// An NCCL release number (2.26.2). fabsim's tuner follows the constants of
/// the NCCL release a user names, because NCCL's choice of algorithm at mid
/// sizes moved between releases (nccl_tuner_tables.hpp).

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace fabsim::traces {

struct NcclVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const NcclVersion&) const = default;
};

/// Parses "2.26", "2.26.2" or "2.26.2-1", and also a leading version followed
/// by a space and any text ("2.29.2 (log header nccl-library=22902)"), as the
/// measurement files write it. Anything else is nullopt.
std::optional<NcclVersion> parse_nccl_version(std::string_view text);

/// "2.26.2".
std::string nccl_version_name(const NcclVersion& version);

}  // namespace fabsim::traces
