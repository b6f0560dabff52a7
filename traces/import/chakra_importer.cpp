/// Chakra execution traces (any form chakra_input.hpp reads) -> native trace.
/// One file per rank, in rank order. GPU nodes replay: COMP_NODE as compute,
/// COMM_COLL_NODE by comm_type, COMM_SEND/RECV_NODE with comm_dst/comm_src;
/// data_deps between GPU nodes are the dependencies (ctrl_deps are the call
/// stack), sorted into a topological order. Streams come from the "stream"
/// attribute (PyTorch-converted traces); a file without any replays as
/// astra-sim runs it: a DAG where compute nodes run one at a time and each
/// communication node waits only for its dependencies, so a send never
/// blocks the receive after it (astra-sim's eager sends). Process groups come
/// from the "## process_group:init ##" node; without one, pg "" and "0" are
/// the world (astra-sim's convention), with a warning.

#include <fmt/format.h>

#include <limits>
#include <map>
#include <queue>
#include <set>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text.hpp"
#include "traces/import/chakra_input.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

namespace {

using nlohmann::json;

/// Attribute values by name; the protobuf JSON writes 64-bit integers as strings.
std::map<std::string, json> attributes(const json& node) {
  std::map<std::string, json> out;
  if (!node.contains("attr")) return out;
  for (const auto& a : node["attr"]) {
    if (!a.contains("name")) continue;
    for (const auto& [key, value] : a.items())
      if (key != "name") out[a["name"].get<std::string>()] = value;
  }
  return out;
}

/// An attribute as a 64-bit integer; a value out of range is an input error
/// (the message names the value: attributes carry no JSON path of their own).
std::int64_t as_int(const json& v) {
  auto refuse = [&]() -> std::int64_t {
    throw core::ConfigError("chakra input", "", fmt::format("the attribute value {} is not a 64-bit integer", v.dump()));
  };
  if (v.is_string()) {
    const auto parsed = core::parse_integer<std::int64_t>(v.get<std::string>());
    return parsed ? *parsed : refuse();
  }
  if (v.is_number_integer()) {
    const auto in_range = core::integer_in_range(v, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    return in_range ? *in_range : refuse();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= -9.2e18 && d <= 9.2e18)) return refuse();
    return static_cast<std::int64_t>(d);
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return 0;
}

std::string node_id(const json& node) { return node.contains("id") ? node["id"].is_string() ? node["id"].get<std::string>() : node["id"].dump() : "0"; }

}  // namespace

TraceBuilder import_chakra(const std::vector<std::string>& files) {
  TraceBuilder b("chakra import", "chakra", files);
  b.world_size = static_cast<int>(files.size());
  std::map<std::string, std::vector<int>> pg_ranks;  // pg_name -> ranks (empty: all)
  std::map<std::string, std::string> pg_desc;
  std::vector<std::vector<json>> all(files.size());
  bool pg_table = false;
  for (std::size_t f = 0; f < files.size(); ++f) {
    all[f] = chakra::read_chakra_file(files[f]).objects;
    b.covered_ranks.insert(static_cast<int>(f));
    for (const auto& node : all[f]) {
      if (node.value("name", "") != "## process_group:init ##") continue;
      pg_table = true;
      // inputs.values is a Python repr: "['[{\"pg_name\": ...}]']".
      const std::string values = node.contains("inputs") ? node["inputs"].value("values", "") : "";
      const auto begin = values.find("[{"), end = values.rfind("}]");
      if (begin == std::string::npos || end == std::string::npos) {
        b.warnings.add("process_group:init node without a readable group list");
        continue;
      }
      try {
        for (const auto& pg : json::parse(values.substr(begin, end + 2 - begin))) {
          const std::string name = pg.value("pg_name", "");
          const auto ranks = pg.contains("ranks") ? core::int_list_in_range(pg["ranks"], 0, core::kMaxGpus - 1) : std::vector<int>{};
          if (!ranks)
            throw core::ConfigError(files[f], "", fmt::format("process group '{}' has the ranks {}: expected a list of ranks from 0 to {}",
                                                              name, pg["ranks"].dump(), core::kMaxGpus - 1));
          pg_ranks[name] = *ranks;
          pg_desc[name] = pg.value("pg_desc", "");
          const auto size = pg.contains("pg_size") ? core::integer_in_range(pg["pg_size"], 1, core::kMaxGpus) : std::optional<std::int64_t>(1);
          if (!size) throw core::ConfigError(files[f], "", fmt::format("process group '{}' has the size {}: expected 1 to {}", name, pg["pg_size"].dump(), core::kMaxGpus));
          b.world_size = std::max(b.world_size, static_cast<int>(*size));
        }
      } catch (const json::exception&) {
        b.warnings.add("process_group:init node without a readable group list");
      }
    }
  }
  std::map<std::string, int> comm_of_pg;
  auto comm_for = [&](const std::string& pg) -> int {
    if (const auto it = comm_of_pg.find(pg); it != comm_of_pg.end()) return it->second;
    std::vector<int> ranks = pg_ranks.contains(pg) ? pg_ranks[pg] : std::vector<int>{};
    if (!pg_ranks.contains(pg) && !pg.empty() && pg != "0") return -1;
    if (!pg_table) b.warnings.add("communication with no process_group:init node in the trace: pg '' and '0' taken as the world (astra-sim's convention)");
    if (ranks.empty())
      for (int r = 0; r < b.world_size; ++r) ranks.push_back(r);  // "" / "0" / [] = the world
    ImportedComm c;
    c.id = pg_desc[pg].empty() ? "pg" + (pg.empty() ? std::string("0") : pg) : pg_desc[pg];
    for (const auto& other : b.comms)
      if (other.id == c.id) c.id += "." + pg;
    c.desc = pg_desc[pg];
    c.source_id = pg;
    c.groups.push_back(std::move(ranks));
    comm_of_pg[pg] = static_cast<int>(b.comms.size());
    b.comms.push_back(std::move(c));
    return comm_of_pg[pg];
  };

  static const std::map<std::int64_t, std::string> kCommTypes = {
      {0, "allreduce"}, {1, "reduce"}, {2, "allgather"}, {3, "gather"}, {4, "scatter"},
      {5, "broadcast"}, {6, "alltoall"}, {7, "reducescatter"}, {8, "reducescatter"}, {9, "barrier"}};
  for (std::size_t f = 0; f < files.size(); ++f) {
    const int rank = static_cast<int>(f);
    std::map<std::string, ImportedOp> kept;                   // by node id
    std::map<std::string, std::vector<std::string>> deps_of;  // kept node -> all its data deps
    std::vector<std::string> order;                            // kept ids in file order
    std::size_t cpu_deps = 0;
    bool any_stream = false;
    for (const auto& node : all[f])
      if (node.contains("attr") && attributes(node).contains("stream")) any_stream = true;
    if (!any_stream) b.warnings.add("files without stream attributes: replayed as astra-sim runs them (compute one at a time, communication nodes concurrent, eager sends)");
    for (std::size_t index = 0; index < all[f].size(); ++index) {
      const json& node = all[f][index];
      if (index == 0 && !node.contains("type") && !node.contains("id")) continue;  // the GlobalMetadata object
      if (!node.contains("type")) {
        // The jsonizer omits default values: a node without a type is an INVALID_NODE.
        b.warnings.add("nodes without a type (INVALID_NODE): skipped");
        continue;
      }
      if (!node["type"].is_string()) throw core::ConfigError(files[f], fmt::format("object {}/type", index), "expected a node type name such as \"COMP_NODE\"");
      const std::string type = node["type"].get<std::string>();
      const auto attr = attributes(node);
      const bool cpu = attr.contains("is_cpu_op") && as_int(attr.at("is_cpu_op")) != 0;
      if (cpu || type == "METADATA_NODE" || type == "INVALID_NODE") continue;
      ImportedOp op;
      op.id = node_id(node);
      op.name = node.value("name", "").substr(0, 60);
      if (attr.contains("stream")) op.stream = fmt::format("s{}", as_int(attr.at("stream")));
      else if (!any_stream) op.stream = type == "COMP_NODE" ? "compute" : "comm" + op.id;
      const auto micros = node.contains("durationMicros") ? as_int(node["durationMicros"]) : 0;
      if (type == "COMP_NODE") {
        op.type = "compute";
        op.duration_ns = static_cast<std::uint64_t>(micros) * 1000;
        if (micros == 0 && attr.contains("num_ops")) b.warnings.add("compute node with FLOP counts but no duration: 0 ns (no roofline model)");
      } else if (type == "COMM_COLL_NODE" || type == "COMM_SEND_NODE" || type == "COMM_RECV_NODE") {
        const std::string pg = attr.contains("pg_name") ? attr.at("pg_name").get<std::string>() : "";
        op.comm = comm_for(pg);
        if (op.comm < 0) {
          b.warnings.add(fmt::format("communication node on unknown process group '{}': skipped", pg));
          continue;
        }
        const core::Bytes bytes = attr.contains("comm_size") ? static_cast<core::Bytes>(as_int(attr.at("comm_size"))) : 0;
        if (type == "COMM_COLL_NODE") {
          const auto t = attr.contains("comm_type") ? kCommTypes.find(as_int(attr.at("comm_type"))) : kCommTypes.end();
          if (t == kCommTypes.end()) {
            b.warnings.add("collective node without a known comm_type: skipped");
            continue;
          }
          op.type = t->second;
          op.bytes = bytes;
          if (!attr.contains("comm_size") && op.type != "barrier")
            b.warnings.add("collective node without comm_size: 0 bytes (replays as a synchronisation only)");
          if (const auto dims = attr.find("involved_dim"); dims != attr.end() && dims->second.dump().find("false") != std::string::npos)
            b.warnings.add("collective node with involved_dim (astra-sim's dimensions): run over its whole process group");
          if (op.type == "broadcast" || op.type == "reduce" || op.type == "gather" || op.type == "scatter") {
            op.root = b.comms[static_cast<std::size_t>(op.comm)].groups.front().front();
            b.warnings.add("rooted collective: Chakra names no root, the group's first rank assumed");
          }
        } else {
          const bool send = type == "COMM_SEND_NODE";
          const char* key = send ? "comm_dst" : "comm_src";
          if (!attr.contains(key)) {
            b.warnings.add(fmt::format("{} node without {}: skipped (PyTorch-converted traces lack peers)", send ? "send" : "recv", key));
            continue;
          }
          op.type = send ? "send" : "recv";
          (send ? op.sends : op.recvs).push_back({static_cast<int>(as_int(attr.at(key))), bytes});
        }
        op.measured = {{"dur_ns", micros * 1000}};
      } else {
        b.warnings.add(fmt::format("node type {} has no native equivalent: skipped", type));
        continue;
      }
      if (node.contains("dataDeps"))
        for (const auto& d : node["dataDeps"]) deps_of[op.id].push_back(d.is_string() ? d.get<std::string>() : d.dump());
      order.push_back(op.id);
      kept.emplace(op.id, std::move(op));
    }
    // Topological order (Kahn), ties in file order; deps on CPU nodes drop.
    std::map<std::string, int> unmet;
    std::map<std::string, std::vector<std::string>> users;
    for (const auto& id : order) {
      unmet[id] = 0;
      for (const auto& d : deps_of[id]) {
        if (!kept.contains(d)) {
          ++cpu_deps;
          continue;
        }
        kept[id].deps.push_back(d);
        users[d].push_back(id);
        ++unmet[id];
      }
    }
    std::map<std::size_t, std::string> ready;  // file position -> id
    std::map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    for (const auto& id : order)
      if (unmet[id] == 0) ready.emplace(position[id], id);
    auto& list = b.ops_of_rank[rank];
    while (!ready.empty()) {
      const std::string id = ready.begin()->second;
      ready.erase(ready.begin());
      for (const auto& u : users[id])
        if (--unmet[u] == 0) ready.emplace(position[u], u);
      list.push_back(std::move(kept[id]));
    }
    if (list.size() != order.size()) {
      std::string cycle;
      for (const auto& id : order)
        if (unmet[id] > 0) cycle += (cycle.empty() ? "" : ", ") + id;
      throw core::ConfigError(files[f], "", fmt::format("the data dependencies of nodes {} form a cycle", cycle));
    }
    if (cpu_deps > 0) b.warnings.add("dependencies on CPU nodes dropped (GPU nodes keep their GPU-to-GPU data dependencies)", cpu_deps);
  }
  std::size_t ops = 0;
  for (const auto& [rank, list] : b.ops_of_rank) ops += list.size();
  if (ops == 0)
  {
    std::string skipped;
    for (const auto& [what, count] : b.warnings.counts()) skipped += fmt::format("; {} x {}", count, what);
    throw core::ConfigError(files.front(), "", "no GPU node to replay in any file: every node is a CPU, metadata or unknown node" + skipped);
  }
  return b;
}

}  // namespace fabsim::traces
