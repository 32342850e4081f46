#include "rdmalab/wire/icrc.hpp"

#include <zlib.h>

#include <array>
#include <cstring>

namespace rdmalab::wire {

std::uint32_t crc32(std::uint32_t crc, Bytes data) noexcept {
  // zlib's crc32 is the IEEE 802.3 CRC with the pre- and post-inversion the
  // ICRC uses, and it is fast; feed it in chunks so any size fits its uInt.
  while (!data.empty()) {
    const std::size_t n = std::min<std::size_t>(data.size(), 1u << 30);
    crc = static_cast<std::uint32_t>(::crc32(crc, data.data(), static_cast<uInt>(n)));
    data = data.subspan(n);
  }
  return crc;
}

std::optional<std::uint32_t> icrc_of(Bytes frame, RoceVersion version, std::size_t net_offset,
                                     std::size_t bth_offset, std::size_t icrc_offset) noexcept {
  constexpr std::size_t kMaxMasked = 256;
  if (version == RoceVersion::None || net_offset >= bth_offset ||
      bth_offset + kBthSize > icrc_offset || icrc_offset > frame.size() ||
      bth_offset + kBthSize - net_offset > kMaxMasked)
    return std::nullopt;

  // The headers that carry variant fields, copied so the fields can be masked.
  std::array<std::uint8_t, kMaxMasked> head{};
  const std::size_t head_len = bth_offset + kBthSize - net_offset;
  std::memcpy(head.data(), frame.data() + net_offset, head_len);
  const std::size_t bth = bth_offset - net_offset;
  const unsigned ip_version = head[0] >> 4;
  if (version == RoceVersion::V1 || ip_version == 6) {
    // IPv6 header or GRH: traffic class and flow label (bits 27:0 of the
    // first word) and hop limit.
    head[0] |= 0x0F;
    head[1] = head[2] = head[3] = 0xFF;
    head[7] = 0xFF;
  } else if (ip_version == 4) {
    head[1] = 0xFF;               // TOS (DSCP + ECN)
    head[8] = 0xFF;               // TTL
    head[10] = head[11] = 0xFF;   // header checksum
  } else {
    return std::nullopt;
  }
  if (version == RoceVersion::V2) {
    // UDP checksum: the last two bytes before the BTH.
    head[bth - 2] = head[bth - 1] = 0xFF;
  }
  head[bth + 4] = 0xFF;  // BTH FECN, BECN and reserved bits

  static constexpr std::array<std::uint8_t, 8> kLrhStandIn{0xFF, 0xFF, 0xFF, 0xFF,
                                                           0xFF, 0xFF, 0xFF, 0xFF};
  std::uint32_t crc = crc32(0, kLrhStandIn);
  crc = crc32(crc, Bytes(head.data(), head_len));
  crc = crc32(crc, frame.subspan(bth_offset + kBthSize, icrc_offset - bth_offset - kBthSize));
  return crc;
}

std::optional<std::uint32_t> compute_icrc(const Frame& f, Bytes captured) noexcept {
  if (!f.is_roce() || !f.ib || f.ib_end > captured.size() || f.ib_end < kIcrcSize) return std::nullopt;
  return icrc_of(captured, f.roce, f.ip_offset, f.bth_offset, f.ib_end - kIcrcSize);
}

std::optional<IcrcCheck> check_icrc(const Frame& f, Bytes captured) noexcept {
  if (!f.ib || !f.ib->icrc) return std::nullopt;
  const auto expected = compute_icrc(f, captured);
  if (!expected) return std::nullopt;
  return IcrcCheck{*expected, *f.ib->icrc};
}

}  // namespace rdmalab::wire
