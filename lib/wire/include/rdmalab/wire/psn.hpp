// 24-bit Packet Sequence Number arithmetic (IBTA vol. 1, 9.7.1).
//
// PSNs wrap from 0xFFFFFF to 0. "A is before B" when B - A, taken modulo
// 2^24, lies in (0, 2^23): the spec splits the PSN space in two halves around
// the expected PSN, one half "duplicate/past", the other "ahead/invalid".
#pragma once

#include <cstdint>

namespace rdmalab::wire {

inline constexpr std::uint32_t kPsnMask = 0xFFFFFF;
inline constexpr std::uint32_t kPsnHalf = 0x800000;

/// psn + n, wrapped to 24 bits; n may be negative.
[[nodiscard]] constexpr std::uint32_t psn_add(std::uint32_t psn, std::int64_t n) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::int64_t>(psn) + n) & kPsnMask);
}

/// The signed distance a - b in [-2^23, 2^23): how far a is ahead of b.
[[nodiscard]] constexpr std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t d = (a - b) & kPsnMask;
  return d >= kPsnHalf ? static_cast<std::int32_t>(d) - static_cast<std::int32_t>(kPsnMask + 1)
                       : static_cast<std::int32_t>(d);
}

/// True when a comes strictly before b in PSN order.
[[nodiscard]] constexpr bool psn_before(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t d = (b - a) & kPsnMask;
  return d != 0 && d < kPsnHalf;
}

/// True when a comes before b or equals it.
[[nodiscard]] constexpr bool psn_before_eq(std::uint32_t a, std::uint32_t b) noexcept {
  return a == (b & kPsnMask) || psn_before(a, b);
}

}  // namespace rdmalab::wire
