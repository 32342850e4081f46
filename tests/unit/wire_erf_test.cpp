// ERF records as ibdump writes them (LINKTYPE_ERF): the header's fields, the
// 32.32 timestamp, extension headers, and records that lie about their
// length or are cut short.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "rdmalab/wire/erf.hpp"

using namespace rdmalab::wire;

namespace {
std::vector<std::uint8_t> record(std::uint8_t type_byte, std::uint16_t rlen, std::uint16_t wlen,
                                 std::size_t extensions, std::size_t packet) {
  std::vector<std::uint8_t> r(16 + extensions * 8 + packet);
  // 2 s + 0x4000'0000 / 2^32 s = 2.25 s.
  const std::array<std::uint8_t, 8> ts = {0x00, 0x00, 0x00, 0x40, 0x02, 0x00, 0x00, 0x00};
  for (std::size_t i = 0; i < 8; ++i) r[i] = ts[i];
  r[8] = type_byte;
  r[9] = 0x05;
  r[10] = static_cast<std::uint8_t>(rlen >> 8);
  r[11] = static_cast<std::uint8_t>(rlen);
  r[12] = 0x00;
  r[13] = 0x07;
  r[14] = static_cast<std::uint8_t>(wlen >> 8);
  r[15] = static_cast<std::uint8_t>(wlen);
  for (std::size_t e = 0; e < extensions; ++e)
    r[16 + e * 8] = e + 1 < extensions ? 0x80 : 0x00;  // "another follows" on all but the last
  for (std::size_t i = 0; i < packet; ++i)
    r[16 + extensions * 8 + i] = static_cast<std::uint8_t>(i);
  return r;
}
}  // namespace

TEST_CASE("an INFINIBAND record: fields, time, and the packet after the header") {
  const auto r = record(erf::kTypeInfiniband, 16 + 40, 38, 0, 40);  // 2 bytes of padding
  erf::Record rec;
  REQUIRE_FALSE(erf::parse(r, rec));
  CHECK(rec.type == erf::kTypeInfiniband);
  CHECK(rec.flags == 0x05);
  CHECK(rec.rlen == 56);
  CHECK(rec.lctr == 7);
  CHECK(rec.wlen == 38);
  CHECK(rec.extension_headers == 0);
  CHECK(rec.packet.size() == 38);  // wlen, not the padding
  CHECK(rec.packet[0] == 0);
  CHECK(rec.time_ns() == 2'250'000'000);
  CHECK_FALSE(rec.truncated());
}

TEST_CASE("extension headers are skipped, however many are chained") {
  const auto r = record(erf::kTypeInfiniband | 0x80, 16 + 24 + 20, 20, 3, 20);
  erf::Record rec;
  REQUIRE_FALSE(erf::parse(r, rec));
  CHECK(rec.type == erf::kTypeInfiniband);
  CHECK(rec.extension_headers == 3);
  CHECK(rec.packet.size() == 20);
  CHECK(rec.packet[5] == 5);
}

TEST_CASE("short, lying and cut records are refused or clamped, never read past") {
  erf::Record rec;
  const auto good = record(erf::kTypeInfiniband, 16 + 8, 8, 0, 8);
  for (std::size_t n = 0; n < 16; ++n)
    CHECK(erf::parse(std::span(good).first(n), rec) == erf::Error::Short);
  // The capture kept only part of the packet: what is there is given.
  REQUIRE_FALSE(erf::parse(std::span(good).first(20), rec));
  CHECK(rec.packet.size() == 4);
  // rlen smaller than the header itself.
  CHECK(erf::parse(record(erf::kTypeInfiniband, 15, 8, 0, 8), rec) == erf::Error::BadLength);
  // rlen shorter than wlen: the record ends first.
  REQUIRE_FALSE(erf::parse(record(erf::kTypeInfiniband, 16 + 4, 8, 0, 8), rec));
  CHECK(rec.packet.size() == 4);
  // An extension chain that never ends within the bytes.
  auto endless = record(erf::kTypeInfiniband | 0x80, 200, 8, 2, 0);
  endless[16 + 8] = 0x80;
  CHECK(erf::parse(endless, rec) == erf::Error::ExtensionsCutOff);
}

TEST_CASE("write_header: read back, the time to the nanosecond") {
  std::array<std::uint8_t, 16 + 6> r{};
  // 1.000000001 s: the fraction 2^32 / 1e9 = 4.29 units per ns, rounded.
  for (const std::int64_t t :
       {std::int64_t{0}, std::int64_t{1'000'000'001}, std::int64_t{1'764'100'000'123'456'789},
        std::int64_t{999'999'999}}) {
    REQUIRE(erf::write_header(erf::kTypeInfiniband, t, 6, r.data()));
    erf::Record rec;
    REQUIRE_FALSE(erf::parse(r, rec));
    CHECK(rec.time_ns() == t);
    CHECK(rec.rlen == 22);
    CHECK(rec.wlen == 6);
    CHECK(rec.packet.size() == 6);
  }
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, -1, 6, r.data()));
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, 0, erf::kMaxPacket + 1, r.data()));
}
