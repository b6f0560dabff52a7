#include "sim/cli/sweep_command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/cli/fault_options.hpp"
#include "sim/cli/mpi_world.hpp"
#include "sim/core/text.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/scratch_folder.hpp"
#include "sim/report/run_provenance.hpp"

extern char** environ;

namespace fabsim::cli {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Point {
  std::vector<json> values;  ///< one per axis
  fs::path scenario, output, errors;
  int exit_code = -1;
  json result;        ///< the point's JSON report, when it ran
  std::string error;  ///< its first error line, when it failed
};

/// `path` as named in `base_file`, made absolute so that points can live anywhere.
std::string absolute_from(const std::string& base_file, const std::string& path) {
  return fs::absolute(core::resolve_relative(base_file, path)).lexically_normal().string();
}

std::string cell(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

using core::csv_escape;

/// Starts `self run SCENARIO --format json` with stdout and stderr in files.
pid_t spawn_point(const std::string& self, const Point& p) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, p.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, p.errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string run = "run", scenario = p.scenario.string(), format = "--format", json_format = "json";
  char* argv[] = {const_cast<char*>(self.c_str()), run.data(), scenario.data(), format.data(), json_format.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw core::SimulationError("cannot start " + self);
  return pid;
}

std::string first_error(const fs::path& errors) {
  std::ifstream in(errors);
  std::string line, first;
  while (std::getline(in, line)) {
    if (line.rfind("error", 0) == 0) return line;
    if (first.empty()) first = line;
  }
  return first.empty() ? "failed without a message" : first;
}

}  // namespace

namespace {

/// Points of one sweep, and processes at a time: far above any real use.
constexpr std::size_t kMaxPoints = 100'000;
constexpr int kMaxJobs = 256;

/// "/workload/gpus": a valid, non-empty JSON pointer (the whole scenario
/// cannot be an axis).
bool is_json_pointer_to_member(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  try {
    (void)json::json_pointer(path);
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

}  // namespace

SweepDefinition load_sweep(const std::string& path, const std::string& calibration) {
  const json doc = core::read_json_file(path);
  core::Diagnostics diag(path);
  core::JsonObject root(doc, "", diag);
  root.expect_format("fabsim-sweep/1");
  root.string("description", false);
  const auto base_path = root.string("base");
  std::vector<Axis> axes;
  if (const json* list = root.child("axes", json::value_t::array)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      core::JsonObject a((*list)[i], fmt::format("/axes/{}", i), diag);
      Axis axis;
      axis.path = a.string("path").value_or("");
      if (const json* values = a.child("values", json::value_t::array)) axis.values.assign(values->begin(), values->end());
      a.reject_unknown_keys();
      if (axis.values.empty()) diag.error(a.path_of("values"), "expected at least one value");
      if (a.has("path") && !is_json_pointer_to_member(axis.path))
        diag.error(a.path_of("path"), fmt::format("'{}' is not a JSON pointer to a member (expected e.g. \"/workload/gpus\")", axis.path));
      for (std::size_t e = 0; e < axes.size(); ++e)
        if (!axis.path.empty() && axes[e].path == axis.path)
          diag.error(a.path_of("path"), fmt::format("'{}' is already the path of axis {} (each setting may be swept once)", axis.path, e));
      axes.push_back(std::move(axis));
    }
  }
  root.reject_unknown_keys();
  std::size_t total = 1;
  for (const auto& a : axes) total = std::min(total * std::max<std::size_t>(1, a.values.size()), kMaxPoints + 1);
  if (total > kMaxPoints) diag.error("/axes", fmt::format("the axes make more than {} points (split the sweep)", kMaxPoints));
  diag.throw_if_any();
  // The base scenario, with its relative paths made absolute so points can live anywhere.
  const std::string base_file = absolute_from(path, *base_path);
  if (const auto why = core::unreadable_reference(base_file, "the sweep file")) throw core::ConfigError(path, "/base", *why);
  json base = core::read_json_file(base_file);
  if (!base.is_object()) throw core::ConfigError(base_file, "/", "expected a scenario object (fabsim-scenario/1)");
  for (const char* key : {"topology", "hardware", "calibration"})
    if (base.contains(key) && base[key].is_string()) base[key] = absolute_from(base_file, base[key].get<std::string>());
  if (!calibration.empty()) base["calibration"] = fs::absolute(calibration).lexically_normal().string();
  // A faults axis needs no "faults" in the base: a healthy base has none.
  for (const auto& a : axes)
    if (a.path == "/faults" && !base.contains("faults")) base["faults"] = json::array();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    try {
      (void)base.at(json::json_pointer(axes[i].path));
    } catch (const json::exception&) {
      throw core::ConfigError(path, fmt::format("/axes/{}/path", i),
                              fmt::format("'{}' names nothing in the base scenario {}", axes[i].path, base_file));
    }
  }

  return {std::move(axes), base_file, std::move(base)};
}

int run_sweep(const SweepOptions& options, std::ostream& out) {
  const auto [axes, base_file, base] = load_sweep(options.sweep, options.calibration);
  (void)parse_fault_flags(options.faults, options.fault_detection);  // refused here, once, rather than at every point
  if (options.jobs < 1 || options.jobs > kMaxJobs)
    throw core::ConfigError("command line", "-j", fmt::format("expected 1 to {} processes at a time, found {}", kMaxJobs, options.jobs));
  if (!options.out_dir.empty()) {
    std::error_code ec;
    if (fs::exists(options.out_dir, ec) && !fs::is_directory(options.out_dir, ec))
      throw core::ConfigError("command line", "-o", fmt::format("'{}' exists and is not a directory (expected a directory for "
                                                                "sweep.csv, sweep.json and the points)", options.out_dir));
    fs::create_directories(options.out_dir, ec);
    if (ec) throw core::ConfigError("command line", "-o", fmt::format("cannot create the directory '{}': {}", options.out_dir, ec.message()));
    core::check_output_path("-o", (fs::path(options.out_dir) / "sweep.csv").string(), {options.sweep});
  }


  // Without -o the points live in a scratch folder that goes when the sweep ends, however it ends.
  std::optional<core::ScratchFolder> scratch;
  if (options.out_dir.empty()) scratch.emplace("fabsim-sweep");
  const fs::path work = scratch ? scratch->path() : fs::path(options.out_dir);
  {
    std::error_code ec;
    fs::create_directories(work / "points", ec);
    if (ec) throw core::ConfigError("command line", "-o", fmt::format("cannot create '{}': {}", (work / "points").string(), ec.message()));
  }
  std::vector<Point> points;
  std::size_t total = 1;
  for (const auto& a : axes) total *= a.values.size();  // at most kMaxPoints: load_sweep checked
  for (std::size_t k = 0; k < total; ++k) {
    Point p;
    json scenario = base;
    std::size_t rest = k;
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) p.values.insert(p.values.begin(), it->values[rest % it->values.size()]), rest /= it->values.size();
    for (std::size_t i = 0; i < axes.size(); ++i) {
      json value = p.values[i];
      if ((axes[i].path == "/topology" || axes[i].path == "/hardware") && value.is_string())
        value = absolute_from(options.sweep, value.get<std::string>());
      if (axes[i].path == "/faults" && value.is_string()) value = json::array({value});  // one fault per point
      if (axes[i].path == "/faults" && value.is_null()) value = json::array();          // the healthy point
      scenario[json::json_pointer(axes[i].path)] = value;
    }
    // --fault holds at every point, on top of the scenario's and the axis's.
    if (!options.faults.empty()) {
      if (!scenario.contains("faults") || !scenario["faults"].is_array()) scenario["faults"] = json::array();
      for (const auto& f : options.faults) scenario["faults"].push_back(f);
    }
    if (!options.fault_detection.empty()) scenario["fault_detection"] = options.fault_detection;
    scenario["output"] = {{"format", "json"}, {"links", false}};
    p.scenario = work / "points" / fmt::format("point-{:04}.json", k);
    p.output = work / "points" / fmt::format("point-{:04}.out.json", k);
    p.errors = work / "points" / fmt::format("point-{:04}.err.txt", k);
    core::write_file_atomically(p.scenario.string(), scenario.dump(1) + "\n");
    points.push_back(std::move(p));
  }

  // This process's share: every point under one process, or every size-th
  // point under mpirun, N processes at a time.
  const MpiWorld world;
  std::vector<std::size_t> mine;
  for (std::size_t k = static_cast<std::size_t>(world.rank()); k < points.size(); k += static_cast<std::size_t>(world.size()))
    mine.push_back(k);
  const bool progress = ::isatty(STDERR_FILENO) != 0 && world.rank() == 0;
  const auto started = std::chrono::steady_clock::now();
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, done = 0, failed = 0;
  while (done < mine.size()) {
    while (next < mine.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      running[spawn_point(options.self, points[mine[next]])] = mine[next];
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) throw core::SimulationError("lost track of the sweep's processes");
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    Point& p = points[it->second];
    p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (p.exit_code != 0) {
      ++failed;
      // Name the point file without its work folder, which differs between runs.
      p.error = first_error(p.errors);
      if (const auto at = p.error.find(p.scenario.string()); at != std::string::npos)
        p.error.replace(at, p.scenario.string().size(), p.scenario.filename().string());
    } else {
      p.result = json::parse(std::ifstream(p.output));
    }
    running.erase(it);
    ++done;
    if (progress) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double left = elapsed / static_cast<double>(done) * static_cast<double>(mine.size() - done);
      fmt::print(std::cerr, "\rsweep: {}/{} points, {} failed, about {:.0f} s left   ", done, mine.size(), failed, left);
    }
  }
  if (progress) fmt::print(std::cerr, "\n");

  // Gather every rank's points on rank 0, which alone writes the output.
  json share = json::array();
  for (std::size_t k : mine) share.push_back({{"k", k}, {"exit_code", points[k].exit_code}, {"error", points[k].error}, {"result", points[k].result}});
  const auto shares = world.gather(share.dump());
  if (world.rank() != 0) return 0;
  failed = 0;
  for (const auto& text : shares)
    for (const auto& entry : json::parse(text)) {
      Point& p = points[entry["k"].get<std::size_t>()];
      p.exit_code = entry["exit_code"].get<int>();
      p.error = entry["error"].get<std::string>();
      p.result = entry["result"];
      if (p.exit_code != 0) ++failed;
    }
  if (world.size() > 1) fmt::print(std::cerr, "sweep: {} points over {} MPI ranks\n", points.size(), world.size());

  // Collect: one CSV line per point and size; a failed point is one line with its error.
  // Each point's own meta (in sweep.json) names the catalogue it ran with: an axis may change it.
  const report::RunProvenance provenance{options.command_line, "", options.calibration};
  // The rows first: a point's warnings (meta.warnings: a known gap, an unread
  // NCCL release) go above the header, as nccl-test's CSV has them.
  std::ostringstream csv, body;
  std::vector<std::string> warnings;
  const json provenance_meta = {{"provenance", report::provenance_json(provenance)}};
  json report = {{"sweep", options.sweep},
                 {"base", base_file},
                 {"meta", provenance_meta},
                 {"axes", json::array()},
                 {"points", json::array()}};
  for (const auto& a : axes) report["axes"].push_back({{"path", a.path}, {"values", a.values}});
  for (std::size_t k = 0; k < points.size(); ++k) {
    const Point& p = points[k];
    std::string prefix = std::to_string(k);
    json values = json::object();
    for (std::size_t i = 0; i < axes.size(); ++i) {
      prefix.push_back(',');
      prefix += csv_escape(cell(p.values[i]));
      values[axes[i].path] = p.values[i];
    }
    if (p.exit_code != 0) {
      body << prefix << ",,,,,,,,failed," << csv_escape(p.error) << '\n';
      report["points"].push_back({{"values", values}, {"status", "failed"}, {"exit_code", p.exit_code}, {"error", p.error}});
      continue;
    }
    const json& result = p.result;
    if (const auto meta = result.find("meta"); meta != result.end() && meta->contains("warnings"))
      for (const auto& w : meta->at("warnings")) warnings.push_back(fmt::format("point {}: {}", k, w.get<std::string>()));
    for (const auto& r : result["rows"])
      body << prefix << ',' << r["bytes"].dump() << ',' << r["time_us"].dump() << ',' << r["algbw_GBps"].dump() << ','
          << r["busbw_GBps"].dump() << ',' << r["algorithm"].get<std::string>() << ',' << r["protocol"].get<std::string>() << ','
          << r["channels"].dump() << ",ok,\n";
    report["points"].push_back({{"values", values}, {"status", "ok"}, {"rows", result["rows"]}, {"meta", result["meta"]}});
  }
  report::write_csv_provenance(csv, provenance);
  for (const auto& w : warnings) csv << "# warning: " << w << '\n';
  csv << "point";
  for (const auto& a : axes) csv << ',' << csv_escape(a.path);
  csv << ",bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,status,error\n" << body.str();
  if (options.out_dir.empty()) {
    out << csv.str();
  } else {
    core::write_file_atomically((work / "sweep.csv").string(), csv.str());
    core::write_file_atomically((work / "sweep.json").string(), report.dump(1) + "\n");
    fmt::print(std::cerr, "sweep: {} points ({} failed); wrote {} and {}\n", points.size(), failed,
               (work / "sweep.csv").string(), (work / "sweep.json").string());
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace fabsim::cli
