#include "sim/report/replay_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <ostream>

#include "sim/report/nccl_report.hpp"
#include "traces/replay/replay_analysis.hpp"

namespace fabsim::report {

namespace {

using traces::OpRecord;
using traces::ReplayJob;
using traces::ReplayResult;

double us(core::TimePs t) { return core::to_us(t); }

/// Achieved bandwidth of an op instance on its rank, as nccl-tests' algbw:
/// its size column (the output of all-gather and gather, else the buffer)
/// over the time from issue to end, in GB/s.
double algbw(const ReplayJob& job, const OpRecord& r) {
  const core::TimePs d = r.end - r.issue;
  const auto& op = traces::op_of(job, r);
  core::Bytes bytes = r.bytes;
  if (op.type == traces::TraceOpType::kAllGather || op.type == traces::TraceOpType::kGather)
    bytes *= static_cast<core::Bytes>(job.trace->group_size(op.comm, r.rank));
  return d > 0 ? static_cast<double>(bytes) / (static_cast<double>(d) / 1e3) : 0.0;
}

std::string plan_of(const ReplayResult& result, const OpRecord& r) {
  return r.algorithm >= 0 ? result.plan_names[static_cast<std::size_t>(r.algorithm)] : std::string();
}

/// "0-7" or "0-3,8-11".
std::string placement(const std::vector<int>& gpus) {
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ",", j > i ? fmt::format("{}-{}", gpus[i], gpus[j]) : fmt::format("{}", gpus[i]));
    i = j + 1;
  }
  return out;
}

std::string job_name(const ReplayJob& job) { return job.label.empty() ? job.trace->name : job.label; }

/// Operations of one program, summed over ranks, iterations and repeats.
struct OpSummary {
  int program = 0, op = 0;
  std::uint64_t count = 0;
  core::TimePs total = 0, longest = 0;
  double bandwidth_sum = 0;
  core::Bytes bytes = 0;
  std::map<std::string, int> plans;
};

void write_job_table(std::ostream& out, const ReplayJob& job, int j, const ReplayResult& result) {
  const auto& trace = *job.trace;
  const auto ends = traces::iteration_ends(result, job, j);
  fmt::print(out, "\njob {}: {} ({}), {} ranks on GPUs {}\n", j, job_name(job), trace.file, trace.world_size, placement(job.gpu_of_rank));
  fmt::print(out, "  makespan {:.3f} us over {} iteration(s)", us(result.job_end[static_cast<std::size_t>(j)]), trace.iterations);
  if (!ends.empty()) {
    std::string steps;
    core::TimePs previous = 0;
    for (std::size_t i = 0; i < ends.size() && i < 8; ++i) {
      steps += fmt::format("{}{:.3f}", i ? " " : "", us(ends[i] - previous));
      previous = ends[i];
    }
    fmt::print(out, "; step times (us): {}{}", steps, ends.size() > 8 ? " ..." : "");
  }
  fmt::print(out, "\n\n");

  std::map<std::pair<int, int>, OpSummary> by_op;
  for (const auto& r : result.records) {
    if (r.job != j) continue;
    const int program = trace.program_of_rank[static_cast<std::size_t>(r.rank)];
    auto& s = by_op[{program, r.op}];
    s.program = program;
    s.op = r.op;
    ++s.count;
    s.total += r.end - r.issue;
    s.longest = std::max(s.longest, r.end - r.issue);
    s.bandwidth_sum += algbw(job, r);
    s.bytes += r.bytes;
    if (r.algorithm >= 0) ++s.plans[plan_of(result, r)];
  }
  fmt::print(out, "  {:<18} {:<13} {:>12} {:>7} {:>12} {:>12} {:>10}  {}\n", "op", "type", "bytes", "count", "mean (us)", "max (us)",
             "GB/s", "algorithm");
  std::size_t shown = 0;
  for (const auto& [key, s] : by_op) {
    if (++shown > 40) {
      fmt::print(out, "  ... {} more ops (see --format json)\n", by_op.size() - 40);
      break;
    }
    const auto& op = trace.programs[static_cast<std::size_t>(s.program)].ops[static_cast<std::size_t>(s.op)];
    std::string plans;
    for (const auto& [name, n] : s.plans) plans += (plans.empty() ? "" : ", ") + name;
    const std::string id = trace.programs.size() > 1 ? fmt::format("p{}:{}", s.program, op.id) : op.id;
    fmt::print(out, "  {:<18} {:<13} {:>12} {:>7} {:>12.3f} {:>12.3f} {:>10}  {}\n", id, traces::trace_op_name(op.type), s.bytes / s.count, s.count,
               us(s.total) / static_cast<double>(s.count), us(s.longest),
               op.type == traces::TraceOpType::kCompute ? "-" : fmt::format("{:.2f}", s.bandwidth_sum / static_cast<double>(s.count)), plans);
  }

  const auto path = traces::critical_path(result, j);
  core::TimePs on_compute = 0, on_comm = 0;
  std::map<std::pair<int, int>, std::pair<core::TimePs, int>> path_by_op;  // (program, op) -> time, count
  for (const auto& step : path) {
    const auto& r = result.records[static_cast<std::size_t>(step.record)];
    const auto& op = traces::op_of(job, r);
    (op.type == traces::TraceOpType::kCompute ? on_compute : on_comm) += step.contribution;
    auto& e = path_by_op[{trace.program_of_rank[static_cast<std::size_t>(r.rank)], r.op}];
    e.first += step.contribution;
    ++e.second;
  }
  const double total = static_cast<double>(std::max<core::TimePs>(1, on_compute + on_comm));
  fmt::print(out, "\n  critical path: {} ops, {:.3f} us: compute {:.1f}%, communication {:.1f}%\n", path.size(), us(on_compute + on_comm),
             100.0 * static_cast<double>(on_compute) / total, 100.0 * static_cast<double>(on_comm) / total);
  std::vector<std::pair<core::TimePs, std::pair<int, int>>> ranked;
  for (const auto& [key, e] : path_by_op) ranked.push_back({e.first, key});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (std::size_t i = 0; i < ranked.size() && i < 10; ++i) {
    const auto& [time, key] = ranked[i];
    const auto& op = trace.programs[static_cast<std::size_t>(key.first)].ops[static_cast<std::size_t>(key.second)];
    const std::string id = trace.programs.size() > 1 ? fmt::format("p{}:{}", key.first, op.id) : op.id;
    fmt::print(out, "    {:<18} {:<13} {:>12.3f} us ({:.1f}%), {} time(s) on the path\n", id, traces::trace_op_name(op.type), us(time),
               100.0 * static_cast<double>(time) / total, path_by_op.at(key).second);
  }

  const auto overlap = traces::overlap_by_rank(result, job, j);
  core::TimePs exposed_max = 0, exposed_sum = 0, overlapped_sum = 0, comm_sum = 0;
  int worst = 0;
  for (std::size_t r = 0; r < overlap.size(); ++r) {
    exposed_sum += overlap[r].exposed;
    overlapped_sum += overlap[r].overlapped;
    comm_sum += overlap[r].communication;
    if (overlap[r].exposed > exposed_max) {
      exposed_max = overlap[r].exposed;
      worst = static_cast<int>(r);
    }
  }
  const double n = static_cast<double>(overlap.size());
  fmt::print(out, "\n  communication per rank (mean): {:.3f} us, of which exposed {:.3f} us and overlapped with compute {:.3f} us; "
                  "most exposed: rank {} ({:.3f} us)\n",
             us(comm_sum) / n, us(exposed_sum) / n, us(overlapped_sum) / n, worst, us(exposed_max));
}

}  // namespace

/// Op instances a fault that struck at `at` touched: running when it struck, or issued after it.
struct FaultImpact {
  std::uint64_t running = 0, after = 0;
  std::vector<std::string> running_ops;  ///< the ops (by id; "job/op" with several jobs) running when it struck, in trace order
};
FaultImpact fault_impact(const std::vector<ReplayJob>& jobs, const ReplayResult& result, core::TimePs at) {
  FaultImpact impact;
  std::set<std::pair<int, int>> seen;  // (job, op)
  for (const auto& r : result.records) {
    if (r.issue >= at) {
      ++impact.after;
    } else if (r.end > at) {
      ++impact.running;
      if (seen.insert({r.job, r.op}).second) {
        const auto& job = jobs[static_cast<std::size_t>(r.job)];
        const std::string& id = traces::op_of(job, r).id;
        impact.running_ops.push_back(jobs.size() > 1 ? job_name(job) + "/" + id : id);
      }
    }
  }
  return impact;
}

void write_replay_table(std::ostream& out, const ReplayDescription& run, const std::vector<ReplayJob>& jobs, const ReplayResult& result) {
  fmt::print(out, "fabsim replay on {} ({}), {} model: makespan {:.3f} us, {} collective/p2p launches\n", run.topology_name,
             run.topology_file, run.model, us(result.makespan), result.collectives);
  fmt::print(out, "NCCL tuner: {}\n", run.nccl_tuner);
  for (const auto& w : run.warnings) fmt::print(out, "Warning: {}\n", w);
  write_fault_lines(out, run.faults, run.fault_events);
  for (const auto& e : run.fault_events) {
    const auto impact = fault_impact(jobs, result, e.at);
    std::string ops;
    for (std::size_t i = 0; i < impact.running_ops.size() && i < 8; ++i) {
      ops += ops.empty() ? " (" : ", ";
      ops += impact.running_ops[i];
    }
    if (impact.running_ops.size() > 8) ops += ", ...";
    if (!ops.empty()) ops += ")";
    fmt::print(out, "# after fault {}: {} op instances were running when it struck{}, {} started after it (of {})\n", e.fault,
               impact.running, ops, impact.after, result.records.size());
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) write_job_table(out, jobs[j], static_cast<int>(j), result);
}

nlohmann::json replay_to_json(const ReplayDescription& run, const std::vector<ReplayJob>& jobs, const ReplayResult& result) {
  using nlohmann::json;
  json doc;
  doc["format"] = "fabsim-replay/1";
  doc["meta"] = {{"provenance", provenance_json(run.provenance)}, {"nccl_tuner", run.nccl_tuner}};
  if (!run.warnings.empty()) doc["meta"]["warnings"] = run.warnings;
  if (!run.faults.empty()) {
    json faults = faults_json(run.faults, run.fault_events);
    for (auto& f : faults)
      if (f.contains("flows_resent")) {
        const auto impact = fault_impact(jobs, result, static_cast<core::TimePs>(std::llround(f["at_us"].get<double>() * 1e6)));
        f["ops_running"] = impact.running;
        f["ops_after"] = impact.after;
        f["running_ops"] = impact.running_ops;
      }
    doc["meta"]["faults"] = std::move(faults);
  }
  doc["topology"] = {{"file", run.topology_file}, {"name", run.topology_name}};
  doc["model"] = run.model;
  doc["makespan_us"] = us(result.makespan);
  doc["launches"] = result.collectives;
  json jobs_json = json::array();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& job = jobs[j];
    json jj;
    jj["label"] = job_name(job);
    jj["trace"] = job.trace->file;
    jj["ranks"] = job.trace->world_size;
    jj["gpus"] = job.gpu_of_rank;
    jj["iterations"] = job.trace->iterations;
    jj["makespan_us"] = us(result.job_end[j]);
    json steps = json::array();
    core::TimePs previous = 0;
    for (auto end : traces::iteration_ends(result, job, static_cast<int>(j))) {
      steps.push_back(us(end - previous));
      previous = end;
    }
    jj["step_times_us"] = steps;
    json path = json::array();
    for (const auto& step : traces::critical_path(result, static_cast<int>(j))) {
      const auto& r = result.records[static_cast<std::size_t>(step.record)];
      const auto& op = traces::op_of(job, r);
      path.push_back({{"rank", r.rank}, {"id", op.id}, {"type", traces::trace_op_name(op.type)}, {"iteration", r.iteration},
                      {"start_us", us(r.issue)}, {"end_us", us(r.end)}, {"contribution_us", us(step.contribution)}});
    }
    jj["critical_path"] = path;
    json ranks = json::array();
    const auto overlap = traces::overlap_by_rank(result, job, static_cast<int>(j));
    for (std::size_t r = 0; r < overlap.size(); ++r)
      ranks.push_back({{"rank", r}, {"compute_us", us(overlap[r].compute)}, {"communication_us", us(overlap[r].communication)},
                       {"overlapped_us", us(overlap[r].overlapped)}, {"exposed_us", us(overlap[r].exposed)}});
    jj["ranks_overlap"] = ranks;
    jobs_json.push_back(std::move(jj));
  }
  doc["jobs"] = std::move(jobs_json);
  json ops = json::array();
  for (const auto& r : result.records) {
    const auto& job = jobs[static_cast<std::size_t>(r.job)];
    const auto& op = traces::op_of(job, r);
    json o = {{"rank", r.rank}, {"id", op.id}, {"type", traces::trace_op_name(op.type)}, {"bytes", r.bytes},
              {"iteration", r.iteration}, {"instance", r.instance}, {"ready_us", us(r.ready)}, {"start_us", us(r.issue)},
              {"end_us", us(r.end)}, {"duration_us", us(r.end - r.issue)}};
    if (jobs.size() > 1) o["job"] = r.job;
    if (op.type != traces::TraceOpType::kCompute) {
      o["algbw_GBps"] = algbw(job, r);
      o["algorithm"] = plan_of(result, r);
    }
    ops.push_back(std::move(o));
  }
  doc["ops"] = std::move(ops);
  return doc;
}

nlohmann::json replay_timeline(const topo::TopologySpec& spec, const std::vector<ReplayJob>& jobs, const ReplayResult& result,
                               const std::vector<topo::FaultEvent>& faults, std::size_t max_links) {
  using nlohmann::json;
  json events = json::array();
  auto pid_of = [&](int job, int rank) {
    int base = 0;
    for (int j = 0; j < job; ++j) base += jobs[static_cast<std::size_t>(j)].trace->world_size;
    return base + rank;
  };
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& trace = *jobs[j].trace;
    for (int r = 0; r < trace.world_size; ++r) {
      const int pid = pid_of(static_cast<int>(j), r);
      const std::string name = jobs.size() > 1 ? fmt::format("{} rank {} (GPU {})", job_name(jobs[j]), r, jobs[j].gpu_of_rank[static_cast<std::size_t>(r)])
                                               : fmt::format("rank {} (GPU {})", r, jobs[j].gpu_of_rank[static_cast<std::size_t>(r)]);
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}});
      events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
      const auto& program = trace.programs[static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(r)])];
      for (std::size_t s = 0; s < program.streams.size(); ++s)
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", s}, {"args", {{"name", program.streams[s]}}}});
    }
  }
  for (const auto& r : result.records) {
    const auto& job = jobs[static_cast<std::size_t>(r.job)];
    const auto& op = traces::op_of(job, r);
    json args = {{"bytes", r.bytes}, {"iteration", r.iteration}};
    if (op.type != traces::TraceOpType::kCompute) {
      args["algorithm"] = plan_of(result, r);
      args["algbw_GBps"] = algbw(job, r);
    }
    if (!op.name.empty()) args["label"] = op.name;
    events.push_back({{"ph", "X"}, {"name", op.id}, {"cat", traces::trace_op_name(op.type)}, {"pid", pid_of(r.job, r.rank)},
                      {"tid", op.stream}, {"ts", us(r.issue)}, {"dur", us(r.end - r.issue)}, {"args", std::move(args)}});
  }
  for (const auto& f : faults) {
    events.push_back({{"ph", "i"}, {"s", "g"}, {"name", "fault: " + f.fault}, {"pid", 0}, {"tid", 0}, {"ts", us(f.at)},
                      {"args", {{"flows_resent", f.flows_resent}, {"transfers_hit", f.transfers_hit}}}});
    if (f.flows_resent > 0)
      events.push_back({{"ph", "i"}, {"s", "g"}, {"name", "re-sent: " + f.fault}, {"pid", 0}, {"tid", 0}, {"ts", us(f.resent_at)}});
  }
  const auto& samples = result.links;
  if (samples.times.size() >= 2) {
    const auto& last = samples.cumulative.back();
    std::vector<std::size_t> busy;
    for (std::size_t id = 0; id < last.size(); ++id)
      if (last[id] > 0) busy.push_back(id);
    std::stable_sort(busy.begin(), busy.end(), [&](std::size_t a, std::size_t b) { return last[a] > last[b]; });
    if (busy.size() > max_links) busy.resize(max_links);
    std::sort(busy.begin(), busy.end());
    const int links_pid = pid_of(static_cast<int>(jobs.size()), 0);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", links_pid}, {"args", {{"name", "links (GB/s)"}}}});
    for (std::size_t id : busy) {
      const std::string name = topo::link_direction_name(spec, static_cast<int>(id));
      for (std::size_t k = 1; k < samples.times.size(); ++k) {
        const double dt = static_cast<double>(samples.times[k] - samples.times[k - 1]) / 1e12;
        const double rate = dt > 0 ? (samples.cumulative[k][id] - samples.cumulative[k - 1][id]) / dt / 1e9 : 0.0;
        events.push_back({{"ph", "C"}, {"name", name}, {"pid", links_pid}, {"ts", us(samples.times[k - 1])}, {"args", {{"GB/s", rate}}}});
      }
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}, {"otherData", {{"generator", "fabsim replay"}}}};
}

}  // namespace fabsim::report
