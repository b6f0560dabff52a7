#pragma once
/// What a replay means for the user: the step times, the critical path
/// through the operations (what the step waited on), and how much of each
/// rank's communication was exposed rather than hidden under compute.

#include <vector>

#include "traces/replay/replay_engine.hpp"

namespace fabsim::traces {

/// One operation on the critical path, in time order.
struct CriticalStep {
  std::int64_t record = 0;
  core::TimePs contribution = 0;  ///< its end minus the previous step's end (waits and delays included)
};

/// Walks back from the job's last completion: each op to the one that made it
/// ready, and a collective or p2p op to the member that issued it last.
std::vector<CriticalStep> critical_path(const ReplayResult& result, int job);

/// Time one rank spent computing and communicating, from op start (issue) to end.
struct RankOverlap {
  core::TimePs compute = 0;        ///< some compute op running
  core::TimePs communication = 0;  ///< some collective or p2p op running (waiting for peers included)
  core::TimePs overlapped = 0;     ///< communication while compute ran
  core::TimePs exposed = 0;        ///< communication with no compute running
};

/// By rank of `job`; `ops_of_rank(rank)` gives each rank's program ops.
std::vector<RankOverlap> overlap_by_rank(const ReplayResult& result, const ReplayJob& job, int job_index);

/// When each iteration of `job` ended (the last rank's last op), in order.
std::vector<core::TimePs> iteration_ends(const ReplayResult& result, const ReplayJob& job, int job_index);

/// The trace op a record ran.
const TraceOp& op_of(const ReplayJob& job, const OpRecord& record);

}  // namespace fabsim::traces
