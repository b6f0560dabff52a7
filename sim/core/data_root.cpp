#include "sim/core/data_root.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "sim/core/error.hpp"

namespace fabsim::core {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCatalogue = "configs/hardware/catalogue.json";

bool holds_data(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / kCatalogue, ec);
}

fs::path executable_folder() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

const char* stock_folder(StockKind kind) {
  switch (kind) {
    case StockKind::kTopology: return "topologies";
    case StockKind::kScenario: return "configs/scenarios";
    case StockKind::kSweep: return "configs/sweeps";
    case StockKind::kTrace: return "configs/traces";
  }
  return "";
}

}  // namespace

fs::path data_root() {
  if (const char* env = std::getenv("FABSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!holds_data(env))
      throw ConfigError("environment", "FABSIM_DATA_DIR",
                        fmt::format("'{}' does not hold fabsim's data (expected {} under it)", env, kCatalogue));
    return fs::path(env);
  }
  const fs::path exe = executable_folder();
  const fs::path installed = exe / ".." / "share" / "fabsim";
  const fs::path build_tree = exe / "share" / "fabsim";
  for (const auto& candidate : {installed, build_tree})
    if (holds_data(candidate)) return candidate.lexically_normal();
  throw ConfigError("environment", "FABSIM_DATA_DIR",
                    fmt::format("cannot find fabsim's data (looked for {} in {} and {}): set FABSIM_DATA_DIR to the folder "
                                "that holds it, e.g. PREFIX/share/fabsim",
                                kCatalogue, installed.lexically_normal().string(), build_tree.lexically_normal().string()));
}

std::string data_path(const std::string& relative) { return (data_root() / relative).string(); }

std::string stock_kind_name(StockKind kind) {
  switch (kind) {
    case StockKind::kTopology: return "topology";
    case StockKind::kScenario: return "scenario";
    case StockKind::kSweep: return "sweep";
    case StockKind::kTrace: return "trace";
  }
  return "";
}

std::vector<StockFile> stock_files(StockKind kind) {
  std::vector<StockFile> files;
  std::error_code ec;
  for (fs::directory_iterator it(data_root() / stock_folder(kind), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".json" && it->is_regular_file(ec)) files.push_back({p.stem().string(), p.string()});
  }
  std::sort(files.begin(), files.end(), [](const StockFile& a, const StockFile& b) { return a.name < b.name; });
  return files;
}

std::string resolve_stock(StockKind kind, const std::string& argument, const std::string& flag) {
  std::error_code ec;
  if (fs::exists(argument, ec) || argument.find('/') != std::string::npos) return argument;
  const std::string name = argument.ends_with(".json") ? argument.substr(0, argument.size() - 5) : argument;
  const auto stock = stock_files(kind);
  for (const auto& f : stock)
    if (f.name == name) return f.path;
  std::string names;
  for (const auto& f : stock) names += (names.empty() ? "" : ", ") + f.name;
  const std::string plural = kind == StockKind::kTopology ? "topologies" : stock_kind_name(kind) + "s";
  throw ConfigError("command line", flag,
                    fmt::format("'{}' is neither a file nor a stock {} (stock {}: {}; `fabsim list {}` describes them)", argument,
                                stock_kind_name(kind), plural, names.empty() ? "none installed" : names, plural));
}

}  // namespace fabsim::core
