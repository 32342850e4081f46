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

TEST_CASE("write_header: every nanosecond of a second reads back, none carries into the next") {
  // The fraction's unit, 2^-32 s, is 0.23 ns: rounded to the nearest unit
  // and read back to the nearest ns, every ns survives. Checked over the
  // first and last 100'000 ns of a second and every 997th ns between, from
  // second 1'790'000'000 (2026).
  std::array<std::uint8_t, 16> r{};
  constexpr std::int64_t kSecond = 1'000'000'000;
  constexpr std::int64_t kBase = std::int64_t{1'790'000'000} * kSecond;
  std::vector<std::int64_t> ns;
  for (std::int64_t i = 0; i < 100'000; ++i) ns.push_back(i);
  for (std::int64_t i = 100'000; i < kSecond - 100'000; i += 997) ns.push_back(i);
  for (std::int64_t i = kSecond - 100'000; i < kSecond; ++i) ns.push_back(i);
  std::size_t wrong = 0;
  for (const std::int64_t n : ns) {
    REQUIRE(erf::write_header(erf::kTypeInfiniband, kBase + n, 0, r.data()));
    erf::Record rec;
    REQUIRE_FALSE(erf::parse(r, rec));
    wrong += rec.time_ns() != kBase + n ? 1u : 0u;
    wrong += (rec.timestamp >> 32) != 1'790'000'000u ? 1u : 0u;  // the seconds never move
  }
  CHECK(wrong == 0);
  // The last ns of a second: 999'999'999 / 1e9 x 2^32 = 2^32 - 4.29, which
  // rounds to 2^32 - 4 (hand-computed); the first of the next: 0.
  REQUIRE(erf::write_header(erf::kTypeInfiniband, kBase + kSecond - 1, 0, r.data()));
  CHECK(load_le32(r.data()) == 0xFFFF'FFFCu);
  CHECK(load_le32(r.data() + 4) == 1'790'000'000u);
  REQUIRE(erf::write_header(erf::kTypeInfiniband, kBase + kSecond, 0, r.data()));
  CHECK(load_le32(r.data()) == 0u);
  CHECK(load_le32(r.data() + 4) == 1'790'000'001u);
  // 0.5 s: exactly 2^31.
  REQUIRE(erf::write_header(erf::kTypeInfiniband, kBase + kSecond / 2, 0, r.data()));
  CHECK(load_le32(r.data()) == 0x8000'0000u);
  // The seconds are 32 bits: 2^32 s (in 2106) is refused, the second before is not.
  constexpr std::int64_t kLast = (std::int64_t{1} << 32) * kSecond - 1;
  CHECK(erf::write_header(erf::kTypeInfiniband, kLast, 0, r.data()));
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, kLast + 1, 0, r.data()));
}

TEST_CASE("write_header: a record cut by a snap length keeps wlen, rlen counts what it holds") {
  // A 106-byte packet of which 40 bytes are kept: rlen 16 + 40, wlen 106.
  std::array<std::uint8_t, 16 + 40> r{};
  REQUIRE(erf::write_header(erf::kTypeInfiniband, 5, 106, 40, r.data()));
  CHECK(r[8] == erf::kTypeInfiniband);
  CHECK(r[9] == 0);  // flags
  CHECK(r[10] == 0x00);
  CHECK(r[11] == 56);  // rlen, big-endian
  CHECK(r[12] == 0);
  CHECK(r[13] == 0);  // loss counter
  CHECK(r[14] == 0x00);
  CHECK(r[15] == 106);  // wlen, big-endian
  erf::Record rec;
  REQUIRE_FALSE(erf::parse(r, rec));
  CHECK(rec.rlen == 56);
  CHECK(rec.wlen == 106);
  CHECK(rec.packet.size() == 40);
  CHECK(rec.time_ns() == 5);
  // wlen is 16 bits; rlen too, so at most 0xFFFF - 16 bytes are kept; never
  // more than the packet.
  std::array<std::uint8_t, 16> h{};
  CHECK(erf::write_header(erf::kTypeInfiniband, 0, 0xFFFF, erf::kMaxPacket, h.data()));
  CHECK(load_be16(h.data() + 10) == 0xFFFF);
  CHECK(load_be16(h.data() + 14) == 0xFFFF);
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, 0, 0x10000, 16, h.data()));
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, 0, 0xFFFF, 0xFFFF, h.data()));
  CHECK_FALSE(erf::write_header(erf::kTypeInfiniband, 0, 20, 21, h.data()));
}
