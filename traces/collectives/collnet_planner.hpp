#pragma once
/// NCCL's CollNetDirect all-reduce (device/all_reduce.h, runCollNetDirect)
/// with SHARP in the InfiniBand switches: inside each node every GPU sends
/// each head (up to 8 GPUs, one per NIC) its share of every chunk, which the
/// head reduces; the heads of the same local index hand their sums to the
/// network, where the switch reduces them and returns the total to each;
/// each head then sends the total of its share to every GPU of its node.
/// The network carries each share once up and once down per node, against
/// a ring's 2(n-1)/n of the buffer per rank.

#include <vector>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

struct CollNetRequest {
  int ranks = 2;
  core::Bytes bytes = 0;  ///< per-rank buffer (all-reduce)
  int channels = 1;
  core::Bytes element_size = 4;
};

/// NCCL_MAX_DIRECT_ARITY + 1: CollNetDirect uses at most 8 heads per node.
inline constexpr int kCollNetMaxHeads = 8;

/// The heads' groups, one per local index: the h-th rank of every node.
/// `domain_of_rank` groups ranks into nodes, `rail_of_rank` orders them.
std::vector<std::vector<int>> collnet_head_groups(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank);

/// Steps of one chunk run the Simple protocol (`simple`: its slot size and
/// FIFO slots). With `aggregated` the plan is flow-level: per head one
/// transfer per hop standing for every channel and chunk, its pipeline depth
/// as fill steps. Throws std::invalid_argument with fewer than two nodes.
CollectivePlan plan_collnet_direct(const CollNetRequest& request, const topo::ProtocolParams& simple,
                                   const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                                   bool aggregated = false);

}  // namespace fabsim::traces
