#include "sim/core/scratch_folder.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <system_error>

#include "sim/core/error.hpp"

namespace fabsim::core {

std::filesystem::path temporary_directory() {
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec);  // TMPDIR, else /tmp
  if (ec)
    throw ConfigError("environment", "TMPDIR",
                      fmt::format("no temporary directory: {} (expected TMPDIR unset or naming a writable directory)", ec.message()));
  return dir;
}

ScratchFolder::ScratchFolder(const std::string& prefix) : path_(temporary_directory() / fmt::format("{}-{}", prefix, ::getpid())) {
  std::error_code ec;
  std::filesystem::create_directories(path_, ec);
  if (ec)
    throw ConfigError("environment", "TMPDIR",
                      fmt::format("cannot create the working folder '{}': {} (expected a writable temporary directory)", path_.string(), ec.message()));
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;  // nothing to report to from a destructor; a folder left behind is harmless
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace fabsim::core
