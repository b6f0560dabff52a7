/// PyTorch profiler (Kineto) traces -> native trace. Per rank file: the
/// process groups from distributedInfo; NCCL kernels (their "Collective
/// name" arguments, else the CPU-side record_param_comms in the same order);
/// other GPU kernels, copies and memsets merged per stream into compute ops
/// between communication ops; a cudaStreamWaitEvent on the CPU between two
/// launches makes the later op wait for the latest op of another stream that
/// had ended when it started.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

namespace {

using nlohmann::json;

core::Bytes scalar_type_bytes(const std::string& dtype, std::string& native) {
  static const std::map<std::string, std::pair<const char*, core::Bytes>> kTypes = {
      {"Float", {"f32", 4}},       {"Half", {"f16", 2}},     {"BFloat16", {"bf16", 2}}, {"Double", {"f64", 8}},
      {"Long", {"i64", 8}},        {"Int", {"i32", 4}},      {"Short", {"i16", 2}},     {"Char", {"i8", 1}},
      {"Byte", {"u8", 1}},         {"Bool", {"u8", 1}},      {"Float8_e4m3fn", {"f8e4m3", 1}}, {"Float8_e5m2", {"f8e5m2", 1}}};
  const auto it = kTypes.find(dtype);
  if (it == kTypes.end()) return 0;
  native = it->second.first;
  if (native == "i16") native = "f16";  // same width; the native format has no int16
  return it->second.second;
}

/// "[0, 1, 2]" -> {0, 1, 2}; empty when truncated ("...") or malformed.
std::vector<int> parse_rank_string(const std::string& text) {
  if (text.find("...") != std::string::npos) return {};
  try {
    return core::int_list_in_range(json::parse(text), 0, core::kMaxGpus - 1).value_or(std::vector<int>{});
  } catch (const json::exception&) {
  }
  return {};
}

/// One GPU activity of one rank, in GPU start order.
struct Activity {
  double ts = 0, dur = 0;  // us
  std::int64_t stream = 0;
  std::int64_t correlation = -1;
  std::int64_t external = -1;
  const json* args = nullptr;  // the NCCL arguments, when a communication op
  std::string name;
};

const std::map<std::string, std::string>& collective_types() {
  static const std::map<std::string, std::string> kTypes = {
      {"allreduce", "allreduce"}, {"allreduce_coalesced", "allreduce"}, {"all_gather", "allgather"},
      {"_allgather_base", "allgather"}, {"allgather_into_tensor_coalesced", "allgather"}, {"reduce_scatter", "reducescatter"},
      {"_reduce_scatter_base", "reducescatter"}, {"reduce_scatter_tensor_coalesced", "reducescatter"}, {"all_to_all", "alltoall"},
      {"all_to_allv", "alltoallv"}, {"broadcast", "broadcast"}, {"reduce", "reduce"}, {"gather", "gather"}, {"scatter", "scatter"},
      {"send", "send"}, {"recv", "recv"}, {"barrier", "barrier"}};
  return kTypes;
}

}  // namespace

TraceBuilder import_kineto(const std::vector<std::string>& files) {
  TraceBuilder b("kineto import", "kineto", files);
  struct PgInfo {
    std::string desc;
    std::vector<int> ranks;  // empty: all
  };
  std::map<std::string, PgInfo> pgs;  // by pg_name
  std::vector<json> docs;
  std::vector<int> rank_of_doc;
  for (const auto& file : files) {
    docs.push_back(core::read_json_file(file));
    const json& doc = docs.back();
    core::Diagnostics diag(file);
    core::JsonObject root(doc, "", diag);
    const json* info = root.child("distributedInfo", json::value_t::object);
    const json* events = root.child("traceEvents", json::value_t::array);
    diag.throw_if_any();
    (void)events;
    core::JsonObject di(*info, "/distributedInfo", diag);
    const auto rank = di.integer("rank", true, 0, core::kMaxGpus - 1);
    const auto world = di.integer("world_size", true, 1, core::kMaxGpus);
    diag.throw_if_any();
    b.world_size = std::max(b.world_size, static_cast<int>(*world));
    rank_of_doc.push_back(static_cast<int>(*rank));
    if (const auto it = info->find("pg_config"); it != info->end() && it->is_array()) {
      for (const auto& pg : *it) {
        if (!pg.contains("pg_name")) continue;
        auto& p = pgs[pg["pg_name"].get<std::string>()];
        p.desc = pg.value("pg_desc", std::string());
        if (pg.contains("ranks") && pg["ranks"].is_array()) p.ranks = pg["ranks"].get<std::vector<int>>();
      }
    } else {
      b.warnings.add("file without distributedInfo.pg_config: communicators rebuilt from the ops' arguments");
    }
  }
  // Disjoint process groups with one description (every TP group) become one communicator.
  std::map<std::string, std::vector<std::string>> names_of_desc;
  auto all_ranks = [&] {
    std::vector<int> r(static_cast<std::size_t>(b.world_size));
    for (int i = 0; i < b.world_size; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
  };
  for (auto& [name, pg] : pgs) {
    if (pg.ranks.empty()) pg.ranks = all_ranks();
    names_of_desc[pg.desc.empty() ? "pg" + name : pg.desc].push_back(name);
  }
  std::map<std::string, int> comm_of_pg;
  for (const auto& [desc, names] : names_of_desc) {
    std::set<int> seen;
    bool disjoint = true;
    for (const auto& n : names)
      for (int r : pgs[n].ranks) disjoint = seen.insert(r).second && disjoint;
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (disjoint && k > 0) {
        b.comms[static_cast<std::size_t>(comm_of_pg[names[0]])].groups.push_back(pgs[names[k]].ranks);
        comm_of_pg[names[k]] = comm_of_pg[names[0]];
        continue;
      }
      ImportedComm c;
      c.id = disjoint ? desc : fmt::format("{}.{}", desc, names[k]);
      c.desc = disjoint && names.size() > 1 ? fmt::format("{} process groups '{}'", names.size(), desc) : pgs[names[k]].desc;
      c.source_id = names[k];
      c.groups.push_back(pgs[names[k]].ranks);
      comm_of_pg[names[k]] = static_cast<int>(b.comms.size());
      b.comms.push_back(std::move(c));
    }
  }
  auto comm_for = [&](const json& args) -> int {
    const std::string name = args.value("Process Group Name", std::string());
    if (const auto it = comm_of_pg.find(name); it != comm_of_pg.end()) return it->second;
    // Not in pg_config: rebuild the group from the arguments.
    std::vector<int> ranks = parse_rank_string(args.value("Process Group Ranks", std::string()));
    if (ranks.empty() && args.contains("Global rank start") && args.contains("Group size")) {
      const int start = args["Global rank start"].get<int>(), stride = args.value("Global rank stride", 1);
      for (int i = 0; i < args["Group size"].get<int>(); ++i) ranks.push_back(start + i * stride);
    }
    if (ranks.empty()) return -1;
    ImportedComm c;
    c.id = "pg" + name;
    c.desc = args.value("Process Group Description", std::string());
    c.source_id = name;
    c.groups.push_back(ranks);
    comm_of_pg[name] = static_cast<int>(b.comms.size());
    b.comms.push_back(std::move(c));
    return comm_of_pg[name];
  };

  for (std::size_t d = 0; d < docs.size(); ++d) {
    const json& events = docs[d]["traceEvents"];
    const int rank = rank_of_doc[d];
    std::vector<Activity> gpu;
    std::vector<const json*> record_params;       // CPU-side NCCL metadata, in issue order
    std::map<std::int64_t, std::string> annotations;  // External id -> "nccl:send 0->2"
    std::map<std::int64_t, double> launch_of;         // correlation -> CPU launch time
    std::vector<double> stream_waits;                 // CPU times of cudaStreamWaitEvent
    for (const auto& e : events) {
      if (!e.is_object() || e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      static const json kNoArgs = json::object();
      const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kNoArgs;
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
        Activity a;
        a.ts = e.value("ts", 0.0);
        a.dur = e.value("dur", 0.0);
        a.stream = args.value("stream", e.value("tid", std::int64_t{0}));
        a.correlation = args.value("correlation", std::int64_t{-1});
        a.external = args.value("External id", std::int64_t{-1});
        a.name = e.value("name", "");
        if (args.contains("Collective name")) a.args = &args;
        const bool nccl = a.name.rfind("ncclDevKernel", 0) == 0 || a.name.rfind("ncclKernel", 0) == 0;
        if (nccl && a.args == nullptr) a.args = reinterpret_cast<const json*>(1);  // resolved from record_param_comms below
        gpu.push_back(a);
      } else if (cat == "cpu_op" && e.value("name", "") == "record_param_comms") {
        record_params.push_back(&args);
      } else if (cat == "user_annotation" || cat == "gpu_user_annotation") {
        const std::string name = e.value("name", "");
        if (name.rfind("nccl:", 0) == 0) annotations[args.value("External id", std::int64_t{-1})] = name;
      } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
        const std::string name = e.value("name", "");
        if (name == "cudaStreamWaitEvent") stream_waits.push_back(e.value("ts", 0.0));
        else if (args.contains("correlation")) launch_of[args["correlation"].get<std::int64_t>()] = e.value("ts", 0.0);
      }
    }
    std::stable_sort(gpu.begin(), gpu.end(), [](const Activity& x, const Activity& y) { return x.ts < y.ts; });
    std::sort(stream_waits.begin(), stream_waits.end());
    // NCCL kernels without arguments take the CPU-side metadata in order.
    std::size_t next_param = 0;
    std::size_t resolved = 0;
    for (auto& a : gpu) {
      if (a.args != reinterpret_cast<const json*>(1)) continue;
      if (next_param < record_params.size()) {
        a.args = record_params[next_param++];
        ++resolved;
      } else {
        a.args = nullptr;
        b.warnings.add("NCCL kernel with no communication arguments and no record_param_comms left: treated as compute");
      }
    }
    if (resolved > 0) b.warnings.add("NCCL kernels without arguments: sizes taken from record_param_comms in issue order", resolved);

    auto& list = b.ops_of_rank[rank];
    struct StreamState {
      int pending_compute = -1;  // index of the open compute op on this stream
      double last_end = 0;
      double last_launch = -1;
    };
    std::map<std::int64_t, StreamState> streams;
    struct Done {
      double end;
      std::size_t op;
    };
    // By stream: op ends in order (a stream runs in order), for cross-stream waits.
    std::map<std::int64_t, std::vector<Done>> finished;
    auto finish = [&](std::int64_t stream, double end, std::size_t op) {
      auto& h = finished[stream];
      if (!h.empty() && h.back().op == op) h.back().end = end;
      else h.push_back({end, op});
    };
    int compute_count = 0, comm_count = 0;
    for (const auto& a : gpu) {
      auto& s = streams[a.stream];
      const double launch = launch_of.contains(a.correlation) ? launch_of[a.correlation] : a.ts;
      // A cudaStreamWaitEvent between this stream's previous launch and this one: a cross-stream dependency.
      const bool waits = std::upper_bound(stream_waits.begin(), stream_waits.end(), s.last_launch) !=
                         std::upper_bound(stream_waits.begin(), stream_waits.end(), launch);
      s.last_launch = launch;
      std::string dep;
      if (waits) {
        double best = -1;
        for (const auto& [stream, history] : finished) {
          if (stream == a.stream) continue;
          // The last op of that stream that had ended when this one started.
          auto it = std::upper_bound(history.begin(), history.end(), a.ts + 1e-3, [](double t, const Done& x) { return t < x.end; });
          if (it == history.begin()) continue;
          --it;
          if (it->end > best) {
            best = it->end;
            dep = list[it->op].id;
          }
        }
      }
      const std::string stream_name = fmt::format("s{}", a.stream);
      if (a.args == nullptr) {
        // Compute: merged with the stream's open compute op unless a wait intervenes.
        if (s.pending_compute >= 0 && dep.empty()) {
          auto& c = list[static_cast<std::size_t>(s.pending_compute)];
          c.duration_ns += static_cast<std::uint64_t>(a.dur * 1e3);
          s.last_end = a.ts + a.dur;
          finish(a.stream, s.last_end, static_cast<std::size_t>(s.pending_compute));
          continue;
        }
        ImportedOp op;
        op.id = fmt::format("compute{}", compute_count++);
        op.type = "compute";
        op.stream = stream_name;
        op.duration_ns = static_cast<std::uint64_t>(a.dur * 1e3);
        op.delay_ns = s.last_end > 0 && a.ts > s.last_end ? static_cast<std::uint64_t>((a.ts - s.last_end) * 1e3) : 0;
        if (!dep.empty()) op.deps.push_back(dep);
        op.name = a.name.substr(0, 60);
        s.pending_compute = static_cast<int>(list.size());
        list.push_back(std::move(op));
        s.last_end = a.ts + a.dur;
        finish(a.stream, s.last_end, list.size() - 1);
      } else {
        const json& args = *a.args;
        const std::string coll = args.value("Collective name", std::string());
        const auto type = collective_types().find(coll);
        if (type == collective_types().end()) {
          b.warnings.add(fmt::format("collective '{}' has no native equivalent: skipped", coll));
          continue;
        }
        ImportedOp op;
        op.id = fmt::format("comm{}", comm_count++);
        op.type = type->second;
        op.stream = stream_name;
        op.comm = comm_for(args);
        if (op.comm < 0) {
          b.warnings.add("collective whose process group cannot be rebuilt: skipped");
          continue;
        }
        std::string dtype;
        const core::Bytes element = scalar_type_bytes(args.value("dtype", std::string()), dtype);
        if (element == 0) b.warnings.add(fmt::format("unknown dtype '{}': 4 bytes assumed", args.value("dtype", std::string())));
        op.dtype = dtype;
        const core::Bytes in = args.value("In msg nelems", std::uint64_t{0}) * (element == 0 ? 4 : element);
        op.bytes = in;
        const auto& group = [&]() -> const std::vector<int>& {
          for (const auto& g : b.comms[static_cast<std::size_t>(op.comm)].groups)
            if (std::find(g.begin(), g.end(), rank) != g.end()) return g;
          return b.comms[static_cast<std::size_t>(op.comm)].groups.front();
        }();
        if (op.type == "send" || op.type == "recv") {
          int peer = args.value(op.type == "send" ? "Dst Rank" : "Src Rank", -1);
          if (peer < 0) {
            // The annotation names global ranks: "nccl:send 0->2", "nccl:recv 2<-0".
            const auto it = annotations.find(a.external);
            int x = -1, y = -1;
            if (it != annotations.end() && (std::sscanf(it->second.c_str(), "nccl:send %d->%d", &x, &y) == 2 ||
                                            std::sscanf(it->second.c_str(), "nccl:recv %d<-%d", &x, &y) == 2))
              peer = y;
          }
          if (peer < 0) {
            b.warnings.add("send/recv whose peer is in neither its arguments nor an nccl: annotation: skipped");
            continue;
          }
          (op.type == "send" ? op.sends : op.recvs).push_back({peer, in});
        } else if (op.type == "alltoall" || op.type == "alltoallv") {
          const auto split = parse_rank_string(args.value("In split size", std::string("[]")));
          if (!split.empty()) {
            long total = 0;
            for (int v : split) total += v;
            op.type = "alltoallv";
            for (int v : split)
              op.send_bytes.push_back(total > 0 ? in / static_cast<core::Bytes>(total) * static_cast<core::Bytes>(v) : 0);
          } else {
            op.type = "alltoall";
          }
        } else if (op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") {
          op.root = args.value("Rank", group.front());
          if (!args.contains("Rank")) b.warnings.add("rooted collective without a 'Rank' argument: root = the group's first rank");
        } else if (op.type == "allreduce" && op.bytes == 0) {
          op.type = "barrier";
        }
        if (op.type == "allgather" && args.contains("Out msg nelems") && args["Out msg nelems"].get<std::uint64_t>() != in / (element ? element : 4) * group.size())
          b.warnings.add("all-gather whose output is not group size x input: input size used");
        if (!dep.empty()) op.deps.push_back(dep);
        op.measured = {{"dur_ns", static_cast<std::uint64_t>(a.dur * 1e3)}};
        s.pending_compute = -1;
        op.name = a.name.substr(0, 60);
        list.push_back(std::move(op));
        s.last_end = a.ts + a.dur;
        finish(a.stream, s.last_end, list.size() - 1);
        continue;
      }
    }
  }
  for (int r = 0; r < b.world_size; ++r)
    if (!b.ops_of_rank.contains(r)) b.warnings.add("ranks with no profiler file (the trace replays once every rank's file is imported)");
  return b;
}

}  // namespace fabsim::traces
