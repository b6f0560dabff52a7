#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "traces/import/chakra_input.hpp"

namespace fabsim::traces::chakra {

namespace {

using nlohmann::json;

/// The concatenated objects of a jsonizer file ("}{" with no separator).
std::vector<json> split_objects(const std::string& text, const std::string& file) {
  std::vector<json> objects;
  std::size_t pos = 0;
  while (true) {
    pos = text.find_first_not_of(" \t\r\n", pos);
    if (pos == std::string::npos) break;
    // Find the end of this object by brace depth, skipping strings.
    std::size_t depth = 0, i = pos;
    bool in_string = false;
    for (; i < text.size(); ++i) {
      const char ch = text[i];
      if (in_string) {
        if (ch == '\\') ++i;
        else if (ch == '"') in_string = false;
      } else if (ch == '"') {
        in_string = true;
      } else if (ch == '{') {
        ++depth;
      } else if (ch == '}' && --depth == 0) {
        break;
      }
    }
    try {
      objects.push_back(core::parse_json_text(text.substr(pos, i + 1 - pos), file));
    } catch (const core::ConfigError& e) {
      // A duplicate key or an overflowing number has a path inside the object; anything else is a syntax error.
      const auto& d = e.items().front();
      if (!d.json_path.empty()) throw core::ConfigError(file, fmt::format("object {}{}", objects.size(), d.json_path), d.message);
      throw core::ConfigError(file, "", fmt::format("object {} (at byte {}) is not valid JSON: expected chakra_jsonizer output "
                                                    "(protobuf JSON objects one after another)", objects.size(), pos));
    }
    pos = i + 1;
  }
  if (objects.empty()) throw core::ConfigError(file, "", "no JSON objects: expected a Chakra execution trace");
  return objects;
}

/// The feeder's workload_graph nodes as jsonizer objects.
std::vector<json> from_feeder(const json& graph, const std::string& file) {
  static const char* kTypes[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",
                                 "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
  std::vector<json> objects = {json{{"version", "feeder workload_graph"}}};
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const json& n = graph[i];
    const std::string path = fmt::format("/workload_graph/{}", i);
    if (!n.is_object()) throw core::ConfigError(file, path, "expected a node object");
    const auto type = core::integer_in_range(n.value("NodeType", json()), 0, 7);
    const auto id = core::integer_in_range(n.value("Id", json()), 0, std::numeric_limits<std::int64_t>::max());
    if (!id) throw core::ConfigError(file, path + "/Id", "expected the node's integer Id");
    if (!type) throw core::ConfigError(file, path + "/NodeType", "expected a node type from 0 to 7 (Chakra's NodeType)");
    json node = {{"id", std::to_string(*id)}, {"name", n.value("Name", json("")).is_string() ? n["Name"] : json("")}, {"type", kTypes[*type]}};
    if (n.contains("runtime")) node["durationMicros"] = n["runtime"];
    if (n.contains("data_deps") && n["data_deps"].is_array()) {
      node["dataDeps"] = json::array();
      for (const auto& d : n["data_deps"]) node["dataDeps"].push_back(d.is_string() ? d : json(d.dump()));
    }
    node["attr"] = json::array();
    if (n.contains("is_cpu_op")) node["attr"].push_back({{"name", "is_cpu_op"}, {"boolVal", n["is_cpu_op"]}});
    for (const char* key : {"comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "comm_priority", "tensor_size", "num_ops"})
      if (n.contains(key)) node["attr"].push_back({{"name", key}, {"int64Val", n[key]}});
    objects.push_back(std::move(node));
  }
  return objects;
}

}  // namespace

ChakraFile read_chakra_file(const std::string& file) {
  const std::string text = core::read_text_file(file);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw core::ConfigError(file, "", "is empty: expected a Chakra execution trace");
  if (text[first] != '{' && text[first] != '[') return {"protobuf", decode_chakra_protobuf(text, file)};
  std::vector<json> objects = split_objects(text, file);
  if (objects.size() == 1 && objects[0].contains("workload_graph")) {
    if (!objects[0]["workload_graph"].is_array()) throw core::ConfigError(file, "/workload_graph", "expected a list of nodes");
    return {"feeder", from_feeder(objects[0]["workload_graph"], file)};
  }
  if (objects.size() == 1 && objects[0].contains("nodes") && (objects[0].contains("schema") || objects[0].contains("pid")))
    throw core::ConfigError(file, "",
                            fmt::format("is a PyTorch execution trace (schema {}), the host-side input of Chakra's converter: it records CPU "
                                        "operators, not the GPU work a replay needs. Convert it (chakra_trace_link with the Kineto trace of "
                                        "the same step, then chakra_converter PyTorch) and import the .et files, or import that Kineto "
                                        "trace directly with --from kineto",
                                        objects[0].value("schema", json("unknown")).dump()));
  return {"jsonizer", std::move(objects)};
}

}  // namespace fabsim::traces::chakra
