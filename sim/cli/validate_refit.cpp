#include "sim/cli/validate_refit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "sim/calibration/measurements.hpp"
#include "sim/cli/calibrate_command.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/scratch_folder.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// The parameters `fabsim calibrate --fit latencies` refits for a GPU model.
bool refittable(const std::string& path, const std::string& gpu_model) {
  const std::string base = "gpus/" + gpu_model + "/";
  return path == base + "launch_overhead" || path == base + "reduce_overhead" || path == base + "protocols/ll/step_latency";
}

}  // namespace

std::vector<std::string> relevant_fitted(const calibration::SampleBook& book, const DatasetPlan& plan) {
  std::vector<std::string> out;
  for (const auto& path : book.fitted_on(plan.id))
    if (!starts_with(path, "gpus/") || starts_with(path, "gpus/" + plan.gpu_model + "/")) out.push_back(path);
  return out;
}

json refit_in_sample(const std::vector<DatasetPlan>& plans, const calibration::SampleBook& book, const json& doc,
                     const ValidateOptions& options, std::vector<calibration::ErrorRow>& rows) {
  const core::ScratchFolder scratch("fabsim-validate-refit");
  const fs::path& work = scratch.path();

  // Runs in order of first appearance, each with its runnable in-sample data sets.
  std::vector<std::string> runs;
  for (const auto& p : plans)
    if (!relevant_fitted(book, p).empty() && std::find(runs.begin(), runs.end(), book.run_of(p.id)) == runs.end())
      runs.push_back(book.run_of(p.id));

  json report = json::array();
  for (const auto& run : runs) {
    std::vector<const DatasetPlan*> members;
    std::set<std::string> fitted;
    for (const auto& p : plans)
      if (book.run_of(p.id) == run) {
        members.push_back(&p);
        for (const auto& path : relevant_fitted(book, p)) fitted.insert(path);
      }
    const std::string& model = members.front()->gpu_model;
    const auto run_ids = book.run_members(run);
    std::set<std::string> pool;  // what the refittable parameters were fitted on, less this run
    std::vector<std::string> refitted, still;
    for (const auto& path : fitted) {
      if (!refittable(path, model)) {
        still.push_back(path);
        continue;
      }
      refitted.push_back(path);
      for (const auto& param : book.parameters())
        if (param.path == path)
          for (const auto& id : param.datasets)
            if (std::find(run_ids.begin(), run_ids.end(), id) == run_ids.end()) pool.insert(id);
    }
    json entry = {{"run", run}, {"datasets", json::array()}, {"refitted", json::array()}, {"refitted_on", pool},
                  {"still_in_sample", still}, {"rows", json::array()}};
    for (const auto* m : members) entry["datasets"].push_back(m->id);
    if (refitted.empty() || pool.empty()) {
      entry["still_in_sample"] = fitted;
      entry["note"] = "nothing to refit without this run: its parameters were fitted on it alone";
      report.push_back(std::move(entry));
      continue;
    }
    entry["refitted"] = refitted;

    json subset = doc;
    subset["collective_datasets"] = json::array();
    subset["point_to_point_datasets"] = json::array();
    for (const auto& ds : doc["collective_datasets"])
      if (ds.is_object() && ds.contains("id") && pool.count(ds["id"].get<std::string>())) subset["collective_datasets"].push_back(ds);
    const fs::path data = work / fmt::format("without-{}.json", report.size());
    const fs::path profile = work / fmt::format("profile-{}.json", report.size());
    core::write_file_atomically(data.string(), subset.dump() + "\n");
    CalibrateOptions calibrate;
    calibrate.measurements = {data.string()};
    calibrate.topology_dir = options.topology_dir;
    calibrate.output = profile.string();
    calibrate.self = options.self;
    calibrate.latencies_only = true;
    std::ostringstream ignored;
    run_calibrate(calibrate, ignored);

    std::set<std::string> seen;
    for (const auto* m : members) {
      const auto predicted = predict_dataset(*m, options, profile.string());
      const json& ds = *m->dataset;
      for (const auto* r : m->rows) {
        const auto bytes = (*r)["bytes"].get<std::uint64_t>();
        const auto it = predicted.find(bytes);
        if (it == predicted.end()) continue;
        const double measured = (*r)["time_us"].get<double>();
        const double error = (it->second["time_us"].get<double>() - measured) / measured;
        const bool counted = calibration::disagreeing_timings(*r).empty() && seen.insert(fmt::format("{}|{}|{}|{}", ds["collective"].get<std::string>(), ds["gpus"].get<int>(), m->algorithm, bytes)).second;
        entry["rows"].push_back({{"dataset", m->id}, {"bytes", bytes}, {"measured_us", measured}, {"predicted_us", it->second["time_us"]},
                                 {"error", std::round(error * 1e4) / 1e4}, {"counted", counted}});
        if (counted)
          rows.push_back({m->id, bytes, error, !still.empty(), false, calibration::gpu_family(ds.value("gpu", ""))});
      }
    }
    report.push_back(std::move(entry));
  }
  return report;
}

}  // namespace fabsim::cli
