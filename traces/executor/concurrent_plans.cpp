#include "traces/executor/concurrent_plans.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace fabsim::traces {

ConcurrentPlans::ConcurrentPlans(models::Transport& transport, core::TimerQueue& timers) : transport_(transport), timers_(timers) {
  transport_.set_completion(this);
}

void ConcurrentPlans::start(CollectivePlan plan, ExecutionParams params, core::TimePs start,
                            std::function<void(int rank, core::TimePs at)> rank_done) {
  if (idle_.empty()) {
    executors_.push_back(std::make_unique<PlanExecutor>(transport_, timers_, false));
    idle_.push_back(executors_.back().get());
  }
  PlanExecutor* executor = idle_.back();
  idle_.pop_back();
  const std::uint64_t first = next_id_;
  // Ids are never reused, so a late completion can never reach the wrong plan.
  next_id_ += std::max<std::size_t>(1, plan.transfers.size());
  by_first_id_.emplace(first, executor);
  ++running_;
  executor->on_rank_done(std::move(rank_done));
  executor->start(std::move(plan), std::move(params), start,
                  [this, executor, first](const ExecutionResult&) {
                    by_first_id_.erase(first);
                    idle_.push_back(executor);
                    --running_;
                  },
                  first);
}

void ConcurrentPlans::on_transfer_complete(std::uint64_t id, core::TimePs at) {
  auto it = by_first_id_.upper_bound(id);
  if (it == by_first_id_.begin()) throw core::SimulationError(fmt::format("transfer {} completed but belongs to no running plan", id));
  std::prev(it)->second->on_transfer_complete(id, at);
}

std::string ConcurrentPlans::describe_stuck(std::size_t limit) const {
  std::string out;
  for (const auto& [first, executor] : by_first_id_) out += executor->describe_stuck(limit);
  return out;
}

}  // namespace fabsim::traces
