#include "topologies/topology_builder.hpp"

#include <fmt/format.h>

#include <array>

namespace fabsim::topo {

std::string device_kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kSwitch: return "switch";
    case DeviceKind::kNic: return "nic";
  }
  return "?";
}

namespace {

template <typename Map>
std::string keys_of(const Map& m) {
  std::string out;
  for (const auto& [k, v] : m) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

constexpr int kKinds = 4;
int kind_index(LinkKind k) { return static_cast<int>(k); }

}  // namespace

int TopologyBuilder::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int TopologyBuilder::add_device(std::string name, DeviceKind kind, const std::string& model, const std::string& json_path,
                                const std::string& model_path) {
  const auto& cat = spec_.catalogue;
  const bool known = kind == DeviceKind::kGpu      ? cat.gpus.contains(model)
                     : kind == DeviceKind::kSwitch ? cat.switches.contains(model)
                                                   : cat.nics.contains(model);
  if (const int existing = find(name); existing >= 0) {
    diag_.error(json_path, fmt::format("duplicate device name '{}' (first declared at {})", name, spec_.devices[existing].json_path));
    return -1;
  }
  if (!known) {
    // Still added, so links to it resolve and report their own problems.
    const std::string have = kind == DeviceKind::kGpu      ? keys_of(cat.gpus)
                             : kind == DeviceKind::kSwitch ? keys_of(cat.switches)
                                                           : keys_of(cat.nics);
    diag_.error(model_path.empty() ? json_path : model_path,
                fmt::format("unknown {} model '{}' (catalogue {} has: {})", device_kind_name(kind), model, cat.file, have));
  }
  const int id = static_cast<int>(spec_.devices.size());
  index_.emplace(name, id);
  if (kind == DeviceKind::kGpu) spec_.gpus.push_back(id);
  spec_.devices.push_back({std::move(name), kind, model, json_path});
  return id;
}

bool TopologyBuilder::add_link(int a, int b, const std::string& model_name, int count, const std::string& json_path,
                               std::optional<double> bandwidth, std::optional<double> latency, const std::string& model_path) {
  const auto model = spec_.catalogue.links.find(model_name);
  if (model == spec_.catalogue.links.end()) {
    diag_.error(model_path.empty() ? json_path : model_path, fmt::format("unknown link model '{}' (catalogue {} has: {})", model_name, spec_.catalogue.file,
                                       keys_of(spec_.catalogue.links)));
    return false;
  }
  if (a == b) {
    diag_.error(json_path, fmt::format("link from '{}' to itself (expected two different devices)", spec_.devices[a].name));
    return false;
  }
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.model = model_name;
  l.kind = model->second.kind;
  l.count = count;
  l.lane_bandwidth = bandwidth ? Bandwidth{*bandwidth} : model->second.lane_bandwidth;
  l.efficiency = model->second.efficiency * model->second.packet_efficiency();
  l.latency = latency ? static_cast<TimePs>(*latency + 0.5) : model->second.latency;
  l.routing_cost = model->second.routing_cost;
  l.bandwidth_overridden = bandwidth.has_value();
  l.latency_overridden = latency.has_value();
  l.json_path = json_path;
  spec_.links.push_back(std::move(l));
  return true;
}

void TopologyBuilder::check_ports() {
  const auto& cat = spec_.catalogue;
  // Ports of each kind a device offers; -1 where the kind cannot attach at all.
  auto capacity = [&](const DeviceSpec& d) {
    std::array<int, kKinds> ports{-1, -1, -1, -1};
    if (d.kind == DeviceKind::kGpu) {
      const auto& m = cat.gpus.at(d.model);
      ports[kind_index(LinkKind::kNvlink)] = m.link_ports;
      ports[kind_index(LinkKind::kPcie)] = m.pcie_ports;
    } else if (d.kind == DeviceKind::kSwitch) {
      const auto& m = cat.switches.at(d.model);
      ports[kind_index(m.link_kind)] = m.ports;
    } else {
      const auto& m = cat.nics.at(d.model);
      ports[kind_index(LinkKind::kPcie)] = m.pcie_ports;
      ports[kind_index(m.network_kind)] = m.network_ports;
    }
    return ports;
  };
  auto takes = [&](const std::array<int, kKinds>& ports) {
    std::string out;
    for (int k = 0; k < kKinds; ++k) {
      if (ports[k] < 0) continue;
      if (!out.empty()) out += " and ";
      out += link_kind_name(static_cast<LinkKind>(k));
    }
    return out;
  };
  std::vector<std::array<int, kKinds>> used(spec_.devices.size(), std::array<int, kKinds>{});
  std::vector<std::array<std::string, kKinds>> last_path(spec_.devices.size());
  for (const auto& l : spec_.links) {
    std::string refused;  // one message per link, naming every end that refuses it
    for (int end : {l.a, l.b}) {
      const auto& dev = spec_.devices[end];
      const auto ports = capacity(dev);
      if (ports[kind_index(l.kind)] < 0) {
        refused += fmt::format("{}{} '{}' ({} takes {} links)", refused.empty() ? "" : " nor to ", device_kind_name(dev.kind), dev.name,
                               dev.model, takes(ports));
        continue;
      }
      used[end][kind_index(l.kind)] += l.count;
      last_path[end][kind_index(l.kind)] = l.json_path;
    }
    if (!refused.empty())
      diag_.error(l.json_path, fmt::format("a link of kind {} ({}) cannot attach to {}", link_kind_name(l.kind), l.model, refused));
  }
  for (std::size_t d = 0; d < spec_.devices.size(); ++d) {
    const auto& dev = spec_.devices[d];
    const auto ports = capacity(dev);
    for (int k = 0; k < kKinds; ++k)
      if (ports[k] >= 0 && used[d][k] > ports[k])
        diag_.error(last_path[d][k], fmt::format("device '{}' ({}) has {} {} ports but its links use {}", dev.name, dev.model,
                                                 ports[k], link_kind_name(static_cast<LinkKind>(k)), used[d][k]));
  }
  // Once any NIC is cabled to a network, every NIC must be: an uncabled one is a missing rail.
  bool any_cabled = false;
  for (std::size_t d = 0; d < spec_.devices.size(); ++d)
    if (spec_.devices[d].kind == DeviceKind::kNic)
      for (int k = 0; k < kKinds; ++k) any_cabled = any_cabled || (is_network(static_cast<LinkKind>(k)) && used[d][k] > 0);
  for (std::size_t d = 0; d < spec_.devices.size() && any_cabled; ++d) {
    const auto& dev = spec_.devices[d];
    if (dev.kind != DeviceKind::kNic) continue;
    const auto& m = cat.nics.at(dev.model);
    if (used[d][kind_index(m.network_kind)] == 0)
      diag_.error(dev.json_path, fmt::format("nic '{}' has no {} link while other NICs do (a missing rail?)", dev.name,
                                             link_kind_name(m.network_kind)));
    if (used[d][kind_index(LinkKind::kPcie)] == 0)
      diag_.error(dev.json_path, fmt::format("nic '{}' has no PCIe link to a host or PCIe switch", dev.name));
  }
  if (spec_.gpus.empty()) diag_.error("/devices", "expected at least one device of kind \"gpu\"");
}

}  // namespace fabsim::topo
