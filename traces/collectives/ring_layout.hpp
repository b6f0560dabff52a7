#pragma once
/// Which rank sits where on each channel's ring when a communicator spans
/// several NVLink domains (nodes, racks). Within a domain the ring crosses
/// NVLink; between domains it leaves on one rail and enters the next domain
/// on the same rail (GPU i of every node shares NIC rail i), as NCCL's rings
/// on rail-optimised fabrics do. Channels rotate the rails so every NIC
/// carries its share.

#include <vector>

#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

/// `domain_of_rank[r]` and `rail_of_rank[r]` describe the communicator's
/// ranks. Returns, per channel, the ranks in ring order; empty when the ring
/// stays in rank order (one domain).
std::vector<std::vector<int>> rail_aligned_rings(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                                                 int channels);

/// Rewrites a ring plan made over ring positions so that position p of
/// channel c is rank rings[c][p]. The dependencies stay as planned.
void place_on_rings(CollectivePlan& plan, const std::vector<std::vector<int>>& rings);

}  // namespace fabsim::traces
