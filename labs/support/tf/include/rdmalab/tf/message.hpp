// TensorFlow's RdmaMessage (contrib/verbs, rdma.h and rdma.cc) as it lies in
// the message buffers and on the wire, with its encoder and a bounds-checked
// decoder. Lab 10 speaks this protocol; lab 11 uses it to measure lab 10's
// exchange next to its own.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/tf/protobuf.hpp"

namespace rdmalab::tf {

// ---------------------------------------------------------------------------
// The message, laid out as TF's RdmaMessage (rdma.h) on x86-64: fixed
// offsets, integers in host byte order (little-endian), 583 bytes, followed
// by the error status (4-byte size + protobuf) when there is one.
constexpr std::size_t kNameCapacity = 512;
constexpr std::size_t kTypeAt = 0;            // enum, 4 bytes (only the first is set)
constexpr std::size_t kNameSizeAt = 4;        // uint16
constexpr std::size_t kNameAt = 6;            // 512 bytes
constexpr std::size_t kStepIdAt = 518;        // int64
constexpr std::size_t kRequestIndexAt = 526;  // uint64
constexpr std::size_t kRemoteAddrAt = 534;    // uint64
constexpr std::size_t kRkeyAt = 542;          // uint32
constexpr std::size_t kIsDeadAt = 546;        // bool
constexpr std::size_t kDataTypeAt = 547;      // enum DataType, 4 bytes
constexpr std::size_t kShapeAt = 551;         // TensorShape, 24 bytes
constexpr std::size_t kTensorBytesAt = 575;   // size_t
constexpr std::size_t kErrorStatusAt = 583;   // uint32 size, then ErrorStatusProto
constexpr std::size_t kMessageBytes = kErrorStatusAt;
constexpr std::size_t kErrorStatusMax = 4096;
constexpr std::size_t kBufferBytes = kMessageBytes + kErrorStatusMax;
constexpr std::size_t kRxAt = (kBufferBytes + 63) / 64 * 64;  // the rx buffer, after the tx buffer
constexpr std::size_t kMaxDims = 5;  // our shape field: uint32 rank + 5 uint32 dims

enum class MsgType : std::uint8_t {
  MetaDataUpdate = 0,
  TensorReRequest = 1,
  TensorRequest = 2,
  ErrorStatus = 3,
};
inline const char* type_name(MsgType t) {
  switch (t) {
    case MsgType::MetaDataUpdate: return "META_DATA_UPDATE";
    case MsgType::TensorReRequest: return "TENSOR_RE_REQUEST";
    case MsgType::TensorRequest: return "TENSOR_REQUEST";
    case MsgType::ErrorStatus: return "ERROR_STATUS";
  }
  return "?";
}

// The immediates (RdmaImmDataType): request indices up to 0xFFFFFFFD.
constexpr std::uint32_t kImmMaxRequest = 0xFFFFFFFD;
constexpr std::uint32_t kImmAck = 0xFFFFFFFE;
constexpr std::uint32_t kImmMessage = 0xFFFFFFFF;

constexpr std::uint32_t kDtFloat = 1;  // DT_FLOAT in types.proto
constexpr std::int32_t kAborted = 10;  // error::ABORTED

struct Meta {
  std::uint32_t dtype = kDtFloat;
  std::vector<std::uint32_t> shape;
  bool is_dead = false;
  std::uint64_t bytes = 0;
  friend bool operator==(const Meta&, const Meta&) = default;
};

struct Message {
  MsgType type = MsgType::TensorRequest;
  std::string name;
  std::int64_t step_id = 0;
  std::uint64_t request_index = 0;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  Meta meta;
  std::int32_t error_code = 0;
  std::string error_message;
};

template <typename T>
inline void put_le(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    b[at + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <typename T>
inline T get_le(std::span<const std::uint8_t> b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return static_cast<T>(v);
}

inline std::string shape_text(const std::vector<std::uint32_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// RdmaMessage::CreateMessage: which fields a type carries follows TF's code
// (META_DATA_UPDATE and ERROR_STATUS leave name, step and address empty).
inline std::vector<std::uint8_t> encode(const Message& m) {
  std::vector<std::uint8_t> b(kMessageBytes, 0);
  b[kTypeAt] = static_cast<std::uint8_t>(m.type);
  put_le<std::uint64_t>(b, kRequestIndexAt, m.request_index);
  const bool request = m.type == MsgType::TensorRequest || m.type == MsgType::TensorReRequest;
  if (request) {
    put_le<std::uint16_t>(b, kNameSizeAt, static_cast<std::uint16_t>(m.name.size()));
    std::memcpy(b.data() + kNameAt, m.name.data(), std::min(m.name.size(), kNameCapacity));
    put_le<std::int64_t>(b, kStepIdAt, m.step_id);
    put_le<std::uint64_t>(b, kRemoteAddrAt, m.remote_addr);
    put_le<std::uint32_t>(b, kRkeyAt, m.rkey);
  }
  if (request || m.type == MsgType::MetaDataUpdate) {
    b[kIsDeadAt] = m.meta.is_dead ? 1 : 0;
    put_le<std::uint32_t>(b, kDataTypeAt, m.meta.dtype);
    put_le<std::uint32_t>(b, kShapeAt, static_cast<std::uint32_t>(m.meta.shape.size()));
    for (std::size_t i = 0; i < m.meta.shape.size() && i < kMaxDims; ++i)
      put_le<std::uint32_t>(b, kShapeAt + 4 + 4 * i, m.meta.shape[i]);
    put_le<std::uint64_t>(b, kTensorBytesAt, m.meta.bytes);
  }
  if (m.type == MsgType::ErrorStatus) {
    // ErrorStatusProto{error_code = 1, error_message = 2}, prefixed by its size.
    std::vector<std::uint8_t> proto;
    pb::put_uint(proto, 1, static_cast<std::uint64_t>(m.error_code));
    pb::put_string(proto, 2, m.error_message);
    b.resize(kMessageBytes + 4);
    put_le<std::uint32_t>(b, kErrorStatusAt, static_cast<std::uint32_t>(proto.size()));
    b.insert(b.end(), proto.begin(), proto.end());
  }
  return b;
}

// RdmaMessage::ParseMessage, with bounds checks: nullopt for anything that is
// not a well-formed message.
inline std::optional<Message> decode(std::span<const std::uint8_t> b) {
  if (b.size() < kMessageBytes || b[kTypeAt] > 3) return std::nullopt;
  Message m;
  m.type = static_cast<MsgType>(b[kTypeAt]);
  m.request_index = get_le<std::uint64_t>(b, kRequestIndexAt);
  const std::size_t name_size = get_le<std::uint16_t>(b, kNameSizeAt);
  if (name_size > kNameCapacity) return std::nullopt;
  m.name.assign(reinterpret_cast<const char*>(b.data() + kNameAt), name_size);
  m.step_id = get_le<std::int64_t>(b, kStepIdAt);
  m.remote_addr = get_le<std::uint64_t>(b, kRemoteAddrAt);
  m.rkey = get_le<std::uint32_t>(b, kRkeyAt);
  m.meta.is_dead = b[kIsDeadAt] != 0;
  m.meta.dtype = get_le<std::uint32_t>(b, kDataTypeAt);
  const std::uint32_t rank = get_le<std::uint32_t>(b, kShapeAt);
  if (rank > kMaxDims) return std::nullopt;
  for (std::uint32_t i = 0; i < rank; ++i)
    m.meta.shape.push_back(get_le<std::uint32_t>(b, kShapeAt + 4 + std::size_t{4} * i));
  m.meta.bytes = get_le<std::uint64_t>(b, kTensorBytesAt);
  if (m.type == MsgType::ErrorStatus) {
    if (b.size() < kMessageBytes + 4) return std::nullopt;
    const std::size_t size = get_le<std::uint32_t>(b, kErrorStatusAt);
    if (size > kErrorStatusMax - 4 || kMessageBytes + 4 + size > b.size()) return std::nullopt;
    const auto proto = b.subspan(kMessageBytes + 4, size);
    for (std::size_t at = 0; at < proto.size();) {
      const auto key = pb::get_varint(proto, at);
      if (!key) return std::nullopt;
      if ((*key & 7) == pb::kVarint) {
        const auto v = pb::get_varint(proto, at);
        if (!v) return std::nullopt;
        if (*key >> 3 == 1) m.error_code = static_cast<std::int32_t>(*v);
      } else if ((*key & 7) == pb::kLengthDelimited) {
        const auto len = pb::get_varint(proto, at);
        if (!len || *len > proto.size() - at) return std::nullopt;
        if (*key >> 3 == 2)
          m.error_message.assign(reinterpret_cast<const char*>(proto.data() + at), *len);
        at += *len;
      } else {
        return std::nullopt;
      }
    }
  }
  return m;
}

// A rendezvous key as TF builds it (Rendezvous::CreateKey): source device,
// its incarnation (hex), destination device, tensor name, frame:iteration.
inline std::string rendezvous_key(std::uint64_t incarnation) {
  return fmt::format(
      "/job:worker/replica:0/task:1/device:CPU:0;{:016x};/job:worker/replica:0/task:0/"
      "device:CPU:0;layer1/weights/read;0:0",
      incarnation);
}
inline std::optional<std::uint64_t> key_incarnation(const std::string& key) {
  const auto a = key.find(';');
  if (a == std::string::npos || key.size() < a + 17) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = a + 1; i < a + 17; ++i) {
    const char c = key[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return v;
}
constexpr std::uint64_t kIncarnation = 0x1f2e3d4c5b6a7988;
constexpr std::uint64_t kOldIncarnation = 0x0badc0de00000001;

}  // namespace rdmalab::tf
