#pragma once
/// NCCL's NVLSTree all-reduce across nodes (device/all_reduce.h, runNvlsTree):
/// the buffer is split among the node's heads (one per NIC, at most 32); for
/// each chunk of its share a head reduces the chunk of every GPU of its node
/// in the switch (multimem.ld_reduce), adds what its tree children sent,
/// sends the sum to its parent node's head over the network, and once the
/// total comes back down (or, at the root, is complete) stores it to every
/// GPU of its node through the switch's multicast (multimem.st). Heads of the
/// same local index form NCCL's double binary tree over the nodes; even
/// channels run tree 0, odd ones tree 1.

#include <vector>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

struct NvlsTreeRequest {
  int ranks = 2;
  core::Bytes bytes = 0;  ///< per-rank buffer (all-reduce)
  int channels = 2;       ///< NVLS channels
  core::Bytes element_size = 4;
  /// The largest chunk: min(nvlsChunkSize, nvlsTreeMaxChunkSize) (nvls_setup.hpp);
  /// 0: the catalogue's chunk under NCCL's default limit (default_nvls_tree_max_chunk).
  core::Bytes max_chunk = 0;
};

/// NVLSTree's chunk as NCCL's calcCollChunking sets it (enqueue.cc, the same
/// in 2.2x and 2.30): `max_chunk` (min of NCCL_NVLS_CHUNKSIZE and the tree's
/// largest chunk, nvls_setup.hpp), then 256/128/64/32 KiB once the buffer is
/// under 32/16/4/1 times channels x heads x the chunk.
core::Bytes nvls_tree_chunk_bytes(core::Bytes bytes, int channels, int heads, core::Bytes max_chunk);

/// The network hops run the Simple protocol (`simple`: its FIFO slots and
/// payload efficiency); the in-switch ones NVLS's efficiency.
/// `domain_of_rank` groups the ranks into nodes, `rail_of_rank` orders them
/// inside a node; head h of a node is its h-th rank. With `aggregated` the
/// plan is flow-level: per head and tree, one transfer per tree edge and per
/// in-switch operation standing for all its chunks.
/// Throws std::invalid_argument with fewer than two nodes.
CollectivePlan plan_nvls_tree(const NvlsTreeRequest& request, const topo::NvlsParams& nvls, const topo::ProtocolParams& simple,
                              const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                              bool aggregated = false);

}  // namespace fabsim::traces
