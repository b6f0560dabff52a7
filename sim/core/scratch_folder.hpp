#pragma once
/// A private working folder in the system's temporary directory that goes away
/// with its owner, however the owner's scope ends (normal return, an error
/// thrown half-way): the commands that run child simulations (sweep, calibrate,
/// validate --refit) keep their generated inputs and outputs in one.

#include <filesystem>
#include <string>

namespace fabsim::core {

/// The system's temporary directory (TMPDIR, else /tmp); throws ConfigError
/// naming TMPDIR when there is none to use.
std::filesystem::path temporary_directory();

class ScratchFolder {
 public:
  /// Creates `<temp>/<prefix>-<pid>`; throws ConfigError when it cannot.
  explicit ScratchFolder(const std::string& prefix);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fabsim::core
