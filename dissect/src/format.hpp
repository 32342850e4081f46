// Small formatting helpers shared by the renderers (private). A summary of
// a whole cluster calls them millions of times: they write with
// std::to_chars into a buffer on the stack, the same text fmt would write.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace rdmalab::dissect::detail {

/// `v` with `decimals` digits after the point, then `unit`: the text fmt's
/// "{:.Nf}" (and printf's "%.Nf") writes, both exact, ties to even. Built
/// with std::to_chars in a buffer on the stack: fmt writing into a
/// std::string appends a character at a time, and these helpers are called
/// millions of times for a summary of a whole cluster.
inline std::string fixed_with_unit(double v, int decimals, std::string_view unit) {
  std::array<char, 64> buf{};
  char* const limit = buf.data() + buf.size() - 16;  // room for the unit
  const auto r = std::to_chars(buf.data(), limit, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc{} || unit.size() > 16)  // over 48 digits: 1e48 and more
    return fmt::format("{:.{}f}{}", v, decimals, unit);
  char* end = std::copy(unit.begin(), unit.end(), r.ptr);
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
