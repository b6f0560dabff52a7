#pragma once
/// What the collective layer needs from a simulated fabric, whatever its
/// fidelity: segment-level (Fabric: SystemC modules per device and link) or
/// flow-level (FlowFabric: max-min fair sharing of link bandwidth).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/transport.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/faults.hpp"

namespace fabsim::topo {

/// Traffic figures of one link direction over a run.
struct LinkUsage {
  std::string name;  ///< "gpu0->nvswitch0"
  Bytes bytes = 0;
  TimePs busy = 0;
  double utilisation = 0.0;  ///< busy / elapsed
  Bandwidth effective_bandwidth;
  Bytes peak_buffer = 0;       ///< peak downstream buffer use (switch inputs; 0 in flow mode)
  std::uint64_t segments = 0;  ///< segments delivered (one kernel event each; 0 in flow mode)
  std::string fault;           ///< the faults that struck its bundle, as written ("" when healthy)
};

/// A switch of an aggregation tree and its link to its parent.
struct AggregationSwitch {
  int device = -1;
  int parent = -1;                        ///< index into SwitchPlaneLinks::tree; -1 for the root
  std::vector<LinkDirectionRef> up, down; ///< to and from the parent
  models::Route up_route, down_route;     ///< the same as output ports, from this switch and from the parent
};

/// The routes of one switch plane that can reduce and multicast for a group:
/// a switch with in-network reduction wired directly to every member
/// (NVLink SHARP), or, for a network plane, an aggregation tree of switches
/// with it (SHARP): each member's route (GPU, PCIe switch, NIC) ends at its
/// leaf, the first such switch on its way to the others; with several
/// leaves, a switch above them all is the root.
struct SwitchPlaneLinks {
  int switch_device = -1;  ///< the root
  bool network = false;    ///< reached through NICs rather than one NVLink hop
  Bandwidth weight;        ///< slowest link between a member and the root
  std::vector<std::vector<LinkDirectionRef>> up;    ///< by member: member -> its switch, hop by hop
  std::vector<std::vector<LinkDirectionRef>> down;  ///< by member: its switch -> member
  std::vector<models::Route> up_route;              ///< by member: `up` as output ports, from the member
  std::vector<models::Route> down_route;            ///< by member: `down` as output ports, from its switch
  std::vector<AggregationSwitch> tree;              ///< tree[0] is the root; then the leaves below it, if any
  std::vector<int> attach;                          ///< by member: the tree switch its `up` ends at
};

/// Every NVLink plane for `group` (global GPU indexes), in device order; when
/// there is none, the network plane, if the members' routes meet at one.
std::vector<SwitchPlaneLinks> find_switch_planes(const TopologySpec& spec, FabricGraph& graph, const std::vector<int>& group);

class FabricBackend : public models::Transport {
 public:
  virtual const TopologySpec& spec() const = 0;
  virtual FabricGraph& graph() = 0;
  int gpu_count() const { return static_cast<int>(spec().gpus.size()); }
  /// True when some switch with in-network reduction is one hop from every
  /// GPU of `group` (NVLink SHARP).
  bool supports_in_switch_collectives(const std::vector<int>& group);
  /// True when the GPUs of `group` reach an aggregation tree of network
  /// switches with in-network reduction (SHARP): their leaves, and one
  /// switch above every leaf when there are several.
  bool supports_network_reduction(const std::vector<int>& group);
  /// Work units injected: segments (segment level) or flows (flow level).
  virtual std::uint64_t units_injected() const = 0;
  /// Events the backend itself handled (segment deliveries, or rate recomputations).
  virtual std::uint64_t backend_events() const = 0;
  virtual std::vector<LinkUsage> link_usage(TimePs elapsed) const = 0;
  /// Bytes each link direction has carried so far, by direction id
  /// (LinkDirectionRef::id()); cheap enough to sample during a run.
  virtual std::vector<double> link_bytes() const = 0;
  virtual bool flow_level() const = 0;
  /// What the faults striking during the run did (flow level only).
  virtual std::vector<FaultEvent> fault_events() const { return {}; }
  /// Rethrows what stopped the backend's own timed work, if anything did
  /// (call after the kernel returns, before judging the run).
  virtual void rethrow_failure() const {}
  bool proxied(int source, int destination) override;

 protected:
  /// find_switch_planes for `group`, computed once.
  const std::vector<SwitchPlaneLinks>& switch_planes(const std::vector<int>& group);

 private:
  std::map<std::vector<int>, std::vector<SwitchPlaneLinks>> switch_planes_;  // by group
};



}  // namespace fabsim::topo

namespace fabsim::topo {

/// "gpu0->nvswitch0" for a link direction id.
inline std::string link_direction_name(const TopologySpec& spec, int id) {
  const auto& link = spec.links[static_cast<std::size_t>(id / 2)];
  const bool reverse = id % 2 == 1;
  return spec.devices[reverse ? link.b : link.a].name + "->" + spec.devices[reverse ? link.a : link.b].name;
}

/// What a device adds to a segment's or flow's head as it forwards it: a
/// switch's traversal, a NIC's message latency; nothing for a GPU.
inline TimePs forwarding_latency(const TopologySpec& spec, int device) {
  const auto& d = spec.devices[device];
  if (d.kind == DeviceKind::kSwitch) return spec.catalogue.switches.at(d.model).traversal_latency;
  if (d.kind == DeviceKind::kNic) return spec.catalogue.nics.at(d.model).message_latency;
  return 0;
}

}  // namespace fabsim::topo
