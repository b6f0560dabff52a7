#pragma once
/// The protobuf wire format, read by hand: varints, 64- and 32-bit words and
/// length-delimited fields, every read bounds-checked. Enough for Chakra's
/// `.et` files without a code generator or a new build dependency; the field
/// numbers live with the schema that uses them (chakra_et_reader.cpp).

#include <cstdint>
#include <optional>
#include <string_view>

namespace fabsim::traces::protobuf {

enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct Field {
  std::uint32_t number = 0;
  WireType type = WireType::kVarint;
  std::uint64_t value = 0;   ///< varint, fixed64 and fixed32 fields
  std::string_view bytes;    ///< length-delimited fields
};

/// Reads fields one after another from a buffer; a malformed field (a
/// truncated varint, a length past the end, a group or unknown wire type)
/// stops it and sets `error`.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  std::optional<Field> next();
  /// A bare varint (the length prefix of a delimited message stream).
  std::optional<std::uint64_t> varint();
  bool at_end() const { return pos_ >= data_.size(); }
  std::size_t position() const { return pos_; }
  /// Moves past `n` bytes (at most to the end).
  void skip(std::size_t n) { pos_ = n > data_.size() - pos_ ? data_.size() : pos_ + n; }
  const char* error = nullptr;

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

/// The varints of a packed repeated field.
template <typename Fn>
bool for_each_packed_varint(std::string_view packed, Fn&& fn) {
  Reader r(packed);
  while (!r.at_end()) {
    const auto v = r.varint();
    if (!v) return false;
    fn(*v);
  }
  return true;
}

/// Zig-zag decoding of sint32/sint64.
inline std::int64_t zigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

}  // namespace fabsim::traces::protobuf
