#pragma once
/// A Chakra execution trace file in any of the forms users have, as the
/// jsonizer's objects (protobuf JSON: the GlobalMetadata, then one object per
/// node, 64-bit integers as strings), so that one importer reads them all:
/// - raw `.et` protobuf (varint-delimited GlobalMetadata and Node messages,
///   decoded with Chakra's published field numbers, schema/protobuf/et_def.proto);
/// - chakra_jsonizer output (objects one after another, "}{");
/// - the feeder's `workload_graph` JSON (Id, Name, NodeType, data_deps, runtime, comm_*).
/// A PyTorch execution trace (the host JSON that chakra_converter reads) is
/// refused with how to convert it: it holds CPU ops, not the GPU work.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fabsim::traces::chakra {

struct ChakraFile {
  std::string form;                  ///< "protobuf", "jsonizer" or "feeder"
  std::vector<nlohmann::json> objects;
};

ChakraFile read_chakra_file(const std::string& file);

/// Decodes `.et` bytes; a core::ConfigError naming `file` and the message
/// where the bytes stop making sense.
std::vector<nlohmann::json> decode_chakra_protobuf(const std::string& bytes, const std::string& file);

}  // namespace fabsim::traces::chakra
