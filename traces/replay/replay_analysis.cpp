#include "traces/replay/replay_analysis.hpp"

#include <algorithm>

namespace fabsim::traces {

const TraceOp& op_of(const ReplayJob& job, const OpRecord& record) {
  const Trace& trace = *job.trace;
  return trace.programs[static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(record.rank)])]
      .ops[static_cast<std::size_t>(record.op)];
}

std::vector<CriticalStep> critical_path(const ReplayResult& result, int job) {
  std::int64_t last = -1;
  for (std::size_t i = 0; i < result.records.size(); ++i) {
    const auto& r = result.records[i];
    if (r.job == job && (last < 0 || r.end > result.records[static_cast<std::size_t>(last)].end)) last = static_cast<std::int64_t>(i);
  }
  std::vector<std::int64_t> chain;
  for (std::int64_t cur = last; cur >= 0 && chain.size() <= result.records.size();) {
    chain.push_back(cur);
    const auto& r = result.records[static_cast<std::size_t>(cur)];
    // A collective waited for its last member: the path goes on through that member.
    cur = r.waited_for >= 0 && r.waited_for != cur ? r.waited_for : r.gate;
  }
  std::reverse(chain.begin(), chain.end());
  std::vector<CriticalStep> path;
  core::TimePs previous = 0;
  for (auto rec : chain) {
    const core::TimePs end = result.records[static_cast<std::size_t>(rec)].end;
    path.push_back({rec, end > previous ? end - previous : 0});
    previous = std::max(previous, end);
  }
  return path;
}

std::vector<RankOverlap> overlap_by_rank(const ReplayResult& result, const ReplayJob& job, int job_index) {
  const int ranks = job.trace->world_size;
  // Per rank: +1/-1 events of compute (kind 0) and communication (kind 1).
  struct Event {
    core::TimePs at;
    int kind;
    int delta;
  };
  std::vector<std::vector<Event>> events(static_cast<std::size_t>(ranks));
  for (const auto& r : result.records) {
    if (r.job != job_index || r.end < r.issue) continue;
    const int kind = op_of(job, r).type == TraceOpType::kCompute ? 0 : 1;
    auto& e = events[static_cast<std::size_t>(r.rank)];
    e.push_back({r.issue, kind, +1});
    e.push_back({r.end, kind, -1});
  }
  std::vector<RankOverlap> out(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    auto& e = events[static_cast<std::size_t>(rank)];
    std::sort(e.begin(), e.end(), [](const Event& a, const Event& b) { return a.at != b.at ? a.at < b.at : a.delta < b.delta; });
    int active[2] = {0, 0};
    core::TimePs since = 0;
    auto& o = out[static_cast<std::size_t>(rank)];
    for (const auto& ev : e) {
      const core::TimePs span = ev.at - since;
      if (active[0] > 0) o.compute += span;
      if (active[1] > 0) {
        o.communication += span;
        (active[0] > 0 ? o.overlapped : o.exposed) += span;
      }
      active[ev.kind] += ev.delta;
      since = ev.at;
    }
  }
  return out;
}

std::vector<core::TimePs> iteration_ends(const ReplayResult& result, const ReplayJob& job, int job_index) {
  std::vector<core::TimePs> ends(static_cast<std::size_t>(job.trace->iterations), 0);
  for (const auto& r : result.records)
    if (r.job == job_index) ends[static_cast<std::size_t>(r.iteration)] = std::max(ends[static_cast<std::size_t>(r.iteration)], r.end);
  return ends;
}

}  // namespace fabsim::traces
