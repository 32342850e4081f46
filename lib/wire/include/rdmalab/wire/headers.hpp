// InfiniBand transport headers as carried by RoCE: BTH and the extension
// headers (IBTA vol. 1, 9.2-9.3), plus the GRH that RoCEv1 puts before the BTH.
//
// Each header is a plain struct of host-order values with a decode from a
// Reader and an encode into a Writer. Field comments give the Wireshark field
// name, so output can be compared with `tshark -T fields -e ...`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::wire {

inline constexpr std::size_t kBthSize = 12;
inline constexpr std::size_t kGrhSize = 40;
inline constexpr std::size_t kIcrcSize = 4;
inline constexpr std::uint16_t kRoceV2Port = 4791;
inline constexpr std::uint16_t kRoceV1Ethertype = 0x8915;
inline constexpr std::uint16_t kDefaultPkey = 0xFFFF;

/// Base Transport Header, 12 bytes.
struct Bth {
  std::uint8_t opcode = 0;            // infiniband.bth.opcode
  bool solicited = false;             // infiniband.bth.se
  bool migreq = false;                // infiniband.bth.m
  std::uint8_t pad_count = 0;         // infiniband.bth.padcnt (0..3)
  std::uint8_t tver = 0;              // infiniband.bth.tver
  std::uint16_t pkey = kDefaultPkey;  // infiniband.bth.p_key
  bool fecn = false;                  // byte 4 bit 7 (RoCEv2: ECN-marked, annex A17)
  bool becn = false;                  // byte 4 bit 6
  std::uint8_t resv6 = 0;             // byte 4 bits 5:0
  std::uint32_t dest_qp = 0;          // infiniband.bth.destqp (24 bits)
  bool ack_req = false;               // infiniband.bth.a
  std::uint8_t resv7 = 0;             // infiniband.bth.reserved7
  std::uint32_t psn = 0;              // infiniband.bth.psn (24 bits)

  friend bool operator==(const Bth&, const Bth&) = default;
};

/// RDMA Extended Transport Header, 16 bytes.
struct Reth {
  std::uint64_t va = 0;       // infiniband.reth.va
  std::uint32_t rkey = 0;     // infiniband.reth.r_key
  std::uint32_t dma_len = 0;  // infiniband.reth.dmalen
  friend bool operator==(const Reth&, const Reth&) = default;
};

/// What an AETH syndrome says (IBTA 9.3.5, table 42).
enum class AckKind : std::uint8_t { Ack = 0, RnrNak = 1, Reserved = 2, Nak = 3 };

/// NAK codes in syndrome bits 4:0 when the kind is Nak (IBTA table 43).
enum class NakCode : std::uint8_t {
  PsnSequenceError = 0,
  InvalidRequest = 1,
  RemoteAccessError = 2,
  RemoteOperationalError = 3,
  InvalidRdRequest = 4,
};

/// ACK Extended Transport Header, 4 bytes.
struct Aeth {
  std::uint8_t syndrome = 0;  // infiniband.aeth.syndrome
  std::uint32_t msn = 0;      // infiniband.aeth.msn (24 bits)

  [[nodiscard]] constexpr AckKind kind() const noexcept {
    return static_cast<AckKind>((syndrome >> 5) & 0x3);
  }
  /// Bits 4:0: credit count (ACK), RNR timer code (RNR NAK) or NAK code.
  [[nodiscard]] constexpr std::uint8_t value() const noexcept { return syndrome & 0x1F; }
  [[nodiscard]] constexpr bool is_nak() const noexcept {
    return kind() == AckKind::Nak || kind() == AckKind::RnrNak;
  }
  /// ACK credit count 0x1F means "credits not in use" (end-to-end flow control off).
  [[nodiscard]] static constexpr std::uint8_t ack(std::uint8_t credits = 0x1F) noexcept {
    return credits & 0x1F;
  }
  [[nodiscard]] static constexpr std::uint8_t rnr_nak(std::uint8_t timer_code) noexcept {
    return static_cast<std::uint8_t>(0x20 | (timer_code & 0x1F));
  }
  [[nodiscard]] static constexpr std::uint8_t nak(NakCode code) noexcept {
    return static_cast<std::uint8_t>(0x60 | static_cast<std::uint8_t>(code));
  }
  friend bool operator==(const Aeth&, const Aeth&) = default;
};

/// Atomic Extended Transport Header, 28 bytes.
struct AtomicEth {
  std::uint64_t va = 0;        // infiniband.reth.va (Wireshark reuses the RETH fields)
  std::uint32_t rkey = 0;      // infiniband.reth.r_key
  std::uint64_t swap_add = 0;  // infiniband.atomiceth.swapdt
  std::uint64_t compare = 0;   // infiniband.atomiceth.cmpdt
  friend bool operator==(const AtomicEth&, const AtomicEth&) = default;
};

/// Atomic Acknowledge Extended Transport Header, 8 bytes.
struct AtomicAckEth {
  std::uint64_t orig = 0;  // infiniband.atomicacketh.origremdt
  friend bool operator==(const AtomicAckEth&, const AtomicAckEth&) = default;
};

/// Datagram Extended Transport Header, 8 bytes.
struct Deth {
  std::uint32_t qkey = 0;  // infiniband.deth.q_key
  std::uint8_t resv = 0;
  std::uint32_t src_qp = 0;  // infiniband.deth.srcqp (24 bits)
  friend bool operator==(const Deth&, const Deth&) = default;
};

/// FLUSH Extended Transport Header, 4 bytes (IBTA 1.5; rxe_hdr.h struct
/// rxe_feth): which memory the FLUSH reaches and how far it pushes the data.
struct Feth {
  std::uint8_t placement_type = 0;  // bits 3:0: 1 global visibility, 2 persistence
  std::uint8_t selectivity = 0;     // bits 5:4: 0 the memory region's range, 1 the whole MR
  std::uint32_t reserved = 0;       // bits 31:6
  friend bool operator==(const Feth&, const Feth&) = default;
};

/// Global Route Header, 40 bytes (RoCEv1; also the first 40 bytes of a UD
/// receive buffer).
struct Grh {
  std::uint8_t ip_version = 6;          // infiniband.grh.ipver
  std::uint8_t traffic_class = 0;       // infiniband.grh.tclass
  std::uint32_t flow_label = 0;         // infiniband.grh.flowlabel (20 bits)
  std::uint16_t payload_length = 0;     // infiniband.grh.paylen
  std::uint8_t next_header = 0x1B;      // infiniband.grh.nxthdr (0x1B: IBA transport)
  std::uint8_t hop_limit = 0;           // infiniband.grh.hoplmt
  std::array<std::uint8_t, 16> sgid{};  // infiniband.grh.sgid
  std::array<std::uint8_t, 16> dgid{};  // infiniband.grh.dgid
  friend bool operator==(const Grh&, const Grh&) = default;
};

/// One decoded (or to-be-encoded) IB transport packet: BTH, the extension
/// headers its opcode calls for, payload and ICRC.
struct IbPacket {
  // The headers most packets carry first (see Frame).
  Bth bth;
  /// Payload length on the wire (differs from payload.size() only when the
  /// capture was cut short by its snap length).
  std::size_t payload_length = 0;
  /// Payload without the pad bytes. When decoding a snap-length-truncated
  /// frame, only the captured part.
  Bytes payload;
  std::optional<Aeth> aeth;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<std::uint32_t> immdt;  // infiniband.immdt, the 32 bits as on the wire
  std::optional<std::uint32_t> ieth;   // infiniband.ieth, R_Key to invalidate
  std::optional<Deth> deth;
  std::optional<std::uint32_t> xrc_srq;  // XRCETH: the XRC SRQ number (24 bits)
  std::optional<Feth> feth;
  /// The ICRC as the 32-bit CRC value (stored little-endian on the wire).
  std::optional<std::uint32_t> icrc;

  /// `*this = IbPacket{}`, member by member: a packet is built or decoded
  /// for every frame, and GCC clears the whole size for the assignment with
  /// one long string store, slower than the members. A new member must be
  /// cleared here too.
  void clear() noexcept {
    bth = Bth{};
    reth.reset();
    aeth.reset();
    atomic_eth.reset();
    atomic_ack_eth.reset();
    immdt.reset();
    ieth.reset();
    deth.reset();
    xrc_srq.reset();
    feth.reset();
    payload = {};
    payload_length = 0;
    icrc.reset();
  }
};

/// The layers a decode can stop in.
enum class Layer : std::uint8_t {
  Link,
  Ethernet,
  Vlan,
  Ipv4,
  Ipv6,
  Udp,
  Grh,
  Bth,
  Reth,
  Aeth,
  AtomicEth,
  AtomicAckEth,
  ImmDt,
  Ieth,
  Deth,
  CnpPad,
  Xrceth,
  Feth,
  Payload,
  Icrc,
  Erf,   ///< an ERF record's header (ibdump captures)
  Lrh,   ///< InfiniBand's Local Route Header
  Vcrc,  ///< InfiniBand's Variant CRC
};

/// "RETH", "IPv4", ...
[[nodiscard]] std::string_view layer_name(Layer l) noexcept;
[[nodiscard]] Layer layer_of(Ext e) noexcept;

enum class ErrorKind : std::uint8_t {
  Truncated,        // the bytes ended inside a header
  SnapTruncated,    // the capture's snap length cut the packet (not malformed)
  UnknownOpcode,    // BTH opcode not in the table; the rest stays raw
  BadPadding,       // PadCnt larger than the payload
  BadLength,        // an IP/UDP/GRH length disagrees with the bytes present
  BadVersion,       // IP version field does not match the ethertype
  UnsupportedLink,  // a link type rdmalab does not read
};

/// A structured decode failure: what, in which layer, at which byte offset
/// of the frame, and how many bytes the layer needed versus had.
struct DecodeError {
  ErrorKind kind = ErrorKind::Truncated;
  Layer layer = Layer::Link;
  std::size_t offset = 0;
  std::size_t needed = 0;
  std::size_t available = 0;
  friend bool operator==(const DecodeError&, const DecodeError&) = default;
};

/// Decodes the IB transport part (BTH .. ICRC) of a frame.
///
/// `bytes` is the whole captured frame, `bth_offset` where the BTH starts and
/// `end` one past the last byte of the transport part on the wire (the ICRC
/// included), which may exceed bytes.size() for a snap-truncated capture.
/// Fills `out` as far as the bytes allow; returns the error that stopped it.
[[nodiscard]] std::optional<DecodeError> decode_ib(Bytes bytes, std::size_t bth_offset,
                                                   std::size_t end, IbPacket& out) noexcept;

/// Writes BTH, extension headers, payload, pad and a zero ICRC placeholder.
/// The BTH pad count is computed from the payload size; extension headers
/// are taken from `p` in the order the opcode requires (a missing one is
/// written as zeros). Returns false on overflow or unknown opcode.
bool encode_ib(const IbPacket& p, Writer& w) noexcept;

/// encode_ib() at `out`, which must hold ib_encoded_size(p) bytes: returns
/// one past the last byte written, or nullptr for an unknown opcode. For
/// encoders that check the whole frame's size once (encode_frame).
std::uint8_t* encode_ib_at(const IbPacket& p, std::uint8_t* out) noexcept;

/// Bytes encode_ib writes for this packet (including pad and ICRC), or 0 for
/// an unknown opcode.
[[nodiscard]] std::size_t ib_encoded_size(const IbPacket& p) noexcept;

/// Pad bytes needed after a payload of n bytes.
[[nodiscard]] constexpr std::uint8_t pad_for(std::size_t n) noexcept {
  return static_cast<std::uint8_t>((4 - (n & 3)) & 3);
}

bool decode_bth(Reader& r, Bth& out) noexcept;
void encode_bth(const Bth& b, Writer& w) noexcept;
bool decode_grh(Reader& r, Grh& out) noexcept;
void encode_grh(const Grh& g, Writer& w) noexcept;
/// encode_grh() at `out`, which must hold kGrhSize bytes; returns out + kGrhSize.
std::uint8_t* encode_grh_at(const Grh& g, std::uint8_t* out) noexcept;

}  // namespace rdmalab::wire
