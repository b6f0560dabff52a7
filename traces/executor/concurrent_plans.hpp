#pragma once
/// Runs any number of collective plans at once on one transport, so
/// concurrent collectives (several streams, several jobs) share the fabric.
/// It is the transport's completion observer and forwards each completion
/// to the executor whose transfer ids cover it.

#include <map>
#include <memory>
#include <vector>

#include "traces/executor/plan_executor.hpp"

namespace fabsim::traces {

class ConcurrentPlans : public models::TransferCompletion {
 public:
  /// `transport` and `timers` must outlive this object.
  ConcurrentPlans(models::Transport& transport, core::TimerQueue& timers);

  /// Starts `plan` at absolute time `start` on an idle executor; `rank_done`
  /// is told when each rank's part is over (absolute time), as it happens.
  void start(CollectivePlan plan, ExecutionParams params, core::TimePs start, std::function<void(int rank, core::TimePs at)> rank_done);

  void on_transfer_complete(std::uint64_t id, core::TimePs at) override;

  /// Plans started and not yet finished.
  std::size_t running() const { return running_; }
  /// What the unfinished plans wait for (empty when none is stuck).
  std::string describe_stuck(std::size_t limit = 5) const;

 private:
  models::Transport& transport_;
  core::TimerQueue& timers_;
  std::vector<std::unique_ptr<PlanExecutor>> executors_;
  std::vector<PlanExecutor*> idle_;
  std::map<std::uint64_t, PlanExecutor*> by_first_id_;  // first transfer id of each running plan
  std::uint64_t next_id_ = 0;
  std::size_t running_ = 0;
};

}  // namespace fabsim::traces
