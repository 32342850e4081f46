// The native InfiniBand link layer: the Local Route Header, the IB GRH, the
// Variant CRC, and the ICRC as a native IB packet computes it (IBTA vol. 1,
// 7.7 LRH, 8.3 GRH, 7.8 CRCs).
//
// On an InfiniBand link a packet is
//   LRH (8) [GRH (40) when LNH = 3] BTH ... payload ICRC (4) VCRC (2)
// The transport (BTH and everything after it) is the one RoCE carries; what
// differs is the routing header and the two CRCs' coverage:
//   ICRC  CRC-32 (the Ethernet CRC) over the packet from the LRH to the ICRC,
//         with the fields a switch or router may change set to ones:
//         LNH = 2 (local): the LRH's VL nibble; LNH = 3 (global): the whole
//         LRH (a router rewrites it), the GRH's traffic class, flow label and
//         hop limit; in both, the BTH's byte 4 (FECN, BECN, reserved).
//         Stored least significant byte first. This is why RoCE's ICRC starts
//         with eight 0xFF bytes: it is the masked LRH of a global packet.
//   VCRC  CRC-16, polynomial 0x100B, initial value 0xFFFF, final XOR 0xFFFF,
//         over every byte from the LRH through the ICRC, bits taken least
//         significant first like the ICRC's, stored least significant byte
//         first. It is recomputed on every hop (the VL may change).
// Both were checked on every frame of a real ibdump capture (43 of 43: SMPs,
// SA queries, CM MADs, IPoIB, RC SEND and ACKs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "rdmalab/wire/bytes.hpp"

namespace rdmalab::wire::ib {

inline constexpr std::size_t kLrhSize = 8;
inline constexpr std::size_t kGrhSize = 40;
inline constexpr std::size_t kVcrcSize = 2;
/// IBTA 8.3.1: the GRH's next header for an IBA transport packet.
inline constexpr std::uint8_t kGrhNextHeaderIba = 0x1B;
/// The LIDs of a subnet: 0 is reserved, 0xC000-0xFFFE multicast, 0xFFFF the
/// permissive LID.
inline constexpr std::uint16_t kMulticastLidFirst = 0xC000;
inline constexpr std::uint16_t kPermissiveLid = 0xFFFF;

/// Link Next Header (LRH bits 1:0 of byte 1): what follows the LRH.
enum class Lnh : std::uint8_t {
  Raw = 0,      ///< a raw packet (not IBA transport), e.g. an Ethertype-framed one
  RawIpv6 = 1,  ///< an IPv6 packet, raw
  Local = 2,    ///< BTH follows (IBA local)
  Global = 3,   ///< GRH, then BTH (IBA global)
};

/// The Local Route Header (IBTA 7.7), 8 bytes, big-endian fields:
///   byte 0: VL (4) | LVer (4);  byte 1: SL (4) | reserved (2) | LNH (2);
///   bytes 2-3: DLID;  bytes 4-5: reserved (5) | PktLen (11, in 4-byte
///   words, LRH through ICRC, without the VCRC);  bytes 6-7: SLID.
struct Lrh {
  std::uint8_t vl = 0;
  std::uint8_t lver = 0;
  std::uint8_t sl = 0;
  Lnh lnh = Lnh::Local;
  std::uint16_t dlid = 0;
  std::uint16_t pkt_len_words = 0;
  std::uint16_t slid = 0;

  /// The packet's length in bytes, LRH through ICRC (PktLen × 4).
  [[nodiscard]] std::size_t packet_bytes() const noexcept { return std::size_t{pkt_len_words} * 4; }
};

/// nullopt when fewer than 8 bytes.
[[nodiscard]] std::optional<Lrh> parse_lrh(Bytes b) noexcept;
/// Writes the 8 bytes of `h` (reserved bits zero) to `out`.
void write_lrh(const Lrh& h, std::uint8_t* out) noexcept;

/// The Variant CRC of `packet` (LRH through ICRC).
[[nodiscard]] std::uint16_t vcrc(Bytes packet) noexcept;

/// The ICRC of the native IB packet `packet` (LRH through ICRC; the ICRC's
/// own 4 bytes are not covered). nullopt when the LRH says the packet is not
/// an IBA transport packet (LNH 0 or 1) or the bytes are too short for the
/// headers it names.
[[nodiscard]] std::optional<std::uint32_t> icrc(Bytes packet) noexcept;

/// What a received packet's CRCs say.
struct CrcCheck {
  std::uint32_t icrc_expected = 0;
  std::uint32_t icrc_on_wire = 0;
  std::uint16_t vcrc_expected = 0;
  std::uint16_t vcrc_on_wire = 0;
  [[nodiscard]] bool icrc_ok() const noexcept { return icrc_expected == icrc_on_wire; }
  [[nodiscard]] bool vcrc_ok() const noexcept { return vcrc_expected == vcrc_on_wire; }
};

/// Checks a whole packet as it came off the link (LRH through VCRC): nullopt
/// when it is not an IBA transport packet or is shorter than its LRH's
/// PktLen plus the VCRC.
[[nodiscard]] std::optional<CrcCheck> check_crcs(Bytes packet) noexcept;

/// Fills in the ICRC and VCRC of a packet built in `packet` (LRH through
/// VCRC, PktLen already set): false when the LRH does not describe it.
bool seal(std::span<std::uint8_t> packet) noexcept;

/// A hop's rewrite of the virtual lane: sets the LRH's VL of the packet in
/// `packet` (LRH through VCRC) to `vl` and recomputes the VCRC, which covers
/// it (the ICRC masks the VL and stays as it is). False, and nothing
/// written, when the LRH does not describe the packet.
bool set_vl(std::span<std::uint8_t> packet, std::uint8_t vl) noexcept;

}  // namespace rdmalab::wire::ib
