#include "topologies/topology_writer.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/core/units.hpp"

namespace fabsim::topo {

void write_explicit_topology(std::ostream& out, const TopologySpec& spec) {
  // Written by hand rather than through one big json value: a 16k-GPU fabric
  // has hundreds of thousands of entries, one line each.
  using nlohmann::json;
  json head = json::object();
  head["format"] = "fabsim-topology/1";
  head["name"] = spec.name;
  if (!spec.description.empty()) head["description"] = spec.description;
  if (!spec.hardware.empty()) head["hardware"] = spec.hardware;
  if (spec.routing.network_ecmp != EcmpMode::kFlowHash || spec.routing.hash_seed != 0)
    head["routing"] = {{"network_ecmp", spec.routing.network_ecmp == EcmpMode::kSpray ? "spray" : "flow-hash"},
                       {"hash_seed", spec.routing.hash_seed}};
  const std::string h = head.dump(1);
  out << h.substr(0, h.size() - 2) << ",\n \"devices\": [\n";
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    const auto& dev = spec.devices[d];
    out << "  " << json{{"name", dev.name}, {"kind", device_kind_name(dev.kind)}, {"model", dev.model}}.dump()
        << (d + 1 < spec.devices.size() ? ",\n" : "\n");
  }
  out << " ],\n \"links\": [\n";
  for (std::size_t i = 0; i < spec.links.size(); ++i) {
    const auto& l = spec.links[i];
    json j{{"a", spec.devices[l.a].name}, {"b", spec.devices[l.b].name}, {"model", l.model}};
    if (l.count != 1) j["count"] = l.count;
    if (l.bandwidth_overridden) j["bandwidth"] = fmt::format("{} B/s", l.lane_bandwidth.bytes_per_second);
    if (l.latency_overridden) j["latency"] = std::to_string(l.latency) + " ps";
    out << "  " << j.dump() << (i + 1 < spec.links.size() ? ",\n" : "\n");
  }
  out << " ]\n}\n";
}

}  // namespace fabsim::topo
