/// NCCL or RCCL debug log -> native trace.
///
/// Communicators come from the Init COMPLETE lines, in every form NCCL and
/// RCCL print (nccl_log_lines.hpp): by commId; ncclCommSplit siblings (the
/// k-th split of one parent on every process) become one communicator with a
/// group per commId; lines without a commId (NCCL before 2.18) are matched
/// across processes by creation order and size. A communicator has the size
/// its `nranks` says, whatever part of it the log shows. A process's global
/// rank is its rank in the largest communicator; a log with COLL lines but no
/// Init lines gets the global ranks RCCL prints (globalrank), else ranks in
/// order of appearance, counted as guessed. COLL lines in file order are each
/// rank's op sequence; a partial paste whose ranks start or stop at different
/// calls is aligned by opCount (NCCL has every rank of a communicator make
/// each collective call in the same order).

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <map>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text.hpp"
#include "traces/import/importers.hpp"
#include "traces/import/nccl_log_lines.hpp"

namespace fabsim::traces {

namespace {

struct InitRecord {
  std::string device_key;  // host:pid/cudaDev
  int rank = 0, nranks = 0;
  std::string comm_id;     // the group within the family
  std::string family;      // what groups sibling comms into one communicator
  std::string file;
  std::size_t line = 0;
};

struct CollRecord {
  std::string device_key, pointer_key, op, stream;
  std::uint64_t count = 0, op_count = 0;
  int datatype = 0, root = 0, nranks = 0, global_rank = -1;
  std::size_t line = 0;
  std::string file;
  nlohmann::json measured;
};

/// Numbers in a log are checked, not trusted: one out of range is this line's error.
template <typename T>
T number(const std::string& text, const std::string& file, std::size_t line, T min = std::numeric_limits<T>::min(),
         T max = std::numeric_limits<T>::max()) {
  const auto v = core::parse_integer<T>(text);
  if (!v || *v < min || *v > max)
    throw core::ConfigError(file, fmt::format("line {}", line), fmt::format("the number '{}' is out of range", text));
  return *v;
}

struct LogContent {
  std::map<std::string, InitRecord> inits;  // host:pid/comm pointer -> its Init line
  std::vector<std::string> init_order;      // pointer keys in file order
  std::vector<CollRecord> colls;
};

class LogReader {
 public:
  explicit LogReader(ImportWarnings& warnings) : warnings_(warnings) {}

  void read(const std::string& file) {
    // The whole file at once, with every input's checks (a directory, a device, 4 GiB; gzip is read through).
    const std::string content_text = core::read_text_file(file);
    const std::string_view all(content_text);
    std::size_t line_no = 0, nccl_lines = 0;
    for (std::size_t at = 0; at < all.size();) {
      const std::size_t end = std::min(all.find('\n', at), all.size());
      std::string_view text = all.substr(at, end - at);
      at = end + 1;
      ++line_no;
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      const auto d = nccl_log::read_debug_line(text);
      if (!d) {
        // An NCCL debug line that lost its prefix (two processes writing at once); not PyTorch's
        // "ProcessGroupNCCL" lines or the bare "NCCL version" banner.
        for (const char* level : {"NCCL INFO ", "NCCL WARN ", "NCCL TRACE "})
          if (text.find(level) != std::string::npos) {
            ++malformed_;
            break;
          }
        continue;
      }
      ++nccl_lines;
      const std::string process = d->process();
      if (const auto init = nccl_log::read_init_line(d->message)) {
        add_init(*init, process, file, line_no);
      } else if (const auto coll = nccl_log::read_coll_line(d->message)) {
        if (!coll->complete) {
          warnings_.add("COLL line in an unknown layout (a field NCCL always prints is missing): skipped");
          continue;
        }
        add_coll(*coll, process, d->device, file, line_no);
      } else if (const auto tuning = nccl_log::read_tuning_line(d->message)) {
        if (const auto it = last_coll_of_process_.find(process); it != last_coll_of_process_.end())
          content.colls[it->second].measured = {{"algo", tuning->algo}, {"proto", tuning->proto}};
      } else if (d->message.find("opCount") != std::string_view::npos) {
        warnings_.add("COLL line in an unknown layout (a field NCCL always prints is missing): skipped");
      }
    }
    if (nccl_lines == 0)
      throw core::ConfigError(file, "", "no NCCL debug lines found (expected '<host>:<pid>:<tid> [<dev>] NCCL INFO ...' lines from NCCL_DEBUG=INFO)");
  }

  void finish() {
    if (malformed_ > 0) warnings_.add("lines mentioning NCCL but not in its debug-line format (torn or interleaved output)", malformed_);
    if (commid_less_ > 0)
      warnings_.add("communicators without a commId (NCCL before 2.18): matched across processes by creation order and size", commid_less_);
  }

  LogContent content;

 private:
  void add_init(const nccl_log::InitLine& init, const std::string& process, const std::string& file, std::size_t line) {
    if (content.inits.contains(process + "/" + init.field("comm"))) return;  // its START line came first
    InitRecord r;
    r.rank = number<int>(init.field("rank"), file, line, 0, core::kMaxGpus - 1);
    r.nranks = number<int>(init.field("nranks"), file, line, 1, core::kMaxGpus);
    if (r.rank >= r.nranks) throw core::ConfigError(file, fmt::format("line {}", line), fmt::format("rank {} of a communicator of {} ranks", r.rank, r.nranks));
    const std::string device = init.field("cudaDev");
    r.device_key = process + "/" + (device.empty() ? "?" : device);
    r.file = file;
    r.line = line;
    const std::string pointer_key = process + "/" + init.field("comm");
    const std::string comm_id = init.field("commId");
    if (init.is_split() && !init.field("parent").empty()) {
      const std::string parent_pointer = init.field("parent");
      const std::string parent = process + "/" + parent_pointer;
      const int k = splits_of_parent_[parent]++;
      const auto p = content.inits.find(parent);
      r.family = fmt::format("{}/split{}", p != content.inits.end() ? p->second.comm_id : parent_pointer, k);
      const std::string color = init.field("color");
      r.comm_id = !comm_id.empty() ? comm_id : fmt::format("{}/color{}", r.family, color.empty() ? "?" : color);
    } else if (!comm_id.empty()) {
      // (A split line without its parent has no siblings to group with: a communicator of its own.)
      r.comm_id = r.family = comm_id;
    } else {
      // The k-th commId-less communicator of this size on a device; ranks
      // seen twice start another group of the same family.
      ++commid_less_;
      r.family = fmt::format("n{}#{}", r.nranks, commid_less_of_device_[fmt::format("{}/{}", r.device_key, r.nranks)]++);
      r.comm_id = fmt::format("{}/g{}", r.family, ranks_seen_[fmt::format("{}/{}", r.family, r.rank)]++);
    }
    if (!content.inits.contains(pointer_key)) content.init_order.push_back(pointer_key);
    content.inits[pointer_key] = r;
  }

  void add_coll(const nccl_log::CollLine& c, const std::string& process, const std::string& device, const std::string& file, std::size_t line) {
    CollRecord r;
    r.device_key = process + "/" + device;
    r.pointer_key = process + "/" + c.field("comm");
    r.op = c.op;
    r.stream = process + "/" + c.field("stream");
    const auto op_count = nccl_log::parse_op_count(c.field("opCount"));
    if (!op_count) throw core::ConfigError(file, fmt::format("line {}", line), fmt::format("opCount '{}' is not a hexadecimal number", c.field("opCount")));
    r.op_count = *op_count;
    r.count = number<std::uint64_t>(c.field("count"), file, line);
    r.datatype = number<int>(c.field("datatype"), file, line);
    r.root = number<int>(c.field("root"), file, line);
    if (const std::string n = c.field("nranks"); !n.empty()) r.nranks = number<int>(n, file, line, 1, core::kMaxGpus);
    if (const std::string g = c.field("globalrank"); !g.empty()) r.global_rank = number<int>(g, file, line, 0, core::kMaxGpus - 1);
    r.line = line;
    r.file = file;
    last_coll_of_process_[process] = content.colls.size();
    content.colls.push_back(std::move(r));
  }

  ImportWarnings& warnings_;
  std::size_t malformed_ = 0, commid_less_ = 0;
  std::map<std::string, int> splits_of_parent_, commid_less_of_device_, ranks_seen_;
  std::map<std::string, std::size_t> last_coll_of_process_;
};

/// A communicator being assembled: its size and, per group (commId), comm rank -> global rank.
struct Family {
  int nranks = 0;
  std::map<std::string, std::map<int, int>> groups;
};

const std::map<std::string, std::pair<const char*, bool>>& collective_ops() {
  // NCCL op -> native type, and whether the count is per rank of a total (x nranks)
  static const std::map<std::string, std::pair<const char*, bool>> kOps = {
      {"AllReduce", {"allreduce", false}}, {"AllGather", {"allgather", false}}, {"ReduceScatter", {"reducescatter", true}},
      {"Broadcast", {"broadcast", false}}, {"Reduce", {"reduce", false}},       {"AlltoAll", {"alltoall", true}},
      {"Gather", {"gather", false}},       {"Scatter", {"scatter", true}}};
  return kOps;
}

bool is_p2p(const ImportedOp& op) { return op.type == "send" || op.type == "recv" || op.type == "p2p_batch"; }

/// Ranks of one group whose logs start or stop at different collective calls
/// get the calls before their first and after their last from the ranks that
/// logged them. Gaps inside a rank's own range are left alone: they would
/// mean the ranks disagree, which trace check reports.
void align_partial_logs(TraceBuilder& b) {
  std::uint64_t filled = 0;
  for (std::size_t c = 0; c < b.comms.size(); ++c) {
    for (const auto& group : b.comms[c].groups) {
      std::map<std::uint64_t, const ImportedOp*> calls;
      std::map<int, std::pair<std::uint64_t, std::uint64_t>> range;  // rank -> first, last opCount on c
      for (int rank : group) {
        const auto it = b.ops_of_rank.find(rank);
        if (it == b.ops_of_rank.end()) continue;
        for (const auto& op : it->second) {
          if (op.comm != static_cast<int>(c) || is_p2p(op) || op.sequence == ImportedOp::kNoSequence) continue;
          calls.emplace(op.sequence, &op);
          auto [r, fresh] = range.try_emplace(rank, op.sequence, op.sequence);
          if (!fresh) r->second = {std::min(r->second.first, op.sequence), std::max(r->second.second, op.sequence)};
        }
      }
      if (range.size() < 2) continue;
      std::map<int, std::vector<ImportedOp>> before, after;
      for (const auto& [rank, r] : range)
        for (const auto& [seq, op] : calls)
          if (seq < r.first || seq > r.second) {
            ImportedOp copy = *op;
            copy.measured = nullptr;
            copy.source = nlohmann::json{{"filled_from_opCount", seq}};
            (seq < r.first ? before : after)[rank].push_back(std::move(copy));
          }
      for (auto* side : {&before, &after})
        for (auto& [rank, ops] : *side) {
          auto& list = b.ops_of_rank[rank];
          auto on_c = [&](const ImportedOp& op) { return op.comm == static_cast<int>(c) && !is_p2p(op) && op.sequence != ImportedOp::kNoSequence; };
          const std::string stream = std::find_if(list.begin(), list.end(), on_c)->stream;
          for (auto& op : ops) op.stream = stream;
          filled += ops.size();
          if (side == &before) {
            list.insert(std::find_if(list.begin(), list.end(), on_c), ops.begin(), ops.end());
          } else {
            const auto last = std::find_if(list.rbegin(), list.rend(), on_c).base();
            list.insert(last, ops.begin(), ops.end());
          }
        }
    }
  }
  if (filled > 0)
    b.warnings.add("collective calls before or after a rank's logged range, logged by other ranks of its communicator "
                   "(same opCount): filled in (NCCL has every rank make each call)", filled);
  for (auto& [rank, list] : b.ops_of_rank)
    for (std::size_t i = 0; i < list.size(); ++i) list[i].id = fmt::format("op{}", i);
}

}  // namespace

TraceBuilder import_nccl_log(const std::vector<std::string>& files, const ImportOptions& options) {
  TraceBuilder b("nccl-log import", "nccl-log", files);
  LogReader reader(b.warnings);
  for (const auto& file : files) reader.read(file);
  reader.finish();
  LogContent& log = reader.content;
  if (log.inits.empty() && log.colls.empty())
    throw core::ConfigError(files.front(), "", "no 'Init COMPLETE' or COLL lines: run with NCCL_DEBUG_SUBSYS=INIT,COLL so the calls and communicators can be rebuilt");

  // The world: the largest communicator named by an Init or a COLL line.
  int world = 0;
  for (const auto& [key, r] : log.inits) world = std::max(world, r.nranks);
  for (const auto& c : log.colls) world = std::max(world, c.nranks);
  if (world == 0)
    throw core::ConfigError(files.front(), "", "no Init COMPLETE lines and no [nranks=N] on the COLL lines: the communicators' sizes are unknown");
  b.world_size = world;

  // Global ranks: a device's rank in the (first) largest communicator; then RCCL's globalrank.
  std::map<std::string, int> global_of_device;
  std::set<int> used;
  for (const auto& key : log.init_order)
    if (const auto& r = log.inits.at(key); r.nranks == world && !global_of_device.contains(r.device_key) && !used.contains(r.rank)) {
      global_of_device[r.device_key] = r.rank;
      used.insert(r.rank);
    }
  for (const auto& c : log.colls)
    if (c.global_rank >= 0 && c.global_rank < world && !global_of_device.contains(c.device_key) && !used.contains(c.global_rank)) {
      global_of_device[c.device_key] = c.global_rank;
      used.insert(c.global_rank);
    }

  // Communicators.
  std::map<std::string, Family> families;
  std::map<std::string, std::pair<std::string, std::string>> family_of_pointer;  // pointer key -> family, comm id
  for (const auto& key : log.init_order) {
    const auto& r = log.inits.at(key);
    auto& f = families[r.family];
    f.nranks = std::max(f.nranks, r.nranks);
    family_of_pointer[key] = {r.family, r.comm_id};
    if (const auto g = global_of_device.find(r.device_key); g != global_of_device.end()) f.groups[r.comm_id][r.rank] = g->second;
    else if (r.nranks < world) f.groups[r.comm_id];  // the group exists; its members on unknown devices
  }
  // COLL lines on communicators with no Init line: one of the world's size is
  // the world communicator (the logged one, else one inferred); smaller ones
  // cannot be placed.
  std::uint64_t guessed = 0;
  std::pair<std::string, std::string> world_comm = {fmt::format("world of {} ranks (no Init line)", world), ""};
  world_comm.second = world_comm.first;
  for (const auto& key : log.init_order)
    if (const auto& r = log.inits.at(key); r.nranks == world) {
      world_comm = {r.family, r.comm_id};
      break;
    }
  std::set<std::string> devices_with_init;
  for (const auto& [key, r] : log.inits) devices_with_init.insert(r.device_key);
  for (const auto& c : log.colls) {
    // Only for devices the log shows no Init line of: another pointer on a
    // device with Init lines is a communicator whose Init line is missing.
    if (family_of_pointer.contains(c.pointer_key) || c.nranks != world || devices_with_init.contains(c.device_key)) continue;
    if (!global_of_device.contains(c.device_key)) {
      int next = 0;
      while (used.contains(next)) ++next;
      if (next >= world) continue;
      global_of_device[c.device_key] = next;
      used.insert(next);
      ++guessed;
    }
    family_of_pointer[c.pointer_key] = world_comm;
    auto& f = families[world_comm.first];
    f.nranks = world;
    const int global = global_of_device[c.device_key];
    f.groups[world_comm.second].try_emplace(global, global);
  }
  if (guessed > 0)
    b.warnings.add("processes whose global rank the log does not show (no Init COMPLETE line, no globalrank): ranks given in order of appearance", guessed);

  std::map<std::string, int> comm_index_of_id;
  std::vector<std::string> incomplete;
  bool world_named = false;
  for (const auto& [name, f] : families) {
    ImportedComm c;
    c.source_id = name;
    for (const auto& [id, members] : f.groups) {
      std::vector<int> group(static_cast<std::size_t>(f.nranks), -1);
      std::set<int> in_group;
      for (const auto& [rank, global] : members) {
        group[static_cast<std::size_t>(rank)] = global;
        in_group.insert(global);
      }
      // A world-sized communicator's missing members are the ranks it numbers (global rank = its rank).
      if (f.nranks == world)
        for (int p = 0; p < world; ++p)
          if (group[static_cast<std::size_t>(p)] < 0 && !in_group.contains(p)) group[static_cast<std::size_t>(p)] = p;
      if (std::count(group.begin(), group.end(), -1) > 0) {
        incomplete.push_back(fmt::format("{} ({} of {} ranks in the log)", id, members.size(), f.nranks));
        continue;
      }
      c.groups.push_back(std::move(group));
      comm_index_of_id[id] = static_cast<int>(b.comms.size());
    }
    if (c.groups.empty()) continue;
    c.id = f.nranks == world && c.groups.size() == 1 && !world_named ? "world" : fmt::format("comm{}", b.comms.size());
    world_named = world_named || c.id == "world";
    std::sort(c.groups.begin(), c.groups.end());
    b.comms.push_back(std::move(c));
  }
  if (!incomplete.empty()) {
    if (!options.symmetric)
      throw core::ConfigError(files.front(), "",
                              fmt::format("{} communicator(s) smaller than the world have members the log does not show, so their global "
                                          "ranks are unknown: {}{} (log every rank, or give --symmetric to drop their calls)",
                                          incomplete.size(), incomplete.front(), incomplete.size() > 1 ? ", ..." : ""));
    b.warnings.add("--symmetric: communicators smaller than the world with members the log does not show: their calls dropped", incomplete.size());
  }
  for (const auto& [device, global] : global_of_device) b.covered_ranks.insert(global);

  // Ops per rank in file order; Send/Recv of one group call (same opCount) become a p2p_batch.
  std::map<std::string, std::string> stream_names;  // process/stream pointer -> s<k>
  std::map<int, int> streams_of_rank;
  std::map<int, std::pair<std::string, std::uint64_t>> open_p2p;  // rank -> (comm pointer, opCount) of its last p2p op
  for (const auto& l : log.colls) {
    const auto fp = family_of_pointer.find(l.pointer_key);
    const auto gd = global_of_device.find(l.device_key);
    if (fp == family_of_pointer.end() || gd == global_of_device.end()) {
      b.warnings.add("COLL line on a communicator with no Init COMPLETE line and not of the world's size: skipped");
      continue;
    }
    const auto ci = comm_index_of_id.find(fp->second.second);
    if (ci == comm_index_of_id.end()) {
      b.warnings.add("--symmetric: calls on a communicator with members the log does not show: dropped");
      continue;
    }
    const int rank = gd->second, comm = ci->second;
    std::string dtype;
    const core::Bytes element = nccl_datatype_bytes(l.datatype, dtype);
    if (element == 0) {
      b.warnings.add(fmt::format("unknown NCCL datatype {}: op skipped", l.datatype));
      continue;
    }
    const ImportedComm& comm_of = b.comms[static_cast<std::size_t>(comm)];
    const auto n = static_cast<core::Bytes>(l.nranks > 0 ? l.nranks : static_cast<int>(comm_of.groups.front().size()));
    if (l.count > core::kMaxBytes / element / n)
      throw core::ConfigError(l.file, fmt::format("line {}", l.line), fmt::format("count {} is beyond the {} bytes an op may move", l.count, core::kMaxBytes));
    const core::Bytes bytes = l.count * element;
    auto& list = b.ops_of_rank[rank];
    const int peer_global = [&] {
      for (const auto& g : comm_of.groups)
        if (std::find(g.begin(), g.end(), rank) != g.end() && l.root >= 0 && l.root < static_cast<int>(g.size())) return g[static_cast<std::size_t>(l.root)];
      return -1;
    }();
    auto& stream = stream_names[l.stream];
    if (stream.empty()) stream = fmt::format("s{}", streams_of_rank[rank]++);
    ImportedOp op;
    op.comm = comm;
    op.dtype = dtype;
    op.stream = stream;
    op.sequence = l.op_count;
    op.measured = l.measured;
    op.source = {{"file", l.file}, {"line", l.line}};
    if (l.op == "Send" || l.op == "Recv") {
      // Consecutive Send/Recv of one group call (same comm, same opCount): one p2p_batch.
      if (const auto open = open_p2p.find(rank);
          open != open_p2p.end() && open->second == std::make_pair(l.pointer_key, l.op_count) && !list.empty()) {
        auto& last = list.back();
        last.type = "p2p_batch";
        (l.op == "Send" ? last.sends : last.recvs).push_back({peer_global, bytes});
        continue;
      }
      open_p2p[rank] = {l.pointer_key, l.op_count};
      op.type = l.op == "Send" ? "send" : "recv";
      (l.op == "Send" ? op.sends : op.recvs).push_back({peer_global, bytes});
    } else {
      open_p2p.erase(rank);
      const auto it = collective_ops().find(l.op);
      if (it == collective_ops().end()) {
        b.warnings.add(fmt::format("NCCL operation '{}' has no native equivalent: skipped", l.op));
        continue;
      }
      op.type = it->second.first;
      op.bytes = it->second.second ? bytes * n : bytes;
      if (op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") op.root = peer_global;
    }
    list.push_back(std::move(op));
  }
  align_partial_logs(b);
  if (log.colls.empty()) b.warnings.add("no COLL lines: communicators without calls (run with NCCL_DEBUG_SUBSYS=INIT,COLL to see the calls)");
  return b;
}

}  // namespace fabsim::traces
