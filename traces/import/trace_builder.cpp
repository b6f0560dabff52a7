#include "traces/import/trace_builder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/text.hpp"

namespace fabsim::traces {

std::uint64_t ImportWarnings::total() const {
  std::uint64_t n = 0;
  for (const auto& [what, count] : counts_) n += count;
  return n;
}

core::Bytes nccl_datatype_bytes(int datatype, std::string& name) {
  // nccl.h: ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4,
  // ncclUint64 5, ncclFloat16 6, ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9,
  // ncclFloat8e4m3 10, ncclFloat8e5m2 11 (2.24 and later).
  static const std::pair<const char*, core::Bytes> kTypes[] = {{"i8", 1},  {"u8", 1},  {"i32", 4},  {"u32", 4},
                                                                {"i64", 8},  {"u64", 8}, {"f16", 2},  {"f32", 4},
                                                                {"f64", 8},  {"bf16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  if (datatype < 0 || datatype >= static_cast<int>(std::size(kTypes))) return 0;
  name = kTypes[datatype].first;
  return kTypes[datatype].second;
}

TraceBuilder::TraceBuilder(std::string name, std::string kind, std::vector<std::string> files)
    : name_(std::move(name)), kind_(std::move(kind)), files_(std::move(files)) {}

namespace {

/// Every string of `j` as valid UTF-8 (JSON output requires it); true when one was changed.
bool make_valid_utf8(nlohmann::ordered_json& j) {
  bool changed = false;
  if (j.is_string()) {
    j = core::valid_utf8(j.get_ref<const std::string&>(), changed);
  } else if (j.is_structured()) {
    for (auto& v : j) changed = make_valid_utf8(v) || changed;
  }
  return changed;
}

}  // namespace

nlohmann::ordered_json TraceBuilder::build() {
  using json = nlohmann::ordered_json;  // "format" first, as people write it
  // Local index of each global rank in each communicator's group.
  std::vector<std::map<int, int>> local(comms.size());
  for (std::size_t c = 0; c < comms.size(); ++c)
    for (const auto& g : comms[c].groups)
      for (std::size_t i = 0; i < g.size(); ++i) local[c][g[i]] = static_cast<int>(i);
  auto to_local = [&](const ImportedOp& op, int global) -> int {
    const auto it = local[static_cast<std::size_t>(op.comm)].find(global);
    return it == local[static_cast<std::size_t>(op.comm)].end() ? -1 : it->second;
  };

  json comm_list = json::array();
  for (const auto& c : comms) {
    json j = {{"id", c.id}, {"groups", c.groups}};
    if (!c.desc.empty()) j["desc"] = c.desc;
    if (!c.source_id.empty()) j["x-source-id"] = c.source_id;
    comm_list.push_back(std::move(j));
  }
  bool invalid_utf8 = make_valid_utf8(comm_list);
  // Programs by content: identical per-rank op lists share one program.
  std::map<std::string, std::size_t> program_of_content;
  json programs = json::array();
  for (int rank = 0; rank < world_size; ++rank) {
    json ops = json::array();
    if (const auto it = ops_of_rank.find(rank); it != ops_of_rank.end()) {
      for (const auto& op : it->second) {
        json j = {{"id", op.id}, {"type", op.type}};
        if (!op.name.empty()) j["name"] = op.name;
        bool drop = false;
        if (op.type == "compute") {
          j["duration_ns"] = op.duration_ns;
        } else {
          j["comm"] = comms[static_cast<std::size_t>(op.comm)].id;
          if (op.type == "send" || op.type == "recv") {
            const auto& part = op.type == "send" ? op.sends.front() : op.recvs.front();
            const int peer = to_local(op, part.peer);
            drop = peer < 0;
            j["peer"] = peer;
            j["bytes"] = part.bytes;
          } else if (op.type == "p2p_batch") {
            for (const auto* parts : {&op.sends, &op.recvs}) {
              json list = json::array();
              for (const auto& p : *parts) {
                const int peer = to_local(op, p.peer);
                drop = drop || peer < 0;
                list.push_back({{"peer", peer}, {"bytes", p.bytes}});
              }
              j[parts == &op.sends ? "sends" : "recvs"] = std::move(list);
            }
          } else if (op.type == "alltoallv") {
            j["send_bytes"] = op.send_bytes;
          } else if (op.type != "barrier") {
            j["bytes"] = op.bytes;
          }
          if (op.root >= 0) {
            const int root = to_local(op, op.root);
            drop = drop || root < 0;
            j["root"] = root;
          }
        }
        if (drop) {
          warnings.add(fmt::format("{} dropped: its root or peer is not in its communicator's group", op.type));
          continue;
        }
        if (!op.dtype.empty()) j["dtype"] = op.dtype;
        if (!op.stream.empty()) j["stream"] = op.stream;
        if (!op.deps.empty()) j["deps"] = op.deps;
        if (op.delay_ns > 0) j["delay_ns"] = op.delay_ns;
        if (op.measured.is_object())  // to an ordered_json; bad UTF-8 from a log replaced, as everywhere below
          j["measured"] = json::parse(op.measured.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        ops.push_back(std::move(j));
      }
    }
    // Names from binary inputs, or cut at 60 bytes, may not be valid UTF-8.
    invalid_utf8 = make_valid_utf8(ops) || invalid_utf8;
    // Measured times and provenance differ rank by rank; compare what replays.
    json replayed = ops;
    for (auto& o : replayed) o.erase("measured");
    const std::string key = replayed.dump();
    if (const auto it = program_of_content.find(key); it != program_of_content.end()) {
      programs[it->second]["ranks"].push_back(rank);
      continue;
    }
    program_of_content.emplace(key, programs.size());
    programs.push_back({{"ranks", json::array({rank})}, {"ops", std::move(ops)}});
  }
  if (invalid_utf8) warnings.add("names or ids that were not valid UTF-8: their bad bytes replaced by U+FFFD");
  json doc;
  doc["format"] = "fabsim-trace";
  doc["version"] = 1;
  doc["meta"] = {{"name", name_}, {"source", {{"kind", kind_}, {"files", files_}, {"tool", "fabsim trace import"}}}};
  make_valid_utf8(doc["meta"]);  // file names are bytes too
  doc["world_size"] = world_size;
  doc["communicators"] = std::move(comm_list);
  doc["iterations"] = 1;
  doc["programs"] = std::move(programs);
  return doc;
}

}  // namespace fabsim::traces
