// The native InfiniBand CRCs computed the slow way, from the text of IBTA
// vol. 1, 7.8, for the tests to hold the library's against: nothing here
// calls rdmalab's CRC code.
//   ICRC (7.8.1): the Ethernet CRC-32 over the packet from the LRH to the
//     ICRC, with the fields a switch or router may change set to ones: the
//     LRH's VL (LNH 2), or the whole LRH and the GRH's traffic class, flow
//     label and hop limit (LNH 3); in both the BTH's byte 4.
//   VCRC (7.8.2): CRC-16, polynomial x^16 + x^12 + x^3 + x + 1, over the LRH
//     through the ICRC.
// Both registers are preset to ones, take each byte's bits least
// significant first and are complemented at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibref {

/// The IEEE 802.3 polynomial 0x04C11DB7 with its 32 bits reversed, for a
/// register that takes bits least significant first.
inline constexpr std::uint32_t kCrc32Reflected = [] {
  std::uint32_t r = 0;
  for (int i = 0; i < 32; ++i)
    if ((0x04C11DB7u >> i) & 1) r |= 1u << (31 - i);
  return r;
}();
static_assert(kCrc32Reflected == 0xEDB88320u);

/// CRC-32 bit by bit.
inline std::uint32_t crc32_bitwise(const std::vector<std::uint8_t>& data) {
  std::uint32_t reg = 0xFFFFFFFFu;
  for (const std::uint8_t byte : data) {
    for (int i = 0; i < 8; ++i) {
      const bool in = ((byte >> i) & 1) != 0;
      const bool out = (reg & 1) != 0;
      reg >>= 1;
      if (in != out) reg ^= kCrc32Reflected;
    }
  }
  return ~reg;
}

/// The VCRC bit by bit: 0x100B with its 16 bits reversed is 0xD008.
inline std::uint16_t vcrc_bitwise(const std::vector<std::uint8_t>& data) {
  std::uint32_t reg = 0xFFFF;
  for (const std::uint8_t byte : data) {
    for (int i = 0; i < 8; ++i) {
      const bool in = ((byte >> i) & 1) != 0;
      const bool out = (reg & 1) != 0;
      reg >>= 1;
      if (in != out) reg ^= 0xD008;
    }
  }
  return static_cast<std::uint16_t>(reg ^ 0xFFFF);
}

/// The bytes the ICRC covers: `p` (LRH through ICRC) without its ICRC, the
/// variant fields set to ones. The LNH (LRH byte 1, bits 1:0) says whether
/// a GRH follows; byte 8 of a global packet is IPVer (high nibble) and the
/// traffic class's high nibble.
inline std::vector<std::uint8_t> icrc_covered(std::vector<std::uint8_t> p) {
  p.resize(p.size() - 4);
  std::size_t bth = 8;
  if ((p[1] & 3) == 3) {
    for (std::size_t i = 0; i < 8; ++i) p[i] = 0xFF;
    p[8] |= 0x0F;
    p[9] = p[10] = p[11] = 0xFF;
    p[15] = 0xFF;
    bth = 48;
  } else {
    p[0] |= 0xF0;
  }
  p[bth + 4] = 0xFF;
  return p;
}

}  // namespace ibref
