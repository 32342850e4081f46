#include <doctest/doctest.h>

#include "rdmalab/wire/psn.hpp"

using namespace rdmalab::wire;

TEST_CASE("psn_add wraps at 2^24 in both directions") {
  CHECK(psn_add(0xFFFFFE, 1) == 0xFFFFFF);
  CHECK(psn_add(0xFFFFFE, 2) == 0x000000);
  CHECK(psn_add(0xFFFFFE, 5) == 0x000003);
  CHECK(psn_add(0x000001, -2) == 0xFFFFFF);
  CHECK(psn_add(0x123456, 0x1000000) == 0x123456);
}

TEST_CASE("psn_diff is the signed distance across the wrap") {
  CHECK(psn_diff(0x000002, 0xFFFFFE) == 4);
  CHECK(psn_diff(0xFFFFFE, 0x000002) == -4);
  CHECK(psn_diff(5, 5) == 0);
  CHECK(psn_diff(0x7FFFFF, 0) == 0x7FFFFF);
  CHECK(psn_diff(0x800000, 0) == -0x800000);
}

TEST_CASE("psn_before splits the space in halves around a PSN") {
  CHECK(psn_before(0xFFFFFE, 0x000001));
  CHECK_FALSE(psn_before(0x000001, 0xFFFFFE));
  CHECK_FALSE(psn_before(7, 7));
  CHECK(psn_before_eq(7, 7));
  CHECK(psn_before(0, 0x7FFFFF));
  CHECK_FALSE(psn_before(0, 0x800000));
}

TEST_CASE("a sequence of PSNs from 0xFFFFFE stays ordered through the wrap") {
  std::uint32_t p = 0xFFFFFE;
  for (int i = 0; i < 10; ++i) {
    const std::uint32_t next = psn_add(p, 1);
    CHECK(psn_before(p, next));
    CHECK(psn_diff(next, p) == 1);
    p = next;
  }
  CHECK(p == 0x000008);
}
