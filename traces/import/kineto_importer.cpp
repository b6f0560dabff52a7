/// PyTorch profiler (Kineto) traces -> native trace, one file per rank.
///
/// - Process groups from distributedInfo.pg_config (disjoint groups with one
///   description, every TP group, become one communicator), else rebuilt
///   from an op's arguments.
/// - NCCL kernels become collectives; what each did is found as
///   kineto_collectives.hpp says (External id links first; issue order only
///   as a last resort, counted). One whose size cannot be found stays as
///   compute of its measured duration, counted, so its GPU time is kept.
/// - Other kernels, copies and memsets are merged per stream between
///   communication ops and waits; a merged op lasts from its first start to
///   its last end, so the idle gaps between its kernels stay as measured.
/// - A stream wait (cudaStreamWaitEvent) makes the waiting stream's next
///   launch depend on the op of the stream it waits for, and on nothing else.
/// - An op's delay is its measured start minus the latest end of what it
///   waits for (its stream's previous op, its dependencies; the trace's first
///   GPU activity for a stream's first op), so waiting never counts twice.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "traces/import/importers.hpp"
#include "traces/import/kineto_collectives.hpp"
#include "traces/import/kineto_events.hpp"

namespace fabsim::traces {

namespace {

using nlohmann::json;
using kineto::GpuActivity;

std::uint64_t to_ns(double us) { return us <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(std::min(us, 1e12) * 1e3)); }

/// "[0, 1, 2]" -> {0, 1, 2}; empty when truncated ("...") or malformed.
std::vector<int> parse_rank_string(const std::string& text) {
  if (text.find("...") != std::string::npos) return {};
  try {
    return core::int_list_in_range(json::parse(text), 0, core::kMaxGpus - 1).value_or(std::vector<int>{});
  } catch (const json::exception&) {
  }
  return {};
}

std::vector<int> all_ranks(int world) {
  std::vector<int> r(static_cast<std::size_t>(world));
  for (int i = 0; i < world; ++i) r[static_cast<std::size_t>(i)] = i;
  return r;
}

/// Communicators: from pg_config, from an op's arguments, or the world.
class Communicators {
 public:
  explicit Communicators(TraceBuilder& b) : b_(b) {}

  void add_pg_config(const json& info) {
    for (const auto& pg : info) {
      if (!pg.is_object() || !pg.contains("pg_name") || !pg["pg_name"].is_string()) continue;
      auto& p = pgs_[pg["pg_name"].get<std::string>()];
      p.desc = pg.value("pg_desc", std::string());
      if (const auto r = pg.find("ranks"); r != pg.end()) p.ranks = core::int_list_in_range(*r, 0, core::kMaxGpus - 1).value_or(std::vector<int>{});
    }
  }

  /// Disjoint process groups with one description become one communicator.
  void build_from_pg_config() {
    std::map<std::string, std::vector<std::string>> names_of_desc;
    for (auto& [name, pg] : pgs_) {
      if (pg.ranks.empty()) pg.ranks = all_ranks(b_.world_size);
      names_of_desc[pg.desc.empty() ? "pg" + name : pg.desc].push_back(name);
    }
    for (const auto& [desc, names] : names_of_desc) {
      std::set<int> seen;
      bool disjoint = true;
      for (const auto& n : names)
        for (int r : pgs_[n].ranks) disjoint = seen.insert(r).second && disjoint;
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (disjoint && k > 0) {
          b_.comms[static_cast<std::size_t>(comm_of_pg_[names[0]])].groups.push_back(pgs_[names[k]].ranks);
          comm_of_pg_[names[k]] = comm_of_pg_[names[0]];
          continue;
        }
        ImportedComm c;
        c.id = disjoint ? desc : fmt::format("{}.{}", desc, names[k]);
        c.desc = disjoint && names.size() > 1 ? fmt::format("{} process groups '{}'", names.size(), desc) : pgs_[names[k]].desc;
        c.source_id = names[k];
        c.groups.push_back(pgs_[names[k]].ranks);
        comm_of_pg_[names[k]] = add(std::move(c));
      }
    }
  }

  /// The communicator of an op's arguments; -1 when they do not say.
  int of_arguments(const json& args) {
    const std::string name = args.contains("Process Group Name") && args["Process Group Name"].is_string() ? args["Process Group Name"].get<std::string>() : "";
    if (const auto it = comm_of_pg_.find(name); it != comm_of_pg_.end()) return it->second;
    std::vector<int> ranks = parse_rank_string(args.value("Process Group Ranks", std::string()));
    const auto start = core::integer_in_range(args.value("Global rank start", json()), 0, core::kMaxGpus - 1);
    const auto size = core::integer_in_range(args.value("Group size", json()), 1, core::kMaxGpus);
    const auto stride = core::integer_in_range(args.value("Global rank stride", json(1)), 1, core::kMaxGpus);
    if (ranks.empty() && start && size && stride)
      for (std::int64_t i = 0; i < *size && *start + i * *stride < core::kMaxGpus; ++i) ranks.push_back(static_cast<int>(*start + i * *stride));
    if (ranks.empty()) return -1;
    ImportedComm c;
    c.id = "pg" + name;
    c.desc = args.value("Process Group Description", std::string());
    c.source_id = name;
    c.groups.push_back(ranks);
    return comm_of_pg_[name] = add(std::move(c));
  }

  /// A communicator of every rank (an annotation-only op names no group).
  int world() {
    for (std::size_t i = 0; i < b_.comms.size(); ++i)
      if (b_.comms[i].groups.size() == 1 && b_.comms[i].groups[0] == all_ranks(b_.world_size)) return static_cast<int>(i);
    ImportedComm c;
    c.id = "world";
    c.desc = "every rank (the trace names no process group)";
    c.groups.push_back(all_ranks(b_.world_size));
    return add(std::move(c));
  }

 private:
  int add(ImportedComm c) {
    b_.comms.push_back(std::move(c));
    return static_cast<int>(b_.comms.size()) - 1;
  }
  struct PgInfo {
    std::string desc;
    std::vector<int> ranks;  // empty: all
  };
  TraceBuilder& b_;
  std::map<std::string, PgInfo> pgs_;
  std::map<std::string, int> comm_of_pg_;
};

/// Where an NCCL kernel's description came from, and what it says.
struct KernelInfo {
  const json* args = nullptr;  ///< arguments with "Collective name" (kernel or record_param_comms)
  const kineto::CpuSpan* annotation = nullptr;
};

class RankImporter {
 public:
  RankImporter(TraceBuilder& b, Communicators& comms, const ImportOptions& options, int rank, const std::string& file)
      : b_(b), comms_(comms), options_(options), rank_(rank), file_(file) {}

  void run(kineto::RankEvents& ev) {
    select_steps(ev);
    resolve_kernels(ev);
    resolve_waits(ev);
    build_ops(ev);
  }

 private:
  /// --step: only the GPU work launched inside the chosen ProfilerStep#N spans.
  void select_steps(kineto::RankEvents& ev) {
    if (!options_.steps) return;
    const auto [first, last] = *options_.steps;
    if (ev.steps.empty()) throw core::ConfigError(file_, "", "has no ProfilerStep#N annotations, so --step cannot choose steps");
    std::vector<std::pair<double, double>> spans;
    for (const auto& [n, s] : ev.steps)
      if (n >= first && n <= last) spans.push_back({s.ts, s.end});
    if (spans.empty())
      throw core::ConfigError("command line", "--step",
                              fmt::format("{}: no profiler step in {}-{} (it has steps {}-{})", file_, first, last, ev.steps.front().first, ev.steps.back().first));
    std::erase_if(ev.gpu, [&](const GpuActivity& a) {
      return std::none_of(spans.begin(), spans.end(), [&](const auto& s) { return a.launch >= s.first && a.launch <= s.second; });
    });
  }

  void resolve_kernels(const kineto::RankEvents& ev) {
    info_.resize(ev.gpu.size());
    std::set<std::int64_t> claimed;  // record_param_comms External ids used
    std::vector<std::size_t> unresolved;
    for (std::size_t i = 0; i < ev.gpu.size(); ++i) {
      const GpuActivity& a = ev.gpu[i];
      if (!a.nccl_kernel) continue;
      KernelInfo& k = info_[i];
      if (a.args->contains("Collective name")) k.args = a.args;
      if (const auto rp = ev.record_params_by_external.find(a.external); k.args == nullptr && rp != ev.record_params_by_external.end() && rp->second.args->contains("Collective name")) {
        k.args = rp->second.args;
        claimed.insert(a.external);
      }
      // The annotation: same External id, else the one around the launch call.
      if (const auto an = ev.annotations_by_external.find(a.external); an != ev.annotations_by_external.end()) k.annotation = &an->second;
      else if (const auto t = ev.annotations_by_thread.find(a.launch_tid); t != ev.annotations_by_thread.end()) k.annotation = kineto::enclosing(t->second, a.launch);
      if (k.args == nullptr && k.annotation != nullptr)
        if (const auto t = ev.record_params_by_thread.find(k.annotation->tid); t != ev.record_params_by_thread.end())
          if (const auto* rp = kineto::enclosing(t->second, k.annotation->ts); rp != nullptr && rp->args->contains("Collective name")) {
            k.args = rp->args;
            claimed.insert(rp->external);
          }
      if (k.args == nullptr && k.annotation == nullptr) unresolved.push_back(i);
    }
    // Last resort: the unclaimed record_param_comms in issue order.
    std::vector<const kineto::CpuSpan*> left;
    for (const auto& [tid, spans] : ev.record_params_by_thread)
      for (const auto& s : spans)
        if (!claimed.contains(s.external) && s.args->contains("Collective name")) left.push_back(&s);
    std::sort(left.begin(), left.end(), [](const auto* x, const auto* y) { return x->ts < y->ts; });
    std::size_t next = 0;
    for (std::size_t i : unresolved) {
      if (next < left.size()) {
        info_[i].args = left[next++]->args;
        b_.warnings.add("NCCL kernels linked to no metadata by External id or launch: paired with record_param_comms in issue order");
      }
    }
  }

  /// Each wait: the waiting stream's first launch after it depends on the
  /// source stream's last launch before the event was recorded.
  void resolve_waits(const kineto::RankEvents& ev) {
    std::map<std::int64_t, std::vector<std::size_t>> by_stream;           // activity indexes in launch order
    std::map<std::int64_t, std::vector<std::size_t>> by_thread;           // by launch, for the fallback
    for (std::size_t i = 0; i < ev.gpu.size(); ++i) {
      by_stream[ev.gpu[i].stream].push_back(i);
      by_thread[ev.gpu[i].launch_tid].push_back(i);  // -1: no launch call in the trace
    }
    auto by_launch = [&](std::vector<std::size_t>& v) {
      std::stable_sort(v.begin(), v.end(), [&](std::size_t x, std::size_t y) { return ev.gpu[x].launch < ev.gpu[y].launch; });
    };
    for (auto& [s, v] : by_stream) by_launch(v);
    for (auto& [t, v] : by_thread) by_launch(v);
    auto first_after = [&](const std::vector<std::size_t>& v, double t) -> std::optional<std::size_t> {
      const auto it = std::lower_bound(v.begin(), v.end(), t, [&](std::size_t i, double x) { return ev.gpu[i].launch < x; });
      return it == v.end() ? std::nullopt : std::optional(*it);
    };
    auto last_before = [&](const std::vector<std::size_t>& v, double t, std::int64_t not_stream) -> std::optional<std::size_t> {
      auto it = std::upper_bound(v.begin(), v.end(), t, [&](double x, std::size_t i) { return x < ev.gpu[i].launch; });
      while (it != v.begin()) {
        --it;
        if (ev.gpu[*it].stream != not_stream) return *it;
      }
      return std::nullopt;
    };
    depends_on_.assign(ev.gpu.size(), {});
    ends_merge_.assign(ev.gpu.size(), false);
    std::uint64_t inferred = 0;
    for (const auto& w : ev.waits) {
      std::optional<std::size_t> waiter, source;
      if (w.waiter >= 0) {
        if (const auto s = by_stream.find(w.waiter); s != by_stream.end()) waiter = first_after(s->second, w.at);
        if (const auto s = by_stream.find(w.source); s != by_stream.end()) source = last_before(s->second, w.recorded >= 0 ? w.recorded : w.at, -1);
      } else if (const auto t = by_thread.find(w.tid); t != by_thread.end()) {
        // Older Kineto: the thread's next launch waits; on the thread's last
        // launch to another stream before the event it waits on was recorded.
        waiter = first_after(t->second, w.at);
        if (waiter) {
          double recorded = w.at;
          if (const auto r = ev.event_records_by_thread.find(w.tid); r != ev.event_records_by_thread.end()) {
            const auto it = std::upper_bound(r->second.begin(), r->second.end(), w.at);
            if (it != r->second.begin()) recorded = *std::prev(it);
          }
          // The thread's own launches, or activities whose launch call the trace lacks.
          source = last_before(t->second, recorded, ev.gpu[*waiter].stream);
          if (const auto u = by_thread.find(-1); u != by_thread.end())
            if (const auto other = last_before(u->second, recorded, ev.gpu[*waiter].stream); other && (!source || ev.gpu[*other].launch > ev.gpu[*source].launch))
              source = other;
          ++inferred;
        }
      }
      if (!waiter || !source || ev.gpu[*waiter].stream == ev.gpu[*source].stream) continue;
      depends_on_[*waiter].push_back(*source);
      ends_merge_[*source] = true;
    }
    if (inferred > 0)
      b_.warnings.add("stream waits without cuda_sync events (older Kineto): the streams taken from the launches around each call", inferred);
  }

  /// The native op of an NCCL kernel, or nullopt to keep it as compute.
  std::optional<ImportedOp> collective(const GpuActivity& a, const KernelInfo& k) {
    ImportedOp op;
    const std::string kernel_type = kineto::native_type_of_kernel(a.name);
    std::optional<core::Bytes> bytes;
    int peer = -1;
    if (k.args != nullptr) {
      const json& args = *k.args;
      const std::string coll = args.value("Collective name", std::string());
      op.type = kineto::native_type_of_collective(coll);
      if (op.type.empty()) {
        b_.warnings.add(fmt::format("collective '{}' has no native equivalent: kept as compute", coll));
        return std::nullopt;
      }
      op.comm = comms_.of_arguments(args);
      const std::string dtype = args.value("dtype", std::string());
      core::Bytes element = kineto::element_bytes(dtype, op.dtype);
      if (element == 0) {
        b_.warnings.add(fmt::format("unknown dtype '{}': 4 bytes assumed", dtype));
        element = 4;
      }
      if (const auto n = core::integer_in_range(args.value("In msg nelems", json(0)), 0, static_cast<std::int64_t>(core::kMaxBytes / element)))
        bytes = static_cast<core::Bytes>(*n) * element;
      peer = static_cast<int>(core::integer_in_range(args.value(op.type == "send" ? "Dst Rank" : "Src Rank", json(-1)), 0, core::kMaxGpus - 1).value_or(-1));
      if (op.type == "alltoall" || op.type == "alltoallv") {
        const auto split = parse_rank_string(args.value("In split size", std::string("[]")));
        if (!split.empty() && bytes) {
          long total = 0;
          for (int v : split) total += v;
          op.type = "alltoallv";
          for (int v : split) op.send_bytes.push_back(total > 0 ? *bytes / static_cast<core::Bytes>(total) * static_cast<core::Bytes>(v) : 0);
        } else {
          op.type = "alltoall";
        }
      }
      if (op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") {
        if (const auto r = core::integer_in_range(args.value("Rank", json()), 0, core::kMaxGpus - 1)) op.root = static_cast<int>(*r);
        else b_.warnings.add("rooted collective without a 'Rank' argument: root = the group's first rank");
      }
    }
    if (k.annotation != nullptr) {
      const auto an = kineto::read_annotation(k.annotation->name, *k.annotation->args);
      if (op.type.empty()) {
        op.type = an.type;
        bytes = an.bytes;
        op.dtype = an.dtype;
        if (op.type.empty()) {
          b_.warnings.add(fmt::format("NCCL kernel under annotation '{}', which has no native equivalent: kept as compute", k.annotation->name));
          return std::nullopt;
        }
      }
      if (peer < 0) peer = an.peer;
    }
    if (op.type.empty()) {  // the kernel name alone: the type, never the size
      b_.warnings.add(kernel_type.empty() ? "NCCL kernels with no metadata at all: kept as compute of their measured duration"
                                          : "NCCL kernels whose size no metadata gives (kernel name only): kept as compute of their measured duration");
      return std::nullopt;
    }
    if (!bytes) {
      b_.warnings.add(fmt::format("{} whose size the trace does not give (a tensor list?): kept as compute of its measured duration", op.type));
      return std::nullopt;
    }
    if (op.comm < 0) {
      op.comm = comms_.world();
      b_.warnings.add("collectives that name no process group: the world assumed");
    }
    // An all-to-all or reduce-scatter whose buffer does not divide by the group (uneven
    // all_to_all_single without its split sizes): an even split of the nearest size, counted.
    if (const auto n = static_cast<core::Bytes>(b_.comms[static_cast<std::size_t>(op.comm)].groups.front().size());
        (op.type == "alltoall" || op.type == "reducescatter") && *bytes % n != 0) {
      b_.warnings.add(fmt::format("{} whose bytes do not divide by its group (uneven, split sizes not recorded): "
                                  "an even split of the nearest multiple assumed", op.type));
      *bytes = std::max<core::Bytes>(n, (*bytes + n / 2) / n * n);
    }
    if (op.type == "send" || op.type == "recv") {
      if (peer < 0) {
        b_.warnings.add("send/recv whose peer is in neither its arguments nor an nccl: annotation: kept as compute");
        return std::nullopt;
      }
      (op.type == "send" ? op.sends : op.recvs).push_back({peer, *bytes});
    } else if (op.type == "allreduce" && *bytes == 0) {
      op.type = "barrier";
    } else if (op.type != "alltoallv") {
      op.bytes = *bytes;
    }
    if ((op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") && op.root < 0)
      op.root = b_.comms[static_cast<std::size_t>(op.comm)].groups.front().front();
    op.measured = {{"dur_ns", to_ns(a.dur)}};
    op.name = a.name.substr(0, 60);
    return op;
  }

  void build_ops(const kineto::RankEvents& ev) {
    auto& list = b_.ops_of_rank[rank_];
    if (ev.gpu.empty()) return;
    const double t0 = ev.gpu.front().ts;
    struct StreamState {
      int open_compute = -1;
      double last_end = -1;
    };
    std::map<std::int64_t, StreamState> streams;
    std::vector<int> op_of(ev.gpu.size(), -1);
    std::vector<double> op_end, op_start;
    int computes = 0, comms = 0;
    for (std::size_t i = 0; i < ev.gpu.size(); ++i) {
      const GpuActivity& a = ev.gpu[i];
      StreamState& s = streams[a.stream];
      std::vector<int> deps;
      for (std::size_t src : depends_on_[i])
        if (op_of[src] >= 0 && std::find(deps.begin(), deps.end(), op_of[src]) == deps.end()) deps.push_back(op_of[src]);
      std::optional<ImportedOp> comm;
      if (a.nccl_kernel) comm = collective(a, info_[i]);
      if (!comm && s.open_compute >= 0 && deps.empty()) {
        auto& c = list[static_cast<std::size_t>(s.open_compute)];
        const double end = std::max(op_end[static_cast<std::size_t>(s.open_compute)], a.ts + a.dur);
        c.duration_ns = to_ns(end - op_start[static_cast<std::size_t>(s.open_compute)]);
        op_end[static_cast<std::size_t>(s.open_compute)] = end;
        s.last_end = end;
        op_of[i] = s.open_compute;
        if (ends_merge_[i]) s.open_compute = -1;
        continue;
      }
      ImportedOp op = comm ? std::move(*comm) : ImportedOp{};
      if (!comm) {
        op.type = "compute";
        op.id = fmt::format("compute{}", computes++);
        op.name = a.name.substr(0, 60);
        op.duration_ns = to_ns(a.dur);
      } else {
        op.id = fmt::format("comm{}", comms++);
      }
      op.stream = fmt::format("s{}", a.stream);
      double ready = s.last_end >= 0 ? s.last_end : t0;
      for (int d : deps) {
        op.deps.push_back(list[static_cast<std::size_t>(d)].id);
        ready = std::max(ready, op_end[static_cast<std::size_t>(d)]);
      }
      op.delay_ns = a.ts > ready ? to_ns(a.ts - ready) : 0;
      const int index = static_cast<int>(list.size());
      list.push_back(std::move(op));
      op_end.push_back(a.ts + a.dur);
      op_start.push_back(a.ts);
      op_of[i] = index;
      s.last_end = a.ts + a.dur;
      s.open_compute = comm || ends_merge_[i] ? -1 : index;
    }
  }

  TraceBuilder& b_;
  Communicators& comms_;
  const ImportOptions& options_;
  int rank_;
  std::string file_;
  std::vector<KernelInfo> info_;
  std::vector<std::vector<std::size_t>> depends_on_;
  std::vector<bool> ends_merge_;
};

}  // namespace

TraceBuilder import_kineto(const std::vector<std::string>& files, const ImportOptions& options) {
  TraceBuilder b("kineto import", "kineto", files);
  Communicators comms(b);
  std::vector<kineto::RankEvents> ranks;
  std::vector<int> rank_of_file;
  bool any_pg_config = false;
  for (const auto& file : files) {
    kineto::RankEvents events = kineto::read_rank_events(file);
    const json& doc = events.header;
    core::Diagnostics diag(file);
    core::JsonObject root(doc, "", diag);
    // A job profiled without torch.distributed has no distributedInfo: rank 0 of 1.
    static const json kSingleProcess = {{"rank", 0}, {"world_size", 1}};
    const json* info = root.child("distributedInfo", json::value_t::object, false);
    root.child("traceEvents", json::value_t::array);
    diag.throw_if_any();
    if (info == nullptr) {
      b.warnings.add("file without distributedInfo (not a torch.distributed job): rank 0 of 1 assumed");
      info = &kSingleProcess;
    }
    core::JsonObject di(*info, "/distributedInfo", diag);
    auto rank = di.integer("rank", false, 0, core::kMaxGpus - 1);
    if (!rank && !info->contains("rank")) {
      b.warnings.add("files whose distributedInfo names no rank: their position among the files taken as the rank");
      rank = static_cast<std::int64_t>(rank_of_file.size());
    }
    const auto world = di.integer("world_size", false, 1, core::kMaxGpus);
    diag.throw_if_any();
    if (!world) b.warnings.add("file without distributedInfo.world_size: the world taken as its rank + 1");
    b.world_size = std::max(b.world_size, static_cast<int>(world.value_or(*rank + 1)));
    if (std::find(rank_of_file.begin(), rank_of_file.end(), static_cast<int>(*rank)) != rank_of_file.end())
      throw core::ConfigError(file, "/distributedInfo/rank", fmt::format("rank {} is also the rank of an earlier file", *rank));
    rank_of_file.push_back(static_cast<int>(*rank));
    if (const auto it = info->find("pg_config"); it != info->end() && it->is_array()) {
      comms.add_pg_config(*it);
      any_pg_config = true;
    }
    ranks.push_back(std::move(events));
  }
  for (int r : rank_of_file)
    if (r >= b.world_size) throw core::ConfigError(files.front(), "/distributedInfo/rank", fmt::format("rank {} is outside the world of {} ranks", r, b.world_size));
  if (!any_pg_config) b.warnings.add("no distributedInfo.pg_config: communicators rebuilt from the ops' arguments");
  comms.build_from_pg_config();
  std::size_t activities = 0;
  for (std::size_t d = 0; d < ranks.size(); ++d) {
    b.covered_ranks.insert(rank_of_file[d]);
    activities += ranks[d].gpu.size();
    RankImporter(b, comms, options, rank_of_file[d], files[d]).run(ranks[d]);
  }
  if (activities == 0)
    throw core::ConfigError(files.front(), "/traceEvents",
                            "no GPU activity (kernel, gpu_memcpy or gpu_memset events) to replay: profile with "
                            "ProfilerActivity.CUDA, or check that the trace is of the GPU process");
  return b;
}

}  // namespace fabsim::traces
