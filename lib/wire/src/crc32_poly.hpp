// The CRC-32 polynomial and its one bit-by-bit step, from which the
// reference ICRC, the precomputed registers and the carry-less folding
// constants are all derived.
#pragma once

#include <cstdint>

namespace rdmalab::wire::detail {

/// P = x^32 + x^26 + x^23 + x^22 + x^16 + x^12 + x^11 + x^10 + x^8 + x^7 +
/// x^5 + x^4 + x^2 + x + 1 (IEEE 802.3), bit-reflected as the CRC register
/// holds it: x^0 in bit 31, x^31 in bit 0, x^32 implied.
inline constexpr std::uint32_t kCrc32Poly = 0xEDB88320u;

/// The register times x, modulo P: in the reflected form multiplying by x
/// is a shift right, and a term that reaches x^32 is replaced by P - x^32.
constexpr std::uint32_t times_x(std::uint32_t r) noexcept {
  return (r & 1) != 0 ? (r >> 1) ^ kCrc32Poly : r >> 1;
}

/// The CRC register (without zlib's inversions) after one more byte, bit by
/// bit, least significant bit first.
constexpr std::uint32_t crc32_byte(std::uint32_t r, std::uint8_t byte) noexcept {
  r ^= byte;
  for (int bit = 0; bit < 8; ++bit) r = times_x(r);
  return r;
}

}  // namespace rdmalab::wire::detail
