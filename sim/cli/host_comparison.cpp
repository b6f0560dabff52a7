#include "sim/cli/host_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <queue>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/stock_systems.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::cli {

namespace {

using calibration::Measurements;
using calibration::median;

/// The median of one harness figure over the runs that have it, and how many do.
std::pair<double, int> median_of(const std::vector<Measurements>& all, std::optional<double> Measurements::*figure) {
  std::vector<double> v;
  for (const auto& m : all)
    if (m.*figure && *(m.*figure) > 0) v.push_back(*(m.*figure));
  return {v.empty() ? 0.0 : median(v), static_cast<int>(v.size())};
}

/// The catalogue's one-way latency from GPU 0 to its host's root complex:
/// the links' latencies and the traversal of every switch on the way, the
/// root complex included (shortest such path over PCIe links). 0: no path.
double pcie_path_to_host_us(const topo::TopologySpec& spec, std::string& path_text, std::vector<std::pair<std::string, double>>& terms) {
  const int source = spec.gpus.at(0);
  const auto n = spec.devices.size();
  std::vector<double> cost(n, std::numeric_limits<double>::infinity());
  std::vector<int> previous(n, -1);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  cost[source] = 0;
  queue.push({0, source});
  auto traversal = [&](int d) {
    const auto& dev = spec.devices[d];
    if (dev.kind != topo::DeviceKind::kSwitch) return 0.0;
    return static_cast<double>(spec.catalogue.switches.at(dev.model).traversal_latency) / 1e6;
  };
  auto is_host = [&](int d) { return spec.devices[d].kind == topo::DeviceKind::kSwitch && spec.devices[d].model.find("root-complex") != std::string::npos; };
  int host = -1;
  while (!queue.empty()) {
    const auto [c, d] = queue.top();
    queue.pop();
    if (c > cost[d]) continue;
    if (is_host(d)) {
      host = d;
      break;
    }
    if (d != source && spec.devices[d].kind == topo::DeviceKind::kGpu) continue;  // GPUs do not forward
    for (const auto& l : spec.links) {
      if (l.kind != topo::LinkKind::kPcie || (l.a != d && l.b != d)) continue;
      const int next = l.a == d ? l.b : l.a;
      const double through = c + static_cast<double>(l.latency) / 1e6 + traversal(next);
      if (through < cost[next]) {
        cost[next] = through;
        previous[next] = d;
        queue.push({through, next});
      }
    }
  }
  if (host < 0) return 0;
  for (int d = host; d >= 0; d = previous[d]) path_text = spec.devices[d].name + (path_text.empty() ? "" : " - " + path_text);
  // The distinct catalogue values on the path, each once (the patch scales a model, not a hop).
  auto add_term = [&](const std::string& key, double value_us) {
    if (std::none_of(terms.begin(), terms.end(), [&](const auto& t) { return t.first == key; })) terms.emplace_back(key, value_us);
  };
  for (int d = host; previous[d] >= 0; d = previous[d]) {
    for (const auto& l : spec.links)
      if (l.kind == topo::LinkKind::kPcie && ((l.a == d && l.b == previous[d]) || (l.b == d && l.a == previous[d]))) {
        add_term("links/" + l.model + "/latency", static_cast<double>(l.latency) / 1e6);
        break;
      }
    if (spec.devices[d].kind == topo::DeviceKind::kSwitch) add_term("switches/" + spec.devices[d].model + "/traversal_latency", traversal(d));
  }
  return cost[host];
}

/// nccl-tests' per-call time of NCCL on one rank: the median over the
/// one-GPU sweeps' rows of 4 KiB and less (a local copy; no peer, no fabric).
std::pair<double, int> one_rank_call_us(const std::vector<Measurements>& all) {
  std::vector<double> times;
  int runs = 0;
  for (const auto& m : all) {
    bool any = false;
    for (const auto& s : m.sweeps)
      if (s.gpus == 1)
        for (const auto& r : s.rows)
          if (r.bytes <= 4096 && r.time_us > 0) {
            times.push_back(r.time_us);
            any = true;
          }
    runs += any;
  }
  return {times.empty() ? 0.0 : median(times), runs};
}

}  // namespace

nlohmann::json HostComparison::to_json() const {
  return {{"quantity", quantity}, {"unit", unit},          {"measured", measured},     {"runs", runs},
          {"catalogue", catalogue}, {"ratio", ratio()}, {"catalogue_from", catalogue_from}, {"meaning", meaning}};
}

std::vector<double> pinned_copy_rates_gbps(const std::vector<Measurements>& all) {
  std::vector<double> rates;
  for (const auto& m : all)
    for (const auto& v : {m.host_to_device_gbps, m.device_to_host_gbps})
      if (v && *v > 0) rates.push_back(*v);
  return rates;
}

nlohmann::json fit_host_path(const std::vector<HostComparison>& comparisons, nlohmann::json& fitted) {
  for (const auto& c : comparisons) {
    if (c.terms.empty() || c.ratio() <= 0 || c.ratio() >= 1) continue;
    // Which part of the path is slow one round trip cannot tell: every term keeps its share.
    nlohmann::json patch = nlohmann::json::object();
    const std::string from = fmt::format("calibration: the {} measured ({:.3f} us, median of {} harness runs) is {:.2f}x the catalogue's "
                                         "{:.3f} us; every latency on the path scaled by that (host memory latency included: an upper bound)",
                                         c.quantity, c.measured, c.runs, c.ratio(), c.catalogue);
    for (const auto& [key, value] : c.terms) {
      const auto slash = key.find('/'), last = key.rfind('/');
      const std::string section = key.substr(0, slash), model = key.substr(slash + 1, last - slash - 1), field = key.substr(last + 1);
      const std::string scaled = fmt::format("{:.1f} ns", value * c.ratio() * 1e3);
      patch[section][model][field] = {{"value", scaled}, {"source", from}};
      fitted.push_back({{"parameter", key}, {"before", fmt::format("{:.1f} ns", value * 1e3)}, {"after", scaled}, {"fitted_from", from}});
    }
    return patch;
  }
  return nullptr;
}

std::vector<HostComparison> compare_host_figures(const std::vector<Measurements>& all, const std::string& pcie_link,
                                                 const std::string& topology_dir, std::vector<std::string>& skipped) {
  std::vector<HostComparison> out;
  std::string gpu;
  for (const auto& m : all)
    if (!m.gpu.empty()) gpu = m.gpu;
  if (gpu.empty()) return out;  // no harness run
  const auto system = calibration::host_path_system(gpu);
  if (system.topology.empty()) {
    skipped.push_back(fmt::format("host figures of '{}': no stock topology models its host path", gpu));
    return out;
  }
  const auto spec = topo::load_topology(topology_dir + "/" + system.topology);
  const auto& catalogue = spec.catalogue;

  const auto rates = pinned_copy_rates_gbps(all);
  if (const auto link = catalogue.links.find(pcie_link); !rates.empty() && link != catalogue.links.end()) {
    const double modelled = link->second.lane_bandwidth.bytes_per_second * link->second.efficiency * link->second.packet_efficiency() / 1e9;
    out.push_back({"pinned host-device copy rate", "GB/s", median(rates), static_cast<int>(rates.size()), modelled,
                   fmt::format("links/{}: bandwidth x efficiency", pcie_link),
                   "the same quantity: a pinned copy is bounded by the GPU's PCIe link alone", {}});
  }

  if (const auto [read, runs] = median_of(all, &Measurements::host_read_round_trip_us); runs > 0) {
    std::string path;
    std::vector<std::pair<std::string, double>> terms;
    const double one_way = pcie_path_to_host_us(spec, path, terms);
    if (one_way > 0)
      out.push_back({"GPU read round trip to host memory", "us", read, runs, 2 * one_way,
                     fmt::format("twice the links' latencies and switch traversals, root complex included, on {} ({})", path,
                                 system.topology),
                     "a bound: the measurement also holds the host's memory latency, which the model has not, so the "
                     "catalogue's figure should not exceed it",
                     terms});
    else
      skipped.push_back(fmt::format("host read round trip: {} has no PCIe path from a GPU to a root complex", system.topology));
  }

  const auto& model = catalogue.gpus.at(system.gpu_model);
  const double launch_overhead = static_cast<double>(model.launch_overhead) / 1e6;
  const std::string launch_from = fmt::format("gpus/{}/launch_overhead (NCCL's per-call cost on 4 GPUs)", system.gpu_model);
  if (const auto [call, runs] = one_rank_call_us(all); runs > 0)
    out.push_back({"NCCL call on one GPU, rows <= 4 KiB", "us", call, runs, launch_overhead, launch_from,
                   "a lower bound: one rank's call is a launch and a local copy, without the peers' "
                   "synchronisation and proxy work a multi-GPU call adds", {}});
  if (const auto [launch, runs] = median_of(all, &Measurements::launch_round_trip_us); runs > 0)
    out.push_back({"empty kernel, launched and waited for", "us", launch, runs, launch_overhead, launch_from,
                   "a part: the launch and completion NCCL's call also pays", {}});
  if (const auto [launch, runs] = median_of(all, &Measurements::launch_latency_us); runs > 0)
    out.push_back({"empty kernel, back to back", "us", launch, runs, launch_overhead, launch_from,
                   "a part: the launch rate, what a loop of calls pays at least per call", {}});
  return out;
}

}  // namespace fabsim::cli
