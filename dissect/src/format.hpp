// Small formatting helpers shared by the renderers (private). Their format
// strings are compiled (FMT_COMPILE: the same text, without parsing the
// string at each call): a summary of a whole cluster calls them millions of
// times.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace rdmalab::dissect::detail {

/// "388.0 µs", "1.28 ms", "67.8 ms", "1.250 s"; "?" for a negative (unknown) interval.
inline std::string format_duration(std::int64_t ns) {
  if (ns < 0) return "?";
  const double v = static_cast<double>(ns);
  if (ns < 1000) return fmt::format(FMT_COMPILE("{} ns"), ns);
  if (ns < 1000000) return fmt::format(FMT_COMPILE("{:.1f} µs"), v / 1e3);
  if (ns < 10000000)
    return fmt::format(FMT_COMPILE("{:.2f} ms"), v / 1e6);  // 1.28 ms: RNR timer steps
  if (ns < 1000000000) return fmt::format(FMT_COMPILE("{:.1f} ms"), v / 1e6);
  return fmt::format(FMT_COMPILE("{:.3f} s"), v / 1e9);
}

/// "9.87 Gbit/s" from bytes per second.
inline std::string format_rate(double bytes_per_s) {
  const double bits = bytes_per_s * 8;
  if (bits >= 1e9) return fmt::format(FMT_COMPILE("{:.2f} Gbit/s"), bits / 1e9);
  if (bits >= 1e6) return fmt::format(FMT_COMPILE("{:.2f} Mbit/s"), bits / 1e6);
  if (bits >= 1e3) return fmt::format(FMT_COMPILE("{:.2f} kbit/s"), bits / 1e3);
  return fmt::format(FMT_COMPILE("{:.0f} bit/s"), bits);
}

/// Seconds with nanosecond digits: "0.004748000".
inline std::string format_seconds(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a =
      neg ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  return fmt::format(FMT_COMPILE("{}{}.{:09d}"), neg ? "-" : "", a / 1000000000u, a % 1000000000u);
}

}  // namespace rdmalab::dissect::detail
