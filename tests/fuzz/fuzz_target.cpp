// One libFuzzer entry point per loader, chosen at build time
// (FABSIM_FUZZ_TARGET): the fuzzer hands it bytes, it hands them to the loader
// as a user's file would, and only the documented failure, a ConfigError, may
// come back. Anything else (a crash, another exception, a sanitizer report, a
// leak, a hang) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/calibration/measurements.hpp"
#include "sim/cli/regress_command.hpp"
#include "sim/cli/simulation_request.hpp"
#include "sim/cli/sweep_command.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/cli/validate_figures.hpp"
#include "sim/cli/validate_plan.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/text.hpp"
#include "sim/core/units.hpp"
#include "topologies/faults.hpp"
#include "topologies/hardware_catalogue.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/import/importers.hpp"
#include "traces/replay/trace_loader.hpp"

namespace {

/// The input as a file, for loaders that take a path (one per process, reused).
std::string as_file(const std::string& text, const char* suffix) {
  static const std::string path = "/tmp/fabsim-fuzz-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

/// The input as configs/FOLDER/input.json beside a link to the stock
/// scenarios, so that the relative paths of sweeps and baselines resolve.
std::string as_config_file(const std::string& text, const char* folder) {
  static const std::string root = "/tmp/fabsim-fuzz-configs-" + std::to_string(::getpid());
  static const bool made = [] {
    std::filesystem::create_directories(root + "/sweeps");
    std::filesystem::create_directories(root + "/regress");
    std::error_code ignored;
    std::filesystem::create_directory_symlink(std::string(FABSIM_SOURCE_DIR) + "/configs/scenarios", root + "/scenarios", ignored);
    return true;
  }();
  (void)made;
  const std::string path = root + "/" + folder + "/input.json";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

void run(const std::string& text) {
  using namespace fabsim;
  const std::string target = FABSIM_FUZZ_TARGET;
  if (target == "json") {
    (void)core::parse_json_text(text, "fuzz");
  } else if (target == "topology") {
    (void)topo::load_topology(as_file(text, ".json"));
  } else if (target == "catalogue") {
    (void)topo::load_hardware_catalogue(as_file(text, ".json"));
  } else if (target == "scenario") {
    (void)cli::load_scenario(as_file(text, ".json"));
  } else if (target == "calibration_profile") {
    (void)cli::calibration_patch(as_file(text, ".json"));
  } else if (target == "trace") {
    // Loaded, then run with replay's blocking semantics (bounded: a fuzzed repeat count can ask for millions).
    (void)traces::check_trace_completes(traces::parse_trace(core::parse_json_text(text, "fuzz"), "fuzz"), 100'000);
  } else if (target == "measurements") {
    const std::string path = as_file(text, ".json");
    // validate's reading of the same file first (it plans without simulating), then calibrate's.
    cli::ValidateOptions options;
    options.measurements = path;
    options.topology_dir = std::string(FABSIM_SOURCE_DIR) + "/topologies";
    const auto doc = core::read_json_file(path);
    auto skipped = nlohmann::json::array();
    (void)cli::plan_datasets(doc, options, skipped);
    (void)cli::plan_reported_figures(doc, options, skipped);
    (void)calibration::load_measurements(path);
  } else if (target == "nccl_tests_text") {
    (void)calibration::parse_nccl_tests_text(text, "fuzz");
  } else if (target == "nccl_log") {
    (void)traces::import_trace("nccl-log", {as_file(text, ".log")}).build();
  } else if (target == "kineto") {
    (void)traces::import_trace("kineto", {as_file(text, ".json")}).build();
  } else if (target == "chakra") {
    (void)traces::import_trace("chakra", {as_file(text, ".json")}).build();
  } else if (target == "sweep") {
    (void)cli::load_sweep(as_config_file(text, "sweeps"), "");
  } else if (target == "baseline") {
    (void)cli::load_baseline(as_config_file(text, "regress"));
  } else if (target == "cli_values") {
    std::string why;
    (void)core::parse_size_flag(text);
    for (auto kind : {core::QuantityKind::kBytes, core::QuantityKind::kTime, core::QuantityKind::kBandwidth})
      (void)core::parse_quantity(text, kind, why);
    (void)core::parse_integer<int>(text);
    (void)core::parse_finite(text);
    // A --fault value: parsed, resolved against two HGX nodes, applied and checked for reachability.
    const auto fault = topo::parse_fault(text, "fuzz", "--fault");
    static const topo::TopologySpec two_nodes = topo::load_topology(std::string(FABSIM_SOURCE_DIR) + "/topologies/hgx-h100-2node.json");
    auto spec = two_nodes;
    const auto resolved = topo::resolve_faults(spec, {fault}, "fuzz");
    (void)topo::apply_faults_from_start(spec, resolved);
    std::vector<int> ranks(spec.gpus.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
    topo::check_reachable_under_faults(spec, resolved, ranks, "fuzz");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const fabsim::core::ConfigError&) {
    // The documented answer to a bad input.
  }
  return 0;
}

// libsystemc.so needs the symbol; libFuzzer's main runs instead.
int sc_main(int, char**) { return 0; }
