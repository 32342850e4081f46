// The CM MAD codec: IBTA vol. 1, 13.4.2 (the 24-byte MAD common header) and
// 12.6.5 (REQ), 12.6.6 (MRA), 12.6.7 (REJ), 12.6.8 (REP), 12.6.9 (RTU),
// 12.6.10 (DREQ), 12.6.11 (DREP).
//
// Every field is named once below, with its place in the MAD; fields() lists
// which of them each message has and which struct member holds it, and both
// encode() and decode() walk that one list.
#include "rdmalab/wire/cm.hpp"

#include <algorithm>
#include <concepts>
#include <cstring>
#include <type_traits>

namespace rdmalab::wire::cm {

namespace {

/// `bits` bits at `shift` (counted from the least significant bit) of the
/// big-endian word of `width` bytes at `offset` from the start of the MAD.
struct Field {
  std::size_t offset;
  std::size_t width;
  unsigned shift;
  unsigned bits;
};

/// `size` bytes at `offset` from the start of the MAD, copied as they are.
struct Blob {
  std::size_t offset;
  std::size_t size;
};

consteval Field checked(Field f) {
  if (f.width == 0 || f.width > 8 || f.bits == 0 || f.shift + f.bits > f.width * 8 ||
      f.offset + f.width > kMadSize)
    throw "a field outside the MAD";
  return f;
}

/// A field of the MAD common header: the whole word at `offset`.
consteval Field hdr(std::size_t offset, std::size_t width) {
  return checked({offset, width, 0, static_cast<unsigned>(width * 8)});
}

/// A field of the CM message, at `offset` from the message's start (IBTA's
/// byte numbers): the whole word, or `bits` bits at `shift` in it.
consteval Field msg(std::size_t offset, std::size_t width, unsigned shift = 0, unsigned bits = 0) {
  return checked(
      {kMadHeaderSize + offset, width, shift, bits != 0 ? bits : static_cast<unsigned>(width * 8)});
}

consteval Blob msg_bytes(std::size_t offset, std::size_t size) {
  if (kMadHeaderSize + offset + size > kMadSize) throw "bytes outside the MAD";
  return {kMadHeaderSize + offset, size};
}

/// The private data of message T: from its kAttrs row.
template <class T>
consteval Blob private_data_of() {
  const AttrInfo& a = *find_attr(static_cast<std::uint16_t>(T::kAttr));
  return msg_bytes(a.private_data_offset, a.private_data_size);
}

// ---- the layout --------------------------------------------------------------

namespace mad {
constexpr Field kBaseVersion = hdr(0, 1);
constexpr Field kMgmtClass = hdr(1, 1);
constexpr Field kClassVersion = hdr(2, 1);
constexpr Field kMethod = hdr(3, 1);
// 4: status, 6: class specific (both 0 in a Send).
constexpr Field kTransactionId = hdr(8, 8);
constexpr Field kAttrId = hdr(16, 2);
// 18: reserved, 20: attribute modifier (0 for CM).

constexpr std::uint8_t kBaseVersion1 = 1;
constexpr std::uint8_t kCmClassVersion = 2;
constexpr std::uint8_t kMethodSend = 0x03;
}  // namespace mad

/// Every message opens with them (in a REQ, the second is reserved).
constexpr Field kLocalCommId = msg(0, 4);
constexpr Field kRemoteCommId = msg(4, 4);

namespace req {
constexpr Field kServiceId = msg(8, 8);
constexpr Field kCaGuid = msg(16, 8);
// 24: reserved, 28: local Q_Key (0 for RC).
constexpr Field kQpn = msg(32, 4, 8, 24);
constexpr Field kResponderResources = msg(32, 4, 0, 8);
// 36: local EECN (24 bits, 0), then:
constexpr Field kInitiatorDepth = msg(36, 4, 0, 8);
// 40: remote EECN (24 bits, 0), then the timeout, the transport service type
// (2 bits, 0 = RC) and end-to-end flow control (1 bit, 0).
constexpr Field kRemoteCmResponseTimeout = msg(40, 4, 3, 5);
constexpr Field kStartingPsn = msg(44, 4, 8, 24);
constexpr Field kLocalCmResponseTimeout = msg(44, 4, 3, 5);
constexpr Field kRetryCount = msg(44, 4, 0, 3);
constexpr Field kPkey = msg(48, 2);
// 50: path MTU (4 bits), RDC exists (1 bit, 0), RNR retry count (3 bits).
constexpr Field kPathMtu = msg(50, 1, 4, 4);
constexpr Field kRnrRetryCount = msg(50, 1, 0, 3);
// 51: max CM retries (4 bits), SRQ and the extended transport type (0).
constexpr Field kMaxCmRetries = msg(51, 1, 4, 4);
// 52..95: the primary path.
constexpr Field kLocalLid = msg(52, 2);
constexpr Field kRemoteLid = msg(54, 2);
constexpr Blob kLocalGid = msg_bytes(56, 16);
constexpr Blob kRemoteGid = msg_bytes(72, 16);
// 88: flow label, packet rate, 92: traffic class (all 0).
constexpr Field kHopLimit = msg(93, 1);
// 94: SL (4 bits), subnet local (1 bit), reserved (3).
constexpr Field kSl = msg(94, 1, 4, 4);
constexpr Field kSubnetLocal = msg(94, 1, 3, 1);
constexpr Field kLocalAckTimeout = msg(95, 1, 3, 5);
// 96..139: the alternate path (none). 140: the private data, which rdma_cm
// opens with its own header (cma_hdr): version, IP version (4 bits), port,
// then the source and destination addresses, 16 bytes each, an IPv4 one in
// the last 4 of them.
constexpr std::size_t kCma = private_data_of<Req>().offset - kMadHeaderSize;
constexpr Field kCmaVersion = msg(kCma + 0, 1);
constexpr Field kCmaIpVersion = msg(kCma + 1, 1, 4, 4);
constexpr Field kCmaSrcPort = msg(kCma + 2, 2);
constexpr Field kCmaSrcIpv4 = msg(kCma + 4 + 12, 4);
constexpr Field kCmaDstIpv4 = msg(kCma + 20 + 12, 4);
constexpr Blob kUserPrivateData = msg_bytes(kCma + kIpHeaderSize, kReqUserPrivateData);
static_assert(kUserPrivateData.offset + kUserPrivateData.size == kMadSize);

constexpr std::uint8_t kCmaVersion0 = 0x00;
constexpr std::uint8_t kCmaIpv4 = 4;
}  // namespace req

namespace mra {
constexpr Field kMessageMraed = msg(8, 1, 6, 2);
constexpr Field kServiceTimeout = msg(9, 1, 3, 5);
}  // namespace mra

namespace rej {
constexpr Field kMessageRejected = msg(8, 1, 6, 2);
// 9: reject info length (7 bits, 0: no ARI).
constexpr Field kReason = msg(10, 2);
// 12..83: additional reject information (none).
}  // namespace rej

namespace rep {
// 8: local Q_Key (0 for RC).
constexpr Field kQpn = msg(12, 4, 8, 24);
// 16: local EE context (0).
constexpr Field kStartingPsn = msg(20, 4, 8, 24);
constexpr Field kResponderResources = msg(24, 1);
constexpr Field kInitiatorDepth = msg(25, 1);
// 26: target ACK delay (5 bits), failover accepted (2), flow control (1).
constexpr Field kTargetAckDelay = msg(26, 1, 3, 5);
// 27: RNR retry count (3 bits), SRQ (1).
constexpr Field kRnrRetryCount = msg(27, 1, 5, 3);
constexpr Field kCaGuid = msg(28, 8);
}  // namespace rep

namespace dreq {
constexpr Field kRemoteQpn = msg(8, 4, 8, 24);
}  // namespace dreq

/// Each message's fields and the members that hold them, in the MAD's
/// order. `f(field, member)` is called for each; M is const when encoding.
template <class M, class F>
void fields(M& m, F&& f) {
  using T = std::remove_const_t<M>;
  f(mad::kTransactionId, m.transaction_id);
  f(kLocalCommId, m.local_comm_id);
  if constexpr (std::is_same_v<T, Req>) {
    f(req::kServiceId, m.service_id);
    f(req::kCaGuid, m.ca_guid);
    f(req::kQpn, m.qpn);
    f(req::kResponderResources, m.responder_resources);
    f(req::kInitiatorDepth, m.initiator_depth);
    f(req::kRemoteCmResponseTimeout, m.remote_cm_response_timeout);
    f(req::kStartingPsn, m.starting_psn);
    f(req::kLocalCmResponseTimeout, m.local_cm_response_timeout);
    f(req::kRetryCount, m.retry_count);
    f(req::kPkey, m.pkey);
    f(req::kPathMtu, m.path_mtu);
    f(req::kRnrRetryCount, m.rnr_retry_count);
    f(req::kMaxCmRetries, m.max_cm_retries);
    f(req::kLocalLid, m.local_lid);
    f(req::kRemoteLid, m.remote_lid);
    f(req::kLocalGid, m.local_gid.raw);
    f(req::kRemoteGid, m.remote_gid.raw);
    f(req::kHopLimit, m.hop_limit);
    f(req::kSl, m.sl);
    f(req::kSubnetLocal, m.subnet_local);
    f(req::kLocalAckTimeout, m.local_ack_timeout);
    f(req::kCmaSrcPort, m.ip.src_port);
    f(req::kCmaSrcIpv4, m.ip.src_ip);
    f(req::kCmaDstIpv4, m.ip.dst_ip);
    f(req::kUserPrivateData, m.private_data);  // after rdma_cm's header
  } else {
    f(kRemoteCommId, m.remote_comm_id);
    if constexpr (std::is_same_v<T, Mra>) {
      f(mra::kMessageMraed, m.message_mraed);
      f(mra::kServiceTimeout, m.service_timeout);
    } else if constexpr (std::is_same_v<T, Rej>) {
      f(rej::kMessageRejected, m.message_rejected);
      f(rej::kReason, m.reason);
    } else if constexpr (std::is_same_v<T, Rep>) {
      f(rep::kQpn, m.qpn);
      f(rep::kStartingPsn, m.starting_psn);
      f(rep::kResponderResources, m.responder_resources);
      f(rep::kInitiatorDepth, m.initiator_depth);
      f(rep::kTargetAckDelay, m.target_ack_delay);
      f(rep::kRnrRetryCount, m.rnr_retry_count);
      f(rep::kCaGuid, m.ca_guid);
    } else if constexpr (std::is_same_v<T, Dreq>) {
      f(dreq::kRemoteQpn, m.remote_qpn);
    } else {
      static_assert(std::is_same_v<T, Rtu> || std::is_same_v<T, Drep>,
                    "a message without fields()");
    }
    f(private_data_of<T>(), m.private_data);
  }
}

// ---- both directions ---------------------------------------------------------

constexpr std::uint64_t mask(unsigned bits) noexcept {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

std::uint64_t load(std::span<const std::uint8_t> m, const Field& f) noexcept {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < f.width; ++i) word = (word << 8) | m[f.offset + i];
  return word;
}

std::uint64_t get(std::span<const std::uint8_t> m, const Field& f) noexcept {
  return (load(m, f) >> f.shift) & mask(f.bits);
}

void put(Mad& m, const Field& f, std::uint64_t v) noexcept {
  const std::uint64_t word =
      (load(m, f) & ~(mask(f.bits) << f.shift)) | ((v & mask(f.bits)) << f.shift);
  for (std::size_t i = 0; i < f.width; ++i)
    m[f.offset + i] = static_cast<std::uint8_t>(word >> (8 * (f.width - 1 - i)));
}

void put(Mad& m, const Blob& b, std::span<const std::uint8_t> data) noexcept {
  const std::size_t n = std::min(data.size(), b.size);
  if (n > 0) std::memcpy(m.data() + b.offset, data.data(), n);
}

struct Writer {
  Mad& m;
  void operator()(const Field& f, std::unsigned_integral auto v) const noexcept { put(m, f, v); }
  void operator()(const Blob& b, std::span<const std::uint8_t> v) const noexcept { put(m, b, v); }
};

struct Reader {
  std::span<const std::uint8_t> m;
  template <std::unsigned_integral U>
  void operator()(const Field& f, U& v) const noexcept {
    v = static_cast<U>(get(m, f));
  }
  void operator()(const Blob& b, std::uint8_t (&v)[16]) const noexcept {
    std::memcpy(v, m.data() + b.offset, sizeof v);
  }
  void operator()(const Blob& b, std::span<const std::uint8_t>& v) const noexcept {
    v = m.subspan(b.offset, b.size);
  }
};

template <class T>
Mad encode_message(const T& msg) noexcept {
  Mad m{};
  put(m, mad::kBaseVersion, mad::kBaseVersion1);
  put(m, mad::kMgmtClass, kMgmtClass);
  put(m, mad::kClassVersion, mad::kCmClassVersion);
  put(m, mad::kMethod, mad::kMethodSend);
  put(m, mad::kAttrId, static_cast<std::uint16_t>(T::kAttr));
  if constexpr (std::is_same_v<T, Req>) {
    put(m, req::kCmaVersion, req::kCmaVersion0);
    put(m, req::kCmaIpVersion, req::kCmaIpv4);
  }
  fields(msg, Writer{m});
  return m;
}

template <std::size_t I>
Message decode_as(std::span<const std::uint8_t> m) noexcept {
  std::variant_alternative_t<I, Message> msg;
  fields(msg, Reader{m});
  return msg;
}

template <std::size_t... I>
constexpr auto decoders(std::index_sequence<I...>) noexcept {
  return std::array<Message (*)(std::span<const std::uint8_t>) noexcept, sizeof...(I)>{
      &decode_as<I>...};
}

}  // namespace

Mad encode(const Req& m) noexcept {
  return encode_message(m);
}
Mad encode(const Mra& m) noexcept {
  return encode_message(m);
}
Mad encode(const Rej& m) noexcept {
  return encode_message(m);
}
Mad encode(const Rep& m) noexcept {
  return encode_message(m);
}
Mad encode(const Rtu& m) noexcept {
  return encode_message(m);
}
Mad encode(const Dreq& m) noexcept {
  return encode_message(m);
}
Mad encode(const Drep& m) noexcept {
  return encode_message(m);
}

Mad encode(const Message& m) noexcept {
  return std::visit([](const auto& x) { return encode_message(x); }, m);
}

std::optional<Message> decode(std::span<const std::uint8_t> m) noexcept {
  // Every field lies in the first kMadSize bytes: past this check no read
  // can leave `m`.
  if (m.size() < kMadSize || get(m, mad::kBaseVersion) != mad::kBaseVersion1 ||
      get(m, mad::kMgmtClass) != kMgmtClass)
    return std::nullopt;
  const AttrInfo* info = find_attr(static_cast<std::uint16_t>(get(m, mad::kAttrId)));
  if (info == nullptr) return std::nullopt;
  static constexpr auto kDecoders = decoders(std::make_index_sequence<kAttrs.size()>{});
  return kDecoders[static_cast<std::size_t>(info - kAttrs.data())](m);
}

}  // namespace rdmalab::wire::cm
