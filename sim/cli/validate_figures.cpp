#include "sim/cli/validate_figures.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <map>
#include <ostream>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <tuple>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/stock_systems.hpp"
#include "sim/cli/child_run.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/cli/validate_plan.hpp"
#include "sim/cli/validate_refit.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;

bool has(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }


/// The algorithm a row says NCCL ran at its plateau, as nccl-test's --algo.
/// "default" and "NVLS on" are NCCL's own choice (auto: the prediction then
/// checks fabsim's tuner too). "NVLS off"/"disabled" leaves NCCL Ring on one
/// node at large sizes: nccl-test cannot switch NVLS off, so Ring is forced.
std::string algorithm_of(const std::string& recorded) {
  if (recorded.empty()) return "auto";
  if (has(recorded, "off") || has(recorded, "disabled")) return "ring";
  if (has(recorded, "default") || has(recorded, "NVLS on")) return "auto";
  if (has(recorded, "Ring") || has(recorded, "RING")) return "ring";
  if (has(recorded, "NVLS")) return "nvls";
  return "auto";
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// A GPU count given as a number or a string of digits; a range ("2-4") is none.
/// (Parsed by hand, here and below: std::regex recurses per character and
/// overflows the stack on a hostile file's long strings.)
std::optional<int> gpu_count(const json& value) {
  if (const auto n = core::integer_in_range(value, 1, core::kMaxGpus)) return static_cast<int>(*n);
  if (!value.is_string()) return std::nullopt;
  const std::string_view s = trimmed(value.get_ref<const std::string&>());
  long n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > core::kMaxGpus) return std::nullopt;
  return static_cast<int>(n);
}

/// A positive decimal figure at the start of `s` (digits, an optional fraction), consumed.
std::optional<double> leading_figure(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
  if (n == 0 || n > 16) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + n, v);
  if (ec != std::errc() || end != s.data() + n || !std::isfinite(v) || v <= 0) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

bool has_time_rows(const json& ds) {
  const auto it = ds.find("rows");
  return it != ds.end() && it->is_array() && std::any_of(it->begin(), it->end(), is_time_row);
}

}  // namespace

std::optional<std::pair<double, double>> parse_reported_busbw(const json& value) {
  if (value.is_number()) {
    const double v = value.get<double>();
    if (!std::isfinite(v) || v <= 0) return std::nullopt;
    return std::pair{v, v};
  }
  if (!value.is_string()) return std::nullopt;
  // "480", "~230 (expected peak at 8G)", "365-370": the leading figure or range.
  std::string_view s = trimmed(value.get_ref<const std::string&>());
  if (!s.empty() && s.front() == '~') s = trimmed(s.substr(1));
  const auto low = leading_figure(s);
  if (!low) return std::nullopt;
  double high = *low;
  if (std::string_view rest = trimmed(s); !rest.empty() && rest.front() == '-') {
    rest = trimmed(rest.substr(1));
    const auto upper = leading_figure(rest);
    if (!upper || *upper < *low) return std::nullopt;
    high = *upper;
  }
  return std::pair{*low, high};
}

std::vector<ReportedFigure> plan_reported_figures(const json& doc, const ValidateOptions& options, json& skipped) {
  std::vector<ReportedFigure> figures;
  const auto sets = doc.find("collective_datasets");
  if (sets == doc.end() || !sets->is_array()) return figures;
  for (std::size_t i = 0; i < sets->size(); ++i) {
    const json& ds = (*sets)[i];
    if (!ds.is_object() || has_time_rows(ds) || !ds.contains("rows") || !ds["rows"].is_array()) continue;
    const int nodes = static_cast<int>(core::integer_in_range(ds.value("nodes", json(1)), 2, core::kMaxGpus).value_or(1));
    const std::string id = ds.contains("id") && ds["id"].is_string() ? ds["id"].get<std::string>() : fmt::format("collective_datasets/{}", i);
    const std::string collective = string_member(ds, "collective");
    const json& rows = ds["rows"];
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const json& row = rows[r];
      if (!row.is_object() || (row.contains("bytes") && !row["bytes"].is_null())) continue;  // sized rows are sweeps, not plateaus
      const auto skip = [&](const std::string& reason) { skipped.push_back({{"id", id}, {"row", r}, {"reason", reason}}); };
      const auto busbw = parse_reported_busbw(row.value("busbw_GBps", json()));
      if (!busbw) {
        skip("no busbw figure");
        continue;
      }
      if (collective.empty()) {
        skip("no collective");
        continue;
      }
      // A row naming its own system ("8x B300") speaks for that system alone.
      const std::string system = row.contains("system") ? string_member(row, "system") : string_member(ds, "gpu") + " " + string_member(ds, "system");
      const auto stock = nodes > 1 ? calibration::multi_node_stock_topology(system, nodes) : calibration::single_node_stock_topology(system);
      if (stock.topology.empty()) {
        skip(nodes > 1 ? fmt::format("no stock topology for '{}' on {} nodes", system, nodes) : fmt::format("no stock topology for '{}'", system));
        continue;
      }
      const json& count = row.contains("gpus") ? row["gpus"] : ds.value("gpus", json());
      const auto gpus = gpu_count(count);
      if (!gpus) {
        skip(fmt::format("GPU count {}: one figure for a range of counts does not say which count reached it", count.dump()));
        continue;
      }
      ReportedFigure f;
      f.dataset_index = i;
      f.row_index = r;
      f.id = id;
      f.collective = collective;
      f.recorded = string_member(row, "algorithm");
      f.algorithm = algorithm_of(f.recorded);
      f.gpus = *gpus;
      f.nodes = nodes;
      f.low_GBps = busbw->first;
      f.high_GBps = busbw->second;
      f.topology = options.topology_dir + "/" + stock.topology;
      f.gpu_model = stock.gpu_model;
      f.family = calibration::gpu_family(system);
      figures.push_back(std::move(f));
    }
  }
  return figures;
}

std::vector<FigurePrediction> predict_reported_figures(const std::vector<ReportedFigure>& figures, const ValidateOptions& options) {
  using Key = std::tuple<std::string, int, std::string, std::string>;  // topology, GPUs, algorithm, collective
  std::map<Key, FigurePrediction> runs;
  std::vector<FigurePrediction> out;
  for (const auto& f : figures) {
    const Key key{f.topology, f.gpus, f.algorithm, f.collective};
    auto it = runs.find(key);
    if (it == runs.end()) {
      const std::string size = std::to_string(kPlateauBytes);
      std::vector<std::string> args{"nccl-test", "--topology", f.topology, "--op", f.collective, "-g", std::to_string(f.gpus),
                                    "-b", size, "-e", size, "--algo", f.algorithm, "--format", "json"};
      if (!options.calibration.empty()) args.insert(args.end(), {"--calibration", options.calibration});
      if (options.extrapolate) args.insert(args.end(), {"--extrapolate-above", "auto"});
      const json predicted = run_json_child(options.self, args,
                                            {options.measurements, fmt::format("/collective_datasets/{}/rows/{}", f.dataset_index, f.row_index)});
      const json& row = predicted["rows"].at(0);
      it = runs.emplace(key, FigurePrediction{row["busbw_GBps"].get<double>(), row["algorithm"].get<std::string>(),
                                              row["protocol"].get<std::string>()})
               .first;
    }
    out.push_back(it->second);
  }
  return out;
}

double reported_figure_error(const ReportedFigure& figure, double predicted_busbw_GBps) {
  if (predicted_busbw_GBps >= figure.low_GBps && predicted_busbw_GBps <= figure.high_GBps) return 0;
  const double nearest = predicted_busbw_GBps < figure.low_GBps ? figure.low_GBps : figure.high_GBps;
  return nearest / predicted_busbw_GBps - 1;
}

namespace {

/// Median and worst |error| of the reported figures of one sample, in one node or across nodes.
json sample_summary(const json& figures, bool in_sample, bool multi_node) {
  std::vector<double> errors;
  double worst = -1;
  std::string worst_at;
  for (const auto& f : figures) {
    if ((f["sample"] == "in-sample") != in_sample || (f["nodes"].get<int>() > 1) != multi_node) continue;
    const double e = std::abs(f["error"].get<double>());
    errors.push_back(e);
    if (e > worst) {
      worst = e;
      worst_at = fmt::format("{} row {} ({} GPUs)", f["id"].get<std::string>(), f["row"].get<std::size_t>(), f["gpus"].get<int>());
    }
  }
  if (errors.empty()) return {{"figures", 0}};
  return {{"figures", errors.size()}, {"median_error", calibration::median(errors)}, {"worst_error", worst}, {"worst_at", worst_at}};
}

}  // namespace

/// Every reported plateau of the file against fabsim's prediction at kPlateauBytes.
json check_reported_figures(const json& doc, const ValidateOptions& options, const calibration::SampleBook& book, json& skipped) {
  const auto figures = plan_reported_figures(doc, options, skipped);
  const auto predicted = predict_reported_figures(figures, options);
  json out = json::array();
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const auto& f = figures[i];
    DatasetPlan as_plan;  // what relevant_fitted reads: the data set and its GPU model
    as_plan.id = f.id;
    as_plan.gpu_model = f.gpu_model;
    const auto fitted = relevant_fitted(book, as_plan);
    const double error = reported_figure_error(f, predicted[i].busbw_GBps);
    out.push_back({{"id", f.id}, {"row", f.row_index}, {"gpus", f.gpus}, {"nodes", f.nodes}, {"collective", f.collective}, {"recorded_algorithm", f.recorded},
                   {"algorithm", f.algorithm}, {"measured_busbw_GBps", {f.low_GBps, f.high_GBps}}, {"bytes", kPlateauBytes},
                   {"predicted_busbw_GBps", predicted[i].busbw_GBps}, {"predicted_algorithm", predicted[i].algorithm},
                   {"predicted_protocol", predicted[i].protocol}, {"error", std::round(error * 1e4) / 1e4},
                   {"sample", !fitted.empty() ? "in-sample" : "out-of-sample"}, {"fitted_parameters", fitted}});
  }
  return out;
}

void print_reported_figures(std::ostream& out, const json& figures, const json& skipped) {
  fmt::print(out, "\nreported figures: plateaus a source gives in words, predicted at {} GiB (nccl-tests' -e 8G); a range counts as exact inside it\n",
             kPlateauBytes >> 30);
  fmt::print(out, "{:<44} {:>3} {:>4} {:<28} {:>11} {:>10} {:>7}  {:<15} {}\n", "data set", "row", "GPUs", "algorithm (as reported)",
             "meas busbw", "pred busbw", "error", "predicted with", "sample");
  for (const auto& f : figures) {
    const double lo = f["measured_busbw_GBps"][0].get<double>(), hi = f["measured_busbw_GBps"][1].get<double>();
    std::string recorded = f["recorded_algorithm"].get<std::string>();
    if (recorded.empty()) recorded = "not recorded";
    if (recorded.size() > 28) recorded = recorded.substr(0, 25) + "...";
    fmt::print(out, "{:<44} {:>3} {:>4} {:<28} {:>11} {:>10.2f} {:>+6.1f}%  {:<15} {}\n", f["id"].get<std::string>(), f["row"].get<std::size_t>(),
               f["gpus"].get<int>(), recorded, lo == hi ? fmt::format("{:.2f}", lo) : fmt::format("{:.0f}-{:.0f}", lo, hi),
               f["predicted_busbw_GBps"].get<double>(), 100 * f["error"].get<double>(),
               f["predicted_algorithm"].get<std::string>() + "/" + f["predicted_protocol"].get<std::string>(), f["sample"].get<std::string>());
  }
  for (const auto& s : skipped)
    fmt::print(out, "  not predicted: {} row {}: {}\n", s["id"].get<std::string>(), s["row"].get<std::size_t>(), s["reason"].get<std::string>());
}

json reported_figures_summary(const json& figures) {
  return {{"out_of_sample", sample_summary(figures, false, false)},
          {"in_sample", sample_summary(figures, true, false)},
          {"out_of_sample_multi_node", sample_summary(figures, false, true)},
          {"in_sample_multi_node", sample_summary(figures, true, true)}};
}

void print_reported_figures_summary(std::ostream& out, const json& summary) {
  // Each group of reported_figures_summary with the words its line starts with.
  const struct {
    const char* key;
    const char* sample;
    const char* scope;
  } groups[] = {{"out_of_sample", "out-of-sample", ""},
                {"in_sample", "in-sample", ""},
                {"out_of_sample_multi_node", "out-of-sample", " across nodes"},
                {"in_sample_multi_node", "in-sample", " across nodes"}};
  for (const auto& group : groups) {
    const json& g = summary[group.key];
    if (g["figures"].get<std::size_t>() == 0) continue;
    fmt::print(out, "{:<15} reported plateaus{}: {} figures, median {:.1f}%, worst {:.1f}% at {}\n", group.sample, group.scope,
               g["figures"].get<std::size_t>(), 100 * g["median_error"].get<double>(), 100 * g["worst_error"].get<double>(),
               g["worst_at"].get<std::string>());
  }
}

}  // namespace fabsim::cli
