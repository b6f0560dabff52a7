#include "sim/cli/child_run.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/scratch_folder.hpp"

namespace fabsim::cli {

namespace {
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

/// A child's "FILE: ...": split at the first ": " so that Diagnostic::to_string
/// prints each line exactly as the child did (a line without a file is the
/// origin's).
std::vector<core::Diagnostic> as_printed(const std::vector<std::string>& lines, const std::string& origin_file) {
  std::vector<core::Diagnostic> items;
  for (const auto& line : lines) {
    const auto cut = line.find(": ");
    if (cut == std::string::npos) items.push_back({origin_file, "", line});
    else items.push_back({line.substr(0, cut), "", line.substr(cut + 2)});
  }
  return items;
}
}  // namespace

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

nlohmann::json run_json_child(const std::string& executable, const std::vector<std::string>& args, const ChildOrigin& origin) {
  // One file per child (whatif runs several at once from one process), where
  // every other working file of fabsim goes: TMPDIR, else /tmp.
  const auto directory = core::temporary_directory();
  std::string err_name = (directory / "fabsim-child-XXXXXX").string();
  const int err_fd = ::mkstemp(err_name.data());
  if (err_fd < 0)
    throw core::ConfigError("environment", "TMPDIR",
                            fmt::format("cannot create a file for a child run's messages in '{}' (expected a writable temporary directory)",
                                        directory.string()));
  ::close(err_fd);
  std::string command = quote(executable);
  for (const auto& a : args) {
    command.push_back(' ');
    command += quote(a);
  }
  command += " 2>" + quote(err_name);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) {
    ::unlink(err_name.c_str());
    throw std::runtime_error("cannot start " + command);
  }
  std::string out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe.release());
  // The child's error lines say what went wrong: the first is reported as a
  // problem of the file and entry that asked for the run.
  std::vector<std::string> error_lines;
  {
    std::ifstream err(err_name);
    for (std::string line; std::getline(err, line);)
      if (line.rfind("error: ", 0) == 0) error_lines.push_back(line.substr(7));
  }
  ::unlink(err_name.c_str());
  const std::string message = error_lines.empty() ? std::string() : error_lines.front();
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == core::kExitConfigError && origin.runs_the_users_command_line && !error_lines.empty())
    throw core::ConfigError(as_printed(error_lines, origin.file));
  if (code == core::kExitConfigError)
    throw core::ConfigError(origin.file, origin.json_path, fmt::format("this run's input is refused: {}", message));
  if (code == core::kExitSimulationError)
    throw core::SimulationError(fmt::format("{}: {}: {}", origin.file, origin.json_path, message));
  if (code != 0) throw std::runtime_error(fmt::format("a child simulation ended with status {} ({}): {}", code, message, command));
  return nlohmann::json::parse(out);
}

}  // namespace fabsim::cli
