// The BTH opcode table: one constexpr row per opcode rdmalab understands.
//
// The decoder, the analyser, the simulator and the Wireshark plugin all read
// this table instead of switching on opcode values. A row says which
// transport and operation the opcode belongs to, where in a message the packet
// sits (First/Middle/Last/Only), which extension headers follow the BTH and in
// which order, and whether a payload follows.
//
// Source: IBTA vol. 1, 9.2 (table 38, "OpCode field"), annex A17 (RoCEv2,
// CNP = 0x81), annex A14 (XRC) and the 1.5 additions RC FLUSH (0x1C) and RC
// ATOMIC WRITE (0x1D); layouts checked against the Linux kernel's
// include/rdma/ib_pack.h and drivers/infiniband/sw/rxe (rxe_opcode.c,
// rxe_hdr.h). XRC uses the RC operations 0x00-0x17 at 0xA0-0xB7 with an
// XRCETH right after the BTH of every request (responses carry none). RD
// (0x40-0x5F) is not in the table: no RoCE deployment uses it; such packets
// decode as "unknown opcode" and stay raw.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace rdmalab::wire {

/// The transport service an opcode belongs to (BTH opcode bits 7:5).
enum class Transport : std::uint8_t { RC, UC, RD, UD, CNP, XRC, Unknown };

/// What the packet does.
enum class Operation : std::uint8_t {
  Send,
  Write,
  ReadRequest,
  ReadResponse,
  Acknowledge,
  AtomicAcknowledge,
  CompareSwap,
  FetchAdd,
  Cnp,
  Flush,        // RC FLUSH (0x1C): make earlier writes persistent or visible
  AtomicWrite,  // RC ATOMIC WRITE (0x1D): an 8-byte write done as one unit
};

/// Where the packet sits inside its message (IBTA 9.2: First/Middle/Last/Only).
/// Acknowledges, READ requests and atomics are single-packet: Only.
enum class Position : std::uint8_t { First, Middle, Last, Only };

/// Extension headers that may follow the BTH.
enum class Ext : std::uint8_t {
  RETH,
  AETH,
  AtomicETH,
  AtomicAckETH,
  ImmDt,
  IETH,
  DETH,
  CnpPad,
  XRCETH,  // XRC: reserved byte + 24-bit XRC SRQ number
  FETH,    // FLUSH: placement type (bits 3:0) and selectivity level (bits 5:4)
};

/// Size in bytes of each extension header on the wire.
[[nodiscard]] constexpr std::size_t ext_size(Ext e) noexcept {
  switch (e) {
    case Ext::RETH: return 16;
    case Ext::AETH: return 4;
    case Ext::AtomicETH: return 28;
    case Ext::AtomicAckETH: return 8;
    case Ext::ImmDt: return 4;
    case Ext::IETH: return 4;
    case Ext::DETH: return 8;
    case Ext::CnpPad: return 16;
    case Ext::XRCETH: return 4;
    case Ext::FETH: return 4;
  }
  return 0;
}

/// Upper-case name of an extension header as the IBTA spells it.
[[nodiscard]] std::string_view ext_name(Ext e) noexcept;

struct OpcodeInfo {
  std::uint8_t value;
  Transport transport;
  Operation operation;
  Position position;
  /// The operation name as Wireshark prints it after the transport prefix,
  /// e.g. "RDMA WRITE First".
  std::string_view name;
  std::array<Ext, 3> ext_storage;
  std::uint8_t ext_count;
  bool has_payload;
  bool has_immediate;
  bool has_invalidate;

  [[nodiscard]] constexpr std::span<const Ext> exts() const noexcept {
    return std::span<const Ext>(ext_storage.data(), ext_count);
  }
  [[nodiscard]] constexpr bool has(Ext e) const noexcept {
    for (Ext x : exts())
      if (x == e) return true;
    return false;
  }
  /// Bytes of extension headers after the 12-byte BTH.
  [[nodiscard]] constexpr std::size_t ext_bytes() const noexcept {
    std::size_t n = 0;
    for (Ext x : exts()) n += ext_size(x);
    return n;
  }
  /// Packets a responder sends (ACK, atomic ACK, READ response; the READ
  /// response Only of length zero also answers FLUSH and ATOMIC WRITE).
  [[nodiscard]] constexpr bool is_response() const noexcept {
    return operation == Operation::Acknowledge || operation == Operation::AtomicAcknowledge ||
           operation == Operation::ReadResponse;
  }
  /// Packets that carry a QP's data to its peer: the requests, and the READ
  /// responses that bring a READ's data back. Congestion control marks and
  /// paces these; ACKs, atomic ACKs and CNPs it does not.
  [[nodiscard]] constexpr bool carries_data() const noexcept {
    return operation != Operation::Cnp && (!is_response() || operation == Operation::ReadResponse);
  }
};

/// Every opcode in the table, in ascending order of value.
[[nodiscard]] std::span<const OpcodeInfo> opcode_table() noexcept;

/// The row for an opcode, or nullptr when the opcode is not in the table.
[[nodiscard]] const OpcodeInfo* find_opcode(std::uint8_t value) noexcept;

/// The opcode for a transport/operation/position/immediate/invalidate
/// combination; used by encoders (the simulator). Returns nullptr when no
/// such opcode exists (e.g. UC READ).
[[nodiscard]] const OpcodeInfo* find_opcode(Transport t, Operation op, Position pos,
                                            bool immediate = false,
                                            bool invalidate = false) noexcept;

/// "RC", "UC", "UD", "CNP", ...
[[nodiscard]] std::string_view transport_name(Transport t) noexcept;
/// Transport from the top three bits of the opcode (0x81 is CNP).
[[nodiscard]] Transport transport_of(std::uint8_t opcode) noexcept;

/// Well-known opcode values.
namespace opcode {
inline constexpr std::uint8_t kRcSendFirst = 0x00;
inline constexpr std::uint8_t kRcSendMiddle = 0x01;
inline constexpr std::uint8_t kRcSendLast = 0x02;
inline constexpr std::uint8_t kRcSendLastImm = 0x03;
inline constexpr std::uint8_t kRcSendOnly = 0x04;
inline constexpr std::uint8_t kRcSendOnlyImm = 0x05;
inline constexpr std::uint8_t kRcWriteFirst = 0x06;
inline constexpr std::uint8_t kRcWriteMiddle = 0x07;
inline constexpr std::uint8_t kRcWriteLast = 0x08;
inline constexpr std::uint8_t kRcWriteLastImm = 0x09;
inline constexpr std::uint8_t kRcWriteOnly = 0x0A;
inline constexpr std::uint8_t kRcWriteOnlyImm = 0x0B;
inline constexpr std::uint8_t kRcReadRequest = 0x0C;
inline constexpr std::uint8_t kRcReadResponseFirst = 0x0D;
inline constexpr std::uint8_t kRcReadResponseMiddle = 0x0E;
inline constexpr std::uint8_t kRcReadResponseLast = 0x0F;
inline constexpr std::uint8_t kRcReadResponseOnly = 0x10;
inline constexpr std::uint8_t kRcAcknowledge = 0x11;
inline constexpr std::uint8_t kRcAtomicAcknowledge = 0x12;
inline constexpr std::uint8_t kRcCompareSwap = 0x13;
inline constexpr std::uint8_t kRcFetchAdd = 0x14;
inline constexpr std::uint8_t kRcSendLastInv = 0x16;
inline constexpr std::uint8_t kRcSendOnlyInv = 0x17;
inline constexpr std::uint8_t kRcFlush = 0x1C;
inline constexpr std::uint8_t kRcAtomicWrite = 0x1D;
inline constexpr std::uint8_t kUdSendOnly = 0x64;
inline constexpr std::uint8_t kUdSendOnlyImm = 0x65;
inline constexpr std::uint8_t kCnp = 0x81;
inline constexpr std::uint8_t kXrcSendFirst = 0xA0;
inline constexpr std::uint8_t kXrcWriteOnly = 0xAA;
inline constexpr std::uint8_t kXrcReadRequest = 0xAC;
inline constexpr std::uint8_t kXrcAcknowledge = 0xB1;
inline constexpr std::uint8_t kXrcFetchAdd = 0xB4;
inline constexpr std::uint8_t kXrcSendOnlyInv = 0xB7;
}  // namespace opcode

}  // namespace rdmalab::wire
