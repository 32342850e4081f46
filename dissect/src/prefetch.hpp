// A prefetch the compiler keeps where it is written (private).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rdmalab::dissect {

/// Asks the processor to fetch the cache line holding `p`, for a read a
/// little later (a hint: `p` need not be valid).
///
/// Not __builtin_prefetch in a function of its own: GCC 12 counts it as
/// free of side effects, so a function whose only effect is a prefetch
/// (the hash tables' and rings' prefetch()) is taken as "const", and its
/// calls are deleted before they are inlined. The analyser's lookahead lost
/// most of its prefetches that way. A volatile asm statement stays.
inline void prefetch_line(const void* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

/// Every cache line of the `n` bytes from `p` (n > 0): an object need not
/// start on a line, so it may end on one more line than n / 64 suggests.
inline void prefetch_lines(const void* p, std::size_t n) noexcept {
  const auto first = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63};
  const auto last = (reinterpret_cast<std::uintptr_t>(p) + n - 1) & ~std::uintptr_t{63};
  for (std::uintptr_t line = first; line <= last; line += 64)
    prefetch_line(reinterpret_cast<const void*>(line));
}

}  // namespace rdmalab::dissect
