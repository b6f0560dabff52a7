#include "sim/cli/child_run.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "sim/core/error.hpp"

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
}  // namespace

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

nlohmann::json run_json_child(const std::string& executable, const std::vector<std::string>& args) {
  std::string command = quote(executable);
  for (const auto& a : args) {
    command.push_back(' ');
    command += quote(a);
  }
  command += " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw core::SimulationError("cannot run " + command);
  std::string out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe.release());
  if (status != 0) throw core::SimulationError("a simulation failed (run it alone to see why): " + command);
  return nlohmann::json::parse(out);
}

}  // namespace fabsim::cli
