// Native InfiniBand frames through decode_frame: an IB packet read from an
// ibdump capture (ERF records, link type 197) and from libpcap on an IB port
// (link type 247) decodes to the same LRH, GRH and transport; its endpoints
// are LIDs (GIDs when it has a GRH); its ICRC and VCRC verify, and a flipped
// bit is seen by the CRCs that cover it: both for a payload bit, the VCRC
// alone for the VL (which the ICRC masks). Non-transport records (ERF type
// 25, LNH 0) decode to no transport packet; short or lying records are
// errors, never reads past the bytes. encode_frame builds such packets from
// a FrameSpec (LRH, GRH, the transport as RoCE carries it, ICRC, VCRC): each
// field where IBTA puts it, decoded back, CRCs as the spec defines them
// (ib_crc_reference.hpp) and broken by any one bit flipped.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ib_crc_reference.hpp"
#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab::wire;

namespace {

constexpr std::uint16_t kSlid = 7, kDlid = 12;

/// An RC SEND Only of `payload` bytes from LID 7 to LID 12 (QP 0x1d, PSN
/// 0x10), SL 3 on VL 2, local (LNH 2) or global (LNH 3, GIDs fe80::7 and
/// fe80::c), LRH through VCRC, both CRCs sealed. The transport bytes come
/// from encode_frame's RoCEv2 frame (BTH, payload, pad, ICRC).
std::vector<std::uint8_t> ib_packet(bool global, std::size_t payload_bytes) {
  FrameSpec s;
  s.src_ip = *IpAddress::parse("10.0.0.1");
  s.dst_ip = *IpAddress::parse("10.0.0.2");
  s.packet.bth.opcode = 0x04;  // RC SEND Only
  s.packet.bth.dest_qp = 0x1d;
  s.packet.bth.psn = 0x10;
  s.packet.bth.ack_req = true;
  const std::vector<std::uint8_t> payload(payload_bytes, 0xA5);
  s.packet.payload = payload;
  std::vector<std::uint8_t> roce(frame_size(s));
  REQUIRE(encode_frame(s, roce) == roce.size());
  const std::size_t bth = 14 + 20 + 8;
  const std::vector<std::uint8_t> transport(roce.begin() + bth, roce.end());

  const std::size_t headers = ib::kLrhSize + (global ? ib::kGrhSize : 0);
  std::vector<std::uint8_t> p(headers + transport.size() + ib::kVcrcSize);
  ib::Lrh h;
  h.vl = 2;
  h.sl = 3;
  h.lnh = global ? ib::Lnh::Global : ib::Lnh::Local;
  h.dlid = kDlid;
  h.slid = kSlid;
  h.pkt_len_words = static_cast<std::uint16_t>((headers + transport.size()) / 4);
  ib::write_lrh(h, p.data());
  if (global) {
    Grh g;
    g.payload_length = static_cast<std::uint16_t>(transport.size());
    g.next_header = ib::kGrhNextHeaderIba;
    g.hop_limit = 1;
    g.sgid = IpAddress::parse("fe80::7")->bytes;
    g.dgid = IpAddress::parse("fe80::c")->bytes;
    encode_grh_at(g, p.data() + ib::kLrhSize);
  }
  std::copy(transport.begin(), transport.end(), p.begin() + static_cast<std::ptrdiff_t>(headers));
  REQUIRE(ib::seal(p));
  return p;
}

/// `packet` as one ERF record of `type`, as ibdump writes it.
std::vector<std::uint8_t> erf_record(const std::vector<std::uint8_t>& packet,
                                     std::uint8_t type = erf::kTypeInfiniband) {
  std::vector<std::uint8_t> r(erf::kHeaderSize + packet.size());
  REQUIRE(erf::write_header(type, 1'000'000'123, packet.size(), r.data()));
  std::copy(packet.begin(), packet.end(), r.begin() + erf::kHeaderSize);
  return r;
}

void check_send(const Frame& f, bool global) {
  REQUIRE_FALSE(f.error.has_value());
  CHECK(f.roce == RoceVersion::NativeIb);
  CHECK(f.is_roce());
  REQUIRE(f.lrh.has_value());
  CHECK(f.lrh->vl == 2);
  CHECK(f.lrh->sl == 3);
  CHECK(f.lrh->dlid == kDlid);
  CHECK(f.lrh->slid == kSlid);
  CHECK_FALSE(f.eth.has_value());
  CHECK_FALSE(f.ipv4.has_value());
  REQUIRE(f.ib.has_value());
  CHECK(f.ib->bth.opcode == 0x04);
  CHECK(f.ib->bth.dest_qp == 0x1d);
  CHECK(f.ib->bth.psn == 0x10);
  CHECK(f.ib->payload.size() == 64);
  if (global) {
    REQUIRE(f.grh.has_value());
    CHECK(f.src_address()->to_string() == "fe80::7");
    CHECK(f.dst_address()->to_string() == "fe80::c");
  } else {
    CHECK_FALSE(f.grh.has_value());
    CHECK(f.src_address()->to_string() == "LID 7");
    CHECK(f.dst_address()->to_string() == "LID 12");
    CHECK(f.src_address() != f.dst_address());
    // A LID is not an IPv4 or IPv6 address that happens to end in it.
    CHECK(*f.src_address() != IpAddress::parse("::7"));
  }
}

}  // namespace

TEST_CASE("a native IB packet decodes the same from ERF (197) and from link type 247") {
  for (const bool global : {false, true}) {
    CAPTURE(global);
    const auto p = ib_packet(global, 64);
    const Frame raw = decode_frame(p, LinkType::Infiniband);
    check_send(raw, global);
    const auto rec = erf_record(p);
    const Frame erf = decode_frame(rec, LinkType::Erf);
    check_send(erf, global);
    CHECK(erf.erf_type == erf::kTypeInfiniband);
    // The same transport at an offset 16 bytes further.
    CHECK(erf.bth_offset == raw.bth_offset + erf::kHeaderSize);
    CHECK(erf.ib->bth.psn == raw.ib->bth.psn);

    for (const auto& [bytes, f] : {std::pair{Bytes(p), raw}, std::pair{Bytes(rec), erf}}) {
      const auto icrc = check_icrc(f, bytes);
      const auto vcrc = check_vcrc(f, bytes);
      REQUIRE(icrc.has_value());
      REQUIRE(vcrc.has_value());
      CHECK(icrc->ok());
      CHECK(vcrc->ok());
    }
  }
}

TEST_CASE("a flipped bit: both CRCs see a payload bit, only the VCRC sees the VL") {
  const auto good = ib_packet(false, 64);
  auto payload_bit = good;
  payload_bit[8 + 12 + 10] ^= 0x04;  // inside the payload
  Frame f = decode_frame(payload_bit, LinkType::Infiniband);
  CHECK_FALSE(check_icrc(f, payload_bit)->ok());
  CHECK_FALSE(check_vcrc(f, payload_bit)->ok());

  auto vl_bit = good;
  vl_bit[0] ^= 0x10;  // VL 2 -> 3: a switch may change it, the ICRC masks it
  f = decode_frame(vl_bit, LinkType::Infiniband);
  CHECK(f.lrh->vl == 3);
  CHECK(check_icrc(f, vl_bit)->ok());
  CHECK_FALSE(check_vcrc(f, vl_bit)->ok());
}

TEST_CASE("set_vl: a hop moves the packet to another VL, the VCRC follows, the ICRC stays") {
  // What a switch's SL-to-VL table does on the way out: VL 2 -> 5; the
  // LRH's other bits, the transport and the ICRC as they were, the VCRC
  // recomputed over the new VL.
  const auto good = ib_packet(false, 64);
  auto moved = good;
  REQUIRE(ib::set_vl(moved, 5));
  const Frame f = decode_frame(moved, LinkType::Infiniband);
  CHECK(f.lrh->vl == 5);
  CHECK(f.lrh->sl == 3);
  CHECK(check_icrc(f, moved)->ok());
  CHECK(check_vcrc(f, moved)->ok());
  CHECK((moved[0] & 0x0F) == (good[0] & 0x0F));
  CHECK(std::equal(moved.begin() + 1, moved.end() - ib::kVcrcSize, good.begin() + 1));
  // Back to VL 2: the packet it was, byte for byte.
  REQUIRE(ib::set_vl(moved, 2));
  CHECK(moved == good);
  // Too short for its PktLen and the VCRC: refused, nothing written.
  auto cut = good;
  cut.pop_back();
  const auto before = cut;
  CHECK_FALSE(ib::set_vl(cut, 5));
  CHECK(cut == before);
}

TEST_CASE("IB records that hold no transport packet, and bad ones") {
  const auto p = ib_packet(false, 64);
  SUBCASE("ERF type 25, an IB link packet (flow control): no transport") {
    const auto rec = erf_record(p, erf::kTypeInfinibandLink);
    const Frame f = decode_frame(rec, LinkType::Erf);
    CHECK_FALSE(f.error.has_value());
    CHECK(f.erf_type == erf::kTypeInfinibandLink);
    CHECK_FALSE(f.is_roce());
    CHECK_FALSE(f.ib.has_value());
  }
  SUBCASE("LNH 0, a raw packet: the LRH only") {
    auto raw = p;
    raw[1] = static_cast<std::uint8_t>(raw[1] & ~0x03);
    const Frame f = decode_frame(raw, LinkType::Infiniband);
    CHECK_FALSE(f.error.has_value());
    REQUIRE(f.lrh.has_value());
    CHECK(f.lrh->lnh == ib::Lnh::Raw);
    CHECK_FALSE(f.is_roce());
    CHECK_FALSE(check_vcrc(f, raw).has_value());
  }
  SUBCASE("an ERF header cut short") {
    const auto rec = erf_record(p);
    const Frame f = decode_frame(Bytes(rec).first(10), LinkType::Erf);
    REQUIRE(f.error.has_value());
    CHECK(f.error->layer == Layer::Erf);
    CHECK_FALSE(f.is_roce());
  }
  SUBCASE("fewer bytes than an LRH") {
    const Frame f = decode_frame(Bytes(p).first(5), LinkType::Infiniband);
    REQUIRE(f.error.has_value());
    CHECK(f.error->layer == Layer::Lrh);
    CHECK(f.error->kind == ErrorKind::Truncated);
  }
  SUBCASE("a PktLen longer than the packet: a bad length, nothing read past it") {
    auto longer = p;
    ib::Lrh h = *ib::parse_lrh(longer);
    h.pkt_len_words = static_cast<std::uint16_t>(h.pkt_len_words + 8);
    ib::write_lrh(h, longer.data());
    const Frame f = decode_frame(longer, LinkType::Infiniband);
    REQUIRE(f.error.has_value());
    CHECK(f.error->layer == Layer::Lrh);
    CHECK(f.error->kind == ErrorKind::BadLength);
  }
  SUBCASE("cut by the snap length: decoded as far as the bytes go, CRCs not checked") {
    const Frame f = decode_frame(Bytes(p).first(8 + 12 + 20), LinkType::Infiniband, p.size());
    REQUIRE(f.error.has_value());
    CHECK(f.error->kind == ErrorKind::SnapTruncated);
    CHECK(f.roce == RoceVersion::NativeIb);
    CHECK_FALSE(check_vcrc(f, Bytes(p).first(8 + 12 + 20)).has_value());
  }
  CHECK(link_type_from_pcap(197) == LinkType::Erf);
  CHECK(link_type_from_pcap(247) == LinkType::Infiniband);
}

// ------------------------------------------------- encode_frame on an IB link

namespace {

/// An RC RDMA WRITE First from LID 7 to LID 12 on an InfiniBand link, SL 5
/// on VL 1: QP 0x123, PSN 0xABCDE, a RETH, 61 bytes of payload (3 of pad).
/// Global: GRH from fe80::7 to fe80::c, traffic class 0x28, flow label
/// 0x12345, hop limit 7. The spec points at `payload`, which must outlive it.
FrameSpec ib_spec(bool global, const std::vector<std::uint8_t>& payload) {
  FrameSpec s;
  s.link_layer = LinkLayer::Infiniband;
  s.vl = 1;
  s.sl = 5;
  s.dlid = kDlid;
  s.slid = kSlid;
  s.ib_global = global;
  s.src_ip = *IpAddress::parse("fe80::7");
  s.dst_ip = *IpAddress::parse("fe80::c");
  s.traffic_class = 0x28;
  s.flow_label = 0x12345;
  s.hop_limit = 7;
  s.packet.bth.opcode = 0x06;  // RC RDMA WRITE First
  s.packet.bth.dest_qp = 0x123;
  s.packet.bth.psn = 0xABCDE;
  s.packet.reth = Reth{0x7f00'1234'5000, 0xabcd, 4096};
  s.packet.payload = payload;
  return s;
}

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return v;
}

std::vector<std::uint8_t> encode(const FrameSpec& s) {
  std::vector<std::uint8_t> out(frame_size(s));
  REQUIRE(!out.empty());
  REQUIRE(encode_frame(s, out) == out.size());
  return out;
}

}  // namespace

TEST_CASE("encode_frame on an IB link: LRH, GRH and transport decode back, both CRCs right") {
  const std::vector<std::uint8_t> payload = pattern(61);
  for (const bool global : {false, true}) {
    CAPTURE(global);
    const FrameSpec s = ib_spec(global, payload);
    const std::vector<std::uint8_t> p = encode(s);
    // By hand: LRH 8, GRH 40 when global, BTH 12, RETH 16, payload 61, pad
    // 3, ICRC 4: 104 or 144 bytes, PktLen 26 or 36 words; then the VCRC, 2.
    CHECK(p.size() == (global ? 146u : 106u));
    // LRH: VL 1 | LVer 0; SL 5 | LNH 2 or 3; DLID 12; PktLen; SLID 7.
    const std::vector<std::uint8_t> lrh = {
        0x10, static_cast<std::uint8_t>(global ? 0x53 : 0x52), 0x00, 0x0C,
        0x00, static_cast<std::uint8_t>(global ? 36 : 26),     0x00, 0x07};
    CHECK(std::vector<std::uint8_t>(p.begin(), p.begin() + 8) == lrh);
    if (global) {
      // IPVer 6 | TClass 0x28 | FlowLabel 0x12345 = 0x62812345; PayLen 96
      // (BTH through ICRC); next header 0x1B; hop limit 7.
      const std::vector<std::uint8_t> grh = {0x62, 0x81, 0x23, 0x45, 0x00, 0x60, 0x1B, 0x07};
      CHECK(std::vector<std::uint8_t>(p.begin() + 8, p.begin() + 16) == grh);
    }
    const std::size_t bth = global ? 48 : 8;
    CHECK(p[bth + 1] == 0x30);  // SE 0, MigReq 0, PadCnt 3, TVer 0

    const Frame f = decode_frame(p, LinkType::Infiniband);
    REQUIRE_FALSE(f.error.has_value());
    CHECK(f.roce == RoceVersion::NativeIb);
    CHECK_FALSE(f.eth.has_value());
    CHECK_FALSE(f.ipv4.has_value());
    CHECK_FALSE(f.udp.has_value());
    REQUIRE(f.lrh.has_value());
    CHECK(f.lrh->vl == 1);
    CHECK(f.lrh->lver == 0);
    CHECK(f.lrh->sl == 5);
    CHECK(f.lrh->lnh == (global ? ib::Lnh::Global : ib::Lnh::Local));
    CHECK(f.lrh->dlid == kDlid);
    CHECK(f.lrh->slid == kSlid);
    CHECK(f.lrh->packet_bytes() == p.size() - ib::kVcrcSize);
    CHECK(f.bth_offset == bth);
    CHECK(f.ib_end == p.size() - ib::kVcrcSize);
    if (global) {
      REQUIRE(f.grh.has_value());
      CHECK(f.grh->ip_version == 6);
      CHECK(f.grh->traffic_class == 0x28);
      CHECK(f.grh->flow_label == 0x12345);
      CHECK(f.grh->payload_length == 96);
      CHECK(f.grh->next_header == ib::kGrhNextHeaderIba);
      CHECK(f.grh->hop_limit == 7);
      CHECK(f.src_address()->to_string() == "fe80::7");
      CHECK(f.dst_address()->to_string() == "fe80::c");
    } else {
      CHECK_FALSE(f.grh.has_value());
      CHECK(f.src_address()->to_string() == "LID 7");
      CHECK(f.dst_address()->to_string() == "LID 12");
    }
    REQUIRE(f.ib.has_value());
    Bth expected = s.packet.bth;
    expected.pad_count = 3;  // encode_frame computes it
    CHECK(f.ib->bth == expected);
    CHECK(f.ib->reth == s.packet.reth);
    CHECK(std::vector<std::uint8_t>(f.ib->payload.begin(), f.ib->payload.end()) == payload);
    CHECK(f.ib->payload_length == 61);

    const auto c = ib::check_crcs(p);
    REQUIRE(c.has_value());
    CHECK(c->icrc_ok());
    CHECK(c->vcrc_ok());
    CHECK(check_icrc(f, p)->ok());
    CHECK(check_vcrc(f, p)->ok());

    // Any one bit flipped, anywhere from the LRH to the VCRC: a receiver's
    // check fails. Either a CRC differs, or the packet can no longer be
    // checked at all (an LNH of 0 or 1, a PktLen past the bytes or too short
    // for the headers), which a receiver drops as well.
    std::size_t bits = 0, checkable = 0;
    for (std::size_t byte = 0; byte < p.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<std::uint8_t> bad = p;
        bad[byte] ^= static_cast<std::uint8_t>(1u << bit);
        const auto b = ib::check_crcs(bad);
        CHECK_MESSAGE(!(b && b->icrc_ok() && b->vcrc_ok()), "byte ", byte, " bit ", bit);
        ++bits;
        checkable += b ? 1u : 0u;
      }
    }
    CHECK(bits == p.size() * 8);
    // Which cannot be checked, by hand. LNH 2 (0b10): flipping bit 1 gives 0,
    // bit 0 gives 3 (a GRH read from the BTH: checkable). LNH 3: bit 1 gives
    // 1, bit 0 gives 2. PktLen (11 bits, bytes 4-5): a clear bit set makes
    // the packet at least 4 bytes longer than its bytes: 26 = 0b000'0001'1010
    // has 8 clear bits, 36 = 0b000'0010'0100 has 9. A set bit cleared
    // shortens it: 24, 18 or 10 words, all long enough for LRH + BTH + ICRC
    // (24 bytes); 32 words, or 4 (16 bytes, shorter than the 64 of LRH + GRH
    // + BTH + ICRC: unchecked).
    const std::size_t unchecked = global ? 1 + 9 + 1 : 1 + 8;
    CHECK(checkable == bits - unchecked);
  }
}

TEST_CASE("encode_frame on an IB link: the ICRC and VCRC equal the IBTA definitions bit by bit") {
  // The reference CRC-32 gives the CRC-32 check value over "123456789".
  CHECK(ibref::crc32_bitwise({'1', '2', '3', '4', '5', '6', '7', '8', '9'}) == 0xCBF43926u);
  for (const bool global : {false, true}) {
    for (std::size_t n = 0; n <= 70; ++n) {
      CAPTURE(global);
      CAPTURE(n);
      const std::vector<std::uint8_t> payload = pattern(n);
      const FrameSpec s = ib_spec(global, payload);
      const std::vector<std::uint8_t> p = encode(s);
      const std::size_t len = p.size() - ib::kVcrcSize;  // LRH through ICRC
      const std::vector<std::uint8_t> body(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(len));
      CHECK(load_le32(&p[len - 4]) == ibref::crc32_bitwise(ibref::icrc_covered(body)));
      CHECK((p[len] | p[len + 1] << 8) == ibref::vcrc_bitwise(body));
      // compute_icrc = false: the same packet with both CRCs left zero.
      FrameSpec fast = s;
      fast.compute_icrc = false;
      std::vector<std::uint8_t> q = encode(fast);
      REQUIRE(q.size() == p.size());
      CHECK(std::all_of(q.end() - 6, q.end(), [](std::uint8_t b) { return b == 0; }));
      std::copy(p.end() - 6, p.end(), q.end() - 6);
      CHECK(q == p);
    }
  }
}

TEST_CASE(
    "the same transport on RoCE and on an IB link: only the headers before it and the CRCs "
    "differ") {
  const std::vector<std::uint8_t> payload = pattern(61);
  const FrameSpec ib_local = ib_spec(false, payload);
  const std::vector<std::uint8_t> local = encode(ib_local);
  FrameSpec v2 = ib_local;
  v2.link_layer = LinkLayer::Ethernet;
  v2.version = RoceVersion::V2;
  v2.src_ip = *IpAddress::parse("10.0.0.1");
  v2.dst_ip = *IpAddress::parse("10.0.0.2");
  const std::vector<std::uint8_t> roce = encode(v2);
  // BTH through payload and pad: from 14 + 20 + 8 in the RoCEv2 frame, from
  // the LRH's 8 in the IB packet, to the ICRC (4 bytes, and the IB packet's
  // 2-byte VCRC after it).
  const std::vector<std::uint8_t> roce_transport(roce.begin() + 42, roce.end() - 4);
  const std::vector<std::uint8_t> ib_transport(local.begin() + 8, local.end() - 6);
  CHECK(roce_transport.size() == 12 + 16 + 61 + 3);
  CHECK(ib_transport == roce_transport);
  CHECK(load_le32(&roce[roce.size() - 4]) != load_le32(&local[local.size() - 6]));

  // A global IB packet and a RoCEv1 frame with the same GRH: RoCE's ICRC
  // begins with eight 0xFF bytes in place of the LRH, and a global packet's
  // ICRC masks its whole LRH to ones (IBTA 7.8.1), the GRH's variant fields
  // alike in both. So from the GRH through the ICRC the bytes are the same,
  // the ICRC included.
  const std::vector<std::uint8_t> global = encode(ib_spec(true, payload));
  FrameSpec v1 = ib_spec(true, payload);
  v1.link_layer = LinkLayer::Ethernet;
  v1.version = RoceVersion::V1;
  const std::vector<std::uint8_t> roce_v1 = encode(v1);
  REQUIRE(roce_v1.size() == 14 + 40 + 96);
  REQUIRE(global.size() == 8 + 40 + 96 + 2);
  CHECK(std::vector<std::uint8_t>(roce_v1.begin() + 14, roce_v1.end()) ==
        std::vector<std::uint8_t>(global.begin() + 8, global.end() - 2));
}

TEST_CASE("encode_frame on an IB link refuses what an LRH cannot describe") {
  // An RC SEND Only, local: LRH 8 + BTH 12 + payload + pad + ICRC 4 must fit
  // PktLen's 2047 words (8188 bytes): 8164 bytes of payload do, 8165 (with
  // 3 of pad: 8192) do not.
  FrameSpec s = ib_spec(false, {});
  s.packet.reth.reset();
  s.packet.bth.opcode = 0x04;
  const std::vector<std::uint8_t> big(8165, 0x11);
  s.packet.payload = Bytes(big).first(8164);
  CHECK(frame_size(s) == 8188 + 2);
  std::vector<std::uint8_t> out(8190);
  CHECK(encode_frame(s, out) == 8190);
  CHECK(ib::parse_lrh(out)->pkt_len_words == 2047);
  CHECK(ib::check_crcs(out)->icrc_ok());
  s.packet.payload = big;
  CHECK(frame_size(s) == 0);
  out.resize(8194);
  CHECK(encode_frame(s, out) == 0);
  // A buffer one byte short, and an unknown opcode.
  s.packet.payload = Bytes(big).first(8);
  out.assign(frame_size(s) - 1, 0);
  CHECK(encode_frame(s, out) == 0);
  s.packet.bth.opcode = 0x1F;  // reserved: IBTA 1.5 defines RC opcodes up to 0x1D
  CHECK(frame_size(s) == 0);
}
