#include "sim/cli/regress_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <fstream>
#include <ostream>

#include "sim/cli/child_run.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/output_file.hpp"
#include "sim/report/run_provenance.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;

/// What made a run's figures, from its JSON meta: version, commit and catalogue hash.
json recorded_with(const json& run) {
  const json& p = run["meta"]["provenance"];
  return {{"fabsim_version", p["fabsim_version"]},
          {"fabsim_commit", p["fabsim_commit"]},
          {"catalogue_sha256", p.contains("catalogue") ? p["catalogue"]["sha256"] : json("")}};
}

/// "recorded by fabsim 0.1.0 (commit X), ..." when the baseline's figures came from
/// another fabsim version or catalogue than `now`; empty when the same.
std::string provenance_difference(const json& entry, const json& now) {
  if (!entry.contains("recorded_with")) return "was recorded without provenance (before fabsim 0.1.0 recorded it)";
  const json& then = entry["recorded_with"];
  std::vector<std::string> differences;
  const auto field = [&](const char* key) { return then.contains(key) ? then[key].get<std::string>() : std::string("?"); };
  // Not the commit alone: every commit has its own, and catching what a commit moved is what regress is for.
  if (field("fabsim_version") != now["fabsim_version"])
    differences.push_back(fmt::format("by fabsim {} (commit {}), this is {} (commit {})", field("fabsim_version"), field("fabsim_commit"),
                                      now["fabsim_version"].get<std::string>(), now["fabsim_commit"].get<std::string>()));
  if (field("catalogue_sha256") != now["catalogue_sha256"])
    differences.push_back(fmt::format("with catalogue sha256 {}, now {}", field("catalogue_sha256").substr(0, 12),
                                      now["catalogue_sha256"].get<std::string>().substr(0, 12)));
  if (differences.empty()) return "";
  std::string text = "was recorded ";
  for (std::size_t i = 0; i < differences.size(); ++i) text += (i ? "; " : "") + differences[i];
  return text;
}

}  // namespace

Baseline load_baseline(const std::string& path) {
  json doc = core::read_json_file(path);
  core::Diagnostics diag(path);
  core::JsonObject root(doc, "", diag);
  root.expect_format("fabsim-baseline/1");
  root.string("description", false);
  root.child("meta", json::value_t::object, false);  // who recorded it (regress --update); informative only
  const json* scenarios = root.child("scenarios", json::value_t::array);
  root.reject_unknown_keys();
  std::vector<Tolerance> tolerances;
  if (scenarios != nullptr) {
    for (std::size_t i = 0; i < scenarios->size(); ++i) {
      core::JsonObject s((*scenarios)[i], fmt::format("/scenarios/{}", i), diag);
      s.string("scenario");
      if (const json* with = s.child("recorded_with", json::value_t::object, false)) {
        core::JsonObject w(*with, s.path_of("recorded_with"), diag);
        for (const char* key : {"fabsim_version", "fabsim_commit", "catalogue_sha256"}) w.string(key, false);
        w.reject_unknown_keys();
      }
      if (const json* rows = s.child("rows", json::value_t::array, false)) {
        for (std::size_t k = 0; k < rows->size(); ++k) {
          core::JsonObject r((*rows)[k], fmt::format("{}/{}", s.path_of("rows"), k), diag);
          r.integer("bytes", true, 0, core::kMaxBytes);
          for (const char* key : {"time_us", "busbw_GBps"})
            if (const auto v = r.number(key); v && *v < 0) diag.error(r.path_of(key), fmt::format("expected a figure >= 0, found {}", *v));
          r.string("algorithm");
          r.string("protocol");
          r.reject_unknown_keys();
        }
      }
      Tolerance t;
      if (const json* tol = s.child("tolerance", json::value_t::object, false)) {
        core::JsonObject to(*tol, s.path_of("tolerance"), diag);
        t.time = to.number("time_us", false).value_or(t.time);
        t.busbw = to.number("busbw_GBps", false).value_or(t.busbw);
        for (const auto& [key, value] : {std::pair{"time_us", t.time}, std::pair{"busbw_GBps", t.busbw}})
          if (value < 0 || value > 10)
            diag.error(to.path_of(key), fmt::format("expected a relative tolerance from 0 to 10 (0.005 = 0.5%), found {}", value));
        to.reject_unknown_keys();
      }
      s.reject_unknown_keys();
      tolerances.push_back(t);
    }
  }
  diag.throw_if_any();
  return {std::move(doc), std::move(tolerances)};
}

int run_regress(const RegressOptions& options, std::ostream& out) {
  Baseline baseline = load_baseline(options.baseline);
  json& doc = baseline.doc;
  const auto& tolerances = baseline.tolerances;
  const json* scenarios = &doc["scenarios"];
  if (options.update) core::check_output_path("--update", options.baseline);

  int moved = 0, checked = 0;
  fmt::print(out, "{:<40} {:>12} {:>12} {:>12} {:>8} {:>10} {:>10} {:>8}  {}\n", "scenario", "bytes", "base us", "now us",
             "time", "base busbw", "now busbw", "busbw", "status");
  for (std::size_t i = 0; i < scenarios->size(); ++i) {
    json& entry = doc["scenarios"][i];
    const std::string scenario = entry["scenario"].get<std::string>();
    const std::string scenario_file = core::resolve_relative(options.baseline, scenario);
    if (const auto why = core::unreadable_reference(scenario_file, "the baseline"))
      throw core::ConfigError(options.baseline, fmt::format("/scenarios/{}/scenario", i), *why);
    const json now = run_json_child(options.self, {"run", scenario_file, "--format", "json"}, {options.baseline, fmt::format("/scenarios/{}", i)});
    if (options.update) {
      entry["recorded_with"] = recorded_with(now);
      entry["rows"] = json::array();
      for (const auto& r : now["rows"])
        entry["rows"].push_back({{"bytes", r["bytes"]}, {"time_us", r["time_us"]}, {"busbw_GBps", r["busbw_GBps"]},
                                 {"algorithm", r["algorithm"]}, {"protocol", r["protocol"]}});
      fmt::print(out, "{:<40} recorded {} rows\n", scenario, now["rows"].size());
      continue;
    }
    // A baseline from another build or catalogue is still checked, but the reader is told:
    // a moved figure may be that difference, not the change under review.
    if (const auto why = provenance_difference(entry, recorded_with(now)); !why.empty())
      fmt::print(out, "{:<40} note: the baseline {}\n", scenario, why);
    std::map<std::uint64_t, const json*> current;
    for (const auto& r : now["rows"]) current[r["bytes"].get<std::uint64_t>()] = &r;
    const json empty = json::array();
    const json& recorded = entry.contains("rows") ? entry["rows"] : empty;
    if (recorded.empty()) {
      fmt::print(out, "{:<40} no recorded rows: run with --update\n", scenario);
      ++moved;
    }
    for (const auto& base : recorded) {
      ++checked;
      const auto bytes = base["bytes"].get<std::uint64_t>();
      const auto it = current.find(bytes);
      if (it == current.end()) {
        fmt::print(out, "{:<40} {:>12} size no longer simulated  MOVED\n", scenario, bytes);
        ++moved;
        continue;
      }
      const json& r = *it->second;
      const double t0 = base["time_us"].get<double>(), t1 = r["time_us"].get<double>();
      const double b0 = base["busbw_GBps"].get<double>(), b1 = r["busbw_GBps"].get<double>();
      const double dt = t0 > 0 ? (t1 - t0) / t0 : 0.0, db = b0 > 0 ? (b1 - b0) / b0 : 0.0;
      const bool choice_moved = base["algorithm"] != r["algorithm"] || base["protocol"] != r["protocol"];
      const bool out_of_tolerance = std::abs(dt) > tolerances[i].time || std::abs(db) > tolerances[i].busbw || choice_moved;
      if (!out_of_tolerance) continue;
      ++moved;
      fmt::print(out, "{:<40} {:>12} {:>12.2f} {:>12.2f} {:>+7.2f}% {:>10.2f} {:>10.2f} {:>+7.2f}%  MOVED{}\n", scenario, bytes,
                 t0, t1, 100 * dt, b0, b1, 100 * db,
                 choice_moved ? fmt::format(" ({}/{} -> {}/{})", base["algorithm"].get<std::string>(),
                                            base["protocol"].get<std::string>(), r["algorithm"].get<std::string>(),
                                            r["protocol"].get<std::string>())
                              : "");
    }
  }
  if (options.update) {
    doc["meta"] = {{"provenance", report::provenance_json({options.command_line, "", ""})}};
    core::write_file_atomically(options.baseline, doc.dump(1) + "\n");
    fmt::print(out, "wrote {}\n", options.baseline);
    return 0;
  }
  fmt::print(out, "{} of {} recorded figures moved beyond tolerance{}\n", moved, checked,
             moved ? ": review the change, then run with --update" : "");
  return moved ? 1 : 0;
}

}  // namespace fabsim::cli
