#include "rdmalab/wire/icrc.hpp"

#include <array>
#include <cstring>
#include <vector>

#include "crc32_clmul.hpp"
#include "crc32_poly.hpp"
#include "rdmalab/wire/crc32_impl.hpp"

namespace rdmalab::wire {
namespace {

/// The most header bytes (IP header or GRH, UDP, BTH) an ICRC is computed over.
constexpr std::size_t kMaxMasked = 256;

/// Whether the ICRC can be computed with these offsets: nullopt if not,
/// else whether the header at net_offset is the GRH or an IPv6 header
/// (true) or an IPv4 header (false).
std::optional<bool> icrc_layout(Bytes frame, RoceVersion version, std::size_t net_offset,
                                std::size_t bth_offset, std::size_t icrc_offset) noexcept {
  // A native IB packet's ICRC covers its LRH: ib::icrc computes it.
  if (version == RoceVersion::None || version == RoceVersion::NativeIb ||
      net_offset >= bth_offset || bth_offset + kBthSize > icrc_offset ||
      icrc_offset > frame.size() || bth_offset + kBthSize - net_offset > kMaxMasked)
    return std::nullopt;
  const std::uint8_t ip_version = frame[net_offset] >> 4;
  if (version == RoceVersion::V1 || ip_version == 6) return true;
  if (ip_version == 4) return false;
  return std::nullopt;
}

/// Replaces with ones the fields a router may change, in a copy of the
/// headers from the IP header (RoCEv1: the GRH) to the BTH, which starts at
/// `bth` in it.
constexpr void mask_variant_fields(std::uint8_t* ip, RoceVersion version, bool grh,
                                   std::size_t bth) noexcept {
  if (grh) {
    // IPv6 header or GRH: traffic class and flow label (bits 27:0 of the
    // first word) and hop limit.
    ip[0] |= 0x0F;
    ip[1] = ip[2] = ip[3] = 0xFF;
    ip[7] = 0xFF;
  } else {
    ip[1] = 0xFF;            // TOS (DSCP + ECN)
    ip[8] = 0xFF;            // TTL
    ip[10] = ip[11] = 0xFF;  // header checksum
  }
  if (version == RoceVersion::V2) ip[bth - 2] = ip[bth - 1] = 0xFF;  // UDP checksum
  ip[bth + 4] = 0xFF;  // BTH: FECN, BECN and reserved bits
}

/// The 8-byte stand-in for the LRH that starts every ICRC.
constexpr std::array<std::uint8_t, 8> kLrhStandIn{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/// The CRC register after the LRH stand-in: the same for every packet.
constexpr std::uint32_t kRawAfterLrh = [] {
  std::uint32_t r = 0xFFFFFFFFu;
  for (const std::uint8_t b : kLrhStandIn) r = detail::crc32_byte(r, b);
  return r;
}();

#if defined(__x86_64__)
/// For the three usual layouts (IPv4 with no options, IPv6 with no
/// extension headers, each with UDP; the GRH), the variant fields as a mask
/// to OR into the headers where they lie, by offset from the IP header:
/// what mask_variant_fields does to zeros. Zeros beyond, for the last
/// 16-byte load.
using OrMask = std::array<std::uint8_t, 80>;
constexpr OrMask or_mask(RoceVersion version, bool grh, std::size_t bth) {
  OrMask m{};
  mask_variant_fields(m.data(), version, grh, bth);
  return m;
}
constexpr OrMask kMaskIpv4 = or_mask(RoceVersion::V2, false, 20 + 8);
constexpr OrMask kMaskIpv6 = or_mask(RoceVersion::V2, true, 40 + 8);
constexpr OrMask kMaskGrh = or_mask(RoceVersion::V1, true, kGrhSize);

const OrMask* usual_mask(RoceVersion version, bool grh, std::size_t bth) noexcept {
  if (version == RoceVersion::V2 && !grh && bth == 20 + 8) return &kMaskIpv4;
  if (version == RoceVersion::V2 && grh && bth == 40 + 8) return &kMaskIpv6;
  if (version == RoceVersion::V1 && bth == kGrhSize) return &kMaskGrh;
  return nullptr;
}
#endif

/// The ICRC of a packet whose layout icrc_layout has checked: `ip` is the IP
/// header (or GRH), `head` the bytes from there to the end of the BTH, which
/// starts at `bth`, and `rest` the bytes after the BTH up to the ICRC.
std::uint32_t icrc_value(const std::uint8_t* ip, std::size_t head, std::size_t bth, Bytes rest,
                         RoceVersion version, bool grh) noexcept {
#if defined(__x86_64__)
  // The usual layouts are read where they lie, the mask ORed in on the way.
  if (const detail::CrcImpl impl = detail::crc_impl(); impl != detail::CrcImpl::Zlib)
    if (const OrMask* mask = usual_mask(version, grh, bth))
      return ~detail::crc32_clmul(kRawAfterLrh, ip, head + rest.size(), mask->data(), head, impl);
#endif
  // Otherwise the headers are copied so their variant fields can be masked.
  std::array<std::uint8_t, kMaxMasked> copy;
  std::memcpy(copy.data(), ip, head);
  mask_variant_fields(copy.data(), version, grh, bth);
  return crc32(crc32(~kRawAfterLrh, Bytes(copy.data(), head)), rest);
}

}  // namespace

std::optional<std::uint32_t> icrc_reference(Bytes frame, RoceVersion version,
                                            std::size_t net_offset, std::size_t bth_offset,
                                            std::size_t icrc_offset) {
  const auto grh = icrc_layout(frame, version, net_offset, bth_offset, icrc_offset);
  if (!grh) return std::nullopt;
  // The LRH stand-in, then the packet from the IP header (or GRH) up to the
  // ICRC, its variant fields set to ones.
  std::vector<std::uint8_t> bytes(kLrhStandIn.begin(), kLrhStandIn.end());
  bytes.insert(bytes.end(), frame.begin() + static_cast<std::ptrdiff_t>(net_offset),
               frame.begin() + static_cast<std::ptrdiff_t>(icrc_offset));
  mask_variant_fields(bytes.data() + kLrhStandIn.size(), version, *grh, bth_offset - net_offset);
  // CRC-32 bit by bit: the register starts at all ones and ends inverted.
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const std::uint8_t b : bytes) crc = detail::crc32_byte(crc, b);
  return ~crc;
}

bool detail::icrc_into(Bytes frame, RoceVersion version, std::size_t net_offset,
                       std::size_t bth_offset, std::size_t icrc_offset,
                       std::uint32_t& icrc) noexcept {
  const auto grh = icrc_layout(frame, version, net_offset, bth_offset, icrc_offset);
  if (!grh) return false;
  icrc = icrc_value(
      frame.data() + net_offset, bth_offset + kBthSize - net_offset, bth_offset - net_offset,
      frame.subspan(bth_offset + kBthSize, icrc_offset - bth_offset - kBthSize), version, *grh);
  return true;
}

bool detail::native_icrc_into(const Frame& f, Bytes captured, std::uint32_t& icrc) noexcept {
  // ip_offset is where the LRH starts; ib_end one past the ICRC.
  if (!f.lrh || !f.ib || f.ib_end > captured.size() || f.ib_end < f.ip_offset + kIcrcSize)
    return false;
  const auto v = ib::icrc(captured.subspan(f.ip_offset, f.ib_end - f.ip_offset));
  if (!v) return false;
  icrc = *v;
  return true;
}

std::optional<VcrcCheck> check_vcrc(const Frame& f, Bytes captured) noexcept {
  if (f.roce != RoceVersion::NativeIb || !f.lrh || !f.vcrc || f.ib_end > captured.size() ||
      f.ib_end <= f.ip_offset)
    return std::nullopt;
  return VcrcCheck{ib::vcrc(captured.subspan(f.ip_offset, f.ib_end - f.ip_offset)), *f.vcrc};
}

}  // namespace rdmalab::wire
