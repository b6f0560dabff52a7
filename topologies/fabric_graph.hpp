#pragma once
/// The fabric as a Boost.Graph graph (devices as vertices, link bundles as
/// edges) and its routing. Routes are least-cost paths (each link kind has a
/// routing cost, so NVLink wins over PCIe); GPUs never forward. Where the
/// hardware sprays (NVLink, PCIe, adaptive network routing) a transfer is
/// striped over every equal-cost path; elsewhere ECMP picks one path per flow
/// by a deterministic hash. Routes are computed per destination on first use
/// and cached, so a 16k-GPU fabric never holds an all-pairs table.

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/segment.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

/// One direction of a link bundle: link index and whether it runs b -> a.
struct LinkDirectionRef {
  int link = -1;
  bool reverse = false;
  int id() const { return 2 * link + (reverse ? 1 : 0); }
};

/// A least-cost path between two GPUs, as output ports and as link directions.
struct FabricPath {
  models::Route route;
  std::vector<LinkDirectionRef> hops;
  Bandwidth bottleneck;  ///< smallest effective bandwidth along the path
};

class FabricGraph {
 public:
  struct VertexProps {
    int device = -1;
  };
  struct EdgeProps {
    int link = -1;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, EdgeProps>;

  /// Builds the graph; throws core::ConfigError naming two GPUs when one
  /// cannot reach the other. `max_paths` caps how many paths a flow stripes over.
  explicit FabricGraph(const TopologySpec& spec, int max_paths = 64);

  const Graph& graph() const { return graph_; }
  /// The paths a flow from GPU rank `src` to GPU rank `dst` (src != dst)
  /// takes; `flow` (a channel) feeds the ECMP hash. Cached; references stay valid.
  const std::vector<FabricPath>& paths(int src, int dst, std::uint32_t flow = 0);
  /// Output ports of a device, in port order: the link directions leaving it.
  const std::vector<LinkDirectionRef>& ports(int device) const { return ports_[device]; }
  /// The device at the far end of one of `device`'s ports.
  int neighbour(int device, const LinkDirectionRef& port) const;

  /// Hops of the longest least-cost GPU-to-GPU route. Exact from every GPU
  /// up to `exact_limit` GPUs; beyond, from an evenly spaced sample of
  /// `exact_limit / 32` GPUs (`diameter_sampled` then says so).
  int diameter(int exact_limit = 2048);
  bool diameter_sampled() const { return diameter_sampled_; }

  /// Devices cached routes are held for (one distance field each), for reports.
  std::size_t cached_destinations() const { return fields_.size(); }

 private:
  struct Field {
    std::vector<std::uint32_t> cost;  ///< least cost from each device to the destination
    std::vector<std::uint16_t> hops;  ///< hops of that least-cost route (fewest among ties)
  };
  const Field& field_to(int device);
  void check_connected();

  const TopologySpec& spec_;
  int max_paths_;
  Graph graph_;
  std::vector<std::vector<LinkDirectionRef>> ports_;
  std::unordered_map<int, Field> fields_;                                   // by destination device
  std::unordered_map<std::uint64_t, std::vector<FabricPath>> path_cache_;  // by (src, dst, flow)
  bool diameter_sampled_ = false;
};

}  // namespace fabsim::topo
