#pragma once
/// The elaborated fabric: one SystemC module per GPU, switch and link
/// direction, bound through ports, plus the route table. It is the
/// segment-level implementation of models::Transport.

#include <map>
#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

#include "models/gpu/gpu_endpoint.hpp"
#include "models/link/link_direction.hpp"
#include "models/switch/crossbar_switch.hpp"
#include "models/transport.hpp"
#include "topologies/fabric_backend.hpp"
#include "topologies/network_segments.hpp"

namespace fabsim::topo {

struct FabricOptions {
  /// Largest segment a transfer is cut into on each path (the fidelity knob).
  Bytes segment_size = 512 * 1024;
};

class Fabric : public FabricBackend, public models::DeliveryListener {
 public:
  /// Elaborates every module; call before sc_start. The spec must outlive the fabric.
  Fabric(const TopologySpec& spec, FabricOptions options);
  ~Fabric() override;

  void send(const models::TransferRequest& request) override;
  void set_completion(models::TransferCompletion* completion) override { completion_ = completion; }
  void on_transfer_delivered(std::uint64_t transfer_id, TimePs at) override;

  const TopologySpec& spec() const override { return spec_; }
  FabricGraph& graph() override { return graph_; }
  std::uint64_t segments_injected() const { return segments_injected_; }
  std::uint64_t units_injected() const override { return segments_injected_; }
  std::uint64_t backend_events() const override;
  std::vector<LinkUsage> link_usage(TimePs elapsed) const override;
  std::vector<double> link_bytes() const override;
  bool flow_level() const override { return false; }

 private:
  /// One switch plane that can reduce and multicast for a group of GPUs.
  struct SwitchPlane {
    Bandwidth weight;                            ///< slowest GPU-switch link of the group
    std::vector<models::Route> up;               ///< by group member: its route to the switch
    std::vector<models::Route> down;             ///< by group member: the switch's route to it
    std::vector<models::InNetworkOp> reduce_to;  ///< by group member: reduce with it as destination
    models::InNetworkOp multicast;               ///< copy to every member
    bool single_switch = true;                   ///< reduce_to and multicast need it
    /// The all-reduce over the aggregation tree, by tree switch: its reduce
    /// (on up to the parent, or at the root out to every member), its
    /// multicast down, and the routes and next operations of that multicast.
    std::vector<models::InNetworkOp> all_reduce, tree_multicast;
    std::vector<models::Route> tree_up;
    std::vector<std::vector<models::Route>> tree_routes;
    std::vector<std::vector<const models::InNetworkOp*>> tree_next;
    std::vector<int> attach;                     ///< by group member: its tree switch
  };
  const std::vector<SwitchPlane>& planes_for(const std::vector<int>& group);
  void send_point_to_point(const models::TransferRequest& request);
  /// The largest segment `path` carries: the segment size, or less through a network switch (kSegmentsPerNetworkBuffer).
  Bytes segment_size_on(const FabricPath& path) const;
  void send_in_switch(const models::TransferRequest& request);

  const TopologySpec& spec_;
  FabricOptions options_;
  FabricGraph graph_;
  std::vector<std::unique_ptr<models::GpuEndpoint>> gpus_;        // by GPU rank
  std::vector<std::unique_ptr<models::CrossbarSwitch>> switches_;
  std::vector<std::unique_ptr<models::LinkDirection>> links_;     // by LinkDirectionRef::id()
  std::vector<Bytes> segment_limit_;                                // by device: the largest segment it admits
  models::TransferCompletion* completion_ = nullptr;
  std::uint64_t segments_injected_ = 0;
  std::map<std::vector<int>, std::vector<SwitchPlane>> planes_;    // by group
  std::unordered_map<std::uint64_t, int> multicast_pending_;       // destinations still to complete
};

}  // namespace fabsim::topo
