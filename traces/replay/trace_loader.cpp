#include "traces/replay/trace_loader.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <set>

#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"

namespace fabsim::traces {

namespace {

using core::JsonObject;
using nlohmann::json;

/// A list of non-negative integers (ranks); records a problem and returns what it could read.
std::vector<int> read_rank_list(const json& j, const std::string& path, int world_size, core::Diagnostics& diag) {
  std::vector<int> ranks;
  if (!j.is_array()) {
    diag.error(path, "expected a list of global ranks");
    return ranks;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= world_size) {
      diag.error(fmt::format("{}/{}", path, i), fmt::format("expected a rank in 0..{} (world_size {}), found {}",
                                                           world_size - 1, world_size, v.dump()));
      continue;
    }
    ranks.push_back(v.get<int>());
  }
  return ranks;
}

void read_communicators(const json& list, Trace& trace, core::Diagnostics& diag) {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("/communicators/{}", i);
    JsonObject o(list[i], path, diag);
    Communicator c;
    c.id = o.string("id").value_or("");
    c.desc = o.string("desc", false).value_or("");
    o.allow_prefix("x-");
    if (!c.id.empty() && !ids.insert(c.id).second) diag.error(path + "/id", fmt::format("communicator id '{}' is used twice", c.id));
    c.group_of_rank.assign(static_cast<std::size_t>(trace.world_size), -1);
    c.local_rank.assign(static_cast<std::size_t>(trace.world_size), -1);
    if (const json* groups = o.child("groups", json::value_t::array)) {
      for (std::size_t g = 0; g < groups->size(); ++g) {
        const std::string gpath = fmt::format("{}/groups/{}", path, g);
        auto ranks = read_rank_list((*groups)[g], gpath, trace.world_size, diag);
        if (ranks.empty()) diag.error(gpath, "expected a non-empty list of ranks");
        for (std::size_t k = 0; k < ranks.size(); ++k) {
          auto& owner = c.group_of_rank[static_cast<std::size_t>(ranks[k])];
          if (owner >= 0) {
            diag.error(fmt::format("{}/{}", gpath, k), fmt::format("rank {} is already in group {} of communicator '{}' "
                                                                  "(groups must be disjoint)", ranks[k], owner, c.id));
            continue;
          }
          owner = static_cast<int>(g);
          c.local_rank[static_cast<std::size_t>(ranks[k])] = static_cast<int>(k);
        }
        c.groups.push_back(std::move(ranks));
      }
    }
    o.reject_unknown_keys();
    trace.communicators.push_back(std::move(c));
  }
}

/// Refuses a trace whose unrolled work or own timeline could not finish:
/// op instances over all ranks, and each program's compute and delays.
void check_trace_size(const Trace& trace) {
  double instances = 0;
  for (std::size_t p = 0; p < trace.programs.size(); ++p) {
    const auto& program = trace.programs[p];
    double per_rank = 0, own_time_ps = 0;
    for (const auto& op : program.ops) {
      per_rank += op.repeat;
      own_time_ps += static_cast<double>(op.repeat) * (static_cast<double>(op.delay) + static_cast<double>(op.duration));
    }
    instances += per_rank * trace.iterations * static_cast<double>(program.ranks.size());
    if (own_time_ps * trace.iterations >= static_cast<double>(core::kMaxSimulatedPs))
      throw core::ConfigError(trace.file, program.json_path,
                              fmt::format("its compute and delays alone last {:.3g} s over {} iteration(s): more than fabsim's "
                                          "limit of 1e6 s of simulated time",
                                          own_time_ps * trace.iterations / 1e12, trace.iterations));
  }
  if (instances > static_cast<double>(core::kMaxOpInstances))
    throw core::ConfigError(trace.file, "/iterations",
                            fmt::format("the trace unrolls to {:.3g} op instances over all ranks (ops x repeat x iterations): "
                                        "at most {} can be replayed",
                                        instances, core::kMaxOpInstances));
}

bool is_byte_count(const json& v) { return core::integer_in_range(v, 0, core::kMaxBytes).has_value(); }

core::TimePs read_ns(JsonObject& o, std::string_view key, bool required) {
  return static_cast<core::TimePs>(o.integer(key, required, 0, core::kMaxDurationNs).value_or(0)) * core::kPsPerNs;
}

std::vector<PeerTransfer> read_parts(const json* list, const std::string& path, core::Diagnostics& diag) {
  std::vector<PeerTransfer> parts;
  if (list == nullptr) return parts;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonObject p((*list)[i], fmt::format("{}/{}", path, i), diag);
    PeerTransfer t;
    t.peer = static_cast<int>(p.integer("peer", true, 0, core::kMaxGpus).value_or(0));
    t.bytes = static_cast<core::Bytes>(p.integer("bytes", true, 0, core::kMaxBytes).value_or(0));
    p.reject_unknown_keys();
    parts.push_back(t);
  }
  return parts;
}

TraceOp read_op(const json& j, const std::string& path, Program& program, const std::map<std::string, int>& earlier,
                const std::map<std::string, int>& all_ids, const Trace& trace, core::Diagnostics& diag) {
  JsonObject o(j, path, diag);
  o.allow_prefix("x-");
  TraceOp op;
  op.json_path = path;
  op.id = o.string("id").value_or("");
  if (const auto type = o.string("type")) {
    if (const auto t = parse_trace_op(*type)) {
      op.type = *t;
    } else {
      diag.error(path + "/type", fmt::format("unknown op type '{}' (expected one of: {})", *type, trace_op_names()));
    }
  }
  op.name = o.string("name", false).value_or("");
  o.child("tags", json::value_t::object, false);
  o.child("measured", json::value_t::object, false);
  o.child("source", json::value_t::object, false);
  op.delay = read_ns(o, "delay_ns", false);
  op.repeat = static_cast<int>(o.integer("repeat", false, 1, core::kMaxRepeats).value_or(1));
  if (const json* deps = o.child("deps", json::value_t::array, false)) {
    for (std::size_t k = 0; k < deps->size(); ++k) {
      const auto& d = (*deps)[k];
      const std::string dpath = fmt::format("{}/deps/{}", path, k);
      if (!d.is_string()) {
        diag.error(dpath, fmt::format("expected an op id (a string), found {}", d.dump()));
        continue;
      }
      const auto id = d.get<std::string>();
      if (const auto it = earlier.find(id); it != earlier.end()) {
        op.deps.push_back(it->second);
      } else if (id == op.id || all_ids.contains(id)) {
        diag.error(dpath, fmt::format("op '{}' depends on '{}', which does not come before it: deps may only name earlier "
                                      "ops of the program (a dependency cycle, or ops out of order)", op.id, id));
      } else {
        diag.error(dpath, fmt::format("op '{}' depends on '{}', which is not an op of this program", op.id, id));
      }
    }
  }
  const bool compute = op.type == TraceOpType::kCompute;
  if (compute) {
    op.duration = read_ns(o, "duration_ns", true);
  } else if (const auto comm = o.string("comm")) {
    for (std::size_t c = 0; c < trace.communicators.size(); ++c)
      if (trace.communicators[c].id == *comm) op.comm = static_cast<int>(c);
    if (op.comm < 0) {
      std::string known;
      for (const auto& c : trace.communicators) known += (known.empty() ? "" : ", ") + c.id;
      diag.error(path + "/comm", fmt::format("unknown communicator '{}' (defined: {})", *comm, known.empty() ? "none" : known));
    }
  }
  op.dtype = o.string("dtype", false).value_or("");
  if (!op.dtype.empty() && !dtype_size(op.dtype))
    diag.error(path + "/dtype", fmt::format("unknown dtype '{}' (expected i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64, f8e4m3 or f8e5m2)", op.dtype));
  // `count` (elements of this rank's input) with `dtype` may stand for `bytes`.
  auto read_bytes = [&](const char* key) -> core::Bytes {
    if (o.has("count") && !o.has(key)) {
      const auto count = o.integer("count", true, 0, core::kMaxBytes);
      if (op.dtype.empty()) diag.error(path + "/count", "a count needs a dtype to give its size in bytes");
      const auto bytes = static_cast<core::Bytes>(count.value_or(0)) * dtype_size(op.dtype).value_or(0);
      if (bytes > static_cast<core::Bytes>(core::kMaxBytes)) {
        diag.error(path + "/count", fmt::format("{} elements of {} are {} bytes (at most {}, 16 TiB)", count.value_or(0), op.dtype,
                                                bytes, core::kMaxBytes));
        return 0;
      }
      return bytes;
    }
    return static_cast<core::Bytes>(o.integer(key, true, 0, core::kMaxBytes).value_or(0));
  };
  switch (op.type) {
    case TraceOpType::kCompute:
    case TraceOpType::kBarrier: break;
    case TraceOpType::kAllToAllv:
      if (const json* m = o.child("matrix_bytes", json::value_t::array, false)) {
        for (std::size_t r = 0; r < m->size(); ++r) {
          const auto& row = (*m)[r];
          if (!row.is_array()) {
            diag.error(fmt::format("{}/matrix_bytes/{}", path, r), "expected a row: a list of byte counts");
            continue;
          }
          for (const auto& v : row) {
            if (!is_byte_count(v)) diag.error(fmt::format("{}/matrix_bytes/{}", path, r), "expected byte counts from 0 to 2^44 (16 TiB)");
            op.matrix.push_back(is_byte_count(v) ? v.get<core::Bytes>() : 0);
          }
        }
      } else if (const json* row = o.child("send_bytes", json::value_t::array, false)) {
        op.matrix_row = true;
        for (const auto& v : *row) {
          if (!is_byte_count(v)) diag.error(path + "/send_bytes", "expected byte counts from 0 to 2^44 (16 TiB)");
          op.matrix.push_back(is_byte_count(v) ? v.get<core::Bytes>() : 0);
        }
      } else {
        diag.error(path, "an alltoallv needs 'matrix_bytes' (G x G) or 'send_bytes' (this rank's row)");
      }
      break;
    case TraceOpType::kSend:
    case TraceOpType::kRecv: {
      PeerTransfer t{static_cast<int>(o.integer("peer", true, 0, core::kMaxGpus).value_or(0)), read_bytes("bytes")};
      op.bytes = t.bytes;
      o.integer("tag", false, std::numeric_limits<std::int64_t>::min());
      (op.type == TraceOpType::kSend ? op.sends : op.recvs).push_back(t);
      break;
    }
    case TraceOpType::kP2PBatch:
      op.sends = read_parts(o.child("sends", json::value_t::array, false), path + "/sends", diag);
      op.recvs = read_parts(o.child("recvs", json::value_t::array, false), path + "/recvs", diag);
      if (op.sends.empty() && op.recvs.empty()) diag.error(path, "a p2p_batch needs at least one of 'sends' and 'recvs'");
      for (const auto& s : op.sends) op.bytes += s.bytes;
      break;
    default:
      op.bytes = read_bytes("bytes");
      if (op.type == TraceOpType::kBroadcast || op.type == TraceOpType::kReduce || op.type == TraceOpType::kGather ||
          op.type == TraceOpType::kScatter)
        op.root = static_cast<int>(o.integer("root", op.type == TraceOpType::kBroadcast || op.type == TraceOpType::kScatter, 0, core::kMaxGpus).value_or(0));
      break;
  }
  if (!compute) o.string("redop", false);  // informational: reductions cost the same whatever the operator
  std::string stream = compute ? "compute" : "comm:" + (op.comm >= 0 ? trace.communicators[static_cast<std::size_t>(op.comm)].id : std::string());
  if (const auto s = o.string("stream", false)) stream = *s;
  op.stream = -1;
  for (std::size_t s = 0; s < program.streams.size(); ++s)
    if (program.streams[s] == stream) op.stream = static_cast<int>(s);
  if (op.stream < 0) {
    op.stream = static_cast<int>(program.streams.size());
    program.streams.push_back(stream);
  }
  o.reject_unknown_keys();
  return op;
}

void read_programs(const json& list, Trace& trace, core::Diagnostics& diag) {
  trace.program_of_rank.assign(static_cast<std::size_t>(trace.world_size), -1);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("/programs/{}", i);
    JsonObject o(list[i], path, diag);
    o.allow_prefix("x-");
    Program p;
    p.json_path = path;
    p.name = o.string("name", false).value_or("");
    if (const json* ranks = o.child("ranks", json::value_t::array)) {
      p.ranks = read_rank_list(*ranks, path + "/ranks", trace.world_size, diag);
      for (int r : p.ranks) {
        auto& owner = trace.program_of_rank[static_cast<std::size_t>(r)];
        if (owner >= 0) diag.error(path + "/ranks", fmt::format("rank {} already runs program {}: each rank runs exactly one", r, owner));
        else owner = static_cast<int>(i);
      }
    }
    if (const json* ops = o.child("ops", json::value_t::array)) {
      std::map<std::string, int> all_ids, earlier;
      for (std::size_t k = 0; k < ops->size(); ++k)
        if ((*ops)[k].is_object() && (*ops)[k].contains("id") && (*ops)[k]["id"].is_string())
          all_ids.emplace((*ops)[k]["id"].get<std::string>(), static_cast<int>(k));
      for (std::size_t k = 0; k < ops->size(); ++k) {
        const std::string opath = fmt::format("{}/ops/{}", path, k);
        TraceOp op = read_op((*ops)[k], opath, p, earlier, all_ids, trace, diag);
        if (!op.id.empty() && !earlier.emplace(op.id, static_cast<int>(k)).second)
          diag.error(opath + "/id", fmt::format("op id '{}' is used twice in this program", op.id));
        p.ops.push_back(std::move(op));
      }
    }
    o.reject_unknown_keys();
    trace.programs.push_back(std::move(p));
  }
  for (int r = 0; r < trace.world_size; ++r)
    if (trace.program_of_rank[static_cast<std::size_t>(r)] < 0)
      diag.error("/programs", fmt::format("rank {} runs no program (world_size is {}; every rank needs one)", r, trace.world_size));
}

}  // namespace

Trace parse_trace(const json& doc, const std::string& file) {
  core::Diagnostics diag(file);
  JsonObject root(doc, "", diag);
  root.allow_prefix("x-");
  Trace trace;
  trace.file = file;
  if (const auto format = root.string("format"); format && *format != kTraceFormat)
    diag.error("/format", fmt::format("expected \"{}\", found \"{}\"", kTraceFormat, *format));
  if (const auto version = root.integer("version", true, 1); version && *version > kTraceVersion)
    diag.error("/version", fmt::format("version {} is newer than this fabsim reads (up to {})", *version, kTraceVersion));
  if (const json* meta = root.child("meta", json::value_t::object, false))
    if (meta->contains("name") && (*meta)["name"].is_string()) trace.name = (*meta)["name"].get<std::string>();
  trace.world_size = static_cast<int>(root.integer("world_size", true, 1, core::kMaxGpus).value_or(0));
  trace.iterations = static_cast<int>(root.integer("iterations", false, 1, core::kMaxRepeats).value_or(1));
  diag.throw_if_any();  // the rest needs a valid world size
  if (const json* comms = root.child("communicators", json::value_t::array)) read_communicators(*comms, trace, diag);
  if (const json* programs = root.child("programs", json::value_t::array)) read_programs(*programs, trace, diag);
  root.reject_unknown_keys();
  diag.throw_if_any();
  check_trace_size(trace);
  check_trace_matching(trace);
  return trace;
}

Trace load_trace(const std::string& path) { return parse_trace(core::read_json_file(path), path); }

}  // namespace fabsim::traces
