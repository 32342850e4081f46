// Endace ERF records, the format `ibdump` writes an InfiniBand port's traffic
// in (libpcap's LINKTYPE_ERF, 197: one ERF record per pcap record).
//
// A record is a 16-byte header, optional 8-byte extension headers, then the
// packet:
//   bytes 0-7   timestamp, little-endian, 32.32 fixed point (seconds since
//               1970 in the high half, the binary fraction of a second in
//               the low half)
//   byte 8      type (bits 6:0) | "an extension header follows" (bit 7)
//   byte 9      flags (bits 1:0 the capture interface, bit 3 truncated,
//               bit 4 receive error, ...)
//   bytes 10-11 rlen: the record's length, header included, big-endian
//   bytes 12-13 loss counter or colour, big-endian
//   bytes 14-15 wlen: the packet's length on the wire, big-endian
// Each extension header is 8 bytes whose first byte's bit 7 says another one
// follows. Types used here: 21 INFINIBAND (a whole IB packet, LRH through
// VCRC) and 25 INFINIBAND_LINK (IB link packets: flow control). Ethernet
// types carry 2 bytes of padding before the frame; the IB ones do not.
// (The layout follows Endace's ERF types reference and libpcap's and
// Wireshark's readers of it.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "rdmalab/wire/bytes.hpp"

namespace rdmalab::wire::erf {

inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kExtensionHeaderSize = 8;
inline constexpr std::uint8_t kTypeInfiniband = 21;
inline constexpr std::uint8_t kTypeInfinibandLink = 25;
inline constexpr std::uint8_t kFlagTruncated = 0x08;
inline constexpr std::uint8_t kFlagRxError = 0x10;

struct Record {
  std::uint64_t timestamp = 0;  ///< 32.32 fixed point, as on disk
  std::uint8_t type = 0;        ///< bits 6:0 of byte 8
  std::uint8_t flags = 0;
  std::uint16_t rlen = 0;
  std::uint16_t lctr = 0;
  std::uint16_t wlen = 0;
  std::size_t extension_headers = 0;
  /// The packet as captured: after the headers, at most wlen bytes, and no
  /// further than the record (rlen) or the bytes given.
  Bytes packet;

  [[nodiscard]] bool truncated() const noexcept { return (flags & kFlagTruncated) != 0; }
  /// Nanoseconds since 1970 (the fraction rounded to the nearest ns).
  [[nodiscard]] std::int64_t time_ns() const noexcept;
};

/// Why a record could not be read.
enum class Error : std::uint8_t {
  Short,             ///< fewer bytes than the 16-byte header
  BadLength,         ///< rlen smaller than the headers it must hold
  ExtensionsCutOff,  ///< the extension-header chain runs past the bytes
};

/// Reads the ERF record at the start of `bytes` (a pcap record's data).
/// Fills `out` and returns nullopt, or returns why it could not.
[[nodiscard]] std::optional<Error> parse(Bytes bytes, Record& out) noexcept;

/// The largest packet a record can hold (rlen is 16 bits).
inline constexpr std::size_t kMaxPacket = 0xFFFF - kHeaderSize;

/// Writes to `out` the 16-byte header of a record of `type` for a packet of
/// `wire_size` bytes on the wire of which the record keeps the first
/// `stored_size` (cut by a snap length): no extension headers, flags 0, loss
/// counter 0, rlen = 16 + stored_size, wlen = wire_size. The timestamp's
/// fraction is time_ns's nanoseconds rounded to the nearest 2^-32 s (0.23
/// ns), so Record::time_ns() reads back time_ns exactly. false (nothing
/// written) for a negative time or one past 2106 (the seconds are 32 bits),
/// a wire_size above 0xFFFF, or a stored_size above wire_size or kMaxPacket.
bool write_header(std::uint8_t type, std::int64_t time_ns, std::size_t wire_size,
                  std::size_t stored_size, std::uint8_t* out) noexcept;

/// The same for a record that keeps the whole packet of `packet_size` bytes.
inline bool write_header(std::uint8_t type, std::int64_t time_ns, std::size_t packet_size,
                         std::uint8_t* out) noexcept {
  return write_header(type, time_ns, packet_size, packet_size, out);
}

}  // namespace rdmalab::wire::erf
