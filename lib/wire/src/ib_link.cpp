// The native InfiniBand link layer: LRH, VCRC and the native ICRC (see
// ib_link.hpp for the rules and where they come from).
#include "rdmalab/wire/ib_link.hpp"

#include <algorithm>
#include <array>

#include "rdmalab/wire/headers.hpp"
#include "rdmalab/wire/icrc.hpp"

namespace rdmalab::wire::ib {

namespace {

/// The VCRC's polynomial x^16 + x^12 + x^3 + x + 1 (0x100B), bit-reversed for
/// the least-significant-bit-first register (0xD008).
constexpr std::uint16_t kVcrcPolyReflected = 0xD008;
static_assert(
    [] {
      std::uint16_t r = 0;
      for (int i = 0; i < 16; ++i)
        if ((0x100B >> i) & 1) r = static_cast<std::uint16_t>(r | (1u << (15 - i)));
      return r;
    }() == kVcrcPolyReflected,
    "0xD008 is 0x100B bit-reversed");

constexpr std::array<std::uint16_t, 256> kVcrcTable = [] {
  std::array<std::uint16_t, 256> t{};
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto c = static_cast<std::uint16_t>(i);
    for (int bit = 0; bit < 8; ++bit)
      c = static_cast<std::uint16_t>((c & 1) != 0 ? (c >> 1) ^ kVcrcPolyReflected : c >> 1);
    t[i] = c;
  }
  return t;
}();

/// BTH byte 4: FECN, BECN and the reserved bits.
constexpr std::size_t kBthVariantByte = 4;
/// The GRH's variant fields: IPVer (4) | TClass (8) | FlowLabel (20) in bytes
/// 0-3 (all but the version nibble), and the hop limit in byte 7.
constexpr std::size_t kGrhHopLimit = 7;

/// Where the BTH starts, or 0 when the packet is not IBA transport.
std::size_t bth_offset(Lnh lnh) noexcept {
  switch (lnh) {
    case Lnh::Local: return kLrhSize;
    case Lnh::Global: return kLrhSize + kGrhSize;
    case Lnh::Raw:
    case Lnh::RawIpv6: return 0;
  }
  return 0;
}

}  // namespace

std::optional<Lrh> parse_lrh(Bytes b) noexcept {
  if (b.size() < kLrhSize) return std::nullopt;
  Lrh h;
  h.vl = static_cast<std::uint8_t>(b[0] >> 4);
  h.lver = static_cast<std::uint8_t>(b[0] & 0x0F);
  h.sl = static_cast<std::uint8_t>(b[1] >> 4);
  h.lnh = static_cast<Lnh>(b[1] & 0x03);
  h.dlid = load_be16(&b[2]);
  h.pkt_len_words = static_cast<std::uint16_t>(load_be16(&b[4]) & 0x07FF);
  h.slid = load_be16(&b[6]);
  return h;
}

void write_lrh(const Lrh& h, std::uint8_t* out) noexcept {
  out[0] = static_cast<std::uint8_t>((h.vl & 0x0F) << 4 | (h.lver & 0x0F));
  out[1] =
      static_cast<std::uint8_t>((h.sl & 0x0F) << 4 | (static_cast<std::uint8_t>(h.lnh) & 0x03));
  out[2] = static_cast<std::uint8_t>(h.dlid >> 8);
  out[3] = static_cast<std::uint8_t>(h.dlid);
  out[4] = static_cast<std::uint8_t>((h.pkt_len_words >> 8) & 0x07);
  out[5] = static_cast<std::uint8_t>(h.pkt_len_words);
  out[6] = static_cast<std::uint8_t>(h.slid >> 8);
  out[7] = static_cast<std::uint8_t>(h.slid);
}

std::uint16_t vcrc(Bytes packet) noexcept {
  std::uint16_t c = 0xFFFF;
  for (const std::uint8_t byte : packet)
    c = static_cast<std::uint16_t>((c >> 8) ^ kVcrcTable[(c ^ byte) & 0xFF]);
  return static_cast<std::uint16_t>(c ^ 0xFFFF);
}

std::optional<std::uint32_t> icrc(Bytes packet) noexcept {
  const std::optional<Lrh> lrh = parse_lrh(packet);
  if (!lrh) return std::nullopt;
  const std::size_t bth = bth_offset(lrh->lnh);
  if (bth == 0 || packet.size() < bth + kBthSize + kIcrcSize) return std::nullopt;
  // The masked headers, LRH through BTH: at most 8 + 40 + 12 bytes.
  std::array<std::uint8_t, kLrhSize + kGrhSize + kBthSize> head{};
  const std::size_t head_size = bth + kBthSize;
  std::copy_n(packet.begin(), head_size, head.begin());
  if (lrh->lnh == Lnh::Global) {
    std::fill_n(head.begin(), kLrhSize, std::uint8_t{0xFF});
    head[kLrhSize] |= 0x0F;  // the traffic class's high nibble shares byte 0 with IPVer
    std::fill_n(head.begin() + kLrhSize + 1, 3, std::uint8_t{0xFF});
    head[kLrhSize + kGrhHopLimit] = 0xFF;
  } else {
    head[0] |= 0xF0;  // VL
  }
  head[bth + kBthVariantByte] = 0xFF;
  std::uint32_t c = crc32(0, Bytes(head.data(), head_size));
  return crc32(c, packet.subspan(head_size, packet.size() - kIcrcSize - head_size));
}

std::optional<CrcCheck> check_crcs(Bytes packet) noexcept {
  const std::optional<Lrh> lrh = parse_lrh(packet);
  if (!lrh) return std::nullopt;
  const std::size_t len = lrh->packet_bytes();
  if (packet.size() < len + kVcrcSize) return std::nullopt;
  const Bytes body = packet.first(len);
  const std::optional<std::uint32_t> expected = icrc(body);
  if (!expected) return std::nullopt;
  CrcCheck c;
  c.icrc_expected = *expected;
  c.icrc_on_wire = load_le32(&body[len - kIcrcSize]);
  c.vcrc_expected = vcrc(body);
  c.vcrc_on_wire = static_cast<std::uint16_t>(packet[len] | packet[len + 1] << 8);
  return c;
}

namespace {

// The VCRC of the `len` bytes LRH through ICRC, stored after them least
// significant byte first.
void put_vcrc(std::span<std::uint8_t> packet, std::size_t len) noexcept {
  const std::uint16_t vc = vcrc(Bytes(packet.data(), len));
  packet[len] = static_cast<std::uint8_t>(vc);
  packet[len + 1] = static_cast<std::uint8_t>(vc >> 8);
}

}  // namespace

bool seal(std::span<std::uint8_t> packet) noexcept {
  const std::optional<Lrh> lrh = parse_lrh(packet);
  if (!lrh) return false;
  const std::size_t len = lrh->packet_bytes();
  if (packet.size() < len + kVcrcSize) return false;
  const std::optional<std::uint32_t> ic = icrc(Bytes(packet.data(), len));
  if (!ic) return false;
  for (std::size_t i = 0; i < kIcrcSize; ++i)
    packet[len - kIcrcSize + i] = static_cast<std::uint8_t>(*ic >> (8 * i));
  put_vcrc(packet, len);
  return true;
}

bool set_vl(std::span<std::uint8_t> packet, std::uint8_t vl) noexcept {
  const std::optional<Lrh> lrh = parse_lrh(packet);
  if (!lrh) return false;
  const std::size_t len = lrh->packet_bytes();
  if (len < 8 || packet.size() < len + kVcrcSize) return false;
  packet[0] = static_cast<std::uint8_t>(((vl & 0x0F) << 4) | (packet[0] & 0x0F));
  put_vcrc(packet, len);
  return true;
}

}  // namespace rdmalab::wire::ib
