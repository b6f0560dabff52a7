#include "topologies/faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "sim/core/error.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabsim::topo {

FaultSpec parse_fault(std::string_view text, const std::string& origin, const std::string& where) {
  const auto fail = [&](const std::string& why) {
    throw core::ConfigError(origin, where,
                            fmt::format("fault '{}': {} (expected A~B=down, A~B=F with 0 < F < 1, or A=down, each optionally @TIME)", text, why));
  };
  FaultSpec f;
  f.text = std::string(text);
  f.where = where;
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) fail("no '='");
  const std::string_view target = text.substr(0, eq);
  std::string_view state = text.substr(eq + 1);
  if (const auto at = state.find('@'); at != std::string_view::npos) {
    std::string why;
    const auto t = core::parse_quantity(state.substr(at + 1), core::QuantityKind::kTime, why);
    if (!t) fail(fmt::format("'{}' is not a time ({})", state.substr(at + 1), why));
    f.at = static_cast<core::TimePs>(*t);
    state = state.substr(0, at);
  }
  if (const auto tilde = target.find('~'); tilde != std::string_view::npos) {
    f.a = std::string(target.substr(0, tilde));
    f.b = std::string(target.substr(tilde + 1));
    if (f.a.empty() || f.b.empty() || f.b.find('~') != std::string::npos) fail("expected two device names around '~'");
    if (f.a == f.b) fail("a bundle joins two different devices");
  } else {
    f.a = std::string(target);
    if (f.a.empty()) fail("no device name");
  }
  if (state == "down") {
    f.kind = f.b.empty() ? FaultKind::kDeviceDown : FaultKind::kLinkDown;
    return f;
  }
  if (f.b.empty()) fail("a device can only be down; a fraction applies to a link bundle A~B");
  const std::string number(state);
  char* end = nullptr;
  const double fraction = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(fraction > 0.0 && fraction < 1.0))
    fail(fmt::format("'{}' is neither \"down\" nor a fraction strictly between 0 and 1", state));
  f.kind = FaultKind::kLinkDegraded;
  f.fraction = fraction;
  return f;
}

std::vector<ResolvedFault> resolve_faults(const TopologySpec& spec, const std::vector<FaultSpec>& faults, const std::string& origin) {
  std::vector<ResolvedFault> out;
  if (faults.empty()) return out;
  std::unordered_map<std::string, int> by_name;
  for (std::size_t d = 0; d < spec.devices.size(); ++d) by_name.emplace(spec.devices[d].name, static_cast<int>(d));
  core::Diagnostics diag(origin);
  auto lookup = [&](const FaultSpec& f, const std::string& name) {
    const auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    diag.error(f.where, fmt::format("fault '{}': no device named '{}' in {}", f.text, name, spec.file));
    return -1;
  };
  for (const auto& f : faults) {
    ResolvedFault r{f, {}, -1};
    const int a = lookup(f, f.a);
    const int b = f.b.empty() ? -1 : lookup(f, f.b);
    if (a < 0 || (!f.b.empty() && b < 0)) continue;
    if (f.kind == FaultKind::kDeviceDown) {
      if (spec.devices[static_cast<std::size_t>(a)].kind == DeviceKind::kGpu) {
        diag.error(f.where, fmt::format("fault '{}': '{}' is a GPU; a failed GPU ends the job (NCCL aborts the communicator): "
                                        "run on the remaining GPUs instead (-g, or a trace without that rank)", f.text, f.a));
        continue;
      }
      r.device = a;
    }
    for (std::size_t l = 0; l < spec.links.size(); ++l) {
      const auto& link = spec.links[l];
      const bool hit = b < 0 ? (link.a == a || link.b == a) : ((link.a == a && link.b == b) || (link.a == b && link.b == a));
      if (hit) r.links.push_back(static_cast<int>(l));
    }
    if (r.links.empty()) {
      diag.error(f.where, b < 0 ? fmt::format("fault '{}': device '{}' has no links", f.text, f.a)
                                : fmt::format("fault '{}': no link joins '{}' and '{}' in {}", f.text, f.a, f.b, spec.file));
      continue;
    }
    out.push_back(std::move(r));
  }
  diag.throw_if_any();
  return out;
}

std::vector<ResolvedFault> apply_faults_from_start(TopologySpec& spec, const std::vector<ResolvedFault>& faults) {
  std::vector<ResolvedFault> timed;
  for (const auto& f : faults) {
    if (f.spec.at) {
      timed.push_back(f);
      continue;
    }
    for (int l : f.links) {
      auto& link = spec.links[static_cast<std::size_t>(l)];
      if (!link.fault.empty()) link.fault += ", ";
      link.fault += f.spec.text;
      if (f.down()) {
        link.down = true;
      } else {
        link.kept *= f.spec.fraction;
        link.lane_bandwidth = link.lane_bandwidth.scaled(f.spec.fraction);
      }
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const ResolvedFault& x, const ResolvedFault& y) { return *x.spec.at < *y.spec.at; });
  return timed;
}

void check_reachable_under_faults(const TopologySpec& spec, const std::vector<ResolvedFault>& faults, const std::vector<int>& gpus,
                                  const std::string& origin) {
  if (faults.empty()) return;
  std::vector<char> dead(spec.links.size(), 0);
  for (std::size_t l = 0; l < spec.links.size(); ++l) dead[l] = spec.links[l].down ? 1 : 0;
  std::string names;
  for (const auto& f : faults)
    if (f.down()) {
      for (int l : f.links) dead[static_cast<std::size_t>(l)] = 1;
      if (!names.empty()) names += ", ";
      names += f.spec.text;
    }
  if (names.empty()) return;
  const auto cut = unreachable_gpu_pairs(spec, dead, gpus, 4);
  if (cut.empty()) return;
  std::string pairs;
  for (const auto& [x, y] : cut)
    pairs += fmt::format("{}'{}' cannot reach '{}'", pairs.empty() ? "" : "; ", spec.devices[spec.gpus[x]].name, spec.devices[spec.gpus[y]].name);
  throw core::ConfigError(origin, faults.front().spec.where,
                          fmt::format("with the faults {} in force, {} (every GPU of the run must reach the peers it talks to)", names, pairs));
}

}  // namespace fabsim::topo
