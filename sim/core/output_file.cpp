#include "sim/core/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/core/error.hpp"

namespace fabsim::core {

namespace fs = std::filesystem;

namespace {

fs::path directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string temporary_beside(const std::string& path) {
  return fmt::format("{}.fabsim-tmp-{}", path, static_cast<long>(::getpid()));
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(fs::absolute(a), ec) == fs::weakly_canonical(fs::absolute(b), ec);
}

void check_output_path(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) throw ConfigError("command line", flag, "expected a file name, found an empty string");
  for (const auto& input : inputs)
    if (!input.empty() && same_file(path, input))
      throw ConfigError("command line", flag, fmt::format("'{}' is also an input: writing it would destroy it (name another file)", path));
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) throw ConfigError("command line", flag, fmt::format("'{}' is a directory (expected a file name)", path));
    if (!fs::is_regular_file(status))
      throw ConfigError("command line", flag, fmt::format("'{}' is not a regular file (fabsim writes a whole file and renames it into place)", path));
  }
  const fs::path dir = directory_of(path);
  if (!fs::is_directory(dir, ec)) throw ConfigError("command line", flag, fmt::format("'{}': the directory '{}' does not exist", path, dir.string()));
  // Writability is what rename needs: a file may be created in the directory.
  const std::string probe = temporary_beside(path);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    throw ConfigError("command line", flag, fmt::format("'{}' cannot be written: {} (in '{}')", path, std::strerror(errno), dir.string()));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = temporary_beside(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw ConfigError(path, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw ConfigError(path, "", fmt::format("cannot write the file: {}", std::strerror(saved)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw ConfigError(path, "", fmt::format("cannot write the file: {}", std::strerror(saved)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw ConfigError(path, "", fmt::format("cannot move the finished file into place: {}", std::strerror(saved)));
  }
}

}  // namespace fabsim::core
