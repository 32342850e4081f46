#include "rdmalab/wire/timers.hpp"

#include <array>
#include <cmath>

namespace rdmalab::wire {
namespace {

// IBTA vol. 1 table 45 (RNR NAK timer field encoding), in milliseconds.
constexpr std::array<double, 32> kRnrMs{
    655.36, 0.01,  0.02,  0.03,  0.04,  0.06,   0.08,   0.12,   0.16,   0.24,  0.32,
    0.48,   0.64,  0.96,  1.28,  1.92,  2.56,   3.84,   5.12,   7.68,   10.24, 15.36,
    20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};

}  // namespace

std::optional<double> ack_timeout_seconds(unsigned n) noexcept {
  if (n == 0 || n > 31) return std::nullopt;
  return kAckTimeoutUnitSeconds * std::ldexp(1.0, static_cast<int>(n));
}

std::optional<unsigned> ack_timeout_exponent(double seconds) noexcept {
  if (!(seconds > 0) || !std::isfinite(seconds)) return std::nullopt;
  const double exact = std::log2(seconds / kAckTimeoutUnitSeconds);
  const long n = std::lround(exact);
  if (n < 1) return 1u;
  if (n > 31) return 31u;
  return static_cast<unsigned>(n);
}

std::optional<double> rnr_timer_ms(unsigned code) noexcept {
  if (code >= kRnrMs.size()) return std::nullopt;
  return kRnrMs[code];
}

unsigned rnr_timer_code_at_least(double ms) noexcept {
  for (unsigned code = 1; code < kRnrMs.size(); ++code)
    if (kRnrMs[code] >= ms) return code;
  return 0;
}

std::optional<unsigned> rnr_timer_code_nearest(double ms) noexcept {
  if (!(ms > 0) || !std::isfinite(ms)) return std::nullopt;
  unsigned best = 1;
  double best_err = INFINITY;
  for (unsigned code = 0; code < kRnrMs.size(); ++code) {
    const double err = std::fabs(std::log2(ms / kRnrMs[code]));
    if (err < best_err) {
      best_err = err;
      best = code;
    }
  }
  return best;
}

}  // namespace rdmalab::wire
