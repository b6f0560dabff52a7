/// Chakra `.et` protobuf -> the jsonizer's JSON objects. Field numbers from
/// mlcommons/chakra schema/protobuf/et_def.proto (GlobalMetadata: version 1,
/// attr 2; Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5,
/// start_time_micros 6, duration_micros 7, inputs 8, outputs 9, attr 10;
/// IOInfo: values 1, shapes 2, types 3; AttributeProto: name 1, doc_string 2,
/// then the value oneof from 3 (double_val) to 32 (bytes_list), each scalar
/// kind followed by its list message).

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "sim/core/error.hpp"
#include "traces/import/chakra_input.hpp"
#include "traces/import/protobuf_wire.hpp"

namespace fabsim::traces::chakra {

namespace {

using nlohmann::json;
using protobuf::Field;
using protobuf::WireType;

/// The scalar kinds of AttributeProto's oneof, in field order (3, 5, 7, ...).
enum class Kind { kDouble, kFloat, kInt32, kInt64, kUint32, kUint64, kSint32, kSint64, kFixed32, kFixed64, kSfixed32, kSfixed64, kBool, kString, kBytes };
constexpr const char* kKindNames[] = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
                                      "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"};

WireType wire_of(Kind k) {
  switch (k) {
    case Kind::kDouble: case Kind::kFixed64: case Kind::kSfixed64: return WireType::kFixed64;
    case Kind::kFloat: case Kind::kFixed32: case Kind::kSfixed32: return WireType::kFixed32;
    case Kind::kString: case Kind::kBytes: return WireType::kLengthDelimited;
    default: return WireType::kVarint;
  }
}

/// A scalar as protobuf's JSON mapping writes it: 64-bit integers as strings.
json scalar(Kind k, std::uint64_t v, std::string_view bytes) {
  switch (k) {
    case Kind::kDouble: return std::bit_cast<double>(v);
    case Kind::kFloat: return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(v)));
    case Kind::kInt32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case Kind::kInt64: return std::to_string(static_cast<std::int64_t>(v));
    case Kind::kUint32: case Kind::kFixed32: return static_cast<std::uint32_t>(v);
    case Kind::kUint64: case Kind::kFixed64: return std::to_string(v);
    case Kind::kSint32: return static_cast<std::int32_t>(protobuf::zigzag(v));
    case Kind::kSint64: return std::to_string(protobuf::zigzag(v));
    case Kind::kSfixed32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case Kind::kSfixed64: return std::to_string(static_cast<std::int64_t>(v));
    case Kind::kBool: return v != 0;
    case Kind::kString: return std::string(bytes);
    case Kind::kBytes: return fmt::format("<{} bytes>", bytes.size());
  }
  return nullptr;
}

class Decoder {
 public:
  explicit Decoder(const std::string& file) : file_(file) {}

  json metadata(std::string_view msg) {
    json j = json::object();
    protobuf::Reader r(msg);
    while (!r.at_end()) {
      const auto f = next(r, "the GlobalMetadata");
      if (f.number == 1 && f.type == WireType::kLengthDelimited) j["version"] = std::string(f.bytes);
      else if (f.number == 2 && f.type == WireType::kLengthDelimited) j["attr"].push_back(attribute(f.bytes));
    }
    return j;
  }

  json node(std::string_view msg, std::size_t index) {
    static const char* kTypes[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE",
                                   "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE", "BATCH_NODE", "CHECKPOINT_NODE"};
    json j = {{"id", "0"}, {"type", "INVALID_NODE"}};
    protobuf::Reader r(msg);
    const std::string what = fmt::format("node {}", index);
    while (!r.at_end()) {
      const auto f = next(r, what);
      switch (f.number) {
        case 1: j["id"] = std::to_string(f.value); break;
        case 2: j["name"] = std::string(f.bytes); break;
        case 3: j["type"] = f.value < std::size(kTypes) ? kTypes[f.value] : fmt::format("NODE_TYPE_{}", f.value); break;
        case 4: case 5: {
          json& list = j[f.number == 4 ? "ctrlDeps" : "dataDeps"];
          if (list.is_null()) list = json::array();
          if (f.type == WireType::kVarint) list.push_back(std::to_string(f.value));
          else if (!protobuf::for_each_packed_varint(f.bytes, [&](std::uint64_t v) { list.push_back(std::to_string(v)); }))
            fail(what, "its dependency list is malformed");
          break;
        }
        case 6: j["startTimeMicros"] = std::to_string(f.value); break;
        case 7: j["durationMicros"] = std::to_string(f.value); break;
        case 8: case 9: j[f.number == 8 ? "inputs" : "outputs"] = io_info(f.bytes, what); break;
        case 10: j["attr"].push_back(attribute(f.bytes)); break;
        default: break;  // fields of newer schemas (storage, ...) pass
      }
    }
    return j;
  }

 private:
  Field next(protobuf::Reader& r, const std::string& what) {
    const auto f = r.next();
    if (!f) fail(what, r.error ? r.error : "a malformed field");
    return *f;
  }

  [[noreturn]] void fail(const std::string& what, const std::string& why) const {
    throw core::ConfigError(file_, "", fmt::format("{} of the Chakra protobuf cannot be read: {} (expected a .et file as Chakra writes it)", what, why));
  }

  json io_info(std::string_view msg, const std::string& what) {
    json j = json::object();
    protobuf::Reader r(msg);
    static const char* kNames[] = {"", "values", "shapes", "types"};
    while (!r.at_end()) {
      const auto f = next(r, what);
      if (f.number >= 1 && f.number <= 3 && f.type == WireType::kLengthDelimited) j[kNames[f.number]] = std::string(f.bytes);
    }
    return j;
  }

  json attribute(std::string_view msg) {
    json j = json::object();
    protobuf::Reader r(msg);
    while (!r.at_end()) {
      const auto f = next(r, "an attribute");
      if (f.number == 1 && f.type == WireType::kLengthDelimited) {
        j["name"] = std::string(f.bytes);
      } else if (f.number >= 3 && f.number <= 32) {
        const auto kind = static_cast<Kind>((f.number - 3) / 2);
        const std::string name = kKindNames[(f.number - 3) / 2];
        if ((f.number - 3) % 2 == 0) j[name + "Val"] = scalar(kind, f.value, f.bytes);
        else j[name + "List"] = {{"values", list(kind, f.bytes)}};
      }
    }
    return j;
  }

  /// A list message: field 1 repeated, packed when numeric.
  json list(Kind kind, std::string_view msg) {
    json values = json::array();
    protobuf::Reader r(msg);
    while (!r.at_end()) {
      const auto f = next(r, "an attribute list");
      if (f.number != 1) continue;
      if (f.type != WireType::kLengthDelimited || wire_of(kind) == WireType::kLengthDelimited) {
        values.push_back(scalar(kind, f.value, f.bytes));
        continue;
      }
      // Packed: varints, or 4- or 8-byte words.
      if (wire_of(kind) == WireType::kVarint) {
        if (!protobuf::for_each_packed_varint(f.bytes, [&](std::uint64_t v) { values.push_back(scalar(kind, v, {})); })) fail("an attribute list", "a packed list is malformed");
        continue;
      }
      const std::size_t width = wire_of(kind) == WireType::kFixed64 ? 8 : 4;
      if (f.bytes.size() % width != 0) fail("an attribute list", "a packed list is not whole words");
      for (std::size_t i = 0; i < f.bytes.size(); i += width) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < width; ++b) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(f.bytes[i + b])) << (8 * b);
        values.push_back(scalar(kind, v, {}));
      }
    }
    return values;
  }

  std::string file_;
};

}  // namespace

std::vector<json> decode_chakra_protobuf(const std::string& bytes, const std::string& file) {
  Decoder d(file);
  std::vector<json> objects;
  protobuf::Reader stream(bytes);
  while (!stream.at_end()) {
    const std::size_t at = stream.position();
    const auto length = stream.varint();
    if ((!length || *length > bytes.size() - stream.position()) && objects.empty())
      throw core::ConfigError(file, "", "is neither Chakra JSON (objects starting with '{') nor a Chakra .et protobuf (its first bytes are "
                                        "no length prefix of a message)");
    if (!length || *length > bytes.size() - stream.position())
      throw core::ConfigError(file, "", fmt::format("message {} (at byte {}) of the Chakra protobuf has no valid length prefix "
                                                    "(expected varint-delimited messages, as Chakra writes .et files)", objects.size(), at));
    const std::string_view msg(bytes.data() + stream.position(), static_cast<std::size_t>(*length));
    objects.push_back(objects.empty() ? d.metadata(msg) : d.node(msg, objects.size()));
    stream.skip(msg.size());
  }
  return objects;
}

}  // namespace fabsim::traces::chakra
