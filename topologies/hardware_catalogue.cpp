#include "topologies/hardware_catalogue.hpp"

#include <fmt/format.h>

#include "sim/core/data_root.hpp"
#include "sim/core/limits.hpp"

#include "sim/core/json_reader.hpp"
#include "sim/core/text.hpp"


namespace fabsim::topo {

using core::Diagnostics;
using core::JsonObject;
using core::QuantityKind;
using nlohmann::json;

std::string protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

std::string link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kNvlink: return "nvlink";
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kInfiniband: return "infiniband";
    case LinkKind::kEthernet: return "ethernet";
  }
  return "?";
}

std::optional<LinkKind> parse_link_kind(std::string_view text) {
  for (LinkKind k : {LinkKind::kNvlink, LinkKind::kPcie, LinkKind::kInfiniband, LinkKind::kEthernet})
    if (link_kind_name(k) == text) return k;
  return std::nullopt;
}

std::string default_catalogue_path() { return core::data_path("configs/hardware/catalogue.json"); }

namespace {

/// The optional `"fitted_on": ["data set id", ...]` of a parameter entry.
std::vector<std::string> read_fitted_on(JsonObject& entry) {
  std::vector<std::string> ids;
  const json* list = entry.child("fitted_on", json::value_t::array, false);
  if (!list) return ids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& id = (*list)[i];
    if (!id.is_string() || id.get<std::string>().empty()) {
      entry.diagnostics().error(fmt::format("{}/{}", entry.path_of("fitted_on"), i), "expected a measurement data set id (a non-empty string)");
      continue;
    }
    ids.push_back(id.get<std::string>());
  }
  return ids;
}

/// Reads `{"value": ..., "source": "..."}` at parent[key]: every catalogue
/// number must say where it comes from.
class ParamReader {
 public:
  ParamReader(JsonObject& parent, std::vector<ParamSource>& sources) : parent_(parent), sources_(sources) {}

  std::optional<double> quantity(std::string_view key, QuantityKind kind, bool required = true) {
    auto entry = open(key, required);
    if (!entry) return std::nullopt;
    auto v = entry->quantity("value", kind);
    finish(key, *entry);
    return v;
  }
  std::optional<double> number(std::string_view key, bool required = true) {
    auto entry = open(key, required);
    if (!entry) return std::nullopt;
    auto v = entry->number("value");
    finish(key, *entry);
    return v;
  }
  /// A byte count > 0 (a buffer, a slot, a chunk: zero would stall or divide by zero).
  std::optional<double> positive_bytes(std::string_view key) {
    auto entry = open(key, true);
    if (!entry) return std::nullopt;
    auto v = entry->quantity("value", QuantityKind::kBytes);
    if (v && *v <= 0) entry->diagnostics().error(entry->path_of("value"), "expected a size > 0 bytes");
    finish(key, *entry);
    return v;
  }
  std::optional<bool> boolean(std::string_view key) {
    auto entry = open(key, true);
    if (!entry) return std::nullopt;
    auto v = entry->boolean("value");
    finish(key, *entry);
    return v;
  }
  /// An integer in [min, max]; callers narrow it to int, so max stays small.
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min = 1, std::int64_t max = 65536) {
    auto entry = open(key, true);
    if (!entry) return std::nullopt;
    auto v = entry->integer("value", true, min, max);
    finish(key, *entry);
    return v;
  }

 private:
  std::optional<JsonObject> open(std::string_view key, bool required) {
    const json* j = parent_.child(key, json::value_t::object, required);
    if (!j) return std::nullopt;
    current_ = j;
    return JsonObject(*j, parent_.path_of(key), parent_.diagnostics());
  }
  void finish(std::string_view key, JsonObject& entry) {
    const auto source = entry.string("source");
    if (source && source->empty()) entry.diagnostics().error(entry.path_of("source"), "expected a non-empty source");
    std::vector<std::string> fitted_on = read_fitted_on(entry);
    entry.reject_unknown_keys();
    // "value" may be missing (already reported): a const operator[] on a missing key is undefined.
    const auto v = current_->find("value");
    const std::string shown = v == current_->end() ? "" : v->is_string() ? v->get<std::string>() : v->dump();
    sources_.push_back({std::string(key), shown, source.value_or(""), std::move(fitted_on)});
  }

  JsonObject& parent_;
  std::vector<ParamSource>& sources_;
  const json* current_ = nullptr;
};

TimePs to_ps(std::optional<double> v) { return v ? static_cast<TimePs>(*v + 0.5) : 0; }

/// Reads a plain `"kind": "nvlink"` style key (a fact, not a measured value).
LinkKind read_kind(JsonObject& o, std::string_view key, bool network_only = false) {
  const auto text = o.string(key);
  if (!text) return LinkKind::kNvlink;
  const auto kind = parse_link_kind(*text);
  if (!kind || (network_only && !is_network(*kind))) {
    o.diagnostics().error(o.path_of(key), fmt::format("unknown link kind '{}' (expected {})", *text,
                                                      network_only ? "\"infiniband\" or \"ethernet\""
                                                                   : "\"nvlink\", \"pcie\", \"infiniband\" or \"ethernet\""));
    return LinkKind::kNvlink;
  }
  return *kind;
}

LinkModel read_link(const std::string& name, JsonObject& o) {
  LinkModel m;
  m.name = name;
  m.description = o.string("description").value_or("");
  m.kind = read_kind(o, "kind");
  ParamReader p(o, m.sources);
  m.lane_bandwidth = {p.quantity("bandwidth", QuantityKind::kBandwidth).value_or(0)};
  m.efficiency = p.number("efficiency").value_or(1.0);
  m.latency = to_ps(p.quantity("latency", QuantityKind::kTime));
  m.routing_cost = static_cast<int>(p.integer("routing_cost", 1, 1000000).value_or(1));
  if (o.has("mtu") || o.has("packet_header")) {
    m.mtu = static_cast<Bytes>(p.quantity("mtu", QuantityKind::kBytes).value_or(0));
    m.packet_header = static_cast<Bytes>(p.quantity("packet_header", QuantityKind::kBytes).value_or(0));
    if (m.mtu == 0) o.diagnostics().error(o.path_of("mtu"), "expected an MTU > 0 bytes");
  }
  if (m.efficiency <= 0 || m.efficiency > 1)
    o.diagnostics().error(o.path_of("efficiency"), fmt::format("expected an efficiency in (0, 1], found {}", m.efficiency));
  if (o.has("bandwidth") && m.lane_bandwidth.bytes_per_second <= 0)
    o.diagnostics().error(o.path_of("bandwidth"), "expected a bandwidth > 0");
  o.reject_unknown_keys();
  return m;
}

SwitchModel read_switch(const std::string& name, JsonObject& o) {
  SwitchModel m;
  m.name = name;
  m.description = o.string("description").value_or("");
  m.link_kind = read_kind(o, "link_kind");
  ParamReader p(o, m.sources);
  m.ports = static_cast<int>(p.integer("ports").value_or(0));
  m.traversal_latency = to_ps(p.quantity("traversal_latency", QuantityKind::kTime));
  m.input_buffer = static_cast<Bytes>(p.positive_bytes("input_buffer").value_or(1));
  m.in_network_reduction = p.boolean("in_network_reduction").value_or(false);
  o.reject_unknown_keys();
  return m;
}

ProtocolParams read_protocol(JsonObject& o, std::vector<ParamSource>& sources) {
  ProtocolParams m;
  ParamReader p(o, sources);
  m.payload_efficiency = p.number("payload_efficiency").value_or(1.0);
  m.step_latency = to_ps(p.quantity("step_latency", QuantityKind::kTime));
  if (o.has("net_step_latency")) m.net_step_latency = to_ps(p.quantity("net_step_latency", QuantityKind::kTime));
  m.tree_net_step_latency = o.has("tree_net_step_latency") ? to_ps(p.quantity("tree_net_step_latency", QuantityKind::kTime))
                                                            : m.net_step_latency;
  m.tree_step_latency = o.has("tree_step_latency") ? to_ps(p.quantity("tree_step_latency", QuantityKind::kTime)) : m.step_latency;
  m.slot_bytes = static_cast<Bytes>(p.positive_bytes("slot_bytes").value_or(1));
  m.slots = static_cast<int>(p.integer("slots", 1, 1024).value_or(8));
  m.chunk_slots = static_cast<int>(p.integer("chunk_slots", 1, 1024).value_or(1));
  m.slice_slots = static_cast<int>(p.integer("slice_slots", 1, 1024).value_or(1));
  m.threads = static_cast<int>(p.integer("threads", 1, 4096).value_or(512));
  m.channel_threshold = static_cast<Bytes>(p.quantity("channel_threshold", QuantityKind::kBytes).value_or(64));
  if (o.has("channel_cap"))
    m.channel_cap = Bandwidth{p.quantity("channel_cap", QuantityKind::kBandwidth).value_or(0)};
  if (const auto rate = p.quantity("net_staging_rate", QuantityKind::kBandwidth, false)) {
    if (*rate > 0) m.net_staging_rate = Bandwidth{*rate};
    else o.diagnostics().error(o.path_of("net_staging_rate"), fmt::format("expected a rate > 0, found {}", *rate));
  }
  m.tuner_base_latency = to_ps(p.quantity("tuner_base_latency", QuantityKind::kTime));
  m.tuner_hop_latency = to_ps(p.quantity("tuner_hop_latency", QuantityKind::kTime));
  if (m.payload_efficiency <= 0 || m.payload_efficiency > 1)
    o.diagnostics().error(o.path_of("payload_efficiency"), "expected a value in (0, 1]");
  if (m.slice_slots > m.chunk_slots || m.chunk_slots > m.slots)
    o.diagnostics().error(o.path(), "expected slice_slots <= chunk_slots <= slots");
  o.reject_unknown_keys();
  return m;
}

GpuModel read_gpu(const std::string& name, JsonObject& o) {
  GpuModel m;
  m.name = name;
  m.description = o.string("description").value_or("");
  m.architecture = o.string("architecture", false).value_or("hopper");
  if (m.architecture != "volta" && m.architecture != "ampere" && m.architecture != "hopper" && m.architecture != "blackwell")
    o.diagnostics().error(o.path_of("architecture"),
                          fmt::format("unknown architecture '{}' (expected volta, ampere, hopper or blackwell)", m.architecture));
  ParamReader p(o, m.sources);
  m.link_ports = static_cast<int>(p.integer("link_ports", 0).value_or(0));
  m.pcie_ports = static_cast<int>(p.integer("pcie_ports", 0).value_or(1));
  m.launch_overhead = to_ps(p.quantity("launch_overhead", QuantityKind::kTime));
  if (o.has("launch_overhead_one_gpu_per_process"))
    m.launch_overhead_one_gpu_per_process = to_ps(p.quantity("launch_overhead_one_gpu_per_process", QuantityKind::kTime));
  m.reduce_overhead = to_ps(p.quantity("reduce_overhead", QuantityKind::kTime));
  m.ring_channels = static_cast<int>(p.integer("ring_channels", 1, core::kMaxChannels).value_or(1));
  if (o.has("channel_drift_unit")) {
    m.channel_drift.unit = static_cast<Bytes>(p.quantity("channel_drift_unit", QuantityKind::kBytes).value_or(0));
    m.channel_drift.mean = to_ps(p.quantity("channel_drift_mean", QuantityKind::kTime));
    m.channel_drift.sd = to_ps(p.quantity("channel_drift_sd", QuantityKind::kTime));
  }
  m.ring_gather_scatter_efficiency = p.number("ring_gather_scatter_efficiency", false).value_or(1.0);
  if (!(m.ring_gather_scatter_efficiency > 0 && m.ring_gather_scatter_efficiency <= 1))
    o.diagnostics().error(o.path_of("ring_gather_scatter_efficiency"),
                          fmt::format("expected an efficiency in (0, 1], found {}", m.ring_gather_scatter_efficiency));
  m.p2p_channels = static_cast<int>(p.integer("p2p_channels", 1, core::kMaxChannels).value_or(1));
  m.p2p_chunk = static_cast<Bytes>(p.positive_bytes("p2p_chunk").value_or(1));
  if (o.has("p2p_net_chunk")) m.p2p_net_chunk = static_cast<Bytes>(p.positive_bytes("p2p_net_chunk").value_or(1));  // else NCCL's default
  m.p2p_ll_threshold = static_cast<Bytes>(p.quantity("p2p_ll_threshold", QuantityKind::kBytes).value_or(1));
  m.tuner_ring_bus_bandwidth = {p.quantity("tuner_ring_bus_bandwidth", QuantityKind::kBandwidth).value_or(1)};
  m.tuner_ll_max_bandwidth = {p.quantity("tuner_ll_max_bandwidth", QuantityKind::kBandwidth).value_or(1)};
  m.tuner_ll128_channel_max = {p.quantity("tuner_ll128_channel_max", QuantityKind::kBandwidth).value_or(1)};
  if (const json* protos = o.child("protocols", json::value_t::object)) {
    JsonObject po(*protos, o.path_of("protocols"), o.diagnostics());
    for (Protocol proto : kAllProtocols) {
      const std::string key = core::lower_case(protocol_name(proto));
      if (const json* pj = po.child(key, json::value_t::object)) {
        JsonObject pjo(*pj, po.path_of(key), o.diagnostics());
        std::vector<ParamSource> proto_sources;
        m.protocols[proto] = read_protocol(pjo, proto_sources);
        for (auto& s : proto_sources) m.sources.push_back({key + "." + s.name, s.value, s.source, s.fitted_on});
      }
    }
    po.reject_unknown_keys();
  }
  if (const json* nj = o.child("nvls", json::value_t::object, false)) {
    JsonObject no(*nj, o.path_of("nvls"), o.diagnostics());
    std::vector<ParamSource> nvls_sources;
    ParamReader np(no, nvls_sources);
    NvlsParams n;
    n.payload_efficiency = np.number("payload_efficiency").value_or(1.0);
    if (no.has("tree_payload_efficiency")) n.tree_payload_efficiency = np.number("tree_payload_efficiency");
    if (no.has("network_efficiency_beyond_two_nodes")) n.network_efficiency_beyond_two_nodes = np.number("network_efficiency_beyond_two_nodes");
    n.step_latency = to_ps(np.quantity("step_latency", QuantityKind::kTime));
    if (no.has("net_step_latency")) n.net_step_latency = to_ps(np.quantity("net_step_latency", QuantityKind::kTime));
    n.chunk_bytes = static_cast<Bytes>(np.positive_bytes("chunk_bytes").value_or(1));
    n.channels = static_cast<int>(np.integer("channels", 1, core::kMaxChannels).value_or(1));
    n.tuner_latency = to_ps(np.quantity("tuner_latency", QuantityKind::kTime));
    n.tuner_head_bandwidth = {np.quantity("tuner_head_bandwidth", QuantityKind::kBandwidth).value_or(1)};
    if (n.payload_efficiency <= 0 || n.payload_efficiency > 1)
      no.diagnostics().error(no.path_of("payload_efficiency"), "expected a value in (0, 1]");
    if (n.tree_payload_efficiency && (*n.tree_payload_efficiency <= 0 || *n.tree_payload_efficiency > 1))
      no.diagnostics().error(no.path_of("tree_payload_efficiency"), "expected a value in (0, 1]");
    if (n.network_efficiency_beyond_two_nodes && (*n.network_efficiency_beyond_two_nodes <= 0 || *n.network_efficiency_beyond_two_nodes > 1))
      no.diagnostics().error(no.path_of("network_efficiency_beyond_two_nodes"), "expected a value in (0, 1]");
    no.reject_unknown_keys();
    for (auto& src : nvls_sources) m.sources.push_back({"nvls." + src.name, src.value, src.source, src.fitted_on});
    m.nvls = n;
  }
  o.reject_unknown_keys();
  return m;
}

NicModel read_nic(const std::string& name, JsonObject& o) {
  NicModel m;
  m.name = name;
  m.description = o.string("description").value_or("");
  m.network_kind = read_kind(o, "network_kind", true);
  ParamReader p(o, m.sources);
  m.network_ports = static_cast<int>(p.integer("network_ports").value_or(1));
  m.pcie_ports = static_cast<int>(p.integer("pcie_ports").value_or(1));
  m.message_latency = to_ps(p.quantity("message_latency", QuantityKind::kTime));
  if (o.has("net_latency")) m.net_latency = to_ps(p.quantity("net_latency", QuantityKind::kTime));
  if (o.has("net_call_latency")) m.net_call_latency = to_ps(p.quantity("net_call_latency", QuantityKind::kTime));
  if (o.has("plugin_buffsize")) m.plugin_buffsize = static_cast<Bytes>(p.positive_bytes("plugin_buffsize").value_or(0));
  m.input_buffer = static_cast<Bytes>(p.positive_bytes("input_buffer").value_or(1));
  o.reject_unknown_keys();
  return m;
}

template <typename Model, typename Reader>
void read_section(JsonObject& root, std::string_view key, std::map<std::string, Model>& into, Reader reader) {
  const json* section = root.child(key, json::value_t::object);
  if (!section) return;
  for (const auto& [name, body] : section->items()) {
    JsonObject o(body, root.path_of(key) + "/" + name, root.diagnostics());
    if (o.is_object()) into.emplace(name, reader(name, o));
  }
}

}  // namespace

HardwareCatalogue load_hardware_catalogue(const std::string& path, const json& patch) {
  json doc = core::read_json_file(path);
  if (!patch.is_null()) doc.merge_patch(patch);
  Diagnostics diagnostics(patch.is_null() ? path : path + " (with the calibration profile's catalogue_patch)");
  JsonObject root(doc, "", diagnostics);
  HardwareCatalogue catalogue;
  catalogue.file = path;
  root.expect_format("fabsim-hardware/1");
  root.string("description", false);
  read_section(root, "links", catalogue.links, read_link);
  read_section(root, "switches", catalogue.switches, read_switch);
  read_section(root, "gpus", catalogue.gpus, read_gpu);
  if (root.has("nics")) read_section(root, "nics", catalogue.nics, read_nic);
  root.reject_unknown_keys();
  diagnostics.throw_if_any();
  return catalogue;
}

}  // namespace fabsim::topo
