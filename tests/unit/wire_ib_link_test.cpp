// The native InfiniBand link layer (lib/wire ib_link): the LRH's fields sit
// where IBTA 7.7 puts them, and the VCRC and the native ICRC equal what their
// definitions give when computed the slow way, written from the text of the
// spec in ib_crc_reference.hpp (a bit-by-bit CRC-16; the packet copied, its
// variant fields set to ones, then zlib's CRC-32 and a bit-by-bit one). A
// flipped bit anywhere changes the VCRC; it changes the ICRC except in
// exactly the fields the ICRC masks.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <set>
#include <vector>

#include "ib_crc_reference.hpp"
#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/headers.hpp"
#include "rdmalab/wire/ib_link.hpp"

using namespace rdmalab;
namespace ib = rdmalab::wire::ib;

namespace {

using ibref::vcrc_bitwise;

/// The native ICRC as IBTA 7.8.1 reads: the packet copied without its ICRC,
/// its variant fields set to ones (ib_crc_reference.hpp), zlib's CRC-32.
std::uint32_t icrc_by_definition(const std::vector<std::uint8_t>& p) {
  const std::vector<std::uint8_t> covered = ibref::icrc_covered(p);
  return static_cast<std::uint32_t>(crc32_z(0, covered.data(), covered.size()));
}

/// A packet of `payload` bytes after the BTH, local (LNH 2) or global
/// (LNH 3), with its PktLen set and room for the ICRC and VCRC.
std::vector<std::uint8_t> packet(ib::Lnh lnh, std::size_t payload) {
  const std::size_t headers = 8 + (lnh == ib::Lnh::Global ? 40 : 0) + 12;
  const std::size_t len = headers + payload + 4;  // multiple of 4 when payload is
  std::vector<std::uint8_t> p(len + 2);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i * 37 + 11);
  ib::Lrh h;
  h.vl = 3;
  h.lver = 0;
  h.sl = 5;
  h.lnh = lnh;
  h.dlid = 0x0012;
  h.slid = 0x0034;
  h.pkt_len_words = static_cast<std::uint16_t>(len / 4);
  ib::write_lrh(h, p.data());
  if (lnh == ib::Lnh::Global) {
    p[8] = 0x6A;  // IPVer 6, traffic class 0xA.
    p[14] = ib::kGrhNextHeaderIba;
  }
  return p;
}

}  // namespace

TEST_CASE("LRH: every field at its IBTA 7.7 place, reserved bits ignored, round trip") {
  // VL 15 (the management VL), LVer 0, SL 0, LNH 2, DLID 0xFFFF (permissive),
  // PktLen 72 words (288 bytes), SLID 0xFFFF: what a directed-route SMP carries.
  const std::uint8_t smp[8] = {0xF0, 0x02, 0xFF, 0xFF, 0x00, 0x48, 0xFF, 0xFF};
  const auto h = ib::parse_lrh(wire::Bytes(smp, 8));
  REQUIRE(h);
  CHECK(h->vl == 15);
  CHECK(h->lver == 0);
  CHECK(h->sl == 0);
  CHECK(h->lnh == ib::Lnh::Local);
  CHECK(h->dlid == ib::kPermissiveLid);
  CHECK(h->pkt_len_words == 72);
  CHECK(h->packet_bytes() == 288);
  CHECK(h->slid == 0xFFFF);

  // The reserved bits (byte 1 bits 3:2, byte 4 bits 7:3) do not leak into fields.
  const std::uint8_t noisy[8] = {0x3A, 0x5F, 0x12, 0x34, 0xFD, 0x17, 0x56, 0x78};
  const auto n = ib::parse_lrh(wire::Bytes(noisy, 8));
  REQUIRE(n);
  CHECK(n->vl == 3);
  CHECK(n->lver == 0xA);
  CHECK(n->sl == 5);
  CHECK(n->lnh == ib::Lnh::Global);
  CHECK(n->dlid == 0x1234);
  CHECK(n->pkt_len_words == 0x517);  // 11 bits: 0b101'0001'0111
  CHECK(n->slid == 0x5678);
  std::uint8_t out[8] = {};
  ib::write_lrh(*n, out);
  const std::uint8_t clean[8] = {0x3A, 0x53, 0x12, 0x34, 0x05, 0x17, 0x56, 0x78};
  CHECK(std::vector<std::uint8_t>(out, out + 8) == std::vector<std::uint8_t>(clean, clean + 8));

  CHECK_FALSE(ib::parse_lrh(wire::Bytes(smp, 7)));
}

TEST_CASE("VCRC: the table-driven CRC-16 equals the bit-by-bit definition") {
  // Check value over the ASCII digits "123456789", from the bit-by-bit
  // definition (the usual way a CRC's parameters are pinned down).
  const std::vector<std::uint8_t> digits = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(vcrc_bitwise(digits) == 0x0A3D);
  CHECK(ib::vcrc(digits) == 0x0A3D);
  CHECK(ib::vcrc({}) == 0x0000);  // preset ones, complemented
  std::vector<std::uint8_t> data;
  for (std::size_t len = 0; len <= 600; ++len) {
    CHECK(ib::vcrc(data) == vcrc_bitwise(data));
    data.push_back(static_cast<std::uint8_t>(len * 131 + 7));
  }
}

TEST_CASE("native ICRC: equals the definition for local and global packets of every length") {
  for (const ib::Lnh lnh : {ib::Lnh::Local, ib::Lnh::Global}) {
    for (std::size_t payload = 0; payload <= 512; payload += 4) {
      std::vector<std::uint8_t> p = packet(lnh, payload);
      const std::size_t len = p.size() - 2;
      const auto ic = ib::icrc(wire::Bytes(p.data(), len));
      REQUIRE(ic);
      const std::vector<std::uint8_t> body(p.begin(), p.end() - 2);
      CHECK(*ic == icrc_by_definition(body));
      CHECK(*ic == ibref::crc32_bitwise(ibref::icrc_covered(body)));
    }
  }
  // Not a transport packet, or too short for the headers its LNH names.
  std::vector<std::uint8_t> raw = packet(ib::Lnh::Local, 8);
  raw[1] = static_cast<std::uint8_t>((raw[1] & 0xFC) | 0);
  CHECK_FALSE(ib::icrc(raw));
  std::vector<std::uint8_t> global = packet(ib::Lnh::Global, 0);
  CHECK_FALSE(ib::icrc(wire::Bytes(global.data(), 8 + 40 + 12 + 3)));
}

TEST_CASE("seal, then a flipped bit: the VCRC always sees it, the ICRC unless the bit is masked") {
  for (const ib::Lnh lnh : {ib::Lnh::Local, ib::Lnh::Global}) {
    std::vector<std::uint8_t> p = packet(lnh, 64);
    REQUIRE(ib::seal(p));
    const auto good = ib::check_crcs(p);
    REQUIRE(good);
    CHECK(good->icrc_ok());
    CHECK(good->vcrc_ok());
    CHECK(good->vcrc_on_wire == vcrc_bitwise(std::vector<std::uint8_t>(p.begin(), p.end() - 2)));

    // The bits the ICRC does not cover, from IBTA 7.8.1 (byte, mask).
    std::set<std::pair<std::size_t, std::uint8_t>> masked;
    std::size_t bth = 8;
    if (lnh == ib::Lnh::Global) {
      for (std::size_t i = 0; i < 8; ++i) masked.insert({i, 0xFF});
      masked.insert({8, 0x0F});
      for (std::size_t i = 9; i < 12; ++i) masked.insert({i, 0xFF});
      masked.insert({15, 0xFF});
      bth = 48;
    } else {
      masked.insert({0, 0xF0});
    }
    masked.insert({bth + 4, 0xFF});

    const std::size_t len = p.size() - 2;
    int icrc_blind = 0;
    for (std::size_t byte = 0; byte < len - 4; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        const auto flip = static_cast<std::uint8_t>(1u << bit);
        // PktLen's bits would move where the ICRC and VCRC are read: the
        // length bytes are left alone.
        if (byte == 4 || byte == 5) continue;
        std::vector<std::uint8_t> bad = p;
        bad[byte] ^= flip;
        const auto c = ib::check_crcs(bad);
        if (!c) {
          // Flipping LNH to 0/1 makes it a non-transport packet: no ICRC to check.
          CHECK(byte == 1);
          continue;
        }
        CHECK_MESSAGE(!c->vcrc_ok(), "byte ", byte, " bit ", bit);
        // LNH itself: the packet is then read with another layout.
        if (byte == 1 && bit < 2) continue;
        bool is_masked = false;
        for (const auto& [b, m] : masked) is_masked = is_masked || (b == byte && (m & flip) != 0);
        if (is_masked) {
          ++icrc_blind;
          CHECK_MESSAGE(c->icrc_ok(), "masked byte ", byte, " bit ", bit);
        } else {
          CHECK_MESSAGE(!c->icrc_ok(), "byte ", byte, " bit ", bit);
        }
      }
    }
    // Local: the VL nibble and the BTH's byte 4 (4 + 8 = 12 bits). Global: the
    // LRH's bytes 0-3 and 6-7 without the two LNH bits (46), the GRH's traffic
    // class, flow label and hop limit (8 + 20 + 8 = 36) and the BTH's byte 4
    // (8): 90.
    CHECK(icrc_blind == (lnh == ib::Lnh::Local ? 12 : 90));
  }
}
