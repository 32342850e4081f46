// The transport timers a student tunes with ibv_modify_qp: the local ACK
// timeout (`timeout`) and the RNR NAK timer (`min_rnr_timer`, and bits 4:0 of
// an RNR NAK syndrome). IBTA vol. 1, 9.7.6.1.3 and table 45.
#pragma once

#include <cstdint>
#include <optional>

namespace rdmalab::wire {

/// 4.096 microseconds: the unit of the local ACK timeout.
inline constexpr double kAckTimeoutUnitSeconds = 4.096e-6;

/// Local ACK timeout for ibv_qp_attr.timeout = n (0..31): 4.096 us * 2^n.
/// n = 0 means "wait forever" and gives nullopt. Values above 31 are invalid
/// and also give nullopt.
[[nodiscard]] std::optional<double> ack_timeout_seconds(unsigned n) noexcept;

/// The `timeout` exponent (1..31) whose 4.096 us * 2^n is nearest to a
/// measured interval, nearest on a logarithmic scale (each step doubles the
/// time, so the midpoint between n and n+1 is their geometric mean).
/// A non-positive or non-finite interval gives nullopt.
[[nodiscard]] std::optional<unsigned> ack_timeout_exponent(double seconds) noexcept;

/// The RNR NAK timer in milliseconds for a 5-bit timer code (IBTA table 45):
/// 0 -> 655.36 ms, 1 -> 0.01 ms ... 31 -> 491.52 ms. Codes above 31 give nullopt.
[[nodiscard]] std::optional<double> rnr_timer_ms(unsigned code) noexcept;

/// The smallest RNR timer code whose wait is at least `ms` (what a responder
/// should advertise to make the requester wait that long). Above 655.36 ms,
/// code 0 (the longest).
[[nodiscard]] unsigned rnr_timer_code_at_least(double ms) noexcept;

/// The RNR timer code whose time is nearest to a measured wait in ms
/// (logarithmic scale, as for the ACK timeout).
[[nodiscard]] std::optional<unsigned> rnr_timer_code_nearest(double ms) noexcept;

}  // namespace rdmalab::wire
