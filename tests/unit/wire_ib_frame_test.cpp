// Native InfiniBand frames through decode_frame: an IB packet read from an
// ibdump capture (ERF records, link type 197) and from libpcap on an IB port
// (link type 247) decodes to the same LRH, GRH and transport; its endpoints
// are LIDs (GIDs when it has a GRH); its ICRC and VCRC verify, and a flipped
// bit is seen by the CRCs that cover it: both for a payload bit, the VCRC
// alone for the VL (which the ICRC masks). Non-transport records (ERF type
// 25, LNH 0) decode to no transport packet; short or lying records are
// errors, never reads past the bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

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
