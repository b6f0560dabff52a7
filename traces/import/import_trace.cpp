#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

TraceBuilder import_trace(const std::string& format, const std::vector<std::string>& files) {
  try {
    if (format == "nccl-log") return import_nccl_log(files);
    if (format == "kineto") return import_kineto(files);
    if (format == "chakra") return import_chakra(files);
  } catch (const nlohmann::json::exception& e) {
    throw core::ConfigError(files.size() == 1 ? files.front() : fmt::format("{} (one of {} files)", files.front(), files.size()), "",
                            fmt::format("a field has an unexpected type for {} input ({})", format, e.what()));
  }
  throw core::ConfigError("command line", "--from", fmt::format("unknown format '{}' (expected nccl-log, kineto or chakra)", format));
}

}  // namespace fabsim::traces
