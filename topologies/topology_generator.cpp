#include "topologies/topology_generator.hpp"

#include <fmt/format.h>

#include <optional>

#include "sim/core/limits.hpp"

namespace fabsim::topo {

using core::JsonObject;
using nlohmann::json;

namespace {

/// NVLink switch chips or NICs in one node: far above any real node.
constexpr std::int64_t kMaxSwitchesPerNode = 1024;

struct NvlinkPart {
  std::string link_model;
  std::string switch_model;           ///< empty: GPUs meshed directly
  std::vector<int> links_per_switch;  ///< one entry per NVLink switch chip
  int mesh_links = 0;                 ///< links between every GPU pair of a mesh
};

struct PciePart {
  std::string switch_model;
  std::string link_model;
  int gpus_per_switch = 1;
  std::string host_model;  ///< empty: no root complex device
  int gpus_per_host = 0;   ///< GPUs under one root complex (a tray's CPU); 0: the whole node

  /// PCIe switches of a node of `gpus` GPUs.
  int switches(int gpus) const { return (gpus + gpus_per_switch - 1) / gpus_per_switch; }
  /// PCIe switches under one root complex.
  int switches_per_host(int gpus) const { return gpus_per_host > 0 ? gpus_per_host / gpus_per_switch : switches(gpus); }
};

struct NicPart {
  std::string model;
  int per_node = 0;
  int rails = 0;  ///< rails the NICs are cabled to: NIC k on rail k % rails; 0: one rail per NIC
};

struct NodeTemplate {
  int gpus = 0;
  std::string gpu_model;
  std::optional<NvlinkPart> nvlink;
  std::optional<PciePart> pcie;
  std::optional<NicPart> nics;
};

struct NetworkPart {
  int tiers = 2;
  std::string switch_model;
  std::string link_model;
  bool rails = true;
  int nodes_per_leaf = 0;
  int nodes_per_pod = 0;
  std::vector<int> oversubscription;  ///< per tier below the top: leaf, then aggregation
};

/// A count >= 1; `max` keeps every product of counts the generator forms in range.
int positive(JsonObject& o, std::string_view key, bool required = true, int fallback = 0,
             std::int64_t max = core::kMaxGpus) {
  return static_cast<int>(o.integer(key, required, 1, max).value_or(fallback));
}

std::optional<NvlinkPart> read_nvlink(JsonObject& node) {
  const json* j = node.child("nvlink", json::value_t::object, false);
  if (!j) return std::nullopt;
  JsonObject o(*j, node.path_of("nvlink"), node.diagnostics());
  NvlinkPart p;
  p.link_model = o.string("link_model").value_or("");
  if (o.has("mesh_links")) {
    p.mesh_links = positive(o, "mesh_links", true, 0, core::kMaxLinksPerBundle);
  } else {
    p.switch_model = o.string("switch_model").value_or("");
    if (o.has("switches")) {
      // "switches": n with one "links_per_switch" count for all of them
      const int switches = positive(o, "switches", true, 0, kMaxSwitchesPerNode);
      const int links = positive(o, "links_per_switch", false, 1, core::kMaxLinksPerBundle);
      p.links_per_switch.assign(static_cast<std::size_t>(switches), links);
    } else if (const json* per = o.child("links_per_switch", json::value_t::array)) {
      // "links_per_switch": [5, 4, 4, 5], one entry per switch chip
      for (std::size_t i = 0; i < per->size(); ++i) {
        const auto& v = (*per)[i];
        if (!core::integer_in_range(v, 1, core::kMaxLinksPerBundle)) {
          o.diagnostics().error(fmt::format("{}/{}", o.path_of("links_per_switch"), i),
                                fmt::format("expected a whole number of links from 1 to {}", core::kMaxLinksPerBundle));
          continue;
        }
        if (p.links_per_switch.size() >= static_cast<std::size_t>(kMaxSwitchesPerNode)) {
          o.diagnostics().error(o.path_of("links_per_switch"), fmt::format("expected at most {} switch chips per node", kMaxSwitchesPerNode));
          break;
        }
        p.links_per_switch.push_back(v.get<int>());
      }
    }
  }
  o.reject_unknown_keys();
  return p;
}

std::optional<PciePart> read_pcie(JsonObject& node) {
  const json* j = node.child("pcie", json::value_t::object, false);
  if (!j) return std::nullopt;
  JsonObject o(*j, node.path_of("pcie"), node.diagnostics());
  PciePart p;
  p.switch_model = o.string("switch_model").value_or("");
  p.link_model = o.string("link_model").value_or("");
  p.gpus_per_switch = positive(o, "gpus_per_switch", false, 1);
  p.host_model = o.string("host_model", false).value_or("");
  if (o.has("gpus_per_host")) {
    p.gpus_per_host = positive(o, "gpus_per_host");
    if (p.host_model.empty()) o.diagnostics().error(o.path_of("gpus_per_host"), "GPUs per host need a \"host_model\" for the hosts");
    else if (p.gpus_per_host > 0 && p.gpus_per_switch > 0 && p.gpus_per_host % p.gpus_per_switch != 0)
      o.diagnostics().error(o.path_of("gpus_per_host"), fmt::format("{} GPUs per host is not a multiple of {} GPUs per PCIe switch: a switch would "
                                                                    "straddle two hosts", p.gpus_per_host, p.gpus_per_switch));
  }
  o.reject_unknown_keys();
  return p;
}

NodeTemplate read_node(JsonObject& gen) {
  NodeTemplate n;
  const json* j = gen.child("node", json::value_t::object);
  if (!j) return n;
  JsonObject o(*j, gen.path_of("node"), gen.diagnostics());
  n.gpus = positive(o, "gpus");
  n.gpu_model = o.string("gpu_model").value_or("");
  n.nvlink = read_nvlink(o);
  n.pcie = read_pcie(o);
  if (const json* nj = o.child("nics", json::value_t::object, false)) {
    JsonObject no(*nj, o.path_of("nics"), o.diagnostics());
    n.nics = NicPart{no.string("model").value_or(""), positive(no, "per_node", true, 0, kMaxSwitchesPerNode), 0};
    if (no.has("rails")) {
      n.nics->rails = positive(no, "rails", true, 0, kMaxSwitchesPerNode);
      if (n.nics->rails > 0 && n.nics->per_node % n.nics->rails != 0)
        no.diagnostics().error(no.path_of("rails"), fmt::format("{} NICs per node do not divide into {} rails evenly", n.nics->per_node, n.nics->rails));
    }
    no.reject_unknown_keys();
    if (!n.pcie) o.diagnostics().error(o.path_of("nics"), "NICs attach over PCIe: expected a \"pcie\" section in the node");
  }
  o.reject_unknown_keys();
  return n;
}

std::optional<NetworkPart> read_network(JsonObject& gen) {
  const json* j = gen.child("network", json::value_t::object, false);
  if (!j) return std::nullopt;
  JsonObject o(*j, gen.path_of("network"), gen.diagnostics());
  NetworkPart n;
  n.tiers = positive(o, "tiers", true, 0, 1024);
  if (n.tiers > 3) o.diagnostics().error(o.path_of("tiers"), fmt::format("expected 1, 2 or 3 tiers, found {}", n.tiers));
  n.switch_model = o.string("switch_model").value_or("");
  n.link_model = o.string("link_model").value_or("");
  n.rails = o.boolean("rails", false).value_or(true);
  n.nodes_per_leaf = positive(o, "nodes_per_leaf");
  if (n.tiers == 3) n.nodes_per_pod = positive(o, "nodes_per_pod");
  if (const json* os = o.child("oversubscription", json::value_t::array, false)) {
    for (std::size_t i = 0; i < os->size(); ++i) {
      const auto& v = (*os)[i];
      if (!core::integer_in_range(v, 1, 1024))
        o.diagnostics().error(fmt::format("{}/{}", o.path_of("oversubscription"), i), "expected a whole ratio from 1 to 1024 (2 means 2:1)");
      else n.oversubscription.push_back(v.get<int>());
    }
  }
  if (static_cast<int>(n.oversubscription.size()) > std::max(0, n.tiers - 1))
    o.diagnostics().error(o.path_of("oversubscription"),
                          fmt::format("expected at most {} ratios (one per tier below the top), found {}", n.tiers - 1, n.oversubscription.size()));
  n.oversubscription.resize(static_cast<std::size_t>(std::max(0, n.tiers - 1)), 1);
  o.reject_unknown_keys();
  return n;
}

/// Builds one node; returns the device index of each NIC, in rail order.
std::vector<int> build_node(TopologyBuilder& b, const NodeTemplate& t, const std::string& prefix, const std::string& path) {
  std::vector<int> gpus;
  for (int g = 0; g < t.gpus; ++g) gpus.push_back(b.add_device(fmt::format("{}gpu{}", prefix, g), DeviceKind::kGpu, t.gpu_model, path));
  if (t.nvlink) {
    const auto& nv = *t.nvlink;
    if (nv.switch_model.empty()) {
      for (int x = 0; x < t.gpus; ++x)
        for (int y = x + 1; y < t.gpus; ++y) b.add_link(gpus[x], gpus[y], nv.link_model, nv.mesh_links, path);
    } else {
      for (std::size_t s = 0; s < nv.links_per_switch.size(); ++s) {
        const int sw = b.add_device(fmt::format("{}nvswitch{}", prefix, s), DeviceKind::kSwitch, nv.switch_model, path);
        if (sw < 0) continue;
        for (int g : gpus)
          if (g >= 0) b.add_link(g, sw, nv.link_model, nv.links_per_switch[s], path);
      }
    }
  }
  std::vector<int> nics;
  if (!t.pcie) return nics;
  const auto& pcie = *t.pcie;
  const int switches = pcie.switches(t.gpus);
  std::vector<int> pcie_switches;
  for (int s = 0; s < switches; ++s)
    pcie_switches.push_back(b.add_device(fmt::format("{}pcie{}", prefix, s), DeviceKind::kSwitch, pcie.switch_model, path));
  for (int g = 0; g < t.gpus; ++g)
    if (gpus[g] >= 0 && pcie_switches[g / pcie.gpus_per_switch] >= 0)
      b.add_link(gpus[g], pcie_switches[g / pcie.gpus_per_switch], pcie.link_model, 1, path);
  if (!pcie.host_model.empty()) {
    // One root complex per host (a tray's CPU on GB200), or one for the node.
    const int per_host = pcie.switches_per_host(t.gpus);
    const int hosts = (switches + per_host - 1) / per_host;
    for (int h = 0; h < hosts; ++h) {
      const int host = b.add_device(hosts == 1 ? prefix + "host" : fmt::format("{}host{}", prefix, h), DeviceKind::kSwitch, pcie.host_model, path);
      for (int s = h * per_host; s < std::min(switches, (h + 1) * per_host); ++s)
        if (host >= 0 && pcie_switches[s] >= 0) b.add_link(pcie_switches[s], host, pcie.link_model, 1, path);
    }
  }
  if (!t.nics) return nics;
  // NIC k sits behind the PCIe switch of the GPUs it serves (GPUDirect RDMA):
  // spread evenly, so with one NIC per GPU NIC k shares GPU k's switch.
  for (int k = 0; k < t.nics->per_node; ++k) {
    const int nic = b.add_device(fmt::format("{}nic{}", prefix, k), DeviceKind::kNic, t.nics->model, path);
    const int sw = pcie_switches[static_cast<std::size_t>(k) * switches / t.nics->per_node];
    if (nic >= 0 && sw >= 0) b.add_link(nic, sw, pcie.link_model, 1, path);
    nics.push_back(nic);
  }
  return nics;
}

/// Smallest divisor d of `uplinks` such that `fits(uplinks / d)` holds, or 0.
template <typename Fits>
int smallest_divisor(int uplinks, Fits fits) {
  for (int d = 1; d <= uplinks; ++d)
    if (uplinks % d == 0 && fits(uplinks / d)) return d;
  return 0;
}

/// `rails`: the rails a node's NICs are cabled to (NIC k on rail k % rails).
void build_network(TopologyBuilder& b, const NetworkPart& net, const std::vector<std::vector<int>>& node_nics, int rails,
                   const std::string& path) {
  auto& diag = b.diagnostics();
  const int nodes = static_cast<int>(node_nics.size());
  const int nics = node_nics.empty() ? 0 : static_cast<int>(node_nics[0].size());
  if (nics == 0 || rails == 0) {
    diag.error(path, "a network needs NICs: expected \"nics\" in the node");
    return;
  }
  // The switch model's port count is the radix every tier is built from.
  const int radix = [&] {
    const auto it = b.spec().catalogue.switches.find(net.switch_model);
    return it == b.spec().catalogue.switches.end() ? 0 : it->second.ports;
  }();
  if (radix == 0) {
    diag.error(path + "/switch_model", fmt::format("unknown switch model '{}' in catalogue {}", net.switch_model, b.spec().catalogue.file));
    return;
  }
  const int down = net.nodes_per_leaf * (net.rails ? nics / rails : nics);
  const int over_leaf = net.tiers > 1 ? net.oversubscription[0] : 1;
  const int up = net.tiers > 1 ? down / over_leaf : 0;
  if (net.tiers > 1 && down % over_leaf != 0) {
    diag.error(path + "/oversubscription/0", fmt::format("{} leaf down-links do not divide by {}:1", down, over_leaf));
    return;
  }
  if (down + up > radix) {
    diag.error(path + "/nodes_per_leaf", fmt::format("a leaf needs {} down- and {} up-links but {} has {} ports", down, up,
                                                     net.switch_model, radix));
    return;
  }
  const int groups = (nodes + net.nodes_per_leaf - 1) / net.nodes_per_leaf;
  const int leaves_per_group = net.rails ? rails : 1;
  std::vector<int> leaves;
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < leaves_per_group; ++r)
      leaves.push_back(b.add_device(fmt::format("leaf{}", g * leaves_per_group + r), DeviceKind::kSwitch, net.switch_model, path));
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < nics; ++k) {
      const int leaf = leaves[(n / net.nodes_per_leaf) * leaves_per_group + (net.rails ? k % rails : 0)];
      if (leaf >= 0 && node_nics[n][k] >= 0) b.add_link(node_nics[n][k], leaf, net.link_model, 1, path);
    }
  if (net.tiers == 1) {
    if (leaves.size() > 1 && !net.rails)
      diag.error(path + "/tiers", fmt::format("one tier connects one leaf, but {} nodes need {} leaves", nodes, leaves.size()));
    return;
  }
  const int leaf_count = static_cast<int>(leaves.size());
  if (net.tiers == 2) {
    const int spines = smallest_divisor(up, [&](int per_pair) { return leaf_count * per_pair <= radix; });
    if (spines == 0) {
      diag.error(path + "/tiers", fmt::format("two tiers of {}-port switches cannot join {} leaves; use three tiers", radix, leaf_count));
      return;
    }
    for (int s = 0; s < spines; ++s) {
      const int spine = b.add_device(fmt::format("spine{}", s), DeviceKind::kSwitch, net.switch_model, path);
      for (int leaf : leaves)
        if (spine >= 0 && leaf >= 0) b.add_link(leaf, spine, net.link_model, up / spines, path);
    }
    return;
  }
  // Three tiers: pods of leaves under aggregation switches, pods joined by core planes.
  if (net.nodes_per_pod % net.nodes_per_leaf != 0) {
    diag.error(path + "/nodes_per_pod", fmt::format("{} nodes per pod is not a multiple of {} nodes per leaf", net.nodes_per_pod, net.nodes_per_leaf));
    return;
  }
  const int over_agg = net.oversubscription[1];
  const int leaves_per_pod = net.nodes_per_pod / net.nodes_per_leaf * leaves_per_group;
  const int pods = (leaf_count + leaves_per_pod - 1) / leaves_per_pod;
  const int aggs = smallest_divisor(up, [&](int per_pair) {
    const int agg_down = leaves_per_pod * per_pair;
    return agg_down % over_agg == 0 && agg_down + agg_down / over_agg <= radix;
  });
  if (aggs == 0) {
    diag.error(path + "/nodes_per_pod", fmt::format("{} leaves per pod with {} up-links each do not fit {}-port aggregation switches at {}:1",
                                                    leaves_per_pod, up, radix, over_agg));
    return;
  }
  const int agg_up = leaves_per_pod * (up / aggs) / over_agg;
  const int cores = smallest_divisor(agg_up, [&](int per_pair) { return pods * per_pair <= radix; });
  if (cores == 0) {
    diag.error(path + "/nodes_per_pod", fmt::format("{} pods do not fit {}-port core switches", pods, radix));
    return;
  }
  std::vector<int> core_ids;
  for (int j = 0; j < aggs; ++j)
    for (int c = 0; c < cores; ++c)
      core_ids.push_back(b.add_device(fmt::format("core{}.{}", j, c), DeviceKind::kSwitch, net.switch_model, path));
  for (int p = 0; p < pods; ++p) {
    for (int j = 0; j < aggs; ++j) {
      const int agg = b.add_device(fmt::format("pod{}.agg{}", p, j), DeviceKind::kSwitch, net.switch_model, path);
      if (agg < 0) continue;
      for (int l = p * leaves_per_pod; l < std::min(leaf_count, (p + 1) * leaves_per_pod); ++l)
        if (leaves[l] >= 0) b.add_link(leaves[l], agg, net.link_model, up / aggs, path);
      for (int c = 0; c < cores; ++c)
        if (core_ids[j * cores + c] >= 0) b.add_link(agg, core_ids[j * cores + c], net.link_model, agg_up / cores, path);
    }
  }
}

}  // namespace

void generate_topology(JsonObject& gen, TopologyBuilder& builder) {
  const int nodes = static_cast<int>(gen.integer("nodes", false, 1, core::kMaxGpus).value_or(1));
  const NodeTemplate node = read_node(gen);
  const auto network = read_network(gen);
  gen.reject_unknown_keys();
  if (!builder.diagnostics().empty()) return;
  if (nodes > 1 && !network) {
    builder.diagnostics().error(gen.path_of("nodes"), fmt::format("{} nodes need a \"network\" to join them", nodes));
    return;
  }
  // Sizes are checked before anything is built: a fabric too large to hold is
  // refused at once, with its size, rather than after minutes of building.
  const std::int64_t per_node_devices = std::int64_t{node.gpus} +
                                        (node.nvlink ? static_cast<std::int64_t>(node.nvlink->links_per_switch.size()) : 0) +
                                        (node.pcie ? 2 * node.gpus : 0) + (node.nics ? node.nics->per_node : 0);
  const std::int64_t gpus = std::int64_t{nodes} * node.gpus;
  const std::int64_t devices = std::int64_t{nodes} * per_node_devices;
  std::int64_t nvlink_bundles = 0;
  if (node.nvlink)
    nvlink_bundles = node.nvlink->switch_model.empty() ? std::int64_t{node.gpus} * (node.gpus - 1) / 2
                                                       : std::int64_t{node.gpus} * static_cast<std::int64_t>(node.nvlink->links_per_switch.size());
  if (nvlink_bundles > core::kMaxLinks / std::max(1, nodes)) {
    builder.diagnostics().error(gen.path_of("node"), fmt::format("{} nodes of {} NVLink bundles each exceed fabsim's {} links",
                                                                 nodes, nvlink_bundles, core::kMaxLinks));
    return;
  }
  if (gpus > core::kMaxGpus || devices > core::kMaxDevices) {
    builder.diagnostics().error(gen.path_of("nodes"),
                                fmt::format("{} nodes make {} GPUs and about {} devices: fabsim holds at most {} GPUs and {} devices",
                                            nodes, gpus, devices, core::kMaxGpus, core::kMaxDevices));
    return;
  }
  if (node.pcie && !node.pcie->host_model.empty()) {
    // A root complex takes its PCIe switches on its own ports: say how to split
    // the node before the builder finds a host with too many links.
    const auto it = builder.spec().catalogue.switches.find(node.pcie->host_model);
    const int per_host = node.pcie->switches_per_host(node.gpus);
    if (it != builder.spec().catalogue.switches.end() && per_host > it->second.ports) {
      builder.diagnostics().error(gen.path_of("node") + "/pcie",
                                  fmt::format("a root complex ('{}', {} PCIe ports) cannot take {} PCIe switches: set \"gpus_per_host\" "
                                              "(a host per tray of GPUs: 4 on GB200) or more \"gpus_per_switch\"",
                                              node.pcie->host_model, it->second.ports, per_host));
      return;
    }
  }
  std::vector<std::vector<int>> node_nics;
  const std::string node_path = gen.path_of("node");
  for (int n = 0; n < nodes; ++n)
    node_nics.push_back(build_node(builder, node, nodes == 1 ? "" : fmt::format("node{}.", n), node_path));
  if (network) {
    const int rails = node.nics ? (node.nics->rails > 0 ? node.nics->rails : node.nics->per_node) : 0;
    build_network(builder, *network, node_nics, rails, gen.path_of("network"));
  }
}

}  // namespace fabsim::topo
