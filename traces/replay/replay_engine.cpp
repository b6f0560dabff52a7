#include "traces/replay/replay_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"
#include "sim/core/progress.hpp"

namespace fabsim::traces {

namespace {
constexpr core::TimePs kNotEnded = std::numeric_limits<core::TimePs>::max();
}  // namespace

core::Bytes dtype_bytes(const std::string& dtype) { return dtype_size(dtype).value_or(4); }

struct ReplayEngine::Actor {
  int job = 0;
  int rank = 0;
  const Program* program = nullptr;
  const ProgramGraph* graph = nullptr;
  double compute_scale = 1.0;
  int iteration = 0;
  std::size_t remaining = 0;
  std::vector<std::uint32_t> unmet;
  std::vector<int> instances_done;
  std::vector<std::uint32_t> collectives_issued;  // by communicator
  bool finished = false;
};

struct ReplayEngine::PendingCollective {
  std::vector<std::int64_t> records;  // by group-local rank; -1 until it arrives
  int arrived = 0;
  std::int64_t last = -1;
};

struct ReplayEngine::PendingPart {
  std::int64_t send_record = -1, recv_record = -1;
  int source = 0, destination = 0;  // global ranks of the job
  core::Bytes bytes = 0;
};

ReplayEngine::ReplayEngine(topo::FabricBackend& fabric, std::vector<ReplayJob> jobs, ReplayOptions options)
    : fabric_(fabric), jobs_(std::move(jobs)), options_(options), timers_("replay_timers"), plans_(fabric, timers_), planner_(fabric),
      sampler_(fabric, timers_, [this] { return scheduled_ > 0 || plans_.running() > 0; }) {
  // A traced job runs one process per GPU (torchrun, MPI): its calls take that launch's base.
  planner_.set_one_gpu_per_process(true);
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Trace& trace = *jobs_[j].trace;
    auto& graphs = graphs_.emplace_back();
    for (const auto& p : trace.programs) graphs.emplace_back(p);
    first_actor_.push_back(static_cast<int>(actors_.size()));
    for (int r = 0; r < trace.world_size; ++r) {
      Actor a;
      a.job = static_cast<int>(j);
      a.rank = r;
      const auto program = static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(r)]);
      a.program = &trace.programs[program];
      a.collectives_issued.assign(trace.communicators.size(), 0);
      if (!jobs_[j].compute_scale.empty()) a.compute_scale = jobs_[j].compute_scale[static_cast<std::size_t>(r)];
      for (const auto& op : a.program->ops) instances_total_ += static_cast<std::uint64_t>(op.repeat) * static_cast<std::uint64_t>(trace.iterations);
      actors_.push_back(std::move(a));
    }
  }
  // Graph pointers only once graphs_ stops growing.
  for (auto& a : actors_) {
    const Trace& trace = *jobs_[static_cast<std::size_t>(a.job)].trace;
    a.graph = &graphs_[static_cast<std::size_t>(a.job)][static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(a.rank)])];
  }
  result_.job_end.assign(jobs_.size(), 0);
}

ReplayEngine::~ReplayEngine() = default;

ReplayResult ReplayEngine::run() {
  for (std::size_t a = 0; a < actors_.size(); ++a) {
    const auto& job = jobs_[static_cast<std::size_t>(actors_[a].job)];
    const core::TimePs delay = job.start_delay.empty() ? 0 : job.start_delay[static_cast<std::size_t>(actors_[a].rank)];
    schedule(delay, [this, a] { start_iteration(static_cast<int>(a), -1); });
  }
  if (options_.sample_links) sampler_.start();
  core::run_with_progress(options_.progress, [this](core::ProgressLine& line) {
    line.update(instances_done_, instances_total_,
                instances_total_ > 0 ? static_cast<double>(instances_done_) / static_cast<double>(instances_total_) : 0.0);
  });
  fabric_.rethrow_failure();
  timers_.rethrow_failure();
  if (finished_actors_ < actors_.size()) {
    const Trace& trace = *jobs_.front().trace;
    throw core::ConfigError(trace.file, "", "the trace cannot finish: operations wait for each other forever" + describe_stuck());
  }
  for (auto t : result_.job_end) result_.makespan = std::max(result_.makespan, t);
  result_.timer_events = timers_.fired();
  if (options_.sample_links) result_.links = sampler_.take();
  return std::move(result_);
}

void ReplayEngine::schedule(core::TimePs at, std::function<void()> callback) {
  ++scheduled_;
  timers_.schedule(at, [this, callback = std::move(callback)] {
    --scheduled_;
    callback();
  });
}

void ReplayEngine::start_iteration(int a, std::int64_t gate) {
  auto& actor = actors_[static_cast<std::size_t>(a)];
  actor.unmet = actor.graph->initial_unmet;
  actor.instances_done.assign(actor.program->ops.size(), 0);
  actor.remaining = actor.program->ops.size();
  if (actor.remaining == 0) {
    actor.finished = true;
    ++finished_actors_;
    return;
  }
  for (int op : actor.graph->roots) make_ready(a, op, gate);
}

void ReplayEngine::make_ready(int a, int op, std::int64_t gate) {
  const core::TimePs ready = core::now_ps();
  const auto& o = actors_[static_cast<std::size_t>(a)].program->ops[static_cast<std::size_t>(op)];
  schedule(ready + o.delay, [this, a, op, ready, gate] { issue(a, op, ready, gate); });
}

void ReplayEngine::issue(int a, int op_index, core::TimePs ready, std::int64_t gate) {
  auto& actor = actors_[static_cast<std::size_t>(a)];
  const TraceOp& op = actor.program->ops[static_cast<std::size_t>(op_index)];
  OpRecord r;
  r.job = actor.job;
  r.rank = actor.rank;
  r.op = op_index;
  r.iteration = actor.iteration;
  r.instance = actor.instances_done[static_cast<std::size_t>(op_index)];
  r.ready = ready;
  r.issue = core::now_ps();
  r.end = kNotEnded;
  r.gate = gate;
  r.bytes = op.bytes;
  if (op.type == TraceOpType::kAllToAllv) {
    const Trace& trace = *jobs_[static_cast<std::size_t>(actor.job)].trace;
    const auto size = static_cast<std::size_t>(trace.group_size(op.comm, actor.rank));
    const auto local = static_cast<std::size_t>(trace.communicators[static_cast<std::size_t>(op.comm)].local_rank[static_cast<std::size_t>(actor.rank)]);
    const auto begin = op.matrix.begin() + static_cast<std::ptrdiff_t>(op.matrix_row ? 0 : local * size);
    r.bytes = std::accumulate(begin, begin + static_cast<std::ptrdiff_t>(size), core::Bytes{0});
  }
  const auto record = static_cast<std::int64_t>(result_.records.size());
  result_.records.push_back(r);
  if (op.type == TraceOpType::kCompute) {
    const auto duration = static_cast<core::TimePs>(static_cast<double>(op.duration) * actor.compute_scale);
    schedule(r.issue + duration, [this, a, record] { complete(a, record); });
  } else if (is_collective(op.type)) {
    arrive_collective(a, op_index, record);
  } else {
    const Trace& trace = *jobs_[static_cast<std::size_t>(actor.job)].trace;
    parts_left_[record] = static_cast<std::uint32_t>(op.sends.size() + op.recvs.size());
    for (const auto& s : op.sends) post_part(a, op_index, record, trace.global_rank(op.comm, actor.rank, s.peer), s.bytes, true);
    for (const auto& p : op.recvs) post_part(a, op_index, record, trace.global_rank(op.comm, actor.rank, p.peer), p.bytes, false);
  }
}

void ReplayEngine::complete(int a, std::int64_t record) {
  auto& actor = actors_[static_cast<std::size_t>(a)];
  auto& r = result_.records[static_cast<std::size_t>(record)];
  r.end = core::now_ps();
  const auto op = static_cast<std::size_t>(r.op);
  ++instances_done_;
  if (++actor.instances_done[op] < actor.program->ops[op].repeat) {
    make_ready(a, r.op, record);
    return;
  }
  for (int next : actor.graph->successors[op])
    if (--actor.unmet[static_cast<std::size_t>(next)] == 0) make_ready(a, next, record);
  if (--actor.remaining > 0) return;
  auto& job_end = result_.job_end[static_cast<std::size_t>(actor.job)];
  job_end = std::max(job_end, r.end);
  if (++actor.iteration < jobs_[static_cast<std::size_t>(actor.job)].trace->iterations) {
    start_iteration(a, record);
  } else {
    actor.finished = true;
    ++finished_actors_;
  }
}

void ReplayEngine::arrive_collective(int a, int op_index, std::int64_t record) {
  auto& actor = actors_[static_cast<std::size_t>(a)];
  const TraceOp& op = actor.program->ops[static_cast<std::size_t>(op_index)];
  const Trace& trace = *jobs_[static_cast<std::size_t>(actor.job)].trace;
  const auto& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
  const int group = comm.group_of_rank[static_cast<std::size_t>(actor.rank)];
  const std::uint32_t instance = actor.collectives_issued[static_cast<std::size_t>(op.comm)]++;
  const auto key = std::make_tuple(actor.job, op.comm, group, instance);
  auto& pending = pending_collectives_[key];
  if (pending.records.empty()) pending.records.assign(comm.groups[static_cast<std::size_t>(group)].size(), -1);
  pending.records[static_cast<std::size_t>(comm.local_rank[static_cast<std::size_t>(actor.rank)])] = record;
  pending.last = record;
  if (++pending.arrived < static_cast<int>(pending.records.size())) return;
  launch_collective(actor.job, op.comm, group, pending);
  pending_collectives_.erase(key);
}

void ReplayEngine::launch_collective(int job_index, int comm_index, int group, PendingCollective& pending) {
  const auto& job = jobs_[static_cast<std::size_t>(job_index)];
  const Trace& trace = *job.trace;
  const auto& members = trace.communicators[static_cast<std::size_t>(comm_index)].groups[static_cast<std::size_t>(group)];
  const auto n = static_cast<core::Bytes>(members.size());
  const OpRecord& first = result_.records[static_cast<std::size_t>(pending.records.front())];
  const TraceOp& op = actors_[static_cast<std::size_t>(first_actor_[static_cast<std::size_t>(job_index)] + first.rank)]
                          .program->ops[static_cast<std::size_t>(first.op)];
  for (auto rec : pending.records) result_.records[static_cast<std::size_t>(rec)].waited_for = pending.last;

  CollectiveCall call;
  for (int g : members) call.gpus.push_back(job.gpu_of_rank[static_cast<std::size_t>(g)]);
  call.root = op.root;
  call.algorithm = options_.algorithm;
  call.protocol = options_.protocol;
  call.channels = options_.channels;
  call.nccl = options_.nccl;
  call.element_size = dtype_bytes(op.dtype);
  // The planners take nccl-tests' size column: the output of gather-type ops.
  switch (op.type) {
    case TraceOpType::kAllReduce: call.op = CollectiveOp::kAllReduce; call.bytes = op.bytes; break;
    case TraceOpType::kBarrier: call.op = CollectiveOp::kAllReduce; call.bytes = call.element_size; break;  // one element, as c10d
    case TraceOpType::kAllGather: call.op = CollectiveOp::kAllGather; call.bytes = op.bytes * n; break;
    case TraceOpType::kGather: call.op = CollectiveOp::kGather; call.bytes = op.bytes * n; break;
    case TraceOpType::kReduceScatter: call.op = CollectiveOp::kReduceScatter; call.bytes = op.bytes; break;
    case TraceOpType::kAllToAll: call.op = CollectiveOp::kAllToAll; call.bytes = op.bytes; break;
    case TraceOpType::kScatter: call.op = CollectiveOp::kScatter; call.bytes = op.bytes; break;
    case TraceOpType::kBroadcast: call.op = CollectiveOp::kBroadcast; call.bytes = op.bytes; break;
    case TraceOpType::kReduce: call.op = CollectiveOp::kReduce; call.bytes = op.bytes; break;
    case TraceOpType::kAllToAllv: {
      call.op = CollectiveOp::kAllToAll;
      std::vector<P2PFlow> flows;
      for (std::size_t s = 0; s < members.size(); ++s) {
        const OpRecord& rec = result_.records[static_cast<std::size_t>(pending.records[s])];
        const TraceOp& mine = actors_[static_cast<std::size_t>(first_actor_[static_cast<std::size_t>(job_index)] + rec.rank)]
                                  .program->ops[static_cast<std::size_t>(rec.op)];
        const std::size_t offset = mine.matrix_row ? 0 : s * members.size();
        for (std::size_t d = 0; d < members.size(); ++d) {
          const core::Bytes b = mine.matrix[offset + d];
          if (d != s && b > 0) flows.push_back({static_cast<int>(s), static_cast<int>(d), b});
          call.bytes += b;
        }
      }
      call.flows = std::move(flows);
      break;
    }
    default: break;
  }
  const core::TimePs now = core::now_ps();
  if (call.bytes == 0 || members.size() == 1) {
    // NCCL returns at once when there is nothing to move.
    for (auto rec : pending.records) complete(first_actor_[static_cast<std::size_t>(job_index)] + result_.records[static_cast<std::size_t>(rec)].rank, rec);
    return;
  }
  PlannedCall planned = planner_.plan(call);
  const auto name = plan_name(planned.plan);
  for (auto rec : pending.records) result_.records[static_cast<std::size_t>(rec)].algorithm = name;
  ++result_.collectives;
  plans_.start(std::move(planned.plan), std::move(planned.params), now + planned.launch_overhead,
               [this, records = pending.records, base = first_actor_[static_cast<std::size_t>(job_index)]](int local, core::TimePs) {
                 const auto rec = records[static_cast<std::size_t>(local)];
                 complete(base + result_.records[static_cast<std::size_t>(rec)].rank, rec);
               });
}

void ReplayEngine::post_part(int a, int op_index, std::int64_t record, int peer, core::Bytes bytes, bool is_send) {
  (void)op_index;
  const auto& actor = actors_[static_cast<std::size_t>(a)];
  const int comm = actor.program->ops[static_cast<std::size_t>(op_index)].comm;
  const int source = is_send ? actor.rank : peer;
  const int destination = is_send ? peer : actor.rank;
  auto& counters = part_counters_[{actor.job, comm, source, destination}];
  const std::uint32_t index = is_send ? counters.first++ : counters.second++;
  const auto key = std::make_tuple(actor.job, comm, source, destination, index);
  auto& part = pending_parts_[key];
  part.source = source;
  part.destination = destination;
  if (is_send) {
    part.send_record = record;
    part.bytes = bytes;
  } else {
    part.recv_record = record;
  }
  if (part.send_record < 0 || part.recv_record < 0) return;
  launch_part(actor.job, comm, part);
  pending_parts_.erase(key);
}

void ReplayEngine::launch_part(int job_index, int comm, PendingPart& part) {
  (void)comm;
  const auto& job = jobs_[static_cast<std::size_t>(job_index)];
  auto& send = result_.records[static_cast<std::size_t>(part.send_record)];
  auto& recv = result_.records[static_cast<std::size_t>(part.recv_record)];
  const std::int64_t later = send.issue > recv.issue ? part.send_record : part.recv_record;
  send.waited_for = later;
  recv.waited_for = later;
  const core::TimePs now = core::now_ps();
  if (part.bytes == 0) {
    part_done(part.send_record, now);
    part_done(part.recv_record, now);
    return;
  }
  CollectiveCall call;
  call.op = CollectiveOp::kSendRecv;
  call.bytes = part.bytes;
  call.gpus = {job.gpu_of_rank[static_cast<std::size_t>(part.source)], job.gpu_of_rank[static_cast<std::size_t>(part.destination)]};
  call.flows = std::vector<P2PFlow>{{0, 1, part.bytes}};
  PlannedCall planned = planner_.plan(call);
  const auto name = plan_name(planned.plan);
  send.algorithm = name;
  recv.algorithm = name;
  ++result_.collectives;
  plans_.start(std::move(planned.plan), std::move(planned.params), now + planned.launch_overhead,
               [this, s = part.send_record, r = part.recv_record](int local, core::TimePs at) { part_done(local == 0 ? s : r, at); });
}

void ReplayEngine::part_done(std::int64_t record, core::TimePs) {
  auto it = parts_left_.find(record);
  if (--it->second > 0) return;
  parts_left_.erase(it);
  const auto& r = result_.records[static_cast<std::size_t>(record)];
  complete(first_actor_[static_cast<std::size_t>(r.job)] + r.rank, record);
}

std::int16_t ReplayEngine::plan_name(const CollectivePlan& plan) {
  const std::string name = fmt::format("{} {} {}ch", plan.algorithm, plan.protocol, plan.reported_channels());
  auto [it, inserted] = plan_index_.try_emplace(name, static_cast<std::int16_t>(result_.plan_names.size()));
  if (inserted) result_.plan_names.push_back(name);
  return it->second;
}

std::string ReplayEngine::describe_stuck() const {
  std::string out;
  std::size_t lines = 0;
  constexpr std::size_t kMaxLines = 12;
  auto op_of = [&](const OpRecord& r) -> const TraceOp& {
    return actors_[static_cast<std::size_t>(first_actor_[static_cast<std::size_t>(r.job)] + r.rank)].program->ops[static_cast<std::size_t>(r.op)];
  };
  auto job_prefix = [&](int job) { return jobs_.size() > 1 ? fmt::format("job {} ", jobs_[static_cast<std::size_t>(job)].label) : std::string(); };
  for (const auto& [key, pending] : pending_collectives_) {
    if (lines++ == kMaxLines) break;
    const auto& [job, comm, group, instance] = key;
    const Trace& trace = *jobs_[static_cast<std::size_t>(job)].trace;
    const auto& c = trace.communicators[static_cast<std::size_t>(comm)];
    std::string arrived, missing;
    const OpRecord* any = nullptr;
    for (std::size_t m = 0; m < pending.records.size(); ++m) {
      const int rank = c.groups[static_cast<std::size_t>(group)][m];
      if (pending.records[m] >= 0) {
        any = &result_.records[static_cast<std::size_t>(pending.records[m])];
        arrived += fmt::format("{}{}", arrived.empty() ? "" : ", ", rank);
      } else {
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", rank);
      }
    }
    out += fmt::format("\n  {}collective #{} on '{}' (group {}): op '{}' was issued by rank(s) {} and waits for rank(s) {}", job_prefix(job),
                       instance + 1, c.id, group, any ? op_of(*any).id : "?", arrived, missing);
  }
  for (const auto& [key, part] : pending_parts_) {
    if (lines++ == kMaxLines) break;
    const auto& [job, comm, source, destination, index] = key;
    const bool sent = part.send_record >= 0;
    const auto& rec = result_.records[static_cast<std::size_t>(sent ? part.send_record : part.recv_record)];
    out += fmt::format("\n  {}{} #{} from rank {} to rank {} (op '{}' on rank {}) waits for its matching {} on rank {}", job_prefix(job),
                       sent ? "send" : "recv", index + 1, source, destination, op_of(rec).id, sent ? source : destination,
                       sent ? "recv" : "send", sent ? destination : source);
  }
  for (const auto& actor : actors_) {
    if (actor.finished || lines >= kMaxLines) continue;
    for (std::size_t i = 0; i < actor.unmet.size(); ++i)
      if (actor.unmet[i] > 0) {
        ++lines;
        out += fmt::format("\n  {}rank {} iteration {}: op '{}' never became ready (its dependencies or its stream never finished)",
                           job_prefix(actor.job), actor.rank, actor.iteration, actor.program->ops[i].id);
        break;
      }
  }
  return out;
}

}  // namespace fabsim::traces
