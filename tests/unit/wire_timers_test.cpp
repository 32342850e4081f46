#include <doctest/doctest.h>

#include "rdmalab/wire/timers.hpp"

using namespace rdmalab::wire;

TEST_CASE("local ACK timeout is 4.096 us * 2^n, 0 means infinite") {
  CHECK_FALSE(ack_timeout_seconds(0).has_value());
  CHECK(*ack_timeout_seconds(1) == doctest::Approx(8.192e-6));
  CHECK(*ack_timeout_seconds(14) == doctest::Approx(0.067108864));
  CHECK(*ack_timeout_seconds(18) == doctest::Approx(1.073741824));
  CHECK(*ack_timeout_seconds(31) == doctest::Approx(8796.093022208));
  CHECK_FALSE(ack_timeout_seconds(32).has_value());
}

TEST_CASE("every timeout value maps back to itself") {
  for (unsigned n = 1; n <= 31; ++n) {
    CAPTURE(n);
    CHECK(ack_timeout_exponent(*ack_timeout_seconds(n)) == n);
  }
}

TEST_CASE("measured retransmission gaps give the nearest timeout exponent") {
  // Real rxe gaps from the corpus: timeout 14 -> ~68 ms, timeout 12 -> ~20 ms.
  CHECK(ack_timeout_exponent(0.0684) == 14u);
  CHECK(ack_timeout_exponent(0.0200) == 12u);
  CHECK(ack_timeout_exponent(1.1) == 18u);
  CHECK(ack_timeout_exponent(1e-9) == 1u);
  CHECK(ack_timeout_exponent(1e9) == 31u);
  CHECK_FALSE(ack_timeout_exponent(0).has_value());
  CHECK_FALSE(ack_timeout_exponent(-1).has_value());
}

TEST_CASE("RNR timer table, IBTA table 45") {
  const double expected[32] = {655.36, 0.01,  0.02,  0.03,   0.04,   0.06,   0.08,   0.12,
                               0.16,   0.24,  0.32,  0.48,   0.64,   0.96,   1.28,   1.92,
                               2.56,   3.84,  5.12,  7.68,   10.24,  15.36,  20.48,  30.72,
                               40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  for (unsigned c = 0; c < 32; ++c) {
    CAPTURE(c);
    CHECK(*rnr_timer_ms(c) == doctest::Approx(expected[c]));
    CHECK(rnr_timer_code_nearest(expected[c]) == c);
  }
  CHECK_FALSE(rnr_timer_ms(32).has_value());
}

TEST_CASE("RNR timer code for a wanted minimum wait") {
  CHECK(rnr_timer_code_at_least(0.01) == 1u);
  CHECK(rnr_timer_code_at_least(1.0) == 14u);
  CHECK(rnr_timer_code_at_least(491.52) == 31u);
  CHECK(rnr_timer_code_at_least(500) == 0u);
}
