#include <fmt/format.h>

#include <filesystem>

#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "topologies/topology_builder.hpp"
#include "topologies/topology_generator.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

using core::Diagnostics;
using core::JsonObject;
using core::QuantityKind;
using nlohmann::json;

namespace {

std::string resolve_catalogue(const std::string& topology_path, const std::optional<std::string>& declared,
                              const std::string& override_path) {
  if (!override_path.empty()) return override_path;
  if (!declared) return default_catalogue_path();
  return core::resolve_relative(topology_path, *declared);
}

void read_devices(JsonObject& root, TopologyBuilder& builder) {
  const json* devices = root.child("devices", json::value_t::array);
  if (!devices) return;
  Diagnostics& diag = root.diagnostics();
  if (devices->size() > static_cast<std::size_t>(core::kMaxDevices)) {
    diag.error("/devices", fmt::format("{} devices: fabsim holds at most {}", devices->size(), core::kMaxDevices));
    return;
  }
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const std::string path = fmt::format("/devices/{}", i);
    JsonObject o((*devices)[i], path, diag);
    if (!o.is_object()) continue;
    const auto name = o.string("name");
    const auto kind = o.string("kind");
    const auto model = o.string("model");
    o.reject_unknown_keys();
    std::optional<DeviceKind> k;
    if (kind == "gpu") k = DeviceKind::kGpu;
    else if (kind == "switch") k = DeviceKind::kSwitch;
    else if (kind == "nic") k = DeviceKind::kNic;
    else if (kind) diag.error(o.path_of("kind"), fmt::format("unknown device kind '{}' (expected \"gpu\", \"switch\" or \"nic\")", *kind));
    if (name && builder.find(*name) >= 0) {
      diag.error(o.path_of("name"), fmt::format("duplicate device name '{}' (first declared at {})", *name,
                                                builder.spec().devices[builder.find(*name)].json_path));
      continue;
    }
    if (!name || !k || !model) continue;
    if (name->empty()) {
      diag.error(o.path_of("name"), "expected a non-empty device name");
      continue;
    }
    builder.add_device(*name, *k, *model, path, o.path_of("model"));
  }
}

void read_links(JsonObject& root, TopologyBuilder& builder) {
  const json* links = root.child("links", json::value_t::array);
  if (!links) return;
  Diagnostics& diag = root.diagnostics();
  if (links->size() > static_cast<std::size_t>(core::kMaxLinks)) {
    diag.error("/links", fmt::format("{} link bundles: fabsim holds at most {} links", links->size(), core::kMaxLinks));
    return;
  }
  for (std::size_t i = 0; i < links->size(); ++i) {
    const std::string path = fmt::format("/links/{}", i);
    JsonObject o((*links)[i], path, diag);
    if (!o.is_object()) continue;
    int ends[2] = {-1, -1};
    bool ok = true;
    for (int e = 0; e < 2; ++e) {
      const char* key = e == 0 ? "a" : "b";
      const auto name = o.string(key);
      if (!name) {
        ok = false;
        continue;
      }
      ends[e] = builder.find(*name);
      if (ends[e] < 0) {
        diag.error(o.path_of(key), fmt::format("link to a missing device '{}' (no device of that name is declared)", *name));
        ok = false;
      }
    }
    const auto model = o.string("model");
    const int count = static_cast<int>(o.integer("count", false, 1, core::kMaxLinksPerBundle).value_or(1));
    const auto bandwidth = o.quantity("bandwidth", QuantityKind::kBandwidth, false);
    const auto latency = o.quantity("latency", QuantityKind::kTime, false);
    o.reject_unknown_keys();
    if (bandwidth && *bandwidth <= 0) {
      diag.error(o.path_of("bandwidth"), "expected a bandwidth > 0 (per link, per direction)");
      ok = false;
    }
    if (!ok || !model) continue;
    builder.add_link(ends[0], ends[1], *model, count, path, bandwidth, latency, o.path_of("model"));
  }
}

void read_routing(JsonObject& root, TopologySpec& spec) {
  const json* r = root.child("routing", json::value_t::object, false);
  if (!r) return;
  JsonObject o(*r, "/routing", root.diagnostics());
  if (const auto ecmp = o.string("network_ecmp", false)) {
    if (*ecmp == "flow-hash") spec.routing.network_ecmp = EcmpMode::kFlowHash;
    else if (*ecmp == "spray") spec.routing.network_ecmp = EcmpMode::kSpray;
    else o.diagnostics().error(o.path_of("network_ecmp"), fmt::format("unknown ECMP mode '{}' (expected \"flow-hash\" or \"spray\")", *ecmp));
  }
  spec.routing.hash_seed = static_cast<std::uint64_t>(o.integer("hash_seed", false, 0).value_or(0));
  o.reject_unknown_keys();
}

}  // namespace

namespace {

/// A network plugin that sets NCCL_BUFFSIZE for the process (aws-ofi-nccl on
/// p5) resizes the Simple protocol's FIFO steps of every GPU on the fabric,
/// as the environment variable does; NICs that disagree are refused.
void apply_plugin_buffsize(TopologySpec& spec) {
  // A NIC without plugin_buffsize runs with NCCL's default buffer, so it disagrees with one that sets it:
  // NCCL loads one network plugin per process, and the process has one NCCL_BUFFSIZE.
  const auto buffsize_text = [](Bytes b) { return b == 0 ? std::string("NCCL's default") : fmt::format("{} B", b); };
  Bytes buffsize = 0;
  const DeviceSpec* first_nic = nullptr;
  for (const auto& d : spec.devices) {
    if (d.kind != DeviceKind::kNic) continue;
    const Bytes own = spec.catalogue.nics.at(d.model).plugin_buffsize;
    if (first_nic == nullptr) {
      first_nic = &d;
      buffsize = own;
    } else if (own != buffsize) {
      throw core::ConfigError(spec.file, d.json_path,
                              fmt::format("NIC '{}' ({}) and NIC '{}' ({}) run with different NCCL_BUFFSIZE ({} and {}): "
                                          "NCCL loads one network plugin per process, so its NICs are of one family",
                                          first_nic->name, first_nic->model, d.name, d.model, buffsize_text(buffsize), buffsize_text(own)));
    }
  }
  if (buffsize == 0) return;
  for (auto& [name, gpu] : spec.catalogue.gpus) {
    auto& simple = gpu.protocols.at(Protocol::kSimple);
    simple.slot_bytes = std::max<Bytes>(1, buffsize / static_cast<Bytes>(std::max(1, simple.slots)));
  }
}

}  // namespace

TopologySpec load_topology(const std::string& path, const std::string& catalogue_override, const json& patch,
                           const json& catalogue_patch) {
  json doc = core::read_json_file(path);
  if (!patch.is_null()) doc.merge_patch(patch);
  Diagnostics diag(patch.is_null() ? path : path + " (with the scenario's topology_patch)");
  JsonObject root(doc, "", diag);
  TopologySpec spec;
  spec.file = path;
  root.expect_format("fabsim-topology/1");
  spec.name = root.string("name").value_or("");
  spec.description = root.string("description", false).value_or("");
  const auto hardware = root.string("hardware", false);
  spec.hardware = hardware.value_or("");
  const std::string catalogue_path = resolve_catalogue(path, hardware, catalogue_override);
  if (hardware && catalogue_override.empty())
    if (const auto why = core::unreadable_reference(catalogue_path, "this file")) throw core::ConfigError(path, "/hardware", *why);
  spec.catalogue = load_hardware_catalogue(catalogue_path, catalogue_patch);
  read_routing(root, spec);
  TopologyBuilder builder(spec, diag);
  if (root.has("generate")) {
    if (root.has("devices") || root.has("links"))
      diag.error("/generate", "expected either \"generate\" or \"devices\" and \"links\", not both");
    if (const json* g = root.child("generate", json::value_t::object)) {
      JsonObject gen(*g, "/generate", diag);
      generate_topology(gen, builder);
    }
  } else {
    read_devices(root, builder);
    read_links(root, builder);
  }
  root.reject_unknown_keys();
  diag.throw_if_any();  // port checks need every model resolved
  builder.check_ports();
  diag.throw_if_any();
  apply_plugin_buffsize(spec);
  return spec;
}

}  // namespace fabsim::topo
