#pragma once
/// Where fabsim's own data lives (the hardware catalogue, the stock
/// topologies, scenarios, sweeps, traces and JSON Schemas), and stock files by
/// name. The data root has the source tree's layout (configs/, topologies/,
/// schemas/), so files that name each other by relative path work from a
/// checkout and from an installation alike.
///
/// It is, in this order: $FABSIM_DATA_DIR; <the executable's folder>/../share/fabsim
/// (an installation: bin/fabsim beside share/fabsim); <the executable's
/// folder>/share/fabsim (a build folder, where CMake links the source tree's
/// data). No path is compiled in.

#include <filesystem>
#include <string>
#include <vector>

namespace fabsim::core {

/// The data root; throws ConfigError when none of the places holds the
/// catalogue (naming them, and FABSIM_DATA_DIR).
std::filesystem::path data_root();

/// `relative` under the data root, e.g. "configs/hardware/catalogue.json".
std::string data_path(const std::string& relative);

/// A kind of stock file: the folder under the data root that holds them.
enum class StockKind { kTopology, kScenario, kSweep, kTrace };

/// "topology", "scenario", ... as the command line says them.
std::string stock_kind_name(StockKind kind);

/// One stock file: its name (the file name without .json) and path.
struct StockFile {
  std::string name;
  std::string path;
};

/// Every stock file of `kind`, sorted by name (empty when the folder is missing).
std::vector<StockFile> stock_files(StockKind kind);

/// What a `--topology` (or scenario, sweep, trace) argument names: the file
/// itself when one exists at that path (a file wins), else the stock file of
/// that name ("hgx-h100" or "hgx-h100.json"). A bare name that is neither is
/// a ConfigError at `flag` listing the stock names; anything with a folder
/// in it is returned unchanged, for the loader's own "cannot open" error.
std::string resolve_stock(StockKind kind, const std::string& argument, const std::string& flag);

}  // namespace fabsim::core
