#include "sim/cli/whatif_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <thread>

#include "sim/cli/child_run.hpp"
#include "sim/core/data_root.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/report/run_provenance.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::cli {

namespace {

/// The most children a study runs at once.
constexpr int kMaxWhatifJobs = 256;

struct Figures {
  double time_us = 0;
  std::optional<double> busbw;
  std::string model;
};

Figures figures_of(const nlohmann::json& doc, bool replay) {
  Figures f;
  if (replay) {
    f.time_us = doc.at("makespan_us").get<double>();
    f.model = doc.at("model").get<std::string>();
  } else {
    const auto& row = doc.at("rows").at(0);
    f.time_us = row.at("time_us").get<double>();
    f.busbw = row.at("busbw_GBps").get<double>();
    f.model = doc.at("meta").at("model").get<std::string>();
  }
  return f;
}

/// A run's meta.warnings: figures to doubt (known gaps, an unread NCCL release).
std::vector<std::string> warnings_of(const nlohmann::json& doc) {
  const auto meta = doc.find("meta");
  if (meta == doc.end() || !meta->contains("warnings")) return {};
  return meta->at("warnings").get<std::vector<std::string>>();
}

struct Row {
  const topo::FaultClass* cls = nullptr;
  std::optional<Figures> figures;
  std::string outcome;  ///< "" when it ran; else why there is no figure
  /// Orders the ranking: slower first, no figure before all.
  double sort_key() const { return figures ? figures->time_us : std::numeric_limits<double>::infinity(); }
};

double round_to(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace

topo::FaultScope parse_fault_scope(const std::string& scope, const std::string& flag) {
  if (scope == "links") return {true, false};
  if (scope == "devices") return {false, true};
  if (scope == "all") return {true, true};
  throw core::ConfigError("command line", flag, fmt::format("unknown scope '{}' (expected links, devices or all)", scope));
}

int run_whatif(const WhatifStudy& study, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  if (study.format != "table" && study.format != "json" && study.format != "csv")
    throw core::ConfigError("command line", "--format", fmt::format("unknown format '{}' (expected table, json or csv)", study.format));
  if (study.jobs < 1 || study.jobs > kMaxWhatifJobs)
    throw core::ConfigError("command line", "-j", fmt::format("expected 1 to {} processes at a time, found {}", kMaxWhatifJobs, study.jobs));
  // The healthy run first: its errors are the command's own, and the model it
  // settles on (auto) is forced on every failure, so that all rows compare alike.
  std::vector<std::string> base = study.args;
  base.insert(base.end(), {"--format", "json"});
  const nlohmann::json healthy = run_json_child(study.self, base, {"command line", "", true});
  const Figures baseline = figures_of(healthy, study.replay);
  // They hold for every row: the failures run the same op on the same GPUs.
  const std::vector<std::string> warnings = warnings_of(healthy);
  std::vector<std::string> forced = base;
  const auto model_flag = std::find(forced.begin(), forced.end(), "--model");
  if (model_flag != forced.end() && model_flag + 1 != forced.end()) *(model_flag + 1) = baseline.model;
  else forced.insert(forced.end(), {"--model", baseline.model});

  std::vector<Row> rows(study.classes.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  const bool progress = ::isatty(STDERR_FILENO) != 0;
  auto work = [&] {
    for (std::size_t i = next++; i < rows.size(); i = next++) {
      Row& row = rows[i];
      row.cls = &study.classes[i];
      std::vector<std::string> args = forced;
      args.insert(args.end(), {"--fault", row.cls->representative});
      try {
        row.figures = figures_of(run_json_child(study.self, args, {"command line", "--fault " + row.cls->representative}), study.replay);
      } catch (const core::ConfigError& e) {
        // The failure leaves GPUs of the run unable to reach each other.
        std::string message = e.items().empty() ? e.what() : e.items().front().message;
        const auto cut = message.find("in force, ");
        row.outcome = "partitions the fabric: " + (cut == std::string::npos ? message : message.substr(cut + 10));
      } catch (const core::SimulationError& e) {
        row.outcome = std::string("cannot run: ") + e.what();
      } catch (...) {
        std::lock_guard lock(failure_lock);
        if (!failure) failure = std::current_exception();
      }
      const std::size_t finished = ++done;
      if (progress) {
        std::lock_guard lock(failure_lock);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        fmt::print(err, "\rwhatif: {}/{} failures, about {:.0f} s left   ", finished, rows.size(),
                   elapsed / static_cast<double>(finished) * static_cast<double>(rows.size() - finished));
      }
    }
  };
  std::vector<std::thread> workers;
  const int threads = std::min<int>(study.jobs, static_cast<int>(std::max<std::size_t>(1, rows.size())));
  for (int t = 0; t < threads; ++t) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  if (progress) fmt::print(err, "\n");
  if (failure) std::rethrow_exception(failure);

  // Worst first; failures with no figure lead; ties keep the fabric's order.
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rows[a].sort_key() > rows[b].sort_key(); });
  std::size_t failures = 0;
  for (const auto& c : study.classes) failures += c.members.size();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  auto slowdown = [&](const Row& r) { return r.figures ? r.figures->time_us / baseline.time_us : 0.0; };
  if (study.format == "json") {
    nlohmann::json doc;
    doc["format"] = "fabsim-whatif/1";
    doc["meta"] = {{"topology", study.topology_name}, {"workload", study.workload}, {"scope", study.scope}, {"model", baseline.model},
                   {"failures", failures}, {"classes", study.classes.size()},
                   {"provenance", report::provenance_json({study.command_line, "", ""})}};
    if (!warnings.empty()) doc["meta"]["warnings"] = warnings;
    doc["baseline"] = {{"time_us", round_to(baseline.time_us, 3)},
                       {"busbw_GBps", baseline.busbw ? nlohmann::json(round_to(*baseline.busbw, 3)) : nlohmann::json(nullptr)}};
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i : order) {
      const Row& r = rows[i];
      nlohmann::json item{{"fault", r.cls->representative}, {"equivalent_faults", r.cls->members.size()}, {"equivalents", r.cls->members}};
      if (r.figures) {
        item["time_us"] = round_to(r.figures->time_us, 3);
        item["busbw_GBps"] = r.figures->busbw ? nlohmann::json(round_to(*r.figures->busbw, 3)) : nlohmann::json(nullptr);
        item["slowdown"] = round_to(slowdown(r), 4);
      } else {
        item["time_us"] = item["busbw_GBps"] = item["slowdown"] = nullptr;
        item["outcome"] = r.outcome;
      }
      list.push_back(std::move(item));
    }
    doc["rows"] = std::move(list);
    out << doc.dump(1) << '\n';
  } else if (study.format == "csv") {
    report::write_csv_provenance(out, {study.command_line, "", ""});
    for (const auto& w : warnings) fmt::print(out, "# warning: {}\n", w);
    fmt::print(out, "fault,time_us,busbw_GBps,slowdown,equivalent_faults,outcome\n");
    fmt::print(out, "healthy,{:.3f},{},1.0000,1,\n", baseline.time_us, baseline.busbw ? fmt::format("{:.3f}", *baseline.busbw) : "");
    for (std::size_t i : order) {
      const Row& r = rows[i];
      if (r.figures)
        fmt::print(out, "{},{:.3f},{},{:.4f},{},\n", r.cls->representative, r.figures->time_us,
                   r.figures->busbw ? fmt::format("{:.3f}", *r.figures->busbw) : "", slowdown(r), r.cls->members.size());
      else
        fmt::print(out, "{},,,,{},{}\n", r.cls->representative, r.cls->members.size(), core::csv_escape(r.outcome));
    }
  } else {
    fmt::print(out, "# fabsim whatif: {} on {}, {} model; {} scope: {} single failures in {} classes of the fabric's symmetry\n",
               study.workload, study.topology_name, baseline.model, study.scope, failures, study.classes.size());
    fmt::print(out, "# healthy: {:.3f} us{}\n", baseline.time_us,
               baseline.busbw ? fmt::format(", busbw {:.2f} GB/s", *baseline.busbw) : std::string());
    for (const auto& w : warnings) fmt::print(out, "# Warning: {}\n", w);
    fmt::print(out, "#\n");
    fmt::print(out, "# {:>4}  {:>9}  {:>12}  {:>12}  {:>10}  {}\n", "rank", "slowdown", "time (us)", "busbw (GB/s)", "equivalent", "fault");
    std::size_t rank = 0;
    for (std::size_t i : order) {
      const Row& r = rows[i];
      ++rank;
      if (r.figures)
        fmt::print(out, "  {:>4}  {:>9.4f}  {:>12.3f}  {:>12}  {:>10}  {}\n", rank, slowdown(r), r.figures->time_us,
                   r.figures->busbw ? fmt::format("{:.2f}", *r.figures->busbw) : "-", r.cls->members.size(), r.cls->representative);
      else
        fmt::print(out, "  {:>4}  {:>9}  {:>12}  {:>12}  {:>10}  {}: {}\n", rank, "-", "-", "-", r.cls->members.size(),
                   r.cls->representative, r.outcome);
    }
  }
  fmt::print(err, "fabsim: whatif ran {} failure classes ({} failures) and the healthy run, {:.3f} s wall\n", study.classes.size(),
             failures, wall);
  return 0;
}

namespace {

struct WhatifFlags {
  std::string topology, hardware, calibration, op = "all_reduce", bytes = "256M", model = "auto", scope = "links", format = "table",
                                              algo = "auto", proto = "auto", channels = "auto", nccl_version;
  int gpus = -1;
  int jobs = 1;
  bool every = false;
};

}  // namespace

void register_whatif(CLI::App& app, CommandSet& commands) {
  auto f = std::make_shared<WhatifFlags>();
  auto* cmd = app.add_subcommand("whatif", "Run a collective healthy, then with each single link or device failure, ranked by slowdown");
  cmd->add_option("--topology,-t", f->topology, "Topology JSON file or stock name (fabsim list topologies)")->required();
  cmd->add_option("--hardware", f->hardware, "Hardware catalogue override");
  cmd->add_option("--calibration", f->calibration, "Calibration profile");
  cmd->add_option("--op", f->op, "The collective (as nccl-test --op)")->capture_default_str();
  cmd->add_option("-b,--bytes", f->bytes, "Its size (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("-g,--ngpus", f->gpus, "Use the first N GPUs of the topology (default: all)");
  cmd->add_option("--algo", f->algo, "NCCL algorithm, or auto")->capture_default_str();
  cmd->add_option("--proto", f->proto, "NCCL protocol, or auto")->capture_default_str();
  cmd->add_option("--channels", f->channels, "Channel count, or auto")->capture_default_str();
  cmd->add_option("--nccl-version", f->nccl_version, "Choose algorithms with this NCCL release's tuner constants (default: the newest fabsim has read)");
  cmd->add_option("--model", f->model, "segment, flow or auto (the healthy run's choice is kept for every failure)")->capture_default_str();
  cmd->add_option("--scope", f->scope, "links (every link bundle), devices (every NIC and switch) or all")->capture_default_str();
  cmd->add_option("--format", f->format, "table, json or csv")->capture_default_str();
  cmd->add_option("-j,--jobs", f->jobs, "Failures simulated at once (separate processes)")->capture_default_str();
  cmd->add_flag("--all", f->every, "Run every failure, not one per symmetry class (to check the classes)");
  cmd->callback([f, &commands] {
    commands.action = [f, &commands] {
      WhatifStudy study;
      study.self = self_executable();
      study.scope = f->scope;
      study.format = f->format;
      study.jobs = f->jobs;
      study.command_line = commands.command_line;
      const auto scope = parse_fault_scope(f->scope, "--scope");
      const std::string topology = core::resolve_stock(core::StockKind::kTopology, f->topology, "--topology");
      study.args = {"nccl-test", "-t", topology, "--op", f->op, "-b", f->bytes, "-e", f->bytes, "--model", f->model,
                    "--algo", f->algo, "--proto", f->proto, "--channels", f->channels};
      if (f->gpus != -1) study.args.insert(study.args.end(), {"-g", std::to_string(f->gpus)});
      if (!f->nccl_version.empty()) study.args.insert(study.args.end(), {"--nccl-version", f->nccl_version});
      if (!f->hardware.empty()) study.args.insert(study.args.end(), {"--hardware", f->hardware});
      if (!f->calibration.empty()) study.args.insert(study.args.end(), {"--calibration", f->calibration});
      const auto spec = topo::load_topology(topology, f->hardware);
      const int gpus = f->gpus == -1 ? static_cast<int>(spec.gpus.size()) : std::clamp(f->gpus, 0, static_cast<int>(spec.gpus.size()));
      std::vector<int> used(static_cast<std::size_t>(gpus));
      std::iota(used.begin(), used.end(), 0);
      study.classes = topo::single_fault_classes(spec, used, scope, !f->every);
      study.topology_name = spec.name;
      study.workload = fmt::format("{} of {} on {} GPUs", f->op, f->bytes, gpus);
      return run_whatif(study, std::cout, std::cerr);
    };
  });
}

}  // namespace fabsim::cli
