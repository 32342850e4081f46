// rdma_cm connection set-up: CM REQ/REP/RTU MADs on QP 1 are decoded and
// linked to the conversation they open.
#include <doctest/doctest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/mad.hpp"
#include "rdmalab/wire/mtu.hpp"

using namespace rdmalab;
using namespace rdmalab::dissect;
using wire::cm::Attr;

namespace {

void be(std::vector<std::uint8_t>& m, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    m[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * (bytes - 1 - i)));
}

/// A 256-byte CM MAD (IBTA 13.4.2 header + 12.6.5/12.6.8 layouts).
std::vector<std::uint8_t> mad(Attr kind, std::uint32_t local_id, std::uint32_t remote_id,
                              std::uint32_t qpn, std::uint32_t psn) {
  std::vector<std::uint8_t> m(256, 0);
  m[0] = 1;     // base version
  m[1] = 0x07;  // CM class
  m[2] = 2;
  m[3] = 0x03;  // Send
  be(m, 8, 0x1122334455667788ULL, 8);
  be(m, 16, static_cast<std::uint16_t>(kind), 2);
  be(m, 24, local_id, 4);
  be(m, 28, remote_id, 4);
  if (kind == Attr::Req) {
    be(m, 24 + 8, 0x0106000000004321ULL, 8);  // service ID (RDMA_PS_TCP, port)
    be(m, 24 + 32, (std::uint64_t{qpn} << 8) | 1, 4);
    be(m, 24 + 44, (std::uint64_t{psn} << 8) | (0x17 << 3) | 6, 4);  // retry_cnt 6
    m[24 + 50] = (3 << 4) | 7;                                       // MTU 1024, rnr_retry 7
  } else if (kind == Attr::Rep) {
    be(m, 24 + 12, std::uint64_t{qpn} << 8, 4);
    be(m, 24 + 20, std::uint64_t{psn} << 8, 4);
  }
  return m;
}

struct Wire {
  Analyzer analyzer;
  PacketRecord rec;
  std::vector<std::uint8_t> bytes;
  std::uint64_t frame = 0;
  /// Native InfiniBand (link type 247) instead of RoCEv2: the same transport
  /// bytes behind an LRH, from LID = the IPv4 address's last byte to the
  /// destination's, VCRC and ICRC sealed.
  bool native = false;

  void to_native_ib(const wire::FrameSpec& s) {
    const std::size_t eth_ip_udp = 14 + 20 + 8;
    const std::vector<std::uint8_t> transport(bytes.begin() + eth_ip_udp, bytes.end());
    std::vector<std::uint8_t> p(wire::ib::kLrhSize + transport.size() + wire::ib::kVcrcSize);
    wire::ib::Lrh h;
    h.lnh = wire::ib::Lnh::Local;
    h.slid = s.src_ip.v4_bytes()[3];
    h.dlid = s.dst_ip.v4_bytes()[3];
    h.pkt_len_words = static_cast<std::uint16_t>((wire::ib::kLrhSize + transport.size()) / 4);
    wire::ib::write_lrh(h, p.data());
    std::copy(transport.begin(), transport.end(),
              p.begin() + static_cast<std::ptrdiff_t>(wire::ib::kLrhSize));
    REQUIRE(wire::ib::seal(p));
    bytes = std::move(p);
  }

  PacketRecord& send(const char* src, const char* dst, std::uint8_t opcode, std::uint32_t dqpn,
                     std::uint32_t psn, std::vector<std::uint8_t> payload = {}) {
    wire::FrameSpec s;
    s.src_ip = *wire::IpAddress::parse(src);
    s.dst_ip = *wire::IpAddress::parse(dst);
    s.packet.bth.opcode = opcode;
    s.packet.bth.dest_qp = dqpn;
    s.packet.bth.psn = psn;
    if (opcode == wire::opcode::kUdSendOnly) s.packet.deth = wire::Deth{0x80010000, 0, 1};
    if (opcode == wire::opcode::kRcWriteOnly) s.packet.reth = wire::Reth{0x1000, 1, 8};
    if (opcode == wire::opcode::kRcAcknowledge) s.packet.aeth = wire::Aeth{0x1F, 1};
    s.packet.payload = payload;
    bytes.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, bytes) == bytes.size());
    if (native) to_native_ib(s);
    ++frame;
    decode_record(bytes, bytes.size(),
                  native ? wire::LinkType::Infiniband : wire::LinkType::Ethernet, frame,
                  static_cast<std::int64_t>(frame) * 1000, rec);
    analyzer.feed(rec);
    return rec;
  }
};

}  // namespace

TEST_CASE("wire::cm::decode reads a REQ and a REP written by hand, and refuses other classes") {
  const auto req_mad = mad(Attr::Req, 0xA1, 0, 0x000123, 0xABCDEF);
  const auto req_msg = wire::cm::decode(req_mad);
  REQUIRE(req_msg.has_value());
  CHECK(wire::cm::attr_of(*req_msg) == Attr::Req);
  const auto& req = std::get<wire::cm::Req>(*req_msg);
  CHECK(req.local_comm_id == 0xA1);
  CHECK(req.qpn == 0x123);
  CHECK(req.starting_psn == 0xABCDEF);
  CHECK(req.retry_count == 6);
  CHECK(req.rnr_retry_count == 7);
  CHECK(wire::mtu_bytes(req.path_mtu) == 1024);
  CHECK(req.service_id == 0x0106000000004321ULL);
  const auto rep_mad = mad(Attr::Rep, 0xB2, 0xA1, 0x000456, 0x123456);
  const auto rep_msg = wire::cm::decode(rep_mad);
  REQUIRE(rep_msg.has_value());
  const auto& rep = std::get<wire::cm::Rep>(*rep_msg);
  CHECK(rep.remote_comm_id == 0xA1);
  CHECK(rep.qpn == 0x456);
  CHECK(rep.starting_psn == 0x123456);
  auto other = mad(Attr::Req, 1, 0, 1, 1);
  other[1] = 0x04;  // performance management class
  CHECK_FALSE(wire::cm::decode(other).has_value());
  CHECK_FALSE(wire::cm::decode(std::vector<std::uint8_t>(20, 1)).has_value());
}

TEST_CASE("REQ, REP, RTU open a conversation whose QPNs and first PSNs are known") {
  using namespace wire::opcode;
  Wire w;
  auto& req =
      w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 1, 0, mad(Attr::Req, 0xA1, 0, 0x123, 0x100));
  REQUIRE(req.cm.has_value());
  REQUIRE(req.events.size() == 1);
  CHECK(req.events[0].type == EventType::CmHandshake);
  CHECK(describe(req.events[0]).find("0x000123") != std::string::npos);

  auto& rep =
      w.send("10.0.0.1", "10.0.0.2", kUdSendOnly, 1, 0, mad(Attr::Rep, 0xB2, 0xA1, 0x456, 0x900));
  REQUIRE(rep.events.size() == 1);
  CHECK(rep.events[0].related_frame == 1);
  CHECK(rep.conversation == 1);
  std::string json;  // (the record is reused by the next packet)
  render_packet_json(rep, json);
  CHECK(json.find("\"cm\":{\"type\":\"REP\"") != std::string::npos);
  const auto ends = w.analyzer.endpoints(1);
  REQUIRE(ends.has_value());
  CHECK(ends->first.qpn_known);
  CHECK(ends->second.qpn_known);

  auto& rtu = w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 1, 0, mad(Attr::Rtu, 0xA1, 0xB2, 0, 0));
  CHECK(wire::cm::attr_of(*rtu.cm) == Attr::Rtu);

  // Each side announced the PSN its own receive queue expects: requests from
  // the REQ's side start at the REP's PSN, and the other way round.
  auto& first =
      w.send("10.0.0.2", "10.0.0.1", kRcWriteOnly, 0x456, 0x900, std::vector<std::uint8_t>(8));
  CHECK(first.conversation == 1);
  REQUIRE(first.events.size() == 1);
  CHECK(first.events[0].type == EventType::CmLinked);
  CHECK(first.events[0].related_frame == 2);
  CHECK(first.events[0].value == 0x900);
  CHECK(describe(first.events[0]).find("as announced") != std::string::npos);

  auto& other_way =
      w.send("10.0.0.1", "10.0.0.2", kRcWriteOnly, 0x123, 0x101, std::vector<std::uint8_t>(8));
  CHECK(other_way.conversation == 1);
  REQUIRE(other_way.events.size() == 1);
  CHECK(other_way.events[0].type == EventType::CmLinked);
  CHECK(other_way.events[0].related_frame == 1);
  CHECK(describe(other_way.events[0]).find("announced 0x000100") != std::string::npos);

  const auto sums = w.analyzer.summaries();
  REQUIRE(sums.size() == 1);
  CHECK(sums[0].channels.size() == 2);
}

TEST_CASE("management datagrams on QP 0 and QP 1 are named in one line, CM and SA alike") {
  // An SMP: the SM asks a port for its SMInfo (class 0x81 directed route,
  // Get, attribute 0x0020), on QP 0; an SA PathRecord answer (class 0x03,
  // GetResp, 0x0035), and a CM REQ (class 0x07), on QP 1. UD packets to
  // other QPs carry no MAD.
  using namespace wire::opcode;
  Wire w;
  auto smp = mad(Attr::Req, 1, 0, 1, 1);
  smp[1] = 0x81;
  smp[3] = 0x01;
  be(smp, 16, 0x0020, 2);
  be(smp, 20, 0x00000001, 4);
  auto& s = w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 0, 0, smp);
  REQUIRE(s.mad.has_value());
  CHECK_FALSE(s.cm.has_value());
  CHECK(s.mad->mgmt_class == 0x81);
  CHECK(s.mad->attr_modifier == 1);
  CHECK(s.mad->transaction_id == 0x1122334455667788ULL);
  i18n::set_current(i18n::Lang::En);
  std::string text;
  render_packet_text(s, s.time_ns, text);
  CHECK(text.find("MAD  management datagram: SubnGet(SMInfo)") != std::string::npos);
  CHECK(text.find("TID        0x1122334455667788") != std::string::npos);
  std::string json;
  render_packet_json(s, json);
  const auto doc = nlohmann::json::parse(json);
  CHECK(doc["mad"]["class"] == 0x81);
  CHECK(doc["mad"]["method"] == 1);
  CHECK(doc["mad"]["attr_id"] == 0x20);
  CHECK(doc["mad"]["tid"] == 0x1122334455667788ULL);
  CHECK(doc["mad"]["summary"] == "SubnGet(SMInfo)");

  auto sa = mad(Attr::Req, 1, 0, 1, 1);
  sa[1] = 0x03;
  sa[3] = 0x81;
  be(sa, 16, 0x0035, 2);
  auto& p = w.send("10.0.0.1", "10.0.0.2", kUdSendOnly, 1, 1, sa);
  REQUIRE(p.mad.has_value());
  CHECK(wire::mad::summary(*p.mad) == "SubnAdmGetResp(PathRecord)");
  CHECK_FALSE(p.cm.has_value());

  auto& req =
      w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 1, 2, mad(Attr::Req, 0xA1, 0, 0x123, 0x100));
  REQUIRE(req.mad.has_value());
  REQUIRE(req.cm.has_value());
  CHECK(wire::mad::summary(*req.mad) == "CM: ConnectRequest");

  auto& other = w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 0x42, 3, smp);
  CHECK_FALSE(other.mad.has_value());
}

TEST_CASE("over native InfiniBand the CM links its conversation too, keyed by LID") {
  // The handshake of the RoCE case above between LID 2 (10.0.0.2) and
  // LID 1, as an IB port's capture holds it: REQ (QP 0x123, PSN 0x100),
  // REP (QP 0x456, PSN 0x900), RTU, then the first WRITE, which starts at
  // the REP's PSN.
  using namespace wire::opcode;
  Wire w;
  w.native = true;
  auto& req =
      w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 1, 0, mad(Attr::Req, 0xA1, 0, 0x123, 0x100));
  REQUIRE(req.decoded.roce == wire::RoceVersion::NativeIb);
  REQUIRE(req.cm.has_value());
  REQUIRE(req.mad.has_value());
  CHECK(req.vcrc.has_value());
  CHECK(req.vcrc->ok());
  auto& rep =
      w.send("10.0.0.1", "10.0.0.2", kUdSendOnly, 1, 0, mad(Attr::Rep, 0xB2, 0xA1, 0x456, 0x900));
  CHECK(rep.conversation == 1);
  w.send("10.0.0.2", "10.0.0.1", kUdSendOnly, 1, 0, mad(Attr::Rtu, 0xA1, 0xB2, 0, 0));
  auto& first =
      w.send("10.0.0.2", "10.0.0.1", kRcWriteOnly, 0x456, 0x900, std::vector<std::uint8_t>(8));
  CHECK(first.conversation == 1);
  REQUIRE(first.events.size() == 1);
  CHECK(first.events[0].type == EventType::CmLinked);
  CHECK(first.events[0].related_frame == 2);
  const auto ends = w.analyzer.endpoints(1);
  REQUIRE(ends.has_value());
  CHECK(ends->first.addr.to_string() == "LID 2");
  CHECK(ends->second.addr.to_string() == "LID 1");
  CHECK(ends->first.qpn == 0x123);
  CHECK(ends->second.qpn == 0x456);
}
