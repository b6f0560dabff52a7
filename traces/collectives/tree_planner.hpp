#pragma once
/// NCCL's Tree all-reduce across nodes (graph/trees.cc, device/all_reduce.h):
/// inside each node the ranks form a chain to the node's first rank; across
/// nodes those first ranks form two binary trees, the second the mirror
/// (even node count) or the shift by one (odd) of the first, so a leaf of
/// one is an interior node of the other (for an even count). Even channels run tree 0, odd ones
/// tree 1. Each chunk is reduced up (chain, then tree) and broadcast back
/// down, both pipelined.

#include <vector>

#include "traces/collectives/chain_planner.hpp"

namespace fabsim::traces {

/// Parent of each of nodes 0..n-1 in NCCL's double binary tree (-1 for the
/// root): tree 0 is ncclGetBtree's (node 0 the root, odd nodes leaves), tree 1
/// its mirror (n even) or its shift by one (n odd), as ncclGetDtree builds them.
std::vector<int> binary_tree_parents(int nodes, int tree);

/// A tree given by its parent array: its root, each node's children and a
/// post-order (children before their parent).
struct TreeShape {
  int root = 0;
  std::vector<std::vector<int>> children;
  std::vector<int> post_order;
};
TreeShape tree_shape(const std::vector<int>& parents);

/// The ranks of each node (NVLink domain, `domain_of_rank`) in order of
/// first appearance, each node's ranks ordered by `rail_of_rank`.
std::vector<std::vector<int>> ranks_by_node(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank);

/// Tree LL128's chunk as NCCL's calcCollChunking sets it (enqueue.cc, 2.2x to
/// 2.30): from the LL128 step (`slot_bytes`), halved while the buffer makes
/// fewer than (1 + log2 nodes + 0.1 ppn) x 64 / ppn chunks per channel (down
/// to 128 KiB), then x 16 / ppn (down to 32 KiB); whole 1920 B grains.
core::Bytes tree_ll128_chunk_bytes(const ChainRequest& request, core::Bytes slot_bytes, int nodes);

/// Makes a chunk-by-chunk pipeline plan whose chunks are whole regions
/// flow-level: each transfer's depth (longest chain of receipts before it)
/// becomes its fill steps, its bytes per lane over `step_bytes` its steps,
/// and the dependencies go (every edge's flow runs at once).
void flatten_pipeline(CollectivePlan& plan, core::Bytes step_bytes);

/// `domain_of_rank[r]` groups the communicator's ranks into nodes (NVLink
/// domains) and `rail_of_rank[r]` orders them inside a node. With one node
/// this is plan_tree_all_reduce's chain.
/// With `aggregated` the plan is flow-level: one transfer per tree edge and
/// channel standing for all its chunks (steps), its pipeline depth as fill steps.
CollectivePlan plan_double_binary_tree(const ChainRequest& request, const topo::ProtocolParams& protocol,
                                       const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                                       bool aggregated = false);

}  // namespace fabsim::traces
