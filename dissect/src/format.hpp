// Small formatting helpers shared by the renderers (private). A summary of
// a whole cluster calls them millions of times: they write with
// std::to_chars into a buffer on the stack, the same text fmt would write.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace rdmalab::dissect::detail {

/// The digits std::to_chars writes for `v` in fixed notation with
/// `decimals` (0 to 3) digits after the point, written at `p` by integer
/// arithmetic; nullptr where the caller must use std::to_chars.
///
/// std::to_chars rounds the exact binary value of `v` (ties to even) and
/// costs several hundred instructions a call; a summary of a whole cluster
/// makes hundreds of thousands. Here the product y = v * 10^decimals is
/// rounded to a double once, then to an integer. Below 2^52 every half
/// (m + 1/2) is a double, and rounding to the nearest double keeps order:
/// y lies on the same side of each half as the exact product, or on the
/// half itself. Unless y is a half, both round to the same integer. For a
/// half (a tie, or a product that rounded onto one), at or above 2^52, for
/// NaN and for anything negative (-0.0 too) the caller uses std::to_chars.
inline char* fixed_digits(char* p, double v, int decimals) noexcept {
  constexpr std::array<std::uint32_t, 4> kPow10{1, 10, 100, 1000};
  constexpr double kLimit = 4503599627370496.0;  // 2^52
  if (decimals < 0 || decimals > 3 || !(v >= 0) || std::signbit(v)) return nullptr;
  const std::uint32_t scale = kPow10[static_cast<std::size_t>(decimals)];
  const double y = v * scale;
  if (!(y < kLimit)) return nullptr;
  const double whole = std::floor(y);
  const double frac = y - whole;  // exact below 2^52
  if (frac == 0.5) return nullptr;
  const auto n = static_cast<std::uint64_t>(whole) + (frac > 0.5 ? 1 : 0);
  p = std::to_chars(p, p + 24, n / scale).ptr;
  if (decimals == 0) return p;
  *p++ = '.';
  std::uint64_t f = n % scale;
  for (int i = decimals - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + f % 10);
    f /= 10;
  }
  return p + decimals;
}

/// `v` with `decimals` digits after the point, then `unit`: the text fmt's
/// "{:.Nf}" (and printf's "%.Nf") writes, both exact, ties to even. Built
/// in a buffer on the stack (fixed_digits, else std::to_chars): fmt
/// writing into a std::string appends a character at a time, and these
/// helpers are called millions of times for a summary of a whole cluster.
inline std::string fixed_with_unit(double v, int decimals, std::string_view unit) {
  if (unit.size() > 16) return fmt::format("{:.{}f}{}", v, decimals, unit);
  std::array<char, 64> buf{};
  char* const limit = buf.data() + buf.size() - 16;  // room for the unit
  char* end = fixed_digits(buf.data(), v, decimals);
  if (end == nullptr) {
    const auto r = std::to_chars(buf.data(), limit, v, std::chars_format::fixed, decimals);
    if (r.ec != std::errc{})  // over 48 digits: 1e48 and more
      return fmt::format("{:.{}f}{}", v, decimals, unit);
    end = r.ptr;
  }
  end = std::copy(unit.begin(), unit.end(), end);
  return std::string(buf.data(), end);
}

/// "388.0 µs", "1.28 ms", "67.8 ms", "1.250 s"; "?" for a negative (unknown) interval.
inline std::string format_duration(std::int64_t ns) {
  if (ns < 0) return "?";
  const double v = static_cast<double>(ns);
  if (ns < 1000) {
    std::array<char, 32> buf{};
    char* end = std::to_chars(buf.data(), buf.data() + 20, ns).ptr;
    end = std::copy_n(" ns", 3, end);
    return std::string(buf.data(), end);
  }
  if (ns < 1000000) return fixed_with_unit(v / 1e3, 1, " µs");
  if (ns < 10000000) return fixed_with_unit(v / 1e6, 2, " ms");  // 1.28 ms: RNR timer steps
  if (ns < 1000000000) return fixed_with_unit(v / 1e6, 1, " ms");
  return fixed_with_unit(v / 1e9, 3, " s");
}

/// "9.87 Gbit/s" from bytes per second.
inline std::string format_rate(double bytes_per_s) {
  const double bits = bytes_per_s * 8;
  if (bits >= 1e9) return fixed_with_unit(bits / 1e9, 2, " Gbit/s");
  if (bits >= 1e6) return fixed_with_unit(bits / 1e6, 2, " Mbit/s");
  if (bits >= 1e3) return fixed_with_unit(bits / 1e3, 2, " kbit/s");
  return fixed_with_unit(bits, 0, " bit/s");
}

/// Seconds with nanosecond digits: "0.004748000".
inline std::string format_seconds(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a =
      neg ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::array<char, 40> buf{};
  char* p = buf.data();
  if (neg) *p++ = '-';
  p = std::to_chars(p, buf.data() + 24, a / 1000000000U).ptr;
  *p++ = '.';
  // The nine digits of the fraction, leading zeros included.
  std::uint64_t frac = a % 1000000000U;
  for (int i = 8; i >= 0; --i) {
    p[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  return std::string(buf.data(), p + 9);
}

}  // namespace rdmalab::dissect::detail
