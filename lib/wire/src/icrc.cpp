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

/// Four 128-bit lanes: the last 64 bytes read, with everything before them
/// folded in.
struct Lanes {
  __m128i x1, x2, x3, x4;
};

/// The lanes over the first 64 bytes at p, the CRC register `raw` added.
RDMALAB_CLMUL inline Lanes lanes_start(std::uint32_t raw, const std::uint8_t* p) {
  return {_mm_xor_si128(load128(p), _mm_cvtsi32_si128(static_cast<int>(raw))), load128(p + 16),
          load128(p + 32), load128(p + 48)};
}

/// Folds the n bytes at p into the lanes; n is a multiple of 64.
RDMALAB_CLMUL inline void lanes_fold(Lanes& l, const std::uint8_t* p, std::size_t n) {
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
  for (; n >= 64; p += 64, n -= 64) {  // four lanes, 512 bits per step
    l.x1 = fold128(l.x1, k1k2, load128(p));
    l.x2 = fold128(l.x2, k1k2, load128(p + 16));
    l.x3 = fold128(l.x3, k1k2, load128(p + 32));
    l.x4 = fold128(l.x4, k1k2, load128(p + 48));
  }
}

/// The CRC register for the last 128 bits read, everything before them
/// folded in: 128 -> 64 -> 32 bits, then Barrett reduction modulo P.
RDMALAB_CLMUL inline std::uint32_t reduce128(__m128i x) {
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);  // mu, P'
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k3k4, 0x10));
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5, 0x00));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

/// Folds the n bytes at p (a multiple of 16) into the lanes, then to one
/// lane: the last 128 bits with everything before them folded in.
RDMALAB_CLMUL inline __m128i lanes_to_one(Lanes l, const std::uint8_t* p, std::size_t n) {
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
  lanes_fold(l, p, n & ~std::size_t{63});
  p += n & ~std::size_t{63};
  n &= 63;
  __m128i x = fold128(l.x1, k3k4, l.x2);
  x = fold128(x, k3k4, l.x3);
  x = fold128(x, k3k4, l.x4);
  for (; n >= 16; p += 16, n -= 16) x = fold128(x, k3k4, load128(p));
  return x;
}

/// lanes_to_one, reduced: the CRC register after all of the bytes.
RDMALAB_CLMUL inline std::uint32_t lanes_finish(Lanes l, const std::uint8_t* p, std::size_t n) {
  return reduce128(lanes_to_one(l, p, n));
}

// The same folding four times wider with VPCLMULQDQ on 512-bit registers
// (AVX-512): 256 bytes per step instead of 64, which makes the ICRC of a
// full-payload packet several times cheaper where the CPU has it. The
// constants are x^(2048+32) and x^(2048-32) mod P in the same form as k1, k2;
// the four registers are then folded into one (k1, k2: 512 bits apart),
// whose four 128-bit lanes lanes_finish completes. (set_epi64, maskz,
// insert: the broadcast, cast and plain extract intrinsics trip GCC 12's
// -Wuninitialized inside its own headers.)
#define RDMALAB_VCLMUL __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

RDMALAB_VCLMUL inline __m512i fold512(__m512i x, __m512i k, __m512i next) {
  // 0x96: three-way exclusive or.
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/// x0: 64 bytes with everything before them folded in; then the n bytes at
/// p, a multiple of 16 and at least 192. As lanes_to_one.
RDMALAB_VCLMUL __m128i vlanes_to_one(__m512i x0, const std::uint8_t* p, std::size_t n) {
  const __m512i k256 = _mm512_set_epi64(0x1322d1430LL, 0x11542778aLL, 0x1322d1430LL, 0x11542778aLL,
                                        0x1322d1430LL, 0x11542778aLL, 0x1322d1430LL, 0x11542778aLL);
  const __m512i k64 = _mm512_set_epi64(0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL,
                                       0x1c6e41596LL, 0x154442bd4LL, 0x1c6e41596LL, 0x154442bd4LL);
  __m512i x1 = _mm512_loadu_si512(p), x2 = _mm512_loadu_si512(p + 64),
          x3 = _mm512_loadu_si512(p + 128);
  for (p += 192, n -= 192; n >= 256; p += 256, n -= 256) {
    x0 = fold512(x0, k256, _mm512_loadu_si512(p));
    x1 = fold512(x1, k256, _mm512_loadu_si512(p + 64));
    x2 = fold512(x2, k256, _mm512_loadu_si512(p + 128));
    x3 = fold512(x3, k256, _mm512_loadu_si512(p + 192));
  }
  x1 = fold512(x0, k64, x1);
  x2 = fold512(x1, k64, x2);
  x3 = fold512(x2, k64, x3);
  const Lanes l{
      _mm512_maskz_extracti32x4_epi32(0xF, x3, 0), _mm512_maskz_extracti32x4_epi32(0xF, x3, 1),
      _mm512_maskz_extracti32x4_epi32(0xF, x3, 2), _mm512_maskz_extracti32x4_epi32(0xF, x3, 3)};
  return lanes_to_one(l, p, n);
}

RDMALAB_VCLMUL std::uint32_t vlanes_finish(__m512i x0, const std::uint8_t* p, std::size_t n) {
  return reduce128(vlanes_to_one(x0, p, n));
}

/// n is a multiple of 16 and at least 256.
RDMALAB_VCLMUL std::uint32_t crc32_vclmul(std::uint32_t raw, const std::uint8_t* p, std::size_t n) {
  const __m512i x0 =
      _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_maskz_set1_epi32(1, static_cast<int>(raw)));
  return vlanes_finish(x0, p + 64, n - 64);
}

/// The lanes, then the n bytes at p (a multiple of 16, at least 256). As
/// lanes_to_one.
RDMALAB_VCLMUL __m128i vlanes_continue_to_one(Lanes l, const std::uint8_t* p, std::size_t n) {
  // The lanes are the 64 bytes before p: moved 512 bits on, they add to
  // p's first 64 bytes, as the register does at the start of a buffer.
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
  __m512i x0 = _mm512_setzero_si512();
  x0 = _mm512_inserti32x4(x0, fold128(l.x1, k1k2, load128(p)), 0);
  x0 = _mm512_inserti32x4(x0, fold128(l.x2, k1k2, load128(p + 16)), 1);
  x0 = _mm512_inserti32x4(x0, fold128(l.x3, k1k2, load128(p + 32)), 2);
  x0 = _mm512_inserti32x4(x0, fold128(l.x4, k1k2, load128(p + 48)), 3);
  return vlanes_to_one(x0, p + 64, n - 64);
}

RDMALAB_VCLMUL std::uint32_t vlanes_continue(Lanes l, const std::uint8_t* p, std::size_t n) {
  return reduce128(vlanes_continue_to_one(l, p, n));
}

/// n is a multiple of 16 and at least 64.
RDMALAB_CLMUL std::uint32_t crc32_clmul(std::uint32_t raw, const std::uint8_t* p, std::size_t n) {
  return lanes_finish(lanes_start(raw, p), p + 64, n - 64);
}

/// x^n mod P in the form the folding constants above take: bit-reflected
/// (in that form multiplying by x is a shift right) and shifted left by one.
constexpr std::uint64_t fold_constant(unsigned n) {
  std::uint32_t v = 0x80000000u;  // x^0
  for (unsigned i = 0; i < n; ++i) v = (v & 1) ? (v >> 1) ^ 0xEDB88320u : v >> 1;
  return std::uint64_t{v} << 1;
}
static_assert(fold_constant(4 * 128 + 32) == 0x154442bd4 &&
              fold_constant(4 * 128 - 32) == 0x1c6e41596);
static_assert(fold_constant(128 + 32) == 0x1751997d0 && fold_constant(128 - 32) == 0x0ccaa009e);

/// Up to this many 16-byte blocks, icrc_clmul_direct carries each block to
/// the last by its own constant.
constexpr std::size_t kShortBlocks = 16;

/// kFoldBy[k]: the constants (low, high 64 bits) that carry 128 bits k
/// blocks of 128 bits on, as k1/k2 do for 4 and k3/k4 for 1.
constexpr auto kFoldBy = [] {
  std::array<std::array<std::uint64_t, 2>, kShortBlocks> t{};
  for (unsigned k = 1; k < kShortBlocks; ++k)
    t[k] = {fold_constant(128 * k + 32), fold_constant(128 * k - 32)};
  return t;
}();

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

enum class Clmul : std::uint8_t { None, Xmm, Zmm };

Clmul detect_clmul() noexcept {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1")) return Clmul::None;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq")) return Clmul::Zmm;
  return Clmul::Xmm;
}

// Looked up once, before main, rather than behind a guard on every call.
// A call before then (another translation unit's static initialiser) sees
// None and takes zlib's path, which gives the same CRC.
const Clmul kClmul = detect_clmul();

/// The CRC register over a then b: a is a multiple of 64 bytes (at least
/// 64), b is any length.
RDMALAB_CLMUL std::uint32_t crc32_clmul_pair(std::uint32_t raw, Bytes a, Bytes b) {
  Lanes l = lanes_start(raw, a.data());
  lanes_fold(l, a.data() + 64, a.size() - 64);
  const std::size_t n = b.size() & ~std::size_t{15};
  raw = kClmul == Clmul::Zmm && n >= 256 ? vlanes_continue(l, b.data(), n)
                                         : lanes_finish(l, b.data(), n);
  return crc32_small(raw, b.subspan(n));
}

}  // namespace
#endif

std::uint32_t crc32(std::uint32_t crc, Bytes data) noexcept {
#if defined(__x86_64__)
  if (data.size() < 64) return ~crc32_small(~crc, data);
  if (kClmul != Clmul::None) {
    const std::size_t n = data.size() & ~std::size_t{15};
    const std::uint32_t raw = kClmul == Clmul::Zmm && n >= 256 ? crc32_vclmul(~crc, data.data(), n)
                                                               : crc32_clmul(~crc, data.data(), n);
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

namespace {

/// crc32(crc32(crc, a), b) where a is a multiple of 64 bytes: in one pass,
/// without reducing to 32 bits in between.
std::uint32_t crc32_pair(std::uint32_t crc, Bytes a, Bytes b) noexcept {
#if defined(__x86_64__)
  if (kClmul != Clmul::None && !a.empty()) return ~crc32_clmul_pair(~crc, a, b);
#endif
  return crc32(crc32(crc, a), b);
}

/// The CRC after the 8-byte LRH stand-in (all ones) that starts every ICRC:
/// the same for every packet, so computed once.
constexpr std::uint32_t kAfterLrhStandIn = [] {
  std::uint32_t c = 0xFFFFFFFFu;  // zlib's pre-inversion of crc32(0, ...)
  for (int i = 0; i < 8; ++i) {
    c ^= 0xFFu;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return ~c;
}();

/// The most header bytes (IP header or GRH, UDP, BTH) an ICRC is computed over.
constexpr std::size_t kMaxMasked = 256;

/// Whether the header at the start of the ICRC's part is the GRH or an IPv6
/// header (true), an IPv4 header (false), or neither (nullopt).
std::optional<bool> grh_like(RoceVersion version, std::uint8_t first) noexcept {
  if (version == RoceVersion::V1 || first >> 4 == 6) return true;
  if (first >> 4 == 4) return false;
  return std::nullopt;
}

/// Replaces with ones the fields a router may change, in a copy of the
/// headers from the IP header (RoCEv1: the GRH) to the BTH, which starts at
/// `bth` in it.
constexpr void mask_variant_fields(std::uint8_t* head, RoceVersion version, bool grh,
                                   std::size_t bth) noexcept {
  if (grh) {
    // IPv6 header or GRH: traffic class and flow label (bits 27:0 of the
    // first word) and hop limit.
    head[0] |= 0x0F;
    head[1] = head[2] = head[3] = 0xFF;
    head[7] = 0xFF;
  } else {
    head[1] = 0xFF;              // TOS (DSCP + ECN)
    head[8] = 0xFF;              // TTL
    head[10] = head[11] = 0xFF;  // header checksum
  }
  if (version == RoceVersion::V2) {
    // UDP checksum: the last two bytes before the BTH.
    head[bth - 2] = head[bth - 1] = 0xFF;
  }
  head[bth + 4] = 0xFF;  // BTH FECN, BECN and reserved bits
}

#if defined(__x86_64__)
/// For the three usual layouts (IPv4 with no options, IPv6 with no
/// extension headers, each with UDP; the GRH), the fields a router may
/// change as a mask to OR into the headers, by their offset from the IP
/// header: what mask_variant_fields does to zeros. Zeros beyond.
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

/// pshufb controls: at 16 + s, "each byte from s bytes further on"; at s,
/// "each byte from 16 - s bytes before"; zeros where there is none.
alignas(16) constexpr std::uint8_t kShift[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
/// At r: ones in the last r bytes.
alignas(16) constexpr std::uint8_t kLastBytes[32] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/// The ICRC of a packet in one of the usual layouts, read where it lies: x
/// is the IP header (or GRH), n the bytes from there to the ICRC (at least
/// 36), head the header bytes the mask covers (at most 60). Nothing is
/// written and read back: each block is loaded from the frame, its variant
/// fields ORed with the mask, and the register after the LRH stand-in added
/// to the first. Up to kShortBlocks blocks are each carried to the last one
/// by its own constant, so the multiplications do not wait on one another
/// (for a packet of a hundred bytes a chain of folds would cost more than
/// the bytes); more go in four (or sixteen) lanes. The last n % 16
/// bytes, when there are some, as in Intel's paper: the 128 bits so far
/// move on by that many bytes, the bytes that pass the end folded back by
/// one block onto the rest and the tail.
RDMALAB_CLMUL std::uint32_t icrc_clmul_direct(const std::uint8_t* x, std::size_t n,
                                              std::size_t head, const OrMask& mask) {
  const auto block = [&](std::size_t at) {
    const __m128i v = load128(x + at);
    return at < head ? _mm_or_si128(v, load128(mask.data() + at)) : v;
  };
  const __m128i lrh = _mm_cvtsi32_si128(static_cast<int>(~kAfterLrhStandIn));
  const std::size_t m = n / 16, r = n % 16;
  __m128i acc;
  if (m <= kShortBlocks) {
    acc = block(16 * (m - 1));
    if (m == 1) acc = _mm_xor_si128(acc, lrh);
    for (std::size_t i = 0; i + 1 < m; ++i) {
      const __m128i k =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFoldBy[m - 1 - i].data()));
      const __m128i b = i == 0 ? _mm_xor_si128(block(0), lrh) : block(16 * i);
      acc = _mm_xor_si128(
          acc, _mm_xor_si128(_mm_clmulepi64_si128(b, k, 0x00), _mm_clmulepi64_si128(b, k, 0x11)));
    }
  } else {
    // The headers lie in the first 64 bytes: the four lanes start there,
    // and the rest is folded where it lies.
    const Lanes l{_mm_xor_si128(block(0), lrh), block(16), block(32), block(48)};
    const std::size_t more = 16 * m - 64;
    acc = kClmul == Clmul::Zmm && more >= 256 ? vlanes_continue_to_one(l, x + 64, more)
                                              : lanes_to_one(l, x + 64, more);
  }
  if (r != 0) {
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    // acc's first r bytes go a block back; the rest close up, and the
    // tail (the last 16 bytes, of which the last r are new) fills in.
    const __m128i passed = _mm_shuffle_epi8(acc, load128(kShift + r));
    const __m128i kept = _mm_shuffle_epi8(acc, load128(kShift + 16 + r));
    const __m128i last = _mm_blendv_epi8(kept, block(n - 16), load128(kLastBytes + r));
    acc = fold128(passed, k3k4, last);
  }
  return reduce128(acc);
}

#endif

/// The ICRC of a packet whose offsets icrc_into has checked.
std::uint32_t icrc_value(const std::uint8_t* net, std::size_t head_len, std::size_t bth, Bytes rest,
                         RoceVersion version, bool grh) noexcept {
#if defined(__x86_64__)
  if (kClmul != Clmul::None)
    if (const OrMask* mask = usual_mask(version, grh, bth))
      return ~icrc_clmul_direct(net, head_len + rest.size(), head_len, *mask);
#endif
  // Any other layout (IPv4 options, IPv6 extension headers) or CPU: the
  // headers that carry variant fields, copied so the fields can be
  // masked, followed by as many of the next bytes as make the copy a
  // multiple of 64 bytes: the CRC then runs over the copy and the rest of
  // the packet in one pass. Only the bytes copied are read.
  std::array<std::uint8_t, kMaxMasked + 64> head;
  const std::size_t fill = std::min((64 - head_len % 64) % 64, rest.size());
  std::memcpy(head.data(), net, head_len + fill);
  mask_variant_fields(head.data(), version, grh, bth);
  const Bytes copy(head.data(), head_len + fill);
  if (copy.size() % 64 != 0) return crc32(kAfterLrhStandIn, copy);  // the copy is everything
  return crc32_pair(kAfterLrhStandIn, copy, rest.subspan(fill));
}

}  // namespace

bool detail::icrc_into(Bytes frame, RoceVersion version, std::size_t net_offset,
                       std::size_t bth_offset, std::size_t icrc_offset,
                       std::uint32_t& icrc) noexcept {
  if (version == RoceVersion::None || net_offset >= bth_offset ||
      bth_offset + kBthSize > icrc_offset || icrc_offset > frame.size() ||
      bth_offset + kBthSize - net_offset > kMaxMasked)
    return false;
  const auto grh = grh_like(version, frame[net_offset]);
  if (!grh) return false;
  icrc = icrc_value(
      frame.data() + net_offset, bth_offset + kBthSize - net_offset, bth_offset - net_offset,
      frame.subspan(bth_offset + kBthSize, icrc_offset - bth_offset - kBthSize), version, *grh);
  return true;
}

}  // namespace rdmalab::wire
