/// `trace check` runs the trace as replay would, with every duration zero:
/// the same dependency and stream order (ProgramGraph), collectives that
/// start once every member has issued instance k on the communicator, and
/// sends that wait for their matching receive (the k-th send from A to B on
/// a communicator pairs with the k-th receive). Timing cannot change who
/// waits for whom, so a trace this check passes cannot deadlock in replay.

#include <fmt/format.h>

#include <deque>
#include <map>
#include <tuple>

#include "sim/core/error.hpp"
#include "traces/replay/program_graph.hpp"
#include "traces/replay/trace_loader.hpp"

namespace fabsim::traces {

namespace {

class LogicalReplay {
 public:
  explicit LogicalReplay(const Trace& trace) : trace_(trace) {
    for (const auto& p : trace.programs) graphs_.emplace_back(p);
    actors_.resize(static_cast<std::size_t>(trace.world_size));
    for (int r = 0; r < trace.world_size; ++r) {
      auto& a = actors_[static_cast<std::size_t>(r)];
      const auto program = static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(r)]);
      a.program = &trace.programs[program];
      a.graph = &graphs_[program];
      a.collectives_issued.assign(trace.communicators.size(), 0);
    }
  }

  /// False when more than `budget` op instances would be needed (not judged).
  bool run(int iterations, std::uint64_t budget) {
    iterations_ = iterations;
    for (int r = 0; r < trace_.world_size; ++r) start_iteration(r);
    while (!work_.empty()) {
      if (++steps_ > budget) return false;
      const Work w = work_.front();
      work_.pop_front();
      if (w.issue) issue(w.actor, w.op);
      else complete(w.actor, w.record);
    }
    return true;
  }

  bool finished() const { return finished_ == actors_.size(); }

  std::string describe_stuck() const {
    std::string out;
    std::size_t lines = 0;
    for (const auto& [key, pending] : collectives_) {
      if (lines++ == 8) break;
      const auto& [comm, group, instance] = key;
      const auto& c = trace_.communicators[static_cast<std::size_t>(comm)];
      std::string arrived, missing;
      std::string op;
      for (std::size_t m = 0; m < pending.records.size(); ++m) {
        const int rank = c.groups[static_cast<std::size_t>(group)][m];
        std::string& list = pending.records[m] >= 0 ? arrived : missing;
        list += fmt::format("{}{}", list.empty() ? "" : ", ", rank);
        if (pending.records[m] >= 0) op = op_of(records_[static_cast<std::size_t>(pending.records[m])]).id;
      }
      out += fmt::format("\n  collective #{} on '{}' (group {}): op '{}' was issued by rank(s) {} and waits for rank(s) {}", instance + 1,
                         c.id, group, op, arrived, missing);
    }
    for (const auto& [key, part] : parts_) {
      if (lines++ == 8) break;
      const auto& [comm, source, destination, index] = key;
      const bool sent = part.first >= 0;
      const auto& rec = records_[static_cast<std::size_t>(sent ? part.first : part.second)];
      out += fmt::format("\n  {} #{} from rank {} to rank {} (op '{}' on rank {}) waits for its matching {} on rank {}, which never posts it "
                         "(sends wait for their receive, as NCCL's do)",
                         sent ? "send" : "recv", index + 1, source, destination, op_of(rec).id, sent ? source : destination,
                         sent ? "recv" : "send", sent ? destination : source);
    }
    return out;
  }

 private:
  struct Actor {
    const Program* program = nullptr;
    const ProgramGraph* graph = nullptr;
    int iteration = 0;
    std::size_t remaining = 0;
    std::vector<std::uint32_t> unmet;
    std::vector<int> instances_done;
    std::vector<std::uint32_t> collectives_issued;
  };
  struct Record {
    int actor = 0, op = 0;
    std::uint32_t parts_left = 0;
  };
  struct Work {
    bool issue = true;
    int actor = 0, op = 0;
    std::int64_t record = -1;
  };
  struct Pending {
    std::vector<std::int64_t> records;
    std::size_t arrived = 0;
  };

  const TraceOp& op_of(const Record& r) const { return actors_[static_cast<std::size_t>(r.actor)].program->ops[static_cast<std::size_t>(r.op)]; }

  void start_iteration(int a) {
    auto& actor = actors_[static_cast<std::size_t>(a)];
    actor.unmet = actor.graph->initial_unmet;
    actor.instances_done.assign(actor.program->ops.size(), 0);
    actor.remaining = actor.program->ops.size();
    if (actor.remaining == 0) {
      ++finished_;
      return;
    }
    for (int op : actor.graph->roots) work_.push_back({true, a, op, -1});
  }

  void issue(int a, int op_index) {
    const TraceOp& op = actors_[static_cast<std::size_t>(a)].program->ops[static_cast<std::size_t>(op_index)];
    const auto record = static_cast<std::int64_t>(records_.size());
    records_.push_back({a, op_index, 0});
    if (op.type == TraceOpType::kCompute) {
      work_.push_back({false, a, op_index, record});
    } else if (is_collective(op.type)) {
      const auto& comm = trace_.communicators[static_cast<std::size_t>(op.comm)];
      const int group = comm.group_of_rank[static_cast<std::size_t>(a)];
      const std::uint32_t instance = actors_[static_cast<std::size_t>(a)].collectives_issued[static_cast<std::size_t>(op.comm)]++;
      const auto key = std::make_tuple(op.comm, group, instance);
      auto& pending = collectives_[key];
      if (pending.records.empty()) pending.records.assign(comm.groups[static_cast<std::size_t>(group)].size(), -1);
      pending.records[static_cast<std::size_t>(comm.local_rank[static_cast<std::size_t>(a)])] = record;
      if (++pending.arrived < pending.records.size()) return;
      for (auto r : pending.records) work_.push_back({false, records_[static_cast<std::size_t>(r)].actor, 0, r});
      collectives_.erase(key);
    } else {
      records_.back().parts_left = static_cast<std::uint32_t>(op.sends.size() + op.recvs.size());
      if (records_.back().parts_left == 0) work_.push_back({false, a, op_index, record});
      for (const auto& s : op.sends) post_part(a, op.comm, record, trace_.global_rank(op.comm, a, s.peer), true);
      for (const auto& p : op.recvs) post_part(a, op.comm, record, trace_.global_rank(op.comm, a, p.peer), false);
    }
  }

  void post_part(int a, int comm, std::int64_t record, int peer, bool is_send) {
    const int source = is_send ? a : peer, destination = is_send ? peer : a;
    auto& counters = counters_[{comm, source, destination}];
    const std::uint32_t index = is_send ? counters.first++ : counters.second++;
    const auto key = std::make_tuple(comm, source, destination, index);
    auto [it, fresh] = parts_.try_emplace(key, -1, -1);
    (is_send ? it->second.first : it->second.second) = record;
    if (it->second.first < 0 || it->second.second < 0) return;
    for (auto r : {it->second.first, it->second.second})
      if (--records_[static_cast<std::size_t>(r)].parts_left == 0) work_.push_back({false, records_[static_cast<std::size_t>(r)].actor, 0, r});
    parts_.erase(it);
  }

  void complete(int a, std::int64_t record) {
    auto& actor = actors_[static_cast<std::size_t>(a)];
    const auto op = static_cast<std::size_t>(records_[static_cast<std::size_t>(record)].op);
    if (++actor.instances_done[op] < actor.program->ops[op].repeat) {
      work_.push_back({true, a, static_cast<int>(op), -1});
      return;
    }
    for (int next : actor.graph->successors[op])
      if (--actor.unmet[static_cast<std::size_t>(next)] == 0) work_.push_back({true, a, next, -1});
    if (--actor.remaining > 0) return;
    if (++actor.iteration < iterations_) start_iteration(a);
    else ++finished_;
  }

  const Trace& trace_;
  std::vector<ProgramGraph> graphs_;
  std::vector<Actor> actors_;
  std::vector<Record> records_;
  std::deque<Work> work_;
  std::map<std::tuple<int, int, std::uint32_t>, Pending> collectives_;
  std::map<std::tuple<int, int, int>, std::pair<std::uint32_t, std::uint32_t>> counters_;
  std::map<std::tuple<int, int, int, std::uint32_t>, std::pair<std::int64_t, std::int64_t>> parts_;
  std::size_t finished_ = 0;
  std::uint64_t steps_ = 0;
  int iterations_ = 1;
};

}  // namespace

bool check_trace_completes(const Trace& trace, std::uint64_t budget) {
  LogicalReplay replay(trace);
  // Two iterations: the second starts from where the first left every counter.
  if (!replay.run(std::min(trace.iterations, 2), budget)) return false;
  if (!replay.finished())
    throw core::ConfigError(trace.file, "", "the trace cannot finish: replayed as fabsim replays it, operations wait for each other forever" +
                                                replay.describe_stuck());
  return true;
}

}  // namespace fabsim::traces
