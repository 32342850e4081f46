// CRC-32 by carry-less multiplication: the folding method of Intel's "Fast
// CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009)
// for the bit-reflected CRC-32. The data is taken 128 bits at a time; a
// block k blocks before the last is carried onto it by multiplying its two
// 64-bit halves by x^(128k+32) and x^(128k-32) mod P, and the last 128 bits
// are reduced to 32 (x^64 mod P, then Barrett reduction). Several blocks in
// flight at once hide the multiplier's latency: four 128-bit lanes, or four
// 256-bit or 512-bit registers with VPCLMULQDQ.
#include "crc32_clmul.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>

#include "crc32_poly.hpp"

namespace rdmalab::wire::detail {
namespace {

// ---- The constants, from the polynomial ----

/// x^n mod P in the form the folding multiplications take: reflected and
/// shifted left by one (a 33-bit reflected value).
constexpr std::uint64_t fold_constant(unsigned n) {
  std::uint32_t v = 0x80000000u;  // x^0
  for (unsigned i = 0; i < n; ++i) v = times_x(v);
  return std::uint64_t{v} << 1;
}

/// The constants that carry 128 bits `bits` further on: they multiply the
/// low and the high 64 bits of a register.
struct FoldBy {
  std::uint64_t low, high;
};
constexpr FoldBy fold_by(unsigned bits) {
  return {fold_constant(bits + 32), fold_constant(bits - 32)};
}

/// v reflected over 33 bits (x^32 to bit 0 and back).
constexpr std::uint64_t reflect33(std::uint64_t v) {
  std::uint64_t r = 0;
  for (unsigned i = 0; i < 33; ++i) r |= ((v >> i) & 1) << (32 - i);
  return r;
}

/// P reflected over its 33 bits, x^32 included.
constexpr std::uint64_t kPoly33 = (std::uint64_t{kCrc32Poly} << 1) | 1;

/// Barrett reduction's mu: floor(x^64 / P) by long division, reflected.
constexpr std::uint64_t barrett_mu() {
  const std::uint64_t p = reflect33(kPoly33);  // x^32 in bit 32
  std::uint64_t rem = 0, quotient = 0;
  for (int i = 64; i >= 0; --i) {  // the dividend x^64: a one, then 64 zeros
    rem = (rem << 1) | (i == 64 ? 1u : 0u);
    quotient <<= 1;
    if ((rem >> 32) != 0) {
      rem ^= p;
      quotient |= 1;
    }
  }
  return reflect33(quotient);
}

constexpr FoldBy kFold1 = fold_by(128);            // one block on (k3, k4 in Intel's paper)
constexpr FoldBy kFold4 = fold_by(4 * 128);        // four blocks, 64 bytes (k1, k2)
constexpr FoldBy kFold8 = fold_by(8 * 128);        // eight blocks, 128 bytes
constexpr FoldBy kFold16 = fold_by(16 * 128);      // sixteen blocks, 256 bytes
constexpr std::uint64_t kX64 = fold_constant(64);  // k5
constexpr std::uint64_t kMu = barrett_mu();

// The published values (Intel's paper; Linux's crc32-pclmul_asm.S).
static_assert(kFold4.low == 0x154442bd4 && kFold4.high == 0x1c6e41596);
static_assert(kFold1.low == 0x1751997d0 && kFold1.high == 0x0ccaa009e);
static_assert(kFold16.low == 0x11542778a && kFold16.high == 0x1322d1430);
static_assert(kX64 == 0x163cd6124);
static_assert(kPoly33 == 0x1db710641 && kMu == 0x1f7011641);

/// Up to this many 16-byte blocks of a masked packet, each is carried to
/// the last by its own constant (see crc32_clmul).
constexpr std::size_t kShortBlocks = 16;

/// kFoldByBlocks[k]: the constants that carry a block k blocks on.
constexpr auto kFoldByBlocks = [] {
  std::array<FoldBy, kShortBlocks> t{};
  for (unsigned k = 1; k < kShortBlocks; ++k) t[k] = fold_by(128 * k);
  return t;
}();

// ---- 128-bit folding (PCLMULQDQ) ----

#define RDMALAB_CLMUL __attribute__((target("pclmul,sse4.1")))

RDMALAB_CLMUL inline __m128i load128(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

RDMALAB_CLMUL inline __m128i constants(FoldBy k) {
  return _mm_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low));
}

/// x carried on by k, added to the next 128 bits.
RDMALAB_CLMUL inline __m128i fold128(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/// Four 128-bit lanes: the last 64 bytes read, with everything before them
/// folded in.
struct Lanes {
  __m128i x1, x2, x3, x4;
};

/// Folds the n bytes at p (a multiple of 16) into the lanes, 64 at a time,
/// then the lanes into one: the last 128 bits with everything before folded in.
RDMALAB_CLMUL inline __m128i lanes_to_one(Lanes l, const std::uint8_t* p, std::size_t n) {
  const __m128i k4 = constants(kFold4);
  const __m128i k1 = constants(kFold1);
  for (; n >= 64; p += 64, n -= 64) {
    l.x1 = fold128(l.x1, k4, load128(p));
    l.x2 = fold128(l.x2, k4, load128(p + 16));
    l.x3 = fold128(l.x3, k4, load128(p + 32));
    l.x4 = fold128(l.x4, k4, load128(p + 48));
  }
  __m128i x = fold128(l.x1, k1, l.x2);
  x = fold128(x, k1, l.x3);
  x = fold128(x, k1, l.x4);
  for (; n >= 16; p += 16, n -= 16) x = fold128(x, k1, load128(p));
  return x;
}

/// The CRC register for the last 128 bits read, everything before them
/// folded in: 128 -> 64 -> 32 bits, then Barrett reduction modulo P.
RDMALAB_CLMUL inline std::uint32_t reduce128(__m128i x) {
  const __m128i k1 = constants(kFold1);
  const __m128i x64 = _mm_set_epi64x(0, static_cast<long long>(kX64));
  const __m128i poly = _mm_set_epi64x(static_cast<long long>(kMu), static_cast<long long>(kPoly33));
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k1, 0x10));
  x = _mm_xor_si128(_mm_srli_si128(x, 4),
                    _mm_clmulepi64_si128(_mm_and_si128(x, mask32), x64, 0x00));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

// ---- 256-bit folding (VPCLMULQDQ with AVX2) ----

#define RDMALAB_VCLMUL256 __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1")))

RDMALAB_VCLMUL256 inline __m256i constants256(FoldBy k) {
  const auto lo = static_cast<long long>(k.low), hi = static_cast<long long>(k.high);
  return _mm256_set_epi64x(hi, lo, hi, lo);
}

RDMALAB_VCLMUL256 inline __m256i load256(const std::uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

RDMALAB_VCLMUL256 inline __m256i fold256(__m256i x, __m256i k, __m256i next) {
  return _mm256_xor_si256(
      _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), _mm256_clmulepi64_epi128(x, k, 0x11)),
      next);
}

/// As lanes_to_one, 128 bytes per step in four 256-bit registers: the
/// lanes, then the n bytes at p (a multiple of 16, at least 128).
RDMALAB_VCLMUL256 __m128i lanes256_to_one(__m128i l1, __m128i l2, __m128i l3, __m128i l4,
                                          const std::uint8_t* p, std::size_t n) {
  const __m256i k8 = constants256(kFold8);
  const __m256i k4 = constants256(kFold4);
  // The lanes are the 64 bytes before p: carried 512 bits on, they add to
  // p's first 64 bytes, which with the next 64 fill the four registers.
  const __m128i k4x = constants(kFold4);
  __m256i x0 = _mm256_set_m128i(fold128(l2, k4x, load128(p + 16)), fold128(l1, k4x, load128(p)));
  __m256i x1 =
      _mm256_set_m128i(fold128(l4, k4x, load128(p + 48)), fold128(l3, k4x, load128(p + 32)));
  __m256i x2 = load256(p + 64), x3 = load256(p + 96);
  for (p += 128, n -= 128; n >= 128; p += 128, n -= 128) {
    x0 = fold256(x0, k8, load256(p));
    x1 = fold256(x1, k8, load256(p + 32));
    x2 = fold256(x2, k8, load256(p + 64));
    x3 = fold256(x3, k8, load256(p + 96));
  }
  // Eight blocks in flight to four: the first four carried onto the last.
  x2 = fold256(x0, k4, x2);
  x3 = fold256(x1, k4, x3);
  const Lanes last{_mm256_castsi256_si128(x2), _mm256_extracti128_si256(x2, 1),
                   _mm256_castsi256_si128(x3), _mm256_extracti128_si256(x3, 1)};
  return lanes_to_one(last, p, n);
}

// ---- 512-bit folding (VPCLMULQDQ) ----
//
// (set_epi64, maskz, insert: the broadcast, cast and plain extract
// intrinsics trip GCC 12's -Wuninitialized inside its own headers.)

#define RDMALAB_VCLMUL __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

RDMALAB_VCLMUL inline __m512i constants512(FoldBy k) {
  const auto lo = static_cast<long long>(k.low), hi = static_cast<long long>(k.high);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

RDMALAB_VCLMUL inline __m512i fold512(__m512i x, __m512i k, __m512i next) {
  // 0x96: three-way exclusive or.
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/// As lanes_to_one, 256 bytes per step: the lanes, then the n bytes at p
/// (a multiple of 16, at least 256). (The lanes one by one: a Lanes
/// argument would be passed through memory.)
RDMALAB_VCLMUL __m128i wide_lanes_to_one(__m128i l1, __m128i l2, __m128i l3, __m128i l4,
                                         const std::uint8_t* p, std::size_t n) {
  const __m512i k16 = constants512(kFold16);
  const __m512i k4 = constants512(kFold4);
  // The lanes are the 64 bytes before p: carried 512 bits on, they add to
  // p's first 64 bytes, whose four registers then take 256 bytes a step.
  const __m128i k4x = constants(kFold4);
  __m512i x0 = _mm512_setzero_si512();
  x0 = _mm512_inserti32x4(x0, fold128(l1, k4x, load128(p)), 0);
  x0 = _mm512_inserti32x4(x0, fold128(l2, k4x, load128(p + 16)), 1);
  x0 = _mm512_inserti32x4(x0, fold128(l3, k4x, load128(p + 32)), 2);
  x0 = _mm512_inserti32x4(x0, fold128(l4, k4x, load128(p + 48)), 3);
  __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128),
          x3 = _mm512_loadu_si512(p + 192);
  for (p += 256, n -= 256; n >= 256; p += 256, n -= 256) {
    x0 = fold512(x0, k16, _mm512_loadu_si512(p));
    x1 = fold512(x1, k16, _mm512_loadu_si512(p + 64));
    x2 = fold512(x2, k16, _mm512_loadu_si512(p + 128));
    x3 = fold512(x3, k16, _mm512_loadu_si512(p + 192));
  }
  x1 = fold512(x0, k4, x1);
  x2 = fold512(x1, k4, x2);
  x3 = fold512(x2, k4, x3);
  const Lanes last{
      _mm512_maskz_extracti32x4_epi32(0xF, x3, 0), _mm512_maskz_extracti32x4_epi32(0xF, x3, 1),
      _mm512_maskz_extracti32x4_epi32(0xF, x3, 2), _mm512_maskz_extracti32x4_epi32(0xF, x3, 3)};
  return lanes_to_one(last, p, n);
}

// ---- Any length of at least one block, masked or not ----

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

}  // namespace

/// Whole blocks (m of them) fewer than four, or up to kShortBlocks of a
/// masked packet, are each carried to the last by their own constant, so
/// the multiplications do not wait on one another: measured, that makes the
/// ICRC of a 104-byte packet about a sixth faster than four lanes, while
/// plain data of that length is faster in four lanes. More go in four (or
/// sixteen) lanes; the mask lies in the first 64 bytes. The last n % 16
/// bytes, when there are some, as in Intel's paper: the 128 bits so far
/// move on by that many bytes, the bytes that pass the end folded back by
/// one block onto the rest and the tail.
RDMALAB_CLMUL std::uint32_t crc32_clmul(std::uint32_t raw, const std::uint8_t* p, std::size_t n,
                                        const std::uint8_t* mask, std::size_t head,
                                        CrcImpl impl) noexcept {
  // (The lambda needs the target too, or GCC calls load128 from it.)
  const auto block = [&](std::size_t at) RDMALAB_CLMUL {
    const __m128i v = load128(p + at);
    return at < head ? _mm_or_si128(v, load128(mask + at)) : v;
  };
  const __m128i start = _mm_cvtsi32_si128(static_cast<int>(raw));
  const std::size_t m = n / 16, r = n % 16;
  __m128i acc;
  if (m < 4 || (mask != nullptr && m <= kShortBlocks)) {
    acc = block(16 * (m - 1));
    if (m == 1) acc = _mm_xor_si128(acc, start);
    for (std::size_t i = 0; i + 1 < m; ++i) {
      const __m128i k =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kFoldByBlocks[m - 1 - i]));
      const __m128i b = i == 0 ? _mm_xor_si128(block(0), start) : block(16 * i);
      acc = _mm_xor_si128(
          acc, _mm_xor_si128(_mm_clmulepi64_si128(b, k, 0x00), _mm_clmulepi64_si128(b, k, 0x11)));
    }
  } else {
    const Lanes l{_mm_xor_si128(block(0), start), block(16), block(32), block(48)};
    const std::size_t more = 16 * m - 64;
    if (impl == CrcImpl::Vpclmul && more >= 256)
      acc = wide_lanes_to_one(l.x1, l.x2, l.x3, l.x4, p + 64, more);
    else if (impl == CrcImpl::Vpclmul256 && more >= 128)
      acc = lanes256_to_one(l.x1, l.x2, l.x3, l.x4, p + 64, more);
    else
      acc = lanes_to_one(l, p + 64, more);
  }
  if (r != 0) {
    // acc's first r bytes go a block back; the rest close up, and the
    // tail (the last 16 bytes, of which the last r are new) fills in.
    const __m128i passed = _mm_shuffle_epi8(acc, load128(kShift + r));
    const __m128i kept = _mm_shuffle_epi8(acc, load128(kShift + 16 + r));
    const __m128i last = _mm_blendv_epi8(kept, block(n - 16), load128(kLastBytes + r));
    acc = fold128(passed, constants(kFold1), last);
  }
  return reduce128(acc);
}

}  // namespace rdmalab::wire::detail

#endif
