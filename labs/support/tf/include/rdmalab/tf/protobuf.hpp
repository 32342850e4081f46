// Protocol Buffers' wire format, as far as TensorFlow's control messages
// need it: base-128 varints, varint fields (wire type 0) and length-delimited
// fields (wire type 2). The one varint codec of the TF labs: lab 10's
// ErrorStatusProto and lab 11's RecvTensorRequest and RemoteMemoryRegion.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::tf::pb {

/// Appends `v` as a varint: seven bits a byte, low group first, the top bit
/// set on every byte but the last.
inline void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

/// Reads a varint at `at` and moves `at` past it; nullopt when the bytes end
/// first or it runs past 64 bits.
inline std::optional<std::uint64_t> get_varint(std::span<const std::uint8_t> b, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; at < b.size() && shift < 64; shift += 7) {
    const std::uint8_t c = b[at++];
    v |= std::uint64_t{c & 0x7Fu} << shift;
    if ((c & 0x80) == 0) return v;
  }
  return std::nullopt;
}

inline constexpr std::uint64_t kVarint = 0;           // wire type 0
inline constexpr std::uint64_t kLengthDelimited = 2;  // wire type 2

/// Field `field` (wire type 0) holding `v`.
inline void put_uint(std::vector<std::uint8_t>& out, std::uint32_t field, std::uint64_t v) {
  put_varint(out, std::uint64_t{field} << 3 | kVarint);
  put_varint(out, v);
}
/// Field `field` (wire type 2) holding `b`: a string, bytes or a message.
inline void put_bytes(std::vector<std::uint8_t>& out, std::uint32_t field,
                      std::span<const std::uint8_t> b) {
  put_varint(out, std::uint64_t{field} << 3 | kLengthDelimited);
  put_varint(out, b.size());
  out.insert(out.end(), b.begin(), b.end());
}
inline void put_string(std::vector<std::uint8_t>& out, std::uint32_t field, std::string_view s) {
  put_bytes(out, field, {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

/// One parsed field: the varint value, or the bytes of a length-delimited one.
struct Field {
  std::uint64_t value = 0;
  std::span<const std::uint8_t> bytes;
  [[nodiscard]] std::string text() const {
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
};

/// All fields of a message by number (the last one wins, as in protobuf);
/// nullopt for anything malformed or of another wire type.
inline std::optional<std::map<std::uint32_t, Field>> parse(std::span<const std::uint8_t> b) {
  std::map<std::uint32_t, Field> out;
  std::size_t at = 0;
  while (at < b.size()) {
    const auto key = get_varint(b, at);
    if (!key || *key >> 3 == 0 || *key >> 3 > 0xFFFF) return std::nullopt;
    const auto field = static_cast<std::uint32_t>(*key >> 3);
    if ((*key & 7) == kVarint) {
      const auto v = get_varint(b, at);
      if (!v) return std::nullopt;
      out[field] = Field{*v, {}};
    } else if ((*key & 7) == kLengthDelimited) {
      const auto len = get_varint(b, at);
      if (!len || *len > b.size() - at) return std::nullopt;
      out[field] = Field{0, b.subspan(at, *len)};
      at += *len;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace rdmalab::tf::pb
