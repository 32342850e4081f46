// The summary's numbers as text: durations, rates, times and endpoints
// written exactly as fmt's format strings write them ("{:.1f} µs",
// "{:.2f} Gbit/s", "{}.{:09d}", "{} QP 0x{:06x}"), which the renderers
// used to call and no longer do for speed; ties of decimal rounding go to
// the even digit (both fmt and printf round exactly so).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "format.hpp"  // dissect's own, for detail::fixed_with_unit
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/frame.hpp"

using namespace rdmalab;
using namespace rdmalab::dissect;

namespace {

/// The English summary of one conversation of one channel.
std::string summary_of(const ChannelSummary& c, std::int64_t first_ns, std::int64_t last_ns) {
  ConversationSummary v;
  v.id = 1;
  v.a = c.requester;
  v.b = c.responder;
  v.packets = 2;
  v.first_ns = first_ns;
  v.last_ns = last_ns;
  v.channels.push_back(c);
  CaptureStats st;
  st.frames = 2;
  std::string out;
  const std::vector<ConversationSummary> convs{v};
  render_summary_text(st, convs, out);
  return out;
}

ChannelSummary channel() {
  ChannelSummary c;
  c.requester = Endpoint{*wire::IpAddress::parse("10.0.1.250"), 0xC1, true};
  c.responder = Endpoint{*wire::IpAddress::parse("fe80::1:2"), 0, false};
  return c;
}

}  // namespace

TEST_CASE("summary numbers: the text fmt's format strings give, ties to even") {
  i18n::set_current(i18n::Lang::En);
  struct Rtt {
    std::int64_t min, median, max;
    const char* text;  // derived by hand
  };
  // 999 ns stays in ns; 1250 ns is 1.25 µs exactly, a tie, to even: 1.2;
  // 1350 ns is 1.35 µs, not exact in binary (1.3500000000000000888), so
  // 1.4; 2,675,000 ns is 2.675 ms (2.67499999999999982236 in binary): 2.67;
  // 12,250,000 ns is 12.25 ms exactly: 12.2; 1,000,500,000 ns is 1.0005 s
  // (1.00049999999999994493 in binary): 1.000.
  const Rtt cases[] = {
      {999, 1250, 1350, "min 999 ns, median 1.2 µs, max 1.4 µs (3 samples)"},
      {2'675'000, 12'250'000, 1'000'500'000,
       "min 2.67 ms, median 12.2 ms, max 1.000 s (3 samples)"},
  };
  for (const Rtt& r : cases) {
    ChannelSummary c = channel();
    c.rtt_samples = 3;
    c.rtt_min_ns = r.min;
    c.rtt_median_ns = r.median;
    c.rtt_max_ns = r.max;
    const std::string text = summary_of(c, 0, 1);
    CAPTURE(text);
    CHECK(text.find(r.text) != std::string::npos);
  }
  // Goodput: bytes per second, written in bits. Below 1 kbit/s "{:.0f}":
  // 62.5 bytes/s is 500 bit/s, 15.625 bytes/s 125 bit/s;
  // 1,000,625 bits/s is 1.000625 Mbit/s: 1.00; 2.5e9 bytes/s is 20 Gbit/s;
  // 1e300 bytes/s is 8e291 Gbit/s, 292 digits, longer than any buffer on the
  // stack: what fmt writes.
  struct Rate {
    double bytes_per_s;
    std::string text;
  };
  const Rate rates[] = {
      {62.5, "goodput: 500 bit/s"},
      {15.625, "goodput: 125 bit/s"},
      {1'000'625.0 / 8, "goodput: 1.00 Mbit/s"},
      {2.5e9, "goodput: 20.00 Gbit/s"},
      {1e300, "goodput: " + fmt::format("{:.2f}", 8e300 / 1e9) + " Gbit/s"},
  };
  for (const Rate& r : rates) {
    ChannelSummary c = channel();
    c.goodput_bps = r.bytes_per_s;
    const std::string text = summary_of(c, 0, 1);
    CAPTURE(text);
    CHECK(text.find(r.text + "\n") != std::string::npos);
  }
  // Times with nanosecond digits, and the endpoints: an IPv4 address with
  // a known QPN, an IPv6 one without.
  ChannelSummary c = channel();
  const std::string text = summary_of(c, -1, 12'000'000'007);
  CAPTURE(text);
  CHECK(text.find("Conversation 1: 10.0.1.250 QP 0x0000c1 ⇄ fe80::1:2 QP ?  (2 packets, "
                  "12.000000008 s)") != std::string::npos);
  CHECK(text.find("  Requests 10.0.1.250 QP 0x0000c1 → fe80::1:2 QP ?\n") != std::string::npos);
  CHECK(summary_of(c, 5, 0).find("(2 packets, -0.000000005 s)") != std::string::npos);
}

// The durations and rates above are written by integer arithmetic where it
// certainly gives fmt's digits (detail::fixed_digits), and by std::to_chars
// near a half. Against fmt's "{:.Nf}" on values of every size the summary
// writes, on values a few units in the last place from a decimal half, and
// on exact binary halves (ties to even).
TEST_CASE("fixed-point text: the integer path writes fmt's digits, or declines") {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::size_t checked = 0;
  const auto check = [&](double v, int decimals) {
    const std::string want = fmt::format("{:.{}f} x", v, decimals);
    const std::string got = detail::fixed_with_unit(v, decimals, " x");
    if (got != want) {
      const std::string value = fmt::format("{:a}", v);  // exactly
      CAPTURE(value);
      CAPTURE(decimals);
      CHECK(got == want);
    }
    ++checked;
  };
  // Random values from 1e-4 to 1e10, every decimals the summary uses: all
  // but the rare product that rounds onto a half take the integer path.
  std::size_t in_range = 0, fast = 0;
  for (int i = 0; i < 400'000; ++i) {
    const double mantissa = static_cast<double>(next() >> 11) / 9007199254740992.0;  // [0, 1)
    const double v = mantissa * std::pow(10.0, static_cast<int>(next() % 15) - 4);
    const int decimals = static_cast<int>(next() % 4);
    check(v, decimals);
    if (v * std::pow(10.0, decimals) < 4503599627370496.0) {  // 2^52
      ++in_range;
      std::array<char, 64> buf{};
      if (detail::fixed_digits(buf.data(), v, decimals) != nullptr) ++fast;
    }
  }
  CHECK(in_range > 200'000);
  CHECK(fast + in_range / 1000 >= in_range);
  // Near a decimal half: (k + 1/2) / 10^d and its neighbours a few units
  // in the last place away, whose product with 10^d rounds onto the half
  // or next to it.
  for (int i = 0; i < 100'000; ++i) {
    const int decimals = static_cast<int>(next() % 4);
    const double k = static_cast<double>(next() % 100'000'000);
    double v = (k + 0.5) / std::pow(10.0, decimals);
    for (int step = 0; step < 4; ++step) v = std::nextafter(v, 0.0);
    for (int step = 0; step < 8; ++step) {
      check(v, decimals);
      v = std::nextafter(v, 1e300);
    }
  }
  // Exact binary halves, ties to even; -0.0, negatives, NaN and huge
  // values, which std::to_chars writes.
  CHECK(detail::fixed_with_unit(0.125, 2, "") == "0.12");
  CHECK(detail::fixed_with_unit(0.375, 2, "") == "0.38");
  CHECK(detail::fixed_with_unit(2.5, 0, "") == "2");
  CHECK(detail::fixed_with_unit(3.5, 0, "") == "4");
  CHECK(detail::fixed_with_unit(9.9951, 2, "") == "10.00");
  for (const double v :
       {0.0, -0.0, -1.5, -0.004, 1e20, 4503599627370495.5, 4503599627370496.0,
        std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    for (int decimals = 0; decimals <= 3; ++decimals) check(v, decimals);
  CHECK(checked > 1'000'000);
}
