#pragma once
/// The fabric as a Boost.Graph graph (devices as vertices, link bundles as
/// edges), with the equal-cost shortest paths between GPUs that traffic is
/// striped over. GPUs never forward traffic: paths cross switches only.

#include <boost/graph/adjacency_list.hpp>
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

/// A shortest path between two GPUs, as output ports and as link directions.
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

  /// Builds the graph and all GPU-to-GPU routes; throws core::ConfigError
  /// naming the GPUs when one cannot reach another. `max_paths` caps how many
  /// equal-cost paths a pair stripes over.
  explicit FabricGraph(const TopologySpec& spec, int max_paths = 64);

  const Graph& graph() const { return graph_; }
  /// The equal-cost paths from GPU rank `src` to GPU rank `dst` (src != dst).
  const std::vector<FabricPath>& paths(int src, int dst) const { return paths_[src * gpu_count_ + dst]; }
  /// Output ports of a device, in port order: the link directions leaving it.
  const std::vector<LinkDirectionRef>& ports(int device) const { return ports_[device]; }
  /// Hop count of the shortest GPU-to-GPU path, over all pairs.
  int diameter() const { return diameter_; }

 private:
  void compute_paths(const TopologySpec& spec, int max_paths);

  Graph graph_;
  int gpu_count_ = 0;
  int diameter_ = 0;
  std::vector<std::vector<LinkDirectionRef>> ports_;
  std::vector<std::vector<FabricPath>> paths_;
};

}  // namespace fabsim::topo
