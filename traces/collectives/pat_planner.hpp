#pragma once
/// NCCL's PAT (Parallel Aggregated Trees) all-gather and reduce-scatter
/// (arXiv 2506.20252; nccl src/include/collectives.h, PatAGAlgorithm and
/// PatRSAlgorithm), as a CollectivePlan. The all-gather is a Bruck algorithm
/// with its dimensions reversed: in step k every rank sends what it holds to
/// the rank 2^k ahead, distances falling from the largest power of two below
/// n to 1, so the first steps cross far with one block each and the last,
/// carrying half the data, goes to the next rank. Each block's copies form a
/// binomial tree; the trees are aggregated into one message per step. The
/// reduce-scatter runs the same trees in reverse, reducing on receipt.
/// Data go in rounds of one piece per block, sized so that a step's message
/// fits a FIFO slot (the internal buffers stay logarithmic in n, not
/// proportional to the size); rounds pipeline through the steps.

#include <vector>

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/ring_planner.hpp"

namespace fabsim::traces {

/// Step k's distance and the blocks its message carries, for n ranks
/// (all-gather order: distances falling). The block counts add up to n - 1.
struct PatStep {
  int distance = 1;
  int blocks = 1;
};
std::vector<PatStep> pat_all_gather_steps(int ranks);

/// Plans a PAT all-gather or reduce-scatter (request.op) over ranks 0..n-1.
/// Throws std::invalid_argument for any other operation.
CollectivePlan plan_pat(const RingRequest& request, const topo::ProtocolParams& protocol);

}  // namespace fabsim::traces
