#include "traces/import/protobuf_wire.hpp"

namespace fabsim::traces::protobuf {

std::optional<std::uint64_t> Reader::varint() {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) {
      error = "a varint runs past the end";
      return std::nullopt;
    }
    const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  error = "a varint longer than 10 bytes";
  return std::nullopt;
}

std::optional<Field> Reader::next() {
  const auto key = varint();
  if (!key) return std::nullopt;
  Field f;
  f.number = static_cast<std::uint32_t>(*key >> 3);
  if (f.number == 0 || (*key >> 3) > 0x1fffffff) {
    error = "a field number of 0 or out of range";
    return std::nullopt;
  }
  switch (*key & 7) {
    case 0: {
      f.type = WireType::kVarint;
      const auto v = varint();
      if (!v) return std::nullopt;
      f.value = *v;
      return f;
    }
    case 1:
    case 5: {
      const std::size_t width = (*key & 7) == 1 ? 8 : 4;
      if (data_.size() - pos_ < width) {
        error = "a fixed-width field runs past the end";
        return std::nullopt;
      }
      f.type = width == 8 ? WireType::kFixed64 : WireType::kFixed32;
      for (std::size_t i = 0; i < width; ++i) f.value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
      pos_ += width;
      return f;
    }
    case 2: {
      f.type = WireType::kLengthDelimited;
      const auto length = varint();
      if (!length) return std::nullopt;
      if (*length > data_.size() - pos_) {
        error = "a length-delimited field runs past the end";
        return std::nullopt;
      }
      f.bytes = data_.substr(pos_, static_cast<std::size_t>(*length));
      pos_ += static_cast<std::size_t>(*length);
      return f;
    }
    default:
      error = "a group or an unknown wire type";
      return std::nullopt;
  }
}

}  // namespace fabsim::traces::protobuf
