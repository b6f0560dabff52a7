#pragma once
/// What built this fabsim: its version (CMake's project version) and the git
/// commit of the source tree at build time (written by cmake/build_info.cmake).

#include <string>

namespace fabsim::core {

/// e.g. "0.1.0".
std::string fabsim_version();
/// The short commit, "+dirty" after it when tracked files had changes; "unknown" outside git.
std::string fabsim_commit();

}  // namespace fabsim::core
