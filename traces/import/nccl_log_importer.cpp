/// NCCL debug log -> native trace. Communicators come from the Init COMPLETE
/// lines (ncclCommInitRank by commId; ncclCommSplit siblings, the k-th split
/// of one parent on every process, become one communicator with a group per
/// commId); each process's global rank is its rank in the largest
/// communicator; COLL lines in file order are each rank's op sequence.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

namespace {

struct CommLine {
  std::string process;  // host:pid
  std::string pointer;
  int rank = 0, nranks = 0, device = 0;
  std::string comm_id;  // commId, or "<parent commId>/split<k>/<color>" when the line has none
  std::string family;   // what groups sibling comms: the commId, or the parent's and the split index
};

struct CollLine {
  std::string process, pointer, op, stream, op_count;
  std::uint64_t count = 0;
  int datatype = 0, root = 0, nranks = 0;
  std::size_t line = 0;
  std::string file;
};

}  // namespace

TraceBuilder import_nccl_log(const std::vector<std::string>& files) {
  TraceBuilder b("nccl-log import", "nccl-log", files);
  // <host>:<pid>:<tid> [<dev>] NCCL INFO <message>, after an optional [timestamp].
  const std::regex prefix(R"(^(?:\[[^\]]*\] *)?([^\s:]+):(\d+):(\d+) \[(\d+)\] NCCL (INFO|WARN|TRACE) (.*)$)");
  const std::regex init(R"(^(ncclCommInitRank|ncclCommSplit) comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) cudaDev (\d+).* - Init COMPLETE)");
  // Optional fields of an init line, in any order.
  auto field = [](const std::string& message, const char* name) -> std::string {
    const std::regex r(std::string(" ") + name + R"( (-?0?x?[0-9a-fA-F]+))");
    std::smatch m;
    return std::regex_search(message, m, r) ? m[1].str() : std::string();
  };
  const std::regex coll(
      R"(^(\w+): opCount ([0-9a-fA-F]+) sendbuff (\S+) recvbuff (\S+) count (\d+) datatype (\d+) op (\d+) root (-?\d+) comm (0x[0-9a-fA-F]+) (?:\[nranks=(\d+)\] )?stream (\S+))");
  const std::regex tuning(R"(^(?:(\w+): )?(\d+) Bytes -> Algo (\w+) proto (\w+)(.*)$)");

  std::map<std::string, CommLine> comms;                 // process/pointer -> init line
  std::map<std::string, std::string> comm_id_of_pointer;  // process/pointer -> commId (for parents)
  std::map<std::string, int> splits_of_parent;            // process/parent pointer -> splits seen
  std::vector<CollLine> colls;
  std::map<std::string, std::size_t> last_coll_of_process;  // for TUNING lines
  std::vector<std::pair<std::size_t, nlohmann::json>> tunings;
  std::size_t malformed = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw core::ConfigError(file, "", "cannot open the file (does it exist and is it readable?)");
    std::string text;
    std::size_t line_no = 0, nccl_lines = 0;
    while (std::getline(in, text)) {
      ++line_no;
      if (!text.empty() && text.back() == '\r') text.pop_back();
      std::smatch m;
      if (!std::regex_match(text, m, prefix)) {
        if (text.find("NCCL") != std::string::npos && text.find("NCCL version") == std::string::npos) ++malformed;
        continue;
      }
      ++nccl_lines;
      const std::string process = m[1].str() + ":" + m[2].str();
      const std::string message = m[6].str();
      // Log numbers are checked, not trusted: one out of range is this line's error.
      auto number = [&](const std::ssub_match& field_text, auto type_tag) {
        using T = decltype(type_tag);
        const auto v = core::parse_integer<T>(field_text.str());
        if (!v) throw core::ConfigError(file, fmt::format("line {}", line_no), fmt::format("the number '{}' is out of range", field_text.str()));
        return *v;
      };
      std::smatch c;
      if (std::regex_search(message, c, init)) {
        CommLine l;
        l.process = process;
        l.pointer = c[2];
        l.rank = number(c[3], int{});
        l.nranks = number(c[4], int{});
        l.device = number(c[5], int{});
        const std::string key = process + "/" + l.pointer;
        const std::string comm_id = field(message, "commId");
        if (c[1] == "ncclCommSplit") {
          const std::string parent_pointer = field(message, "parent");
          const std::string parent = process + "/" + parent_pointer;
          const int k = splits_of_parent[parent]++;
          const std::string parent_id = comm_id_of_pointer.contains(parent) ? comm_id_of_pointer[parent] : parent_pointer;
          l.family = fmt::format("{}/split{}", parent_id, k);
          const std::string color = field(message, "color");
          l.comm_id = !comm_id.empty() ? comm_id : fmt::format("{}/color{}", l.family, color.empty() ? "?" : color);
        } else {
          if (comm_id.empty()) {
            b.warnings.add("ncclCommInitRank line without a commId: skipped");
            continue;
          }
          l.comm_id = comm_id;
          l.family = l.comm_id;
        }
        comm_id_of_pointer[key] = l.comm_id;
        comms[key] = l;
      } else if (std::regex_search(message, c, coll)) {
        CollLine l;
        l.process = process;
        l.op = c[1];
        l.op_count = c[2];
        l.count = number(c[5], std::uint64_t{});
        l.datatype = number(c[6], int{});
        l.root = number(c[8], int{});
        l.pointer = c[9];
        l.nranks = c[10].matched ? number(c[10], int{}) : 0;
        l.stream = c[11];
        l.line = line_no;
        l.file = file;
        last_coll_of_process[process] = colls.size();
        colls.push_back(std::move(l));
      } else if (std::regex_match(message, c, tuning)) {
        // NCCL 2.21 prints numbers (enums of info.h), later versions names.
        static const char* kAlgos[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
        static const char* kProtos[] = {"LL", "LL128", "SIMPLE"};
        auto name = [](const std::string& v, const auto& table) {
          const bool number = !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit);
          const auto i = number ? core::parse_integer<std::size_t>(v).value_or(std::size(table)) : std::size(table);
          return i < std::size(table) ? std::string(table[i]) : v;
        };
        if (const auto it = last_coll_of_process.find(process); it != last_coll_of_process.end())
          tunings.push_back({it->second, {{"algo", name(c[3].str(), kAlgos)}, {"proto", name(c[4].str(), kProtos)}}});
      } else if (message.find("opCount") != std::string::npos) {
        b.warnings.add("COLL line in an unknown layout: skipped");
      }
    }
    if (nccl_lines == 0)
      throw core::ConfigError(file, "", "no NCCL debug lines found (expected '<host>:<pid>:<tid> [<dev>] NCCL INFO ...' lines from NCCL_DEBUG=INFO)");
  }
  if (malformed > 0) b.warnings.add("lines mentioning NCCL but not in its debug-line format (torn or interleaved output)", malformed);
  if (comms.empty())
    throw core::ConfigError(files.front(), "", "no 'Init COMPLETE' lines: run with NCCL_DEBUG_SUBSYS=INIT,COLL so communicators can be rebuilt");

  // Global ranks: a device's rank in the largest communicator.
  int world = 0;
  for (const auto& [key, l] : comms) world = std::max(world, l.nranks);
  std::map<std::string, int> global_of_device;  // process/device
  for (const auto& [key, l] : comms)
    if (l.nranks == world) global_of_device[l.process + "/" + std::to_string(l.device)] = l.rank;
  b.world_size = world;

  // Communicators: families of commIds; each commId one group ordered by comm rank.
  std::map<std::string, std::map<std::string, std::map<int, int>>> families;  // family -> commId -> comm rank -> global
  std::map<std::string, int> global_of_pointer;
  for (const auto& [key, l] : comms) {
    const auto g = global_of_device.find(l.process + "/" + std::to_string(l.device));
    if (g == global_of_device.end()) {
      b.warnings.add("communicator on a device outside the largest communicator: skipped");
      continue;
    }
    families[l.family][l.comm_id][l.rank] = g->second;
    global_of_pointer[key] = g->second;
  }
  std::map<std::string, int> comm_index_of_id;
  for (const auto& [family, ids] : families) {
    ImportedComm c;
    const int size = static_cast<int>(ids.begin()->second.size());
    c.id = size == world && ids.size() == 1 ? "world" : fmt::format("comm{}", b.comms.size());
    c.source_id = family;
    for (const auto& [id, members] : ids) {
      std::vector<int> group;
      for (const auto& [rank, global] : members) group.push_back(global);
      c.groups.push_back(std::move(group));
      comm_index_of_id[id] = static_cast<int>(b.comms.size());
    }
    std::sort(c.groups.begin(), c.groups.end());
    b.comms.push_back(std::move(c));
  }

  // Ops per rank in file order; Send/Recv of one group call (same opCount) become a p2p_batch.
  std::map<std::string, std::string> stream_names;  // process/stream pointer -> s<k>
  std::map<std::string, int> streams_of_process;
  std::map<std::size_t, std::size_t> op_of_coll;     // colls index -> index in its rank's list
  std::map<int, std::pair<std::string, std::string>> open_p2p;  // rank -> (comm pointer, opCount) of its last p2p op
  for (std::size_t i = 0; i < colls.size(); ++i) {
    const auto& l = colls[i];
    const std::string key = l.process + "/" + l.pointer;
    const auto gp = global_of_pointer.find(key);
    if (gp == global_of_pointer.end()) {
      b.warnings.add("COLL line on a communicator with no Init COMPLETE line: skipped");
      continue;
    }
    const int rank = gp->second;
    const int comm = comm_index_of_id.at(comms.at(key).comm_id);
    std::string dtype;
    const core::Bytes element = nccl_datatype_bytes(l.datatype, dtype);
    if (element == 0) {
      b.warnings.add(fmt::format("unknown NCCL datatype {}: op skipped", l.datatype));
      continue;
    }
    const auto n = static_cast<core::Bytes>(l.nranks > 0 ? l.nranks : comms.at(key).nranks);
    const core::Bytes bytes = l.count * element;
    auto& list = b.ops_of_rank[rank];
    const int peer_global = [&] {
      const auto& group_of = b.comms[static_cast<std::size_t>(comm)];
      for (const auto& g : group_of.groups)
        if (std::find(g.begin(), g.end(), rank) != g.end() && l.root >= 0 && l.root < static_cast<int>(g.size())) return g[static_cast<std::size_t>(l.root)];
      return -1;
    }();
    auto& stream = stream_names[l.process + "/" + l.stream];
    if (stream.empty()) stream = fmt::format("s{}", streams_of_process[l.process]++);
    ImportedOp op;
    op.comm = comm;
    op.dtype = dtype;
    op.stream = stream;
    op.source = {{"file", l.file}, {"line", l.line}};
    if (l.op == "Send" || l.op == "Recv") {
      // Consecutive Send/Recv of one group call (same comm, same opCount): one p2p_batch.
      if (const auto open = open_p2p.find(rank);
          open != open_p2p.end() && open->second == std::make_pair(l.pointer, l.op_count) && !list.empty()) {
        auto& last = list.back();
        last.type = "p2p_batch";
        (l.op == "Send" ? last.sends : last.recvs).push_back({peer_global, bytes});
        op_of_coll[i] = list.size() - 1;
        continue;
      }
      open_p2p[rank] = {l.pointer, l.op_count};
      op.type = l.op == "Send" ? "send" : "recv";
      (l.op == "Send" ? op.sends : op.recvs).push_back({peer_global, bytes});
    } else {
      static const std::map<std::string, std::pair<const char*, bool>> kOps = {
          // NCCL op -> native type, and whether the count is per rank of a total (x nranks)
          {"AllReduce", {"allreduce", false}}, {"AllGather", {"allgather", false}}, {"ReduceScatter", {"reducescatter", true}},
          {"Broadcast", {"broadcast", false}}, {"Reduce", {"reduce", false}},       {"AlltoAll", {"alltoall", true}},
          {"Gather", {"gather", false}},       {"Scatter", {"scatter", true}}};
      open_p2p.erase(rank);
      const auto it = kOps.find(l.op);
      if (it == kOps.end()) {
        b.warnings.add(fmt::format("NCCL operation '{}' has no native equivalent: skipped", l.op));
        continue;
      }
      op.type = it->second.first;
      op.bytes = it->second.second ? bytes * n : bytes;
      if (op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") op.root = peer_global;
    }
    op.id = fmt::format("op{}", list.size());
    op_of_coll[i] = list.size();
    list.push_back(std::move(op));
  }
  for (const auto& [coll, measured] : tunings)
    if (const auto it = op_of_coll.find(coll); it != op_of_coll.end()) {
      const auto& l = colls[coll];
      const int rank = global_of_pointer.at(l.process + "/" + l.pointer);
      b.ops_of_rank[rank][it->second].measured = measured;
    }
  for (int r = 0; r < world; ++r)
    if (!b.ops_of_rank.contains(r)) b.warnings.add("ranks with no COLL lines (missing log file?)");
  return b;
}

}  // namespace fabsim::traces
