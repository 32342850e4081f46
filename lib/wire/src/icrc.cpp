#include "rdmalab/wire/icrc.hpp"

#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <array>
#include <cstring>

namespace rdmalab::wire {

#if defined(__x86_64__)
namespace {

// The same CRC by carry-less multiplication (PCLMULQDQ), about 3-4x faster
// than zlib: a capture analyser computes it over every byte it reads. This is
// the folding method of Intel's "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction" (2009) for the bit-reflected CRC-32, with the
// folding constants x^(4*128+32), x^(4*128-32), x^(128+32), x^(128-32), x^64
// mod P and the Barrett constants of that paper (as in Linux's
// crc32-pclmul_asm.S). `raw` is the CRC register without zlib's inversions.
#define RDMALAB_CLMUL __attribute__((target("pclmul,sse4.1")))

RDMALAB_CLMUL inline __m128i load128(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

/// x * x^k mod P for both halves of x, added to the next 128 bits.
RDMALAB_CLMUL inline __m128i fold128(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/// n is a multiple of 16 and at least 64.
RDMALAB_CLMUL std::uint32_t crc32_clmul(std::uint32_t raw, const std::uint8_t* p, std::size_t n) {
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);  // mu, P'
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  __m128i x1 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128(static_cast<int>(raw)));
  __m128i x2 = load128(p + 16), x3 = load128(p + 32), x4 = load128(p + 48);
  for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {  // four lanes, 512 bits per step
    x1 = fold128(x1, k1k2, load128(p));
    x2 = fold128(x2, k1k2, load128(p + 16));
    x3 = fold128(x3, k1k2, load128(p + 32));
    x4 = fold128(x4, k1k2, load128(p + 48));
  }
  x1 = fold128(x1, k3k4, x2);
  x1 = fold128(x1, k3k4, x3);
  x1 = fold128(x1, k3k4, x4);
  for (; n >= 16; p += 16, n -= 16) x1 = fold128(x1, k3k4, load128(p));
  // 128 -> 64 -> 32 bits, then Barrett reduction modulo P.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k3k4, 0x10));
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                     _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, t), 1));
}

/// Slicing-by-8 tables for the short pieces (masked headers, tails), where
/// a call into zlib costs more than the bytes: kCrcTables[k][b] is the CRC of
/// byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> kCrcTables = [] {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  return t;
}();

std::uint32_t crc32_small(std::uint32_t raw, Bytes data) noexcept {
  const auto& t = kCrcTables;
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  for (; n >= 8; p += 8, n -= 8) {
    const std::uint32_t lo = raw ^ load_le32(p);
    const std::uint32_t hi = load_le32(p + 4);
    raw = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) raw = t[0][(raw ^ *p) & 0xFF] ^ (raw >> 8);
  return raw;
}

bool have_clmul() noexcept {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}

}  // namespace
#endif

std::uint32_t crc32(std::uint32_t crc, Bytes data) noexcept {
#if defined(__x86_64__)
  if (data.size() < 64) return ~crc32_small(~crc, data);
  if (have_clmul()) {
    const std::size_t n = data.size() & ~std::size_t{15};
    const std::uint32_t raw = crc32_clmul(~crc, data.data(), n);
    return ~crc32_small(raw, data.subspan(n));
  }
#endif
  // zlib's crc32 is the IEEE 802.3 CRC with the pre- and post-inversion the
  // ICRC uses; feed it in chunks so any size fits its uInt.
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
