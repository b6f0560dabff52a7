#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "sim/core/json_reader.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

using core::Diagnostics;
using core::JsonObject;
using core::QuantityKind;
using nlohmann::json;

namespace {

template <typename Map>
std::string keys_of(const Map& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string resolve_catalogue(const std::string& topology_path, JsonObject& root, const std::string& override_path) {
  const auto declared = root.string("hardware", false);
  if (!override_path.empty()) return override_path;
  if (!declared) return default_catalogue_path();
  const std::filesystem::path p(*declared);
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(topology_path).parent_path() / p).lexically_normal().string();
}

void read_devices(JsonObject& root, TopologySpec& spec, std::map<std::string, int, std::less<>>& index) {
  const json* devices = root.child("devices", json::value_t::array);
  if (!devices) return;
  Diagnostics& diag = root.diagnostics();
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const std::string path = fmt::format("/devices/{}", i);
    JsonObject o((*devices)[i], path, diag);
    if (!o.is_object()) continue;
    DeviceSpec d;
    d.json_path = path;
    d.name = o.string("name").value_or("");
    const auto kind = o.string("kind");
    d.model = o.string("model").value_or("");
    o.reject_unknown_keys();
    if (kind) {
      if (*kind == "gpu") {
        d.kind = DeviceKind::kGpu;
        if (!d.model.empty() && !spec.catalogue.gpus.contains(d.model))
          diag.error(o.path_of("model"), fmt::format("unknown gpu model '{}' (catalogue {} has: {})", d.model,
                                                     spec.catalogue.file, keys_of(spec.catalogue.gpus)));
      } else if (*kind == "switch") {
        d.kind = DeviceKind::kSwitch;
        if (!d.model.empty() && !spec.catalogue.switches.contains(d.model))
          diag.error(o.path_of("model"), fmt::format("unknown switch model '{}' (catalogue {} has: {})", d.model,
                                                     spec.catalogue.file, keys_of(spec.catalogue.switches)));
      } else {
        diag.error(o.path_of("kind"), fmt::format("unknown device kind '{}' (expected \"gpu\" or \"switch\")", *kind));
      }
    }
    if (d.name.empty()) continue;
    if (index.contains(d.name)) {
      diag.error(o.path_of("name"), fmt::format("duplicate device name '{}' (first declared at {})", d.name,
                                                spec.devices[index.at(d.name)].json_path));
      continue;
    }
    index.emplace(d.name, static_cast<int>(spec.devices.size()));
    if (d.kind == DeviceKind::kGpu) spec.gpus.push_back(static_cast<int>(spec.devices.size()));
    spec.devices.push_back(std::move(d));
  }
}

void read_links(JsonObject& root, TopologySpec& spec, const std::map<std::string, int, std::less<>>& index) {
  const json* links = root.child("links", json::value_t::array);
  if (!links) return;
  Diagnostics& diag = root.diagnostics();
  for (std::size_t i = 0; i < links->size(); ++i) {
    const std::string path = fmt::format("/links/{}", i);
    JsonObject o((*links)[i], path, diag);
    if (!o.is_object()) continue;
    LinkSpec l;
    l.json_path = path;
    bool ok = true;
    for (const char* end : {"a", "b"}) {
      const auto name = o.string(end);
      if (!name) {
        ok = false;
        continue;
      }
      const auto it = index.find(*name);
      if (it == index.end()) {
        diag.error(o.path_of(end), fmt::format("link to a missing device '{}' (no device of that name is declared)", *name));
        ok = false;
        continue;
      }
      (std::string_view(end) == "a" ? l.a : l.b) = it->second;
    }
    l.model = o.string("model").value_or("");
    l.count = static_cast<int>(o.integer("count", false, 1).value_or(1));
    const auto bandwidth = o.quantity("bandwidth", QuantityKind::kBandwidth, false);
    const auto latency = o.quantity("latency", QuantityKind::kTime, false);
    o.reject_unknown_keys();
    const auto model = spec.catalogue.links.find(l.model);
    if (!l.model.empty() && model == spec.catalogue.links.end()) {
      diag.error(o.path_of("model"), fmt::format("unknown link model '{}' (catalogue {} has: {})", l.model,
                                                 spec.catalogue.file, keys_of(spec.catalogue.links)));
      ok = false;
    }
    if (bandwidth && *bandwidth <= 0) {
      diag.error(o.path_of("bandwidth"), "expected a bandwidth > 0 (per link, per direction)");
      ok = false;
    }
    if (ok && l.a == l.b) {
      diag.error(path, fmt::format("link from '{}' to itself (expected two different devices)", spec.devices[l.a].name));
      ok = false;
    }
    if (!ok || model == spec.catalogue.links.end()) continue;
    l.lane_bandwidth = bandwidth ? Bandwidth{*bandwidth} : model->second.lane_bandwidth;
    l.efficiency = model->second.efficiency;
    l.latency = latency ? static_cast<TimePs>(*latency + 0.5) : model->second.latency;
    spec.links.push_back(std::move(l));
  }
}

void check_ports(TopologySpec& spec, Diagnostics& diag) {
  std::vector<int> used(spec.devices.size(), 0);
  std::vector<std::string> last_path(spec.devices.size());
  for (const auto& l : spec.links) {
    used[l.a] += l.count;
    used[l.b] += l.count;
    last_path[l.a] = last_path[l.b] = l.json_path;
  }
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    const auto& dev = spec.devices[d];
    int ports = 0;
    if (dev.kind == DeviceKind::kGpu && spec.catalogue.gpus.contains(dev.model)) ports = spec.catalogue.gpus.at(dev.model).link_ports;
    if (dev.kind == DeviceKind::kSwitch && spec.catalogue.switches.contains(dev.model))
      ports = spec.catalogue.switches.at(dev.model).ports;
    if (ports > 0 && used[d] > ports)
      diag.error(last_path[d], fmt::format("device '{}' ({}) has {} ports but its links use {}", dev.name, dev.model, ports, used[d]));
  }
  if (spec.gpus.empty()) diag.error("/devices", "expected at least one device of kind \"gpu\"");
}

}  // namespace

TopologySpec load_topology(const std::string& path, const std::string& catalogue_override) {
  const json doc = core::read_json_file(path);
  Diagnostics diag(path);
  JsonObject root(doc, "", diag);
  TopologySpec spec;
  spec.file = path;
  root.expect_format("fabsim-topology/1");
  spec.name = root.string("name").value_or("");
  spec.description = root.string("description", false).value_or("");
  spec.catalogue = load_hardware_catalogue(resolve_catalogue(path, root, catalogue_override));
  std::map<std::string, int, std::less<>> index;
  read_devices(root, spec, index);
  read_links(root, spec, index);
  root.reject_unknown_keys();
  check_ports(spec, diag);
  diag.throw_if_any();
  return spec;
}

}  // namespace fabsim::topo
