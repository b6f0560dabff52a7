#include "sim/cli/validate_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/measurements.hpp"
#include "sim/calibration/provenance.hpp"
#include "sim/calibration/target_checks.hpp"
#include "sim/cli/simulation_request.hpp"
#include "sim/cli/validate_figures.hpp"
#include "sim/cli/validate_launch.hpp"
#include "sim/cli/validate_plan.hpp"
#include "sim/cli/validate_refit.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "topologies/hardware_catalogue.hpp"

namespace fabsim::cli {

namespace {

using calibration::ErrorGroup;
using calibration::ErrorRow;
using nlohmann::json;

std::string sample_name(bool in_sample) { return in_sample ? "in-sample" : "out-of-sample"; }
std::string scope_name(bool multi_node) { return multi_node ? "multi-node" : "single node"; }

json group_json(const ErrorGroup& g) {
  return {{"sample", sample_name(g.in_sample)}, {"scope", scope_name(g.multi_node)}, {"gpu", g.family},
          {"regime", calibration::regime_name(g.regime)}, {"sizes", g.sizes}, {"median_error", g.median_error},
          {"worst_error", g.worst_error}, {"worst_at", g.worst_at}, {"within_10_percent", g.within_target}};
}

void print_groups(std::ostream& out, const std::vector<ErrorGroup>& groups, const char* in_label, const char* out_label) {
  fmt::print(out, "{:<15} {:<12} {:<6} {:<16} {:>5} {:>7} {:>7} {:>8}  {}\n", "sample", "nodes", "GPU", "regime", "sizes", "median", "worst",
             "<= 10%", "worst at");
  for (const auto& g : groups)
    fmt::print(out, "{:<15} {:<12} {:<6} {:<16} {:>5} {:>6.1f}% {:>6.1f}% {:>8}  {}\n", g.in_sample ? in_label : out_label,
               scope_name(g.multi_node), g.family, calibration::regime_name(g.regime), g.sizes, 100 * g.median_error,
               100 * g.worst_error, fmt::format("{}/{}", g.within_target, g.sizes), g.worst_at);
}

/// Issue 15's targets per data set, out-of-sample first, and how many are met.
void print_target_checks(std::ostream& out, const std::vector<calibration::TargetCheck>& checks) {
  fmt::print(out, "issue 15's targets per data set (median |error| of its counted rows in the range; across nodes 10% from 1 KiB,\n"
                  "in one node 10% below 1 MiB, everywhere 5% from 64 MiB):\n");
  for (const bool in_sample : {false, true}) {
    std::size_t met = 0, total = 0;
    for (const auto& c : checks) {
      if (c.in_sample != in_sample) continue;
      ++total;
      met += c.met() ? 1 : 0;
      fmt::print(out, "  {:<15} {:<60} {:<12} {:>3} size{:<1}  median {:>5.1f}%  target {:>3.0f}%  {}\n", sample_name(in_sample), c.dataset,
                 c.range, c.sizes, c.sizes == 1 ? "" : "s", 100 * c.median_error, 100 * c.target, c.met() ? "met" : "not met");
    }
    fmt::print(out, "  {}: {} of {} met\n", sample_name(in_sample), met, total);
  }
}

/// The out-of-sample median of one regime over every GPU family and scope.
std::optional<double> out_of_sample_median(const std::vector<ErrorRow>& rows, calibration::Regime regime) {
  std::vector<double> errors;
  for (const auto& r : rows)
    if (!r.in_sample && calibration::regime_of(r.bytes) == regime) errors.push_back(std::abs(r.error));
  if (errors.empty()) return std::nullopt;
  return calibration::median(errors);
}

/// The catalogue the predictions run on, with the profile's patch merged in.
json effective_catalogue(const ValidateOptions& options) {
  json catalogue = core::read_json_file(topo::default_catalogue_path());
  if (!options.calibration.empty()) catalogue.merge_patch(calibration_patch(options.calibration));
  return catalogue;
}

/// Which fidelity the children ran at, as the report says it.
std::string fidelity_of(const ValidateOptions& options) {
  return options.extrapolate ? "nccl-test --extrapolate-above auto (across nodes the segment level, rows above 256 MiB extrapolated)"
                             : "nccl-test --model auto (the segment level where a sweep fits its budget, else the flow level)";
}

}  // namespace

int run_validate(const ValidateOptions& options, std::ostream& out) {
  if (!options.calibration.empty()) (void)calibration_patch(options.calibration);  // a bad profile is its own error
  if (options.refit && !options.calibration.empty())
    throw core::ConfigError("command line", "--refit", "cannot be combined with --calibration: the refit replaces the fitted values itself");
  const json doc = core::read_json_file(options.measurements);
  json report = {{"datasets", json::array()}, {"skipped", json::array()}, {"left_out_rows", json::array()}};
  const auto plans = plan_datasets(doc, options, report["skipped"]);
  const calibration::SampleBook book(doc, calibration::fitted_parameters(effective_catalogue(options)));

  // A bound on a regime without held-out rows could never say anything: refuse it before simulating.
  for (const auto& [bound, regime, flag] : {std::tuple{options.max_latency_error, calibration::Regime::kLatency, "--max-latency-error"},
                                            std::tuple{options.max_bandwidth_error, calibration::Regime::kBandwidth, "--max-bandwidth-error"}}) {
    if (bound <= 0) continue;
    const calibration::Regime wanted = regime;  // clang 14 cannot capture a structured binding
    const bool any = std::any_of(plans.begin(), plans.end(), [&](const DatasetPlan& p) {
      return relevant_fitted(book, p).empty() && std::any_of(p.rows.begin(), p.rows.end(), [&](const json* r) {
               return calibration::regime_of((*r)["bytes"].get<std::uint64_t>()) == wanted;
             });
    });
    if (!any)
      throw core::ConfigError("command line", flag,
                              fmt::format("{} has no out-of-sample {} rows: there is nothing to bound (in-sample rows are not accuracy)",
                                          options.measurements, calibration::regime_name(regime)));
  }

  std::vector<ErrorRow> counted;
  std::set<std::string> seen;  // run|collective|gpus|algorithm|bytes: a repeat of one run counts once
  for (const auto& plan : plans) {
    const json& ds = *plan.dataset;
    const auto predicted = predict_dataset(plan, options, options.calibration);
    const auto fitted = relevant_fitted(book, plan);
    const bool in_sample = !fitted.empty();
    const bool multi_node = ds.value("nodes", 1) > 1;
    json entry = {{"id", plan.id}, {"gpus", ds["gpus"]}, {"collective", ds["collective"]}, {"algorithm", plan.algorithm},
                  {"run", book.run_of(plan.id)}, {"nccl_tuner", plan.nccl_tuner},
                  {"gpus_per_process", plan.gpus_per_process ? json(*plan.gpus_per_process) : json(nullptr)}, {"sample", sample_name(in_sample)}, {"fitted_parameters", fitted}, {"rows", json::array()}};
    if (!options.json) {
      fmt::print(out, "\n{} ({} GPUs, {}, measured: {})\n", plan.id, ds["gpus"].get<int>(), ds["collective"].get<std::string>(),
                 ds.contains("algorithm") && ds["algorithm"].is_string() ? ds["algorithm"].get<std::string>() : "not recorded");
      fmt::print(out, "run {}; {}\n", book.run_of(plan.id),
                 in_sample ? fmt::format("in-sample: fitted {}", fmt::join(fitted, ", ")) : "out-of-sample: no parameter was fitted on this run");
      fmt::print(out, "NCCL tuner: {}; launch: {}\n", plan.nccl_tuner, launch_description(plan.gpus_per_process));
      fmt::print(out, "{:>12} {:>10} {:>10} {:>11} {:>11} {:>8}  {}\n", "bytes", "meas us", "pred us", "meas busbw", "pred busbw",
                 "error", "algorithm/protocol");
    }
    for (const auto* r : plan.rows) {
      const auto bytes = (*r)["bytes"].get<std::uint64_t>();
      const auto it = predicted.find(bytes);
      if (it == predicted.end()) continue;
      const json& p = it->second;
      const double measured_us = (*r)["time_us"].get<double>();
      // Times, not busbw: the published tables round small busbw to 0.00.
      const double error = (p["time_us"].get<double>() - measured_us) / measured_us;
      const std::string apart = calibration::disagreeing_timings(*r);
      const bool first = apart.empty() && seen.insert(fmt::format("{}|{}|{}|{}|{}", book.run_of(plan.id), ds["collective"].get<std::string>(),
                                                 ds["gpus"].get<int>(), plan.algorithm, bytes))
                             .second;
      if (first)
        counted.push_back({plan.id, bytes, error, in_sample, multi_node, calibration::gpu_family(ds.value("gpu", "")), plan.gpus_per_process.value_or(0)});
      const double measured_busbw = r->contains("busbw_GBps") && (*r)["busbw_GBps"].is_number() ? (*r)["busbw_GBps"].get<double>() : 0.0;
      entry["rows"].push_back({{"bytes", bytes}, {"measured_us", measured_us}, {"predicted_us", p["time_us"]},
                               {"measured_busbw_GBps", measured_busbw}, {"predicted_busbw_GBps", p["busbw_GBps"]},
                               {"error", std::round(error * 1e4) / 1e4}, {"counted", first}, {"algorithm", p["algorithm"]},
                               {"protocol", p["protocol"]}, {"model", p["model"]}, {"extrapolated", p.value("extrapolated", false)}});
      if (!apart.empty()) {
        entry["rows"].back()["left_out"] = apart;
        report["left_out_rows"].push_back({{"id", plan.id}, {"bytes", bytes}, {"reason", apart}});
      }
      const std::string note = !apart.empty() ? fmt::format("  (not counted: {})", apart) : first ? "" : "  (repeat: not counted)";
      if (!options.json)
        fmt::print(out, "{:>12} {:>10.2f} {:>10.2f} {:>11.2f} {:>11.2f} {:>+7.1f}%  {}/{}{}\n", bytes, measured_us,
                   p["time_us"].get<double>(), measured_busbw, p["busbw_GBps"].get<double>(), 100 * error,
                   p["algorithm"].get<std::string>(), p["protocol"].get<std::string>(), note);
    }
    report["datasets"].push_back(std::move(entry));
  }

  report["skipped_figures"] = json::array();
  report["reported_figures"] = check_reported_figures(doc, options, book, report["skipped_figures"]);
  report["reported_figures_summary"] = reported_figures_summary(report["reported_figures"]);

  const auto groups = calibration::summarize(counted);
  report["summary"] = json::array();
  for (const auto& g : groups) report["summary"].push_back(group_json(g));
  report["out_of_sample_pooled"] = json::object();  // every GPU family and scope together, per regime
  for (const auto regime : {calibration::Regime::kLatency, calibration::Regime::kMid, calibration::Regime::kBandwidth})
    if (const auto m = out_of_sample_median(counted, regime)) report["out_of_sample_pooled"][calibration::regime_name(regime)] = *m;
  const auto launches = latency_by_launch(counted);
  report["latency_by_launch"] = json::array();
  for (const auto& g : launches)
    report["latency_by_launch"].push_back({{"sample", sample_name(g.in_sample)},
                                           {"gpus_per_process", g.gpus_per_process ? json(*g.gpus_per_process) : json(nullptr)},
                                           {"sizes", g.sizes}, {"median_error", g.median_error}});
  const auto targets = calibration::target_checks(counted);
  report["targets"] = json::array();
  for (const auto& t : targets)
    report["targets"].push_back({{"id", t.dataset}, {"sample", sample_name(t.in_sample)}, {"scope", scope_name(t.multi_node)},
                                 {"range", t.range}, {"sizes", t.sizes}, {"median_error", t.median_error}, {"target", t.target},
                                 {"met", t.met()}});
  report["unknown_fitted_on"] = book.unknown_ids();
  report["marks"] = json::object();  // every data set: the parameters fitted on its run ([] = not used by the model)
  for (const auto& [id, params] : book.marks()) report["marks"][id] = params;

  std::vector<ErrorGroup> refit_groups;
  if (options.refit) {
    std::vector<ErrorRow> refit_rows;
    report["refit"] = refit_in_sample(plans, book, doc, options, refit_rows);
    refit_groups = calibration::summarize(refit_rows);
    report["refit_summary"] = json::array();
    for (const auto& g : refit_groups) {
      json j = group_json(g);
      j["sample"] = g.in_sample ? "refitted, partly in-sample" : "refitted, out-of-sample";
      report["refit_summary"].push_back(std::move(j));
    }
  }

  bool failed = false;
  std::vector<std::string> checks;
  const auto check = [&](double bound, calibration::Regime regime, const char*) {
    if (bound <= 0) return;
    const auto m = out_of_sample_median(counted, regime);
    if (!m) {  // every out-of-sample row of the regime was left without a prediction
      failed = true;
      checks.push_back(fmt::format("no out-of-sample {} row was predicted: FAILED", calibration::regime_name(regime)));
      return;
    }
    failed = failed || *m > bound;
    checks.push_back(fmt::format("out-of-sample {} median over every GPU {:.2f}% (bound {:.2f}%): {}", calibration::regime_name(regime),
                                 100 * *m, 100 * bound, *m > bound ? "FAILED" : "passed"));
  };
  check(options.max_latency_error, calibration::Regime::kLatency, "--max-latency-error");
  check(options.max_bandwidth_error, calibration::Regime::kBandwidth, "--max-bandwidth-error");

  report["fidelity"] = fidelity_of(options);
  if (options.json) {
    report["meta"] = {{"provenance", fabsim::report::provenance_json({options.command_line, topo::default_catalogue_path(), options.calibration})}};
    out << report.dump(1) << '\n';
    return failed ? 1 : 0;
  }
  print_reported_figures(out, report["reported_figures"], report["skipped_figures"]);
  fmt::print(out, "\nskipped {} data sets:\n", report["skipped"].size());
  for (const auto& s : report["skipped"]) fmt::print(out, "  {}: {}\n", s["id"].get<std::string>(), s["reason"].get<std::string>());
  fmt::print(out, "\nwhat the model was fitted on (the catalogue's fitted_on, widened to each data set's run):\n");
  for (const auto& [id, params] : book.marks())
    fmt::print(out, "  {}: {}\n", id, params.empty() ? "not used by the model" : fmt::format("fitted {}", fmt::join(params, ", ")));
  if (!book.unknown_ids().empty())
    fmt::print(out, "\nthe catalogue's fitted_on names data sets this file lacks: {}\n", fmt::join(book.unknown_ids(), ", "));
  fmt::print(out, "\npredictions: {}\n", fidelity_of(options));
  fmt::print(out,
             "\nsummary: |predicted - measured| / measured time; repeats of one run count once; regimes: latency-bound < 256 KiB,\n"
             "mid 256 KiB - 64 MiB, bandwidth-bound >= 64 MiB. Only out-of-sample rows measure accuracy. Rows whose out-of-place\n"
             "and in-place timings are over {:.0f}% apart are not counted ({} here, marked above).\n",
             100 * calibration::kTimingDisagreementLimit, report["left_out_rows"].size());
  print_groups(out, groups, "in-sample", "out-of-sample");
  fmt::print(out, "latency-bound sizes by launch (nccl-tests -g; the per-call costs were fitted on the in-sample rows):\n");
  for (const auto& g : launches)
    fmt::print(out, "  {:<15} {:<46} median {:>5.1f}% over {} size{}\n", sample_name(g.in_sample), launch_description(g.gpus_per_process),
               100 * g.median_error, g.sizes, g.sizes == 1 ? "" : "s");
  print_target_checks(out, targets);
  print_reported_figures_summary(out, report["reported_figures_summary"]);
  if (options.refit) {
    fmt::print(out, "\nleave one run out (--refit): each in-sample run predicted with the parameters it fixed refitted without it\n");
    for (const auto& r : report["refit"])
      fmt::print(out, "  {}: refitted {} on {}; still in-sample: {}\n", r["run"].get<std::string>(),
                 r["refitted"].empty() ? "nothing" : fmt::format("{}", fmt::join(r["refitted"].get<std::vector<std::string>>(), ", ")),
                 r["refitted_on"].empty() ? "-" : fmt::format("{}", fmt::join(r["refitted_on"].get<std::vector<std::string>>(), ", ")),
                 r["still_in_sample"].empty() ? "none" : fmt::format("{}", fmt::join(r["still_in_sample"].get<std::vector<std::string>>(), ", ")));
    print_groups(out, refit_groups, "partly fitted", "refitted");
  }
  for (const auto& line : checks) fmt::print(out, "check: {}\n", line);
  return failed ? 1 : 0;
}

}  // namespace fabsim::cli
