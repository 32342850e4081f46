// Encode -> decode round trips of every opcode, and every truncation point.
#include <doctest/doctest.h>

#include <vector>

#include "rdmalab/wire/describe.hpp"
#include "rdmalab/wire/headers.hpp"

using namespace rdmalab::wire;

namespace {

IbPacket sample(const OpcodeInfo& info, const std::vector<std::uint8_t>& payload) {
  IbPacket p;
  p.bth.opcode = info.value;
  p.bth.solicited = true;
  p.bth.pkey = 0x8001;
  p.bth.dest_qp = 0xABCDEF;
  p.bth.ack_req = true;
  p.bth.psn = 0xFFFFFE;
  if (info.has(Ext::RETH)) p.reth = Reth{0x00007F0012345678, 0xDEADBEEF, 3072};
  if (info.has(Ext::AETH)) p.aeth = Aeth{0x1F, 0x123456};
  if (info.has(Ext::AtomicETH))
    p.atomic_eth = AtomicEth{0x1000, 0x42, 0x0102030405060708, 0x1112131415161718};
  if (info.has(Ext::AtomicAckETH)) p.atomic_ack_eth = AtomicAckEth{0xCAFEBABE00000001};
  if (info.has(Ext::ImmDt)) p.immdt = 0xC0DE0001;
  if (info.has(Ext::IETH)) p.ieth = 0x00001234;
  if (info.has(Ext::DETH)) p.deth = Deth{0x11111111, 0, 0x000001};
  if (info.has(Ext::XRCETH)) p.xrc_srq = 0x00ABCD;
  if (info.has(Ext::FETH)) p.feth = Feth{2, 1, 0};
  if (info.has_payload) p.payload = payload;
  return p;
}

}  // namespace

TEST_CASE("BTH fields at their bit positions") {
  Bth b;
  b.opcode = 0x0A;
  b.solicited = true;
  b.migreq = true;
  b.tver = 0;
  b.pkey = 0xFFFF;
  b.fecn = true;
  b.dest_qp = 0x000011;
  b.ack_req = true;
  b.psn = 0x7B759B;
  std::array<std::uint8_t, 12> buf{};
  Writer w(buf);
  encode_bth(b, w);
  CHECK(buf == std::array<std::uint8_t, 12>{0x0A, 0xC0, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x11, 0x80,
                                            0x7B, 0x75, 0x9B});
  Reader r(buf);
  Bth back;
  REQUIRE(decode_bth(r, back));
  CHECK(back == b);
}

TEST_CASE("AETH syndromes decode into ACK, RNR NAK and NAK codes") {
  CHECK(Aeth{0x1F, 0}.kind() == AckKind::Ack);
  CHECK(Aeth{0x1F, 0}.value() == 0x1F);
  CHECK(Aeth{0x2E, 0}.kind() == AckKind::RnrNak);
  CHECK(Aeth{0x2E, 0}.value() == 14);
  CHECK(Aeth{0x60, 0}.kind() == AckKind::Nak);
  CHECK(Aeth{0x62, 0}.value() == 2);
  CHECK(Aeth::nak(NakCode::RemoteAccessError) == 0x62);
  CHECK(Aeth::rnr_nak(14) == 0x2E);
  CHECK(describe_syndrome(0x1F) == "ACK (credits not in use)");
  CHECK(describe_syndrome(0x60) == "NAK: PSN sequence error");
  CHECK(describe_syndrome(0x63) == "NAK: remote operational error");
  CHECK(describe_syndrome(0x2E) == "RNR NAK: receiver not ready, retry after 1.28 ms");
  CHECK(describe_syndrome(0x40) == "reserved syndrome 0x40");
}

TEST_CASE("every opcode round-trips through encode and decode, with 0..5 payload bytes") {
  for (const OpcodeInfo& info : opcode_table()) {
    for (std::size_t n = 0; n <= (info.has_payload ? 5u : 0u); ++n) {
      CAPTURE(int(info.value));
      CAPTURE(n);
      std::vector<std::uint8_t> payload(n);
      for (std::size_t i = 0; i < n; ++i) payload[i] = static_cast<std::uint8_t>(0xA0 + i);
      const IbPacket p = sample(info, payload);
      std::vector<std::uint8_t> buf(ib_encoded_size(p));
      CHECK(buf.size() == kBthSize + info.ext_bytes() + n + pad_for(n) + kIcrcSize);
      Writer w(buf);
      REQUIRE(encode_ib(p, w));
      CHECK(w.offset() == buf.size());

      IbPacket q;
      const auto err = decode_ib(buf, 0, buf.size(), q);
      REQUIRE_FALSE(err.has_value());
      Bth expected_bth = p.bth;
      expected_bth.pad_count = pad_for(n);
      CHECK(q.bth == expected_bth);
      CHECK(q.reth == p.reth);
      CHECK(q.aeth == p.aeth);
      CHECK(q.atomic_eth == p.atomic_eth);
      CHECK(q.atomic_ack_eth == p.atomic_ack_eth);
      CHECK(q.immdt == p.immdt);
      CHECK(q.ieth == p.ieth);
      CHECK(q.deth == p.deth);
      CHECK(q.xrc_srq == p.xrc_srq);
      CHECK(q.feth == p.feth);
      CHECK(std::vector<std::uint8_t>(q.payload.begin(), q.payload.end()) == payload);
      CHECK(q.payload_length == n);
      CHECK(q.icrc == 0u);
    }
  }
}

TEST_CASE("a packet cut at every byte reports the layer it ended in, never reads past the end") {
  for (const OpcodeInfo& info : opcode_table()) {
    const std::vector<std::uint8_t> payload(info.has_payload ? 8 : 0, 0x55);
    const IbPacket p = sample(info, payload);
    std::vector<std::uint8_t> buf(ib_encoded_size(p));
    Writer w(buf);
    REQUIRE(encode_ib(p, w));
    const std::size_t headers_end = kBthSize + info.ext_bytes();
    for (std::size_t cut = 0; cut < buf.size(); ++cut) {
      CAPTURE(int(info.value));
      CAPTURE(cut);
      // The bytes really end at `cut` (a copy, so ASan catches any overread).
      std::vector<std::uint8_t> shortbuf(buf.begin(), buf.begin() + static_cast<long>(cut));
      IbPacket q;
      const auto err = decode_ib(shortbuf, 0, shortbuf.size(), q);
      if (cut >= headers_end + kIcrcSize && info.has_payload) {
        // Enough for headers and an ICRC: the decoder cannot know bytes are
        // missing, it sees a shorter payload. Pad count may then exceed it.
        if (err) CHECK(err->kind == ErrorKind::BadPadding);
        continue;
      }
      REQUIRE(err.has_value());
      CHECK(err->kind == ErrorKind::Truncated);
      if (cut < kBthSize) {
        CHECK(err->layer == Layer::Bth);
        CHECK(err->offset == 0);
        CHECK(err->available == cut);
      } else if (cut < headers_end) {
        // Find the extension header the cut falls in.
        std::size_t at = kBthSize;
        for (Ext e : info.exts()) {
          if (cut < at + ext_size(e)) {
            CHECK(err->layer == layer_of(e));
            CHECK(err->offset == at);
            CHECK(err->needed == ext_size(e));
            CHECK(err->available == cut - at);
            break;
          }
          at += ext_size(e);
        }
      } else {
        CHECK(err->layer == Layer::Icrc);
      }
    }
  }
}

TEST_CASE("a truncation is described in both languages") {
  const DecodeError e{ErrorKind::Truncated, Layer::Reth, 42, 16, 10};
  CHECK(describe(e) == "truncated in RETH at offset 42 (needs 16 bytes, 10 present)");
  rdmalab::i18n::set_current(rdmalab::i18n::Lang::Zh);
  CHECK(describe(e) == "RETH 在偏移 42 处被截断（需要 16 字节，只有 10 字节）");
  rdmalab::i18n::set_current(rdmalab::i18n::Lang::En);
}

// Handcrafted packets, bytes written out from IBTA 1.5 and Linux rxe_hdr.h
// (struct rxe_feth: placement type bits 3:0, selectivity bits 5:4; XRCETH: a
// reserved byte and the 24-bit XRC SRQ number). What tshark 4.0.17 (Debian
// 12) makes of these same packets: 0x1C and 0x1D are "Opcode: Unknown (28)"
// and "(29)"; 0xAA and 0xB1 are named ("Extended Reliable Connection (XRC) -
// RDMA WRITE Only", "- Acknowledge"), but for all four every byte after the
// BTH is one "Vendor Specific or Unknown Header Sequence": it decodes neither
// XRCETH, FETH, the RETH behind them, nor even the XRC ACK's AETH.
TEST_CASE("FLUSH, ATOMIC WRITE and XRC packets decode field by field") {
  SUBCASE("RC FLUSH: FETH then RETH, no payload") {
    const std::vector<std::uint8_t> buf = {
        0x1C, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x07,  // BTH
        0x00, 0x00, 0x00, 0x12,                          // FETH: SEL 1, PLT 2 (persistence)
        0x00, 0x00, 0x7F, 0x00, 0x00, 0x00, 0x10, 0x00,  // RETH VA
        0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00,  // R_Key, DMA length 4096
        0x00, 0x00, 0x00, 0x00};                         // ICRC
    IbPacket q;
    REQUIRE_FALSE(decode_ib(buf, 0, buf.size(), q).has_value());
    REQUIRE(q.feth.has_value());
    CHECK(q.feth->placement_type == 2);
    CHECK(q.feth->selectivity == 1);
    REQUIRE(q.reth.has_value());
    CHECK(q.reth->va == 0x00007F0000001000);
    CHECK(q.reth->rkey == 0x1234);
    CHECK(q.reth->dma_len == 4096);
    CHECK(q.payload_length == 0);
  }
  SUBCASE("RC ATOMIC WRITE: RETH and 8 bytes of payload") {
    const std::vector<std::uint8_t> buf = {
        0x1D, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x08,  // BTH
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,                          // RETH VA
        0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x08,  // R_Key, DMA length 8
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // the value written
        0x00, 0x00, 0x00, 0x00};                         // ICRC
    IbPacket q;
    REQUIRE_FALSE(decode_ib(buf, 0, buf.size(), q).has_value());
    REQUIRE(q.reth.has_value());
    CHECK(q.reth->dma_len == 8);
    CHECK(q.payload_length == 8);
    CHECK(q.payload[0] == 0x01);
    CHECK(q.payload[7] == 0x08);
  }
  SUBCASE("XRC RDMA WRITE Only: XRCETH before RETH") {
    const std::vector<std::uint8_t> buf = {
        0xAA, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x09,  // BTH
        0x00, 0x00, 0x0A, 0xBC,                          // XRCETH: XRC SRQ 0x000ABC
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00,  // RETH VA
        0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x04,  // R_Key, DMA length 4
        0xDE, 0xAD, 0xBE, 0xEF,                          // payload
        0x00, 0x00, 0x00, 0x00};                         // ICRC
    IbPacket q;
    REQUIRE_FALSE(decode_ib(buf, 0, buf.size(), q).has_value());
    CHECK(q.xrc_srq == 0x000ABCu);
    REQUIRE(q.reth.has_value());
    CHECK(q.reth->va == 0x3000);
    CHECK(q.reth->dma_len == 4);
    CHECK(q.payload_length == 4);
  }
  SUBCASE("XRC Acknowledge: no XRCETH, AETH right after the BTH") {
    const std::vector<std::uint8_t> buf = {0xB1, 0x00, 0xFF, 0xFF, 0x00, 0x00,
                                           0x00, 0x22, 0x00, 0x00, 0x00, 0x09,  // BTH
                                           0x1F, 0x00, 0x00, 0x03,              // AETH
                                           0x00, 0x00, 0x00, 0x00};             // ICRC
    IbPacket q;
    REQUIRE_FALSE(decode_ib(buf, 0, buf.size(), q).has_value());
    CHECK_FALSE(q.xrc_srq.has_value());
    REQUIRE(q.aeth.has_value());
    CHECK(q.aeth->msn == 3);
  }
}

TEST_CASE("unknown opcodes keep the rest as raw payload") {
  std::vector<std::uint8_t> buf = {0x40, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0,
                                   0,    1, 1,    2,    3, 4, 5, 6, 7, 8};
  IbPacket q;
  const auto err = decode_ib(buf, 0, buf.size(), q);
  REQUIRE(err.has_value());
  CHECK(err->kind == ErrorKind::UnknownOpcode);
  CHECK(q.bth.psn == 1);
  CHECK(q.payload.size() == 8);
}

TEST_CASE("pad count larger than the bytes after the headers is malformed") {
  // SEND Only, PadCnt 3, no payload: only the ICRC follows.
  std::vector<std::uint8_t> buf = {0x04, 0x30, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 1, 9, 9, 9, 9};
  IbPacket q;
  const auto err = decode_ib(buf, 0, buf.size(), q);
  REQUIRE(err.has_value());
  CHECK(err->kind == ErrorKind::BadPadding);
}

TEST_CASE("snap-length truncation is told apart from a malformed packet") {
  const std::vector<std::uint8_t> payload(1024, 1);  // outlives p, whose payload is a view of it
  const IbPacket p = sample(*find_opcode(0x0A), payload);
  std::vector<std::uint8_t> buf(ib_encoded_size(p));
  Writer w(buf);
  REQUIRE(encode_ib(p, w));
  // Only the headers and 100 payload bytes were captured.
  std::vector<std::uint8_t> snap(buf.begin(), buf.begin() + 12 + 16 + 100);
  IbPacket q;
  const auto err = decode_ib(snap, 0, buf.size(), q);
  REQUIRE(err.has_value());
  CHECK(err->kind == ErrorKind::SnapTruncated);
  CHECK(err->layer == Layer::Payload);
  CHECK(q.reth == p.reth);
  CHECK(q.payload_length == 1024);
  CHECK(q.payload.size() == 100);
  CHECK_FALSE(q.icrc.has_value());
}
