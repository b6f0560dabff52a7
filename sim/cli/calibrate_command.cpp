#include "sim/cli/calibrate_command.hpp"
#include "sim/cli/host_comparison.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "traces/collectives/tuner.hpp"
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/measurements.hpp"
#include "sim/calibration/stock_systems.hpp"
#include "sim/cli/child_run.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/scratch_folder.hpp"
#include "topologies/hardware_catalogue.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
constexpr std::uint64_t kMiB = 1u << 20;

struct Prediction {
  double time_us = 0;
  double busbw = 0;
};
using Predictions = std::map<std::uint64_t, Prediction>;

/// Which topology a sweep ran on, or why none fits.
std::string topology_for(const calibration::MeasuredSweep& s, const CalibrateOptions& o, std::string& why) {
  if (s.nodes != 1 && o.topology.empty()) {
    const std::string stock = calibration::multi_node_stock_topology(s.gpu + " " + s.system, s.nodes).topology;
    if (stock.empty()) why = fmt::format("multi-node ({} nodes): no stock topology for '{}' (give --topology)", s.nodes, s.system);
    return stock.empty() ? "" : o.topology_dir + "/" + stock;
  }
  if (s.cuda_graph) {
    why = "CUDA-graph timing has no launch gaps (not modelled)";
    return "";
  }
  if (!o.topology.empty()) return o.topology;
  const auto stock = calibration::single_node_stock_topology(s.gpu + " " + s.system);
  if (!stock.topology.empty()) return o.topology_dir + "/" + stock.topology;
  why = fmt::format("no stock topology for '{}' (give --topology)", s.gpu.empty() ? s.system : s.gpu);
  return "";
}

std::string us(double v) { return fmt::format("{:.3f} us", v); }

using calibration::median;

/// One fitted catalogue value: `fitted_on` lists the data sets it was fitted
/// on (empty: a trial, no record).
json fitted_entry(json value, const std::string& why, const std::vector<std::string>& fitted_on) {
  json e = {{"value", std::move(value)}, {"source", why}};
  if (!fitted_on.empty()) e["fitted_on"] = fitted_on;
  return e;
}

/// The values being fitted, and the profile that carries them.
struct Parameters {
  std::string gpu, link;
  /// The per-call base the sweeps' launch takes (nccl-test --gpus-per-process): launch_overhead, or
  /// launch_overhead_one_gpu_per_process where every sweep ran one process per GPU.
  std::string launch_key = "launch_overhead";
  double efficiency = 0;
  double launch_us = 0, ll_step_us = 0, reduce_us = 0;

  json patch(const std::string& why, const std::vector<std::string>& fitted_on = {}, bool with_efficiency = true) const {
    const auto entry = [&](json value) { return fitted_entry(std::move(value), why, fitted_on); };
    json p;
    if (with_efficiency) p["links"][link]["efficiency"] = entry(efficiency);
    p["gpus"][gpu][launch_key] = entry(us(launch_us));
    p["gpus"][gpu]["reduce_overhead"] = entry(us(reduce_us));
    p["gpus"][gpu]["protocols"]["ll"]["step_latency"] = entry(us(ll_step_us));
    return p;
  }
};

/// A multi-node fabric's network values: its network link's efficiency and
/// its NICs' per-call latency.
struct NetworkParameters {
  std::string nic, link;
  double efficiency = 0;
  double call_latency_us = 0;

  json patch(const std::string& why, const std::vector<std::string>& fitted_on = {}, bool with_efficiency = true,
             bool with_call_latency = true) const {
    json p;
    if (with_efficiency) p["links"][link]["efficiency"] = fitted_entry(efficiency, why, fitted_on);
    if (with_call_latency) p["nics"][nic]["net_call_latency"] = fitted_entry(us(call_latency_us), why, fitted_on);
    return p;
  }
};

/// Which per-call base sweeps run on one topology fix: launch_overhead_one_gpu_per_process
/// when each ran one process per GPU (nccl-tests -g 1), launch_overhead when none did (or
/// none says). A mix would fit one value to two launches: refused, naming both.
std::string launch_key_of(const std::vector<const calibration::MeasuredSweep*>& sweeps, const std::string& topology) {
  const auto one = [](const calibration::MeasuredSweep* s) { return s->gpus_per_process == 1; };
  const auto first_one = std::find_if(sweeps.begin(), sweeps.end(), one);
  if (first_one == sweeps.end()) return "launch_overhead";
  const auto other = std::find_if_not(sweeps.begin(), sweeps.end(), one);
  if (other == sweeps.end()) return "launch_overhead_one_gpu_per_process";
  throw core::ConfigError((*other)->id, "/gpus_per_process",
                          fmt::format("{} ran one process per GPU and {} did not ({}), and both fit the per-call base on {}: "
                                      "calibrate them apart (--dataset)",
                                      (*first_one)->id, (*other)->id,
                                      (*other)->gpus_per_process ? fmt::format("-g {}", *(*other)->gpus_per_process) : "launch not recorded",
                                      fs::path(topology).filename().string()));
}

class Calibrator {
 public:
  Calibrator(const CalibrateOptions& o, std::string topology, std::vector<const calibration::MeasuredSweep*> sweeps)
      : options_(o), topology_(std::move(topology)), sweeps_(std::move(sweeps)) {}

  /// Predictions for every sweep under `p` (one child simulation per sweep).
  template <typename Values>
  std::vector<Predictions> predict(const Values& p) {
    const fs::path profile = work_.path() / fmt::format("profile-{}.json", runs_++);
    core::write_file_atomically(profile.string(), json{{"format", "fabsim-calibration/1"}, {"catalogue_patch", p.patch("trial")}}.dump() + "\n");
    std::vector<Predictions> out;
    for (const auto* s : sweeps_) {
      std::vector<std::pair<std::uint64_t, std::string>> sizes;
      for (const auto& r : s->rows) sizes.emplace_back(r.bytes, r.choice);
      Predictions rows;
      // One child per recorded choice (a row's nccl_choice), the rest with the data set's algorithm.
      for (const auto& run : calibration::choice_runs(sizes)) {
        std::vector<std::string> args{"nccl-test", "--topology", topology_, "--op", traces::collective_name(s->op), "-g",
                                      std::to_string(s->gpus), "-b", std::to_string(run.lo), "-e", std::to_string(run.hi), "-f", "2",
                                      "--format", "json", "--calibration", profile.string()};
        const auto algo = calibration::choice_arguments(run, s->algorithm.empty() ? "auto" : s->algorithm);
        args.insert(args.end(), algo.begin(), algo.end());
        if (!s->nccl_version.empty()) args.insert(args.end(), {"--nccl-version", s->nccl_version});
        if (s->gpus_per_process) args.insert(args.end(), {"--gpus-per-process", std::to_string(*s->gpus_per_process)});
        const json result = run_json_child(options_.self, args, {s->id, ""});
        for (const auto& r : result["rows"])
          if (calibration::run_covers(run, sizes, r["bytes"].get<std::uint64_t>()))
            rows[r["bytes"].get<std::uint64_t>()] = {r["time_us"].get<double>(), r["busbw_GBps"].get<double>()};
      }
      out.push_back(std::move(rows));
    }
    return out;
  }

  /// Median relative time error over latency-bound (< 1 MiB) and bandwidth-bound rows.
  std::pair<double, double> errors(const std::vector<Predictions>& predicted) const {
    std::vector<double> small, large;
    for (std::size_t i = 0; i < sweeps_.size(); ++i)
      for (const auto& r : sweeps_[i]->rows) {
        const auto it = predicted[i].find(r.bytes);
        if (it == predicted[i].end() || r.time_us <= 0) continue;
        (r.bytes < kMiB ? small : large).push_back(std::abs(it->second.time_us / r.time_us - 1));
      }
    return {median(small), median(large)};
  }

  /// Median of predicted / measured time - 1 over the latency-bound rows (<= 4 KiB).
  double latency_bias(const std::vector<Predictions>& predicted) const {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < sweeps_.size(); ++i)
      for (const auto& r : sweeps_[i]->rows) {
        const auto it = predicted[i].find(r.bytes);
        if (r.bytes > 4096 || it == predicted[i].end() || r.time_us <= 0) continue;
        ratios.push_back(it->second.time_us / r.time_us - 1);
      }
    return ratios.empty() ? 0.0 : median(ratios);
  }

  /// Bisection on the NIC's per-call latency until the latency-bound rows'
  /// median error is zero. Returns the number of rows used (0: none, nothing fitted).
  std::size_t fit_call_latency(NetworkParameters& p) {
    std::size_t rows = 0;
    for (const auto* s : sweeps_)
      rows += static_cast<std::size_t>(std::count_if(s->rows.begin(), s->rows.end(), [](const auto& r) { return r.bytes <= 4096; }));
    if (rows == 0) return 0;
    double lo = 0, hi = std::max(1.0, p.call_latency_us);
    if (latency_bias(predict(with_latency(p, lo))) >= 0) {  // already too slow without any: keep none
      p.call_latency_us = 0;
      return rows;
    }
    while (latency_bias(predict(with_latency(p, hi))) < 0 && hi < 1e5) hi *= 2;
    for (int step = 0; step < 24; ++step) {
      const double mid = (lo + hi) / 2;
      (latency_bias(predict(with_latency(p, mid))) < 0 ? lo : hi) = mid;
    }
    p.call_latency_us = (lo + hi) / 2;
    return rows;
  }

  /// Predicted over measured time per added byte between successive sizes
  /// from 1 GiB: the rate ratio with every fixed cost cancelled. A network's
  /// per-call costs (a millisecond on TCPXO) still weigh on 64 MiB - 1 GiB,
  /// where busbw ratios would read them as bandwidth.
  std::vector<double> incremental_rate_ratios(const std::vector<Predictions>& predicted) const {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < sweeps_.size(); ++i) {
      const calibration::MeasuredRow* previous = nullptr;
      for (const auto& r : sweeps_[i]->rows) {
        if (r.bytes < 1024 * kMiB || r.time_us <= 0 || !predicted[i].count(r.bytes)) continue;
        if (previous != nullptr && r.bytes > previous->bytes && r.time_us > previous->time_us) {
          const double grown = predicted[i].at(r.bytes).time_us - predicted[i].at(previous->bytes).time_us;
          if (grown > 0) ratios.push_back(grown / (r.time_us - previous->time_us));
        }
        previous = &r;
      }
    }
    return ratios;
  }

  /// Measured over predicted busbw on the bandwidth-bound rows.
  std::vector<double> bandwidth_ratios(const std::vector<Predictions>& predicted) const {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < sweeps_.size(); ++i)
      for (const auto& r : sweeps_[i]->rows) {
        const auto it = predicted[i].find(r.bytes);
        if (r.bytes < 64 * kMiB || it == predicted[i].end() || it->second.busbw <= 0 || r.busbw_gbps <= 0) continue;
        ratios.push_back(r.busbw_gbps / it->second.busbw);
      }
    return ratios;
  }

  /// Least squares on the latency-bound rows for the three latencies.
  /// Returns the number of rows used.
  std::size_t fit_latencies(Parameters& p) {
    const auto base = predict(p);
    std::array<std::vector<Predictions>, 3> moved;
    for (int k = 0; k < 3; ++k) {
      Parameters q = p;
      (k == 0 ? q.launch_us : k == 1 ? q.ll_step_us : q.reduce_us) += 1.0;
      moved[k] = predict(q);
    }
    // Normal equations (A^T A + lambda I) x = A^T b, b = measured - base.
    double ata[3][3] = {}, atb[3] = {};
    std::size_t used = 0;
    for (std::size_t i = 0; i < sweeps_.size(); ++i)
      for (const auto& r : sweeps_[i]->rows) {
        if (r.bytes > 4096) continue;
        const auto b0 = base[i].find(r.bytes);
        if (b0 == base[i].end()) continue;
        double a[3];
        bool ok = true;
        for (int k = 0; k < 3; ++k) {
          const auto it = moved[k][i].find(r.bytes);
          ok = ok && it != moved[k][i].end();
          a[k] = ok ? it->second.time_us - b0->second.time_us : 0;
        }
        if (!ok) continue;
        ++used;
        const double b = r.time_us - b0->second.time_us;
        for (int x = 0; x < 3; ++x) {
          atb[x] += a[x] * b;
          for (int y = 0; y < 3; ++y) ata[x][y] += a[x] * a[y];
        }
      }
    if (used == 0) return 0;
    // A light ridge keeps parameters the rows cannot separate at the catalogue's values.
    const double lambda = 1e-6 * (ata[0][0] + ata[1][1] + ata[2][2]) / 3 + 1e-12;
    for (int k = 0; k < 3; ++k) ata[k][k] += lambda;
    // Gaussian elimination on the 3x3 system.
    double m[3][4];
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) m[r][c] = ata[r][c];
      m[r][3] = atb[r];
    }
    for (int c = 0; c < 3; ++c) {
      int pivot = c;
      for (int r = c + 1; r < 3; ++r)
        if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
      std::swap(m[c], m[pivot]);
      for (int r = 0; r < 3; ++r) {
        if (r == c || m[c][c] == 0) continue;
        const double f = m[r][c] / m[c][c];
        for (int k = c; k < 4; ++k) m[r][k] -= f * m[c][k];
      }
    }
    const double dx[3] = {m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]};
    p.launch_us = std::max(0.0, p.launch_us + dx[0]);
    p.ll_step_us = std::max(0.0, p.ll_step_us + dx[1]);
    p.reduce_us = std::max(0.0, p.reduce_us + dx[2]);
    return used;
  }

 private:
  static NetworkParameters with_latency(NetworkParameters p, double us) {
    p.call_latency_us = us;
    return p;
  }

  const CalibrateOptions& options_;
  std::string topology_;
  std::vector<const calibration::MeasuredSweep*> sweeps_;
  core::ScratchFolder work_{"fabsim-calibrate"};
  int runs_ = 0;
};

/// busbw is nearly, not exactly, proportional to the efficiency: a few
/// multiplicative steps from the measured/predicted ratios converge.
template <typename Values, typename Ratios>
void scale_efficiency(Calibrator& calibrator, Values& p, std::vector<double> ratios, Ratios ratios_of) {
  for (int step = 0; step < 3 && !ratios.empty(); ++step) {
    p.efficiency = std::clamp(p.efficiency * median(ratios), 0.05, 1.0);
    if (step < 2) ratios = ratios_of(calibrator.predict(p));
  }
}

/// What one topology's fit adds to the profile.
struct FitRecord {
  json patch = json::object(), fitted = json::array(), residuals = json::array();

  void record(const std::string& name, const std::string& was, const std::string& now, const std::string& from) {
    fitted.push_back({{"parameter", name}, {"before", was}, {"after", now}, {"fitted_from", from}});
  }
  void residual(const std::string& topology, const std::string& ids, std::pair<double, double> before, std::pair<double, double> after) {
    residuals.push_back({{"topology", topology}, {"datasets", ids},
                         {"median_error_latency_bound", {{"before", before.first}, {"after", after.first}}},
                         {"median_error_bandwidth_bound", {{"before", before.second}, {"after", after.second}}}});
  }
};

/// A multi-node fabric's sweeps fix its network: the network link's
/// efficiency and the NIC's per-step latency (the NVLink values stay with
/// the single-node sweeps that fix them).
void fit_network(const topo::TopologySpec& spec, const std::string& topology, Calibrator& calibrator, const std::string& ids,
                 const std::vector<std::string>& id_list, bool latencies_only, FitRecord& out) {
  NetworkParameters p;
  for (const auto& d : spec.devices)
    if (d.kind == topo::DeviceKind::kNic && p.nic.empty()) p.nic = d.model;
  for (const auto& l : spec.links)
    if (topo::is_network(l.kind) && p.link.empty()) p.link = l.model;
  if (p.nic.empty() || p.link.empty())
    throw core::ConfigError(topology, "/devices", "a multi-node sweep fits the network: this topology has no NIC or no network link");
  p.efficiency = spec.catalogue.links.at(p.link).efficiency;
  p.call_latency_us = static_cast<double>(spec.catalogue.nics.at(p.nic).net_call_latency) / 1e6;
  const NetworkParameters before = p;
  const auto predicted_before = calibrator.predict(p);
  std::string efficiency_from;
  const auto rates = [&](const std::vector<Predictions>& predicted) { return calibrator.incremental_rate_ratios(predicted); };
  if (auto ratios = rates(predicted_before); !latencies_only && !ratios.empty()) {
    efficiency_from = fmt::format("median measured/predicted rate per added byte over {} steps between sizes >= 1 GiB of {}",
                                  ratios.size(), ids);
    scale_efficiency(calibrator, p, std::move(ratios), rates);
  }
  const std::size_t latency_rows = calibrator.fit_call_latency(p);
  const std::string why = fmt::format("calibration: fabsim calibrate on {} (topology {})", ids, fs::path(topology).filename().string());
  // A sweep without rows <= 4 KiB fits no per-call latency: the profile does not claim one.
  out.patch.merge_patch(p.patch(why, id_list, !efficiency_from.empty(), latency_rows > 0));
  if (!efficiency_from.empty())
    out.record(fmt::format("links/{}/efficiency", p.link), fmt::format("{:.4f}", before.efficiency), fmt::format("{:.4f}", p.efficiency),
               efficiency_from);
  if (latency_rows > 0)
    out.record(fmt::format("nics/{}/net_call_latency", p.nic), us(before.call_latency_us), us(p.call_latency_us),
               fmt::format("bisection to a zero median time error over {} rows <= 4 KiB of {}", latency_rows, ids));
  out.residual(topology, ids, calibrator.errors(predicted_before), calibrator.errors(calibrator.predict(p)));
}

}  // namespace

int run_calibrate(const CalibrateOptions& options, std::ostream& out) {
  std::vector<std::string> inputs = options.measurements;
  inputs.push_back(options.topology);
  core::check_output_path("-o", options.output, inputs);
  std::vector<calibration::Measurements> all;
  for (const auto& file : options.measurements) all.push_back(calibration::load_measurements(file));

  // Sweeps by the topology they ran on.
  std::map<std::string, std::vector<const calibration::MeasuredSweep*>> by_topology;
  json skipped = json::array();
  std::vector<const calibration::MeasuredPeer*> peers;
  for (const auto& wanted : options.datasets) {
    const bool found = std::any_of(all.begin(), all.end(), [&](const auto& m) {
      return std::any_of(m.sweeps.begin(), m.sweeps.end(), [&](const auto& s) { return s.id == wanted; });
    });
    if (!found) throw core::ConfigError("command line", "--dataset", fmt::format("no data set '{}' in the measurements given", wanted));
  }
  for (const auto& m : all) {
    for (const auto& s : m.skipped) skipped.push_back(s);
    for (const auto& p : m.peers) peers.push_back(&p);
    for (const auto& s : m.sweeps) {
      std::string why;
      if (!options.datasets.empty() && std::find(options.datasets.begin(), options.datasets.end(), s.id) == options.datasets.end()) {
        skipped.push_back(fmt::format("{}: held out (not named by --dataset)", s.id));
        continue;
      }
      if (s.gpus < 2) {
        // NCCL copies locally on one rank: no link carries anything to fit.
        skipped.push_back(fmt::format("{}: one GPU moves no data between GPUs (kept in the file as a record)", s.id));
        continue;
      }
      const auto algorithm = traces::parse_algorithm(s.algorithm);
      if (algorithm && !traces::algorithm_runs(*algorithm, s.op)) {
        // NCCL_ALGO names an algorithm NCCL lacks for this collective; NCCL then runs another.
        skipped.push_back(fmt::format("{}: NCCL has no {} {}: which algorithm ran is unknown", s.id, s.algorithm, traces::collective_name(s.op)));
        continue;
      }
      const auto topology = topology_for(s, options, why);
      if (topology.empty()) {
        skipped.push_back(fmt::format("{}: {}", s.id, why));
        continue;
      }
      by_topology[topology].push_back(&s);
    }
  }
  const bool host_figures = std::any_of(all.begin(), all.end(), [](const auto& m) { return m.host_to_device_gbps || m.device_to_host_gbps; });
  if (by_topology.empty() && !host_figures)
    throw core::ConfigError(options.measurements.front(), "", "no sweep the stock topologies can run (see --topology), and no host figures");

  FitRecord fit;
  auto& patch = fit.patch;
  auto& fitted = fit.fitted;
  auto& residuals = fit.residuals;
  for (const auto& [topology, sweeps] : by_topology) {
    const auto spec = topo::load_topology(topology);
    std::string ids;
    std::vector<std::string> id_list;
    for (const auto* s : sweeps) {
      ids += (ids.empty() ? "" : ", ") + s->id;
      id_list.push_back(s->id);
    }
    Calibrator calibrator(options, topology, sweeps);
    if (std::any_of(sweeps.begin(), sweeps.end(), [](const auto* s) { return s->nodes > 1; })) {
      fit_network(spec, topology, calibrator, ids, id_list, options.latencies_only, fit);
      continue;
    }
    const auto& gpu = spec.gpu_model(0);
    Parameters p;
    p.gpu = gpu.name;
    for (const auto& l : spec.links)
      if (l.kind == topo::LinkKind::kNvlink) p.link = l.model;
    if (p.link.empty()) throw core::ConfigError(topology, "/links", "calibration fits NVLink fabrics: this one has no NVLink link");
    const auto& link = spec.catalogue.links.at(p.link);
    p.efficiency = link.efficiency;
    p.launch_key = launch_key_of(sweeps, topology);
    p.launch_us = static_cast<double>(p.launch_key == "launch_overhead" || !gpu.launch_overhead_one_gpu_per_process
                                          ? gpu.launch_overhead
                                          : *gpu.launch_overhead_one_gpu_per_process) / 1e6;
    p.ll_step_us = static_cast<double>(gpu.protocols.at(topo::Protocol::kLL).step_latency) / 1e6;
    p.reduce_us = static_cast<double>(gpu.reduce_overhead) / 1e6;
    const Parameters before = p;
    const auto predicted_before = calibrator.predict(p);
    const auto [small_before, large_before] = calibrator.errors(predicted_before);

    // Bandwidth first: it moves the small rows too little to matter, the latencies move the large ones not at all.
    // busbw is nearly, not exactly, proportional to the efficiency: a few
    // multiplicative steps converge.
    std::string efficiency_from;
    if (auto ratios = calibrator.bandwidth_ratios(predicted_before); options.latencies_only) {
      // --fit latencies: the efficiency keeps its value.
    } else if (!ratios.empty()) {
      efficiency_from = fmt::format("median measured/predicted busbw over {} rows >= 64 MiB of {}", ratios.size(), ids);
      scale_efficiency(calibrator, p, std::move(ratios),
                       [&](const std::vector<Predictions>& predicted) { return calibrator.bandwidth_ratios(predicted); });
    } else if (!peers.empty()) {
      double line = 0;
      for (const auto& port : spec.links)
        if (port.kind == topo::LinkKind::kNvlink && (port.a == spec.gpus[0] || port.b == spec.gpus[0])) line += port.raw_bandwidth().bytes_per_second;
      std::vector<double> bw;
      for (const auto* peer : peers) bw.push_back(peer->unidirectional_gbps * 1e9);
      p.efficiency = std::clamp(median(bw) / line, 0.05, 1.0);
      efficiency_from = fmt::format("median unidirectional peer copy bandwidth ({} pairs) over the GPU's NVLink line rate", bw.size());
    }
    const std::size_t latency_rows = calibrator.fit_latencies(p);
    const auto predicted_after = calibrator.predict(p);
    const auto [small_after, large_after] = calibrator.errors(predicted_after);

    const std::string why = fmt::format("calibration: fabsim calibrate on {} (topology {})", ids, fs::path(topology).filename().string());
    patch.merge_patch(p.patch(why, id_list, !efficiency_from.empty()));
    auto record = [&](const std::string& name, const std::string& was, const std::string& now, const std::string& from) {
      fit.record(name, was, now, from);
    };
    if (!efficiency_from.empty())
      record(fmt::format("links/{}/efficiency", p.link), fmt::format("{:.4f}", before.efficiency), fmt::format("{:.4f}", p.efficiency), efficiency_from);
    if (latency_rows > 0) {
      const std::string from = fmt::format("least squares over {} rows <= 4 KiB of {}", latency_rows, ids);
      record(fmt::format("gpus/{}/{}", p.gpu, p.launch_key), us(before.launch_us), us(p.launch_us), from);
      record(fmt::format("gpus/{}/protocols/ll/step_latency", p.gpu), us(before.ll_step_us), us(p.ll_step_us), from);
      record(fmt::format("gpus/{}/reduce_overhead", p.gpu), us(before.reduce_us), us(p.reduce_us), from);
    }
    fit.residual(topology, ids, {small_before, large_before}, {small_after, large_after});
  }

  // Host transfers (harness) fix the PCIe link efficiency: pinned copies are
  // bounded by the GPU's PCIe link alone.
  std::vector<double> host_rates = pinned_copy_rates_gbps(all);
  for (auto& r : host_rates) r *= 1e9;  // bytes per second, as the link's line rate
  if (!host_rates.empty()) {
    const auto catalogue = topo::load_hardware_catalogue(topo::default_catalogue_path());
    const auto it = catalogue.links.find(options.pcie_link);
    if (it == catalogue.links.end() || it->second.kind != topo::LinkKind::kPcie)
      throw core::ConfigError("command line", "--pcie-link", fmt::format("'{}' is not a PCIe link model of {}", options.pcie_link, catalogue.file));
    const double line = it->second.lane_bandwidth.bytes_per_second;
    const double efficiency = std::clamp(median(host_rates) / line, 0.05, 1.0);
    const std::string from = fmt::format("median of {} pinned host-device copy rates (harness) over {}'s {:.1f} GB/s", host_rates.size(),
                                         options.pcie_link, line / 1e9);
    patch["links"][options.pcie_link]["efficiency"] = {{"value", efficiency}, {"source", "calibration: " + from}};
    fitted.push_back({{"parameter", fmt::format("links/{}/efficiency", options.pcie_link)},
                      {"before", fmt::format("{:.4f}", it->second.efficiency)},
                      {"after", fmt::format("{:.4f}", efficiency)},
                      {"fitted_from", from}});
  }

  // What one GPU's harness run says about the catalogue, beside what it fits.
  std::vector<std::string> not_compared;
  const auto comparisons = compare_host_figures(all, options.pcie_link, options.topology_dir, not_compared);
  for (const auto& s : not_compared) skipped.push_back(s);
  json host_comparisons = json::array();
  for (const auto& c : comparisons) host_comparisons.push_back(c.to_json());
  if (!options.latencies_only)
    if (const json path_patch = fit_host_path(comparisons, fitted); !path_patch.is_null()) patch.merge_patch(path_patch);

  const json profile = {{"format", "fabsim-calibration/1"},
                        {"created_by", "fabsim calibrate"},
                        {"measurements", options.measurements},
                        {"catalogue_patch", patch},
                        {"fitted", fitted},
                        {"residuals", residuals},
                        {"host_comparisons", host_comparisons},
                        {"skipped", skipped}};
  core::write_file_atomically(options.output, profile.dump(1) + "\n");
  for (const auto& f : fitted)
    fmt::print(out, "{:<40} {:>12} -> {:<12} {}\n", f["parameter"].get<std::string>(), f["before"].get<std::string>(),
               f["after"].get<std::string>(), f["fitted_from"].get<std::string>());
  for (const auto& r : residuals)
    fmt::print(out, "median time error on {}: latency-bound {:.1f}% -> {:.1f}%, bandwidth-bound {:.1f}% -> {:.1f}%\n",
               fs::path(r["topology"].get<std::string>()).filename().string(),
               100 * r["median_error_latency_bound"]["before"].get<double>(), 100 * r["median_error_latency_bound"]["after"].get<double>(),
               100 * r["median_error_bandwidth_bound"]["before"].get<double>(), 100 * r["median_error_bandwidth_bound"]["after"].get<double>());
  for (const auto& c : comparisons)
    fmt::print(out, "harness vs catalogue: {} {:.3g} {} (median of {}) against {:.3g} {} ({:.2f}x; {}): {}\n", c.quantity, c.measured, c.unit,
               c.runs, c.catalogue, c.unit, c.ratio(), c.catalogue_from, c.meaning);
  for (const auto& s : skipped) fmt::print(out, "skipped: {}\n", s.get<std::string>());
  fmt::print(out, "wrote {}\n", options.output);
  return 0;
}

}  // namespace fabsim::cli
