#pragma once
/// Small text helpers shared by the loaders and the command line.

#include <cctype>
#include <string>
#include <string_view>

namespace fabsim::core {

/// ASCII lower case: NCCL's names ("LL128", "Ring") are matched case-insensitively.
inline std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace fabsim::core
