// The Invariant CRC that ends every RoCE packet (IBTA vol. 1, 7.8.1; RoCEv2
// annex A17.3.3).
//
// It is the Ethernet CRC-32 over the packet with every field a router may
// change replaced by ones: an 8-byte stand-in for the LRH, then
//   RoCEv2/IPv4: the IPv4 header with TOS, TTL and header checksum masked,
//   RoCEv2/IPv6: the IPv6 header with traffic class, flow label, hop limit masked,
//   RoCEv1:      the GRH with traffic class, flow label, hop limit masked,
// the UDP header with its checksum masked (RoCEv2), the BTH with byte 4
// (FECN/BECN/reserved) masked, then everything up to the ICRC. On the wire
// the 32-bit result is stored least significant byte first.
#pragma once

#include <cstdint>
#include <optional>

#include "rdmalab/wire/frame.hpp"

namespace rdmalab::wire {

/// CRC-32 (IEEE 802.3, as zlib computes it) continuing from `crc`.
[[nodiscard]] std::uint32_t crc32(std::uint32_t crc, Bytes data) noexcept;

namespace detail {
/// icrc_of's work: false where icrc_of gives nullopt. (The optionals below
/// are made inline, in the caller: GCC assembles an optional<uint32_t>
/// returned from a function in memory and reads it back whole before its
/// two stores have landed, a stall on every packet.)
bool icrc_into(Bytes frame, RoceVersion version, std::size_t net_offset, std::size_t bth_offset,
               std::size_t icrc_offset, std::uint32_t& icrc) noexcept;

/// The ICRC of a native IB packet (ib::icrc), for frame_icrc_into.
bool native_icrc_into(const Frame& f, Bytes captured, std::uint32_t& icrc) noexcept;

/// icrc_into for a decoded frame: false when it is not RoCE or its
/// transport part was not fully captured (snap length).
inline bool frame_icrc_into(const Frame& f, Bytes captured, std::uint32_t& icrc) noexcept {
  if (f.roce == RoceVersion::NativeIb) return native_icrc_into(f, captured, icrc);
  return f.is_roce() && f.ib && f.ib_end <= captured.size() && f.ib_end >= kIcrcSize &&
         icrc_into(captured, f.roce, f.ip_offset, f.bth_offset, f.ib_end - kIcrcSize, icrc);
}
}  // namespace detail

/// The ICRC of the RoCE packet in `frame`: `net_offset` is where the IP
/// header (RoCEv2) or GRH (RoCEv1) starts, `bth_offset` where the BTH starts
/// and `icrc_offset` where the ICRC field starts. nullopt when the offsets do
/// not fit the bytes or the headers before the BTH exceed 256 bytes.
[[nodiscard]] inline std::optional<std::uint32_t> icrc_of(Bytes frame, RoceVersion version,
                                                          std::size_t net_offset,
                                                          std::size_t bth_offset,
                                                          std::size_t icrc_offset) noexcept {
  std::uint32_t icrc = 0;
  if (!detail::icrc_into(frame, version, net_offset, bth_offset, icrc_offset, icrc))
    return std::nullopt;
  return icrc;
}

/// icrc_of computed as the definition reads: the packet copied, its variant
/// fields set to ones, the LRH stand-in put before it and the CRC taken bit
/// by bit. Slow; the reference the fast computation is tested against.
[[nodiscard]] std::optional<std::uint32_t> icrc_reference(Bytes frame, RoceVersion version,
                                                          std::size_t net_offset,
                                                          std::size_t bth_offset,
                                                          std::size_t icrc_offset);

struct IcrcCheck {
  std::uint32_t expected = 0;  // what we compute
  std::uint32_t actual = 0;    // what the packet carries
  [[nodiscard]] bool ok() const noexcept { return expected == actual; }
};

/// Computes and compares the ICRC; nullopt when it cannot be checked.
[[nodiscard]] inline std::optional<IcrcCheck> check_icrc(const Frame& f, Bytes captured) noexcept {
  std::uint32_t expected = 0;
  if (!f.ib || !f.ib->icrc || !detail::frame_icrc_into(f, captured, expected)) return std::nullopt;
  return IcrcCheck{expected, *f.ib->icrc};
}

/// What a native IB packet's VCRC says: nullopt when the frame is not
/// native IB or its VCRC was not captured.
struct VcrcCheck {
  std::uint16_t expected = 0;
  std::uint16_t actual = 0;
  [[nodiscard]] bool ok() const noexcept { return expected == actual; }
};
[[nodiscard]] std::optional<VcrcCheck> check_vcrc(const Frame& f, Bytes captured) noexcept;

/// What a receiver asks: true when the ICRC could be checked and is right,
/// false otherwise (no optional to build on every packet).
[[nodiscard]] inline bool icrc_ok(const Frame& f, Bytes captured) noexcept {
  std::uint32_t expected = 0;
  return f.ib && f.ib->icrc && detail::frame_icrc_into(f, captured, expected) &&
         expected == *f.ib->icrc;
}

}  // namespace rdmalab::wire
