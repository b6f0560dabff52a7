#include "sim/report/run_provenance.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>

#include "sim/core/build_info.hpp"
#include "sim/core/sha256.hpp"

namespace fabsim::report {

namespace {

bool needs_quotes(const std::string& arg) {
  if (arg.empty()) return true;
  for (const char c : arg)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,@%+").find(c) != std::string_view::npos)) return true;
  return false;
}

std::string shell_quote(const std::string& arg) {
  if (!needs_quotes(arg)) return arg;
  std::string quoted = "'";
  for (const char c : arg) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

}  // namespace

nlohmann::json provenance_json(const RunProvenance& provenance) {
  nlohmann::json doc{{"fabsim_version", core::fabsim_version()},
                     {"fabsim_commit", core::fabsim_commit()},
                     {"command_line", provenance.command_line}};
  if (!provenance.catalogue_file.empty())
    doc["catalogue"] = {{"file", provenance.catalogue_file}, {"sha256", core::file_sha256(provenance.catalogue_file)}};
  if (!provenance.calibration_file.empty())
    doc["calibration"] = {{"file", provenance.calibration_file}, {"sha256", core::file_sha256(provenance.calibration_file)}};
  return doc;
}

void write_csv_provenance(std::ostream& out, const RunProvenance& provenance) {
  fmt::print(out, "# fabsim {} (commit {})\n", core::fabsim_version(), core::fabsim_commit());
  if (!provenance.catalogue_file.empty())
    fmt::print(out, "# catalogue {} sha256 {}\n", provenance.catalogue_file, core::file_sha256(provenance.catalogue_file));
  if (!provenance.calibration_file.empty())
    fmt::print(out, "# calibration {} sha256 {}\n", provenance.calibration_file, core::file_sha256(provenance.calibration_file));
  std::string one_line = provenance.command_line;  // a newline inside an argument must not end the comment
  std::replace_if(one_line.begin(), one_line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  fmt::print(out, "# command {}\n", one_line);
}

std::string quoted_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(argv[i]);
  }
  return line;
}

}  // namespace fabsim::report
