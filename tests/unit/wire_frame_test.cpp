// RoCEv2 (IPv4, IPv6, VLAN) and RoCEv1 framing, link types, non-RoCE frames.
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <vector>

#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab::wire;

namespace {

FrameSpec write_first(bool v6, std::vector<std::uint8_t>& payload) {
  FrameSpec s;
  s.src_mac = {0x02, 0, 0, 0, 0, 0x02};
  s.dst_mac = {0x02, 0, 0, 0, 0, 0x01};
  s.src_ip = *IpAddress::parse(v6 ? "fd00::2" : "10.99.0.2");
  s.dst_ip = *IpAddress::parse(v6 ? "fd00::1" : "10.99.0.1");
  s.udp_src_port = 69;  // entropy: even the TFTP port must not matter
  s.packet.bth.opcode = 0x06;
  s.packet.bth.dest_qp = 0x1d;
  s.packet.bth.psn = 0x7565a1;
  s.packet.reth = Reth{0x55bfaf697000, 0xe2a, 3072};
  payload.assign(1021, 0x5A);  // odd size: 3 pad bytes
  s.packet.payload = payload;
  return s;
}

std::vector<std::uint8_t> encode(const FrameSpec& s) {
  std::vector<std::uint8_t> out(frame_size(s));
  REQUIRE(encode_frame(s, out) == out.size());
  return out;
}

}  // namespace

TEST_CASE("RoCEv2 over IPv4 round-trips, with lengths, checksum and ICRC filled in") {
  std::vector<std::uint8_t> payload;
  const FrameSpec s = write_first(false, payload);
  const auto bytes = encode(s);
  CHECK(bytes.size() == 14 + 20 + 8 + 12 + 16 + 1021 + 3 + 4);
  const Frame f = decode_frame(bytes, LinkType::Ethernet);
  REQUIRE_FALSE(f.error.has_value());
  CHECK(f.roce == RoceVersion::V2);
  REQUIRE(f.ipv4.has_value());
  CHECK(f.ipv4->total_length == bytes.size() - 14);
  CHECK(ipv4_checksum(Bytes(bytes).subspan(14, 20)) == 0);
  CHECK(f.udp->src_port == 69);
  CHECK(f.udp->dst_port == 4791);
  CHECK(f.src_address()->to_string() == "10.99.0.2");
  CHECK(f.ib->bth.pad_count == 3);
  CHECK(f.ib->reth == s.packet.reth);
  CHECK(f.ib->payload.size() == 1021);
  const auto check = check_icrc(f, bytes);
  REQUIRE(check.has_value());
  CHECK(check->ok());
}

TEST_CASE("RoCEv2 over IPv6 round-trips and its ICRC verifies") {
  std::vector<std::uint8_t> payload;
  FrameSpec s = write_first(true, payload);
  s.flow_label = 0xABCDE;
  s.traffic_class = 0x68;
  const auto bytes = encode(s);
  const Frame f = decode_frame(bytes, LinkType::Ethernet);
  REQUIRE_FALSE(f.error.has_value());
  REQUIRE(f.ipv6.has_value());
  CHECK(f.ipv6->flow_label == 0xABCDE);
  CHECK(f.ipv6->traffic_class == 0x68);
  CHECK(f.dst_address()->to_string() == "fd00::1");
  CHECK(check_icrc(f, bytes)->ok());
}

TEST_CASE("variant fields do not change the ICRC; invariant ones do") {
  std::vector<std::uint8_t> payload;
  const FrameSpec s = write_first(false, payload);
  auto bytes = encode(s);
  const std::uint32_t crc = load_le32(bytes.data() + bytes.size() - 4);
  auto variant = bytes;
  variant[14 + 1] = 0x02;       // ECN CE set by a switch
  variant[14 + 8] = 3;          // TTL decremented
  variant[14 + 20 + 6] = 0x12;  // UDP checksum filled in
  variant[14 + 28 + 4] = 0x80;  // BTH FECN
  const Frame fv = decode_frame(variant, LinkType::Ethernet);
  CHECK(check_icrc(fv, variant)->expected == crc);
  auto invariant = bytes;
  invariant[14 + 28 + 11] ^= 1;  // PSN
  const Frame fi = decode_frame(invariant, LinkType::Ethernet);
  CHECK_FALSE(check_icrc(fi, invariant)->ok());
}

TEST_CASE("802.1Q VLAN tag is decoded and skipped") {
  std::vector<std::uint8_t> payload;
  FrameSpec s = write_first(false, payload);
  s.vlan_tci = 0x6064;  // PCP 3, VID 100
  const auto bytes = encode(s);
  const Frame f = decode_frame(bytes, LinkType::Ethernet);
  REQUIRE_FALSE(f.error.has_value());
  CHECK(f.eth->vlan_count == 1);
  CHECK((f.eth->vlan_tci[0] & 0x0FFF) == 100);
  CHECK(f.ib->bth.psn == 0x7565a1);
  CHECK(check_icrc(f, bytes)->ok());
}

TEST_CASE("RoCEv1: ethertype 0x8915 and a GRH before the BTH") {
  std::vector<std::uint8_t> payload;
  FrameSpec s = write_first(true, payload);
  s.version = RoceVersion::V1;
  s.src_ip = *IpAddress::parse("fe80::2");
  s.dst_ip = *IpAddress::parse("fe80::1");
  const auto bytes = encode(s);
  CHECK(bytes.size() == 14 + 40 + 12 + 16 + 1024 + 4);
  const Frame f = decode_frame(bytes, LinkType::Ethernet);
  REQUIRE_FALSE(f.error.has_value());
  CHECK(f.roce == RoceVersion::V1);
  REQUIRE(f.grh.has_value());
  CHECK(f.grh->next_header == 0x1B);
  CHECK(f.grh->payload_length == 12 + 16 + 1024 + 4);
  CHECK(f.src_address()->to_string() == "fe80::2");
  CHECK(check_icrc(f, bytes)->ok());
}

TEST_CASE("Linux cooked (SLL, SLL2) and raw IP link types") {
  std::vector<std::uint8_t> payload;
  const auto eth = encode(write_first(false, payload));
  const std::vector<std::uint8_t> ip(eth.begin() + 14, eth.end());

  std::vector<std::uint8_t> sll(16, 0);
  sll[14] = 0x08;  // protocol 0x0800
  sll.insert(sll.end(), ip.begin(), ip.end());
  std::vector<std::uint8_t> sll2(20, 0);
  sll2[0] = 0x08;
  sll2.insert(sll2.end(), ip.begin(), ip.end());

  for (const auto& c : {std::pair{ip, LinkType::RawIp}, std::pair{ip, LinkType::Ipv4},
                        std::pair{sll, LinkType::LinuxSll}, std::pair{sll2, LinkType::LinuxSll2}}) {
    const std::vector<std::uint8_t>& bytes = c.first;
    const LinkType link = c.second;
    CAPTURE(int(link));
    const Frame f = decode_frame(bytes, link);
    REQUIRE_FALSE(f.error.has_value());
    CHECK(f.roce == RoceVersion::V2);
    CHECK(f.ib->bth.psn == 0x7565a1);
    CHECK(check_icrc(f, bytes)->ok());
  }
  CHECK(link_type_from_pcap(113) == LinkType::LinuxSll);
  CHECK(link_type_from_pcap(12) == LinkType::RawIp);
  CHECK_FALSE(link_type_from_pcap(105).has_value());
}

TEST_CASE("frames that are not RoCE decode without error and without IB") {
  std::vector<std::uint8_t> payload;
  auto bytes = encode(write_first(false, payload));
  SUBCASE("UDP to another port, even from source port 4791") {
    bytes[14 + 20 + 0] = 0x12;
    bytes[14 + 20 + 1] = 0xB7;  // source 4791
    bytes[14 + 20 + 2] = 0x00;
    bytes[14 + 20 + 3] = 0x35;  // destination 53
  }
  SUBCASE("TCP") {
    bytes[14 + 9] = 6;
  }
  SUBCASE("an IP fragment") {
    bytes[14 + 6] = 0x20;
  }
  SUBCASE("ARP") {
    bytes[12] = 0x08;
    bytes[13] = 0x06;
  }
  const Frame f = decode_frame(bytes, LinkType::Ethernet);
  CHECK_FALSE(f.is_roce());
  CHECK_FALSE(f.ib.has_value());
  CHECK_FALSE(f.error.has_value());
}

TEST_CASE("lengths that disagree with the bytes are malformed, not trusted") {
  std::vector<std::uint8_t> payload;
  auto bytes = encode(write_first(false, payload));
  SUBCASE("IPv4 total length beyond the frame") {
    bytes[14 + 2] = 0xFF;
    const Frame f = decode_frame(bytes, LinkType::Ethernet);
    REQUIRE(f.error.has_value());
    CHECK(f.error->kind == ErrorKind::BadLength);
    CHECK(f.error->layer == Layer::Ipv4);
  }
  SUBCASE("UDP length beyond the IP packet") {
    bytes[14 + 20 + 4] = 0xFF;
    const Frame f = decode_frame(bytes, LinkType::Ethernet);
    REQUIRE(f.error.has_value());
    CHECK(f.error->layer == Layer::Udp);
  }
  SUBCASE("IP version 5") {
    bytes[14] = 0x55;
    const Frame f = decode_frame(bytes, LinkType::Ethernet);
    REQUIRE(f.error.has_value());
    CHECK(f.error->kind == ErrorKind::BadVersion);
  }
}

TEST_CASE("a frame cut anywhere never crashes and says where it ended") {
  std::vector<std::uint8_t> payload(40, 7);
  FrameSpec s = write_first(false, payload);
  s.packet.payload = payload;
  s.vlan_tci = 5;
  const auto bytes = encode(s);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    CAPTURE(cut);
    const std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    // As a malformed frame (its own length) and as a snap-truncated one.
    const Frame bad = decode_frame(part, LinkType::Ethernet);
    CHECK(bad.error.has_value());
    const Frame snap = decode_frame(part, LinkType::Ethernet, bytes.size());
    REQUIRE(snap.error.has_value());
    CHECK(snap.error->kind == ErrorKind::SnapTruncated);
    std::uint32_t icrc = 0;
    CHECK_FALSE(detail::frame_icrc_into(snap, part, icrc));
  }
}

TEST_CASE("an IPv4 address is written as inet_ntop writes it") {
  for (const std::array<std::uint8_t, 4> a : {std::array<std::uint8_t, 4>{0, 0, 0, 0},
                                              {255, 255, 255, 255},
                                              {10, 0, 1, 250},
                                              {1, 20, 100, 9},
                                              {192, 168, 0, 1}}) {
    char buf[INET_ADDRSTRLEN] = {};
    REQUIRE(inet_ntop(AF_INET, a.data(), buf, sizeof buf) != nullptr);
    CHECK(IpAddress::from_v4(a).to_string() == buf);
  }
}
