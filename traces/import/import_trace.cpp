#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

TraceBuilder import_trace(const std::string& format, const std::vector<std::string>& files, const ImportOptions& options) {
  if (files.empty()) throw core::ConfigError("command line", "files", "no input file given");
  auto imported = [&] {
    try {
      if (format == "nccl-log") return import_nccl_log(files, options);
      if (format == "kineto") return import_kineto(files, options);
      if (format == "chakra") return import_chakra(files);
    } catch (const nlohmann::json::exception& e) {
      throw core::ConfigError(files.size() == 1 ? files.front() : fmt::format("{} (one of {} files)", files.front(), files.size()), "",
                              fmt::format("a field has an unexpected type for {} input ({})", format, e.what()));
    }
    throw core::ConfigError("command line", "--from", fmt::format("unknown format '{}' (expected nccl-log, kineto or chakra)", format));
  };
  TraceBuilder b = imported();
  complete_partial_job(b, options, files.front());
  return b;
}

}  // namespace fabsim::traces
