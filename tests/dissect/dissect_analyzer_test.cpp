// The analyser on synthetic RoCEv2 conversations built with wire::encode_frame:
// the course's classic loss example, PSN wrap-around, RNR and fatal NAKs,
// multi-packet READs, CNPs, and bad bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab;
using namespace rdmalab::dissect;

namespace {

constexpr std::uint32_t kReqQp = 0x11, kRspQp = 0x22;

/// A tiny capture: frames encoded as on the wire, fed to the analyser.
class Conversation {
 public:
  /// A request from 10.0.0.2 to QP kRspQp at 10.0.0.1.
  PacketRecord& request(std::uint8_t opcode, std::uint32_t psn, std::size_t payload,
                        std::optional<wire::Reth> reth = std::nullopt) {
    wire::FrameSpec s = spec(false, opcode, kRspQp, psn);
    s.packet.reth = reth;
    if (opcode == wire::opcode::kRcFetchAdd) s.packet.atomic_eth = wire::AtomicEth{0x1000, 7, 1, 0};
    bytes_.assign(payload, 0xAB);
    s.packet.payload = bytes_;
    return feed(s);
  }
  /// A response from 10.0.0.1 to QP kReqQp at 10.0.0.2.
  PacketRecord& response(std::uint8_t opcode, std::uint32_t psn, std::uint8_t syndrome,
                         std::uint32_t msn, std::size_t payload = 0) {
    wire::FrameSpec s = spec(true, opcode, kReqQp, psn);
    if (opcode != wire::opcode::kRcReadResponseMiddle) s.packet.aeth = wire::Aeth{syndrome, msn};
    if (opcode == wire::opcode::kRcAtomicAcknowledge)
      s.packet.atomic_ack_eth = wire::AtomicAckEth{41};
    bytes_.assign(payload, 0xCD);
    s.packet.payload = bytes_;
    return feed(s);
  }
  PacketRecord& raw(std::vector<std::uint8_t> frame) {
    frame_bytes_ = std::move(frame);
    decode_record(frame_bytes_, frame_bytes_.size(), wire::LinkType::Ethernet, ++frame_, now(),
                  rec_);
    analyzer.feed(rec_);
    return rec_;
  }
  void advance(std::int64_t ns) { time_ += ns; }
  /// Time between two frames (10 µs unless set).
  void step(std::int64_t ns) { step_ = ns; }

  Analyzer analyzer;

 private:
  wire::FrameSpec spec(bool from_responder, std::uint8_t opcode, std::uint32_t dqpn,
                       std::uint32_t psn) {
    wire::FrameSpec s;
    s.src_ip = *wire::IpAddress::parse(from_responder ? "10.0.0.1" : "10.0.0.2");
    s.dst_ip = *wire::IpAddress::parse(from_responder ? "10.0.0.2" : "10.0.0.1");
    s.udp_src_port = static_cast<std::uint16_t>(0xC000 + frame_);  // entropy changes per packet
    s.packet.bth.opcode = opcode;
    s.packet.bth.dest_qp = dqpn;
    s.packet.bth.psn = psn;
    return s;
  }
  std::int64_t now() { return time_ += step_; }
  PacketRecord& feed(const wire::FrameSpec& s) {
    frame_bytes_.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, frame_bytes_) == frame_bytes_.size());
    return raw(frame_bytes_);
  }

  std::vector<std::uint8_t> bytes_, frame_bytes_;
  PacketRecord rec_;
  std::uint64_t frame_ = 0;
  std::int64_t step_ = 10'000;
  std::int64_t time_ = 1'700'000'000'000'000'000;
};

std::vector<Event> of(const PacketRecord& r, EventType t) {
  std::vector<Event> v;
  for (const Event& e : r.events)
    if (e.type == t) v.push_back(e);
  return v;
}

constexpr std::uint8_t kAck = 0x1F;

}  // namespace

TEST_CASE("the classic example: two 3072-byte WRITEs at MTU 1024, PSN 1 lost, NAK, resend 1-5") {
  using namespace wire::opcode;
  Conversation c;
  const wire::Reth reth{0x1000, 0x42, 3072};
  const std::uint8_t ops[] = {kRcWriteFirst, kRcWriteMiddle, kRcWriteLast,
                              kRcWriteFirst, kRcWriteMiddle, kRcWriteLast};
  auto send = [&](std::uint32_t psn) -> PacketRecord& {
    return c.request(ops[psn], psn, 1024, psn % 3 == 0 ? std::optional(reth) : std::nullopt);
  };
  // Frames 1-6: PSNs 0-5 pass the capture point; PSN 1 is lost after it.
  for (std::uint32_t psn = 0; psn <= 5; ++psn) CHECK(send(psn).events.empty());
  auto& nak = c.response(kRcAcknowledge, 1, 0x60, 0);  // frame 7: NAK, expected PSN 1
  REQUIRE(of(nak, EventType::NakSequence).size() == 1);
  CHECK(of(nak, EventType::NakSequence)[0].psn == 1);
  // Frames 8-12: go-back-N resends PSNs 1-5.
  for (std::uint32_t psn = 1; psn <= 5; ++psn) {
    auto& r = send(psn);
    CHECK(of(r, EventType::GoBackN).size() == (psn == 1 ? 1u : 0u));
    const auto rx = of(r, EventType::Retransmission);
    REQUIRE(rx.size() == 1);
    CHECK(rx[0].cause == Cause::Nak);
    CHECK(rx[0].psn == psn);
    CHECK(rx[0].related_frame == psn + 1);
  }
  auto& ack = c.response(kRcAcknowledge, 5, kAck, 2);  // frame 13: one ACK for both messages
  const auto acked = of(ack, EventType::AckMatched);
  REQUIRE(acked.size() == 1);
  CHECK(acked[0].psn_begin == 1);  // the NAK already acknowledged PSN 0
  CHECK(acked[0].psn == 5);
  CHECK(acked[0].count == 2);  // coalesced: both messages end in PSNs 2 and 5
  const auto sums = c.analyzer.summaries();
  REQUIRE(sums.size() == 1);
  REQUIRE(sums[0].channels.size() == 1);
  const ChannelSummary& s = sums[0].channels[0];
  CHECK(s.writes == 2);
  CHECK(s.retransmitted_packets == 5);
  CHECK(s.go_back_n == 1);
  CHECK(s.naks[0] == 1);
  CHECK(s.psn_gaps == 0);
  CHECK(s.path_mtu == 1024);
  CHECK(s.unique_payload_bytes == 6144);
  CHECK(c.analyzer.finish().empty());
}

TEST_CASE("a packet lost before the capture point shows as a PSN gap, then arrives late") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcSendOnly, 0, 8);
  auto& gap = c.request(kRcSendOnly, 2, 8);
  const auto g = of(gap, EventType::PsnGap);
  REQUIRE(g.size() == 1);
  CHECK(g[0].psn_begin == 1);
  CHECK(g[0].psn == 1);
  auto& nak = c.response(kRcAcknowledge, 1, 0x60, 1);
  CHECK(of(nak, EventType::NakSequence).size() == 1);
  auto& late = c.request(kRcSendOnly, 1, 8);
  REQUIRE(of(late, EventType::OutOfOrder).size() == 1);
  CHECK(of(late, EventType::OutOfOrder)[0].code == 0);  // a NAK asked for it
  CHECK(of(late, EventType::Retransmission).empty());
  auto& again = c.request(kRcSendOnly, 2, 8);
  CHECK(of(again, EventType::GoBackN).size() == 1);
}

TEST_CASE("PSNs wrap from 0xFFFFFF to 0 without a gap or a retransmission") {
  using namespace wire::opcode;
  Conversation c;
  for (std::uint32_t psn : {0xFFFFFEu, 0xFFFFFFu, 0u, 1u}) {
    auto& r = c.request(kRcSendOnly, psn, 64);
    CHECK(r.events.empty());
  }
  auto& ack = c.response(kRcAcknowledge, 1, kAck, 4);
  const auto acked = of(ack, EventType::AckMatched);
  REQUIRE(acked.size() == 1);
  CHECK(acked[0].psn_begin == 0xFFFFFE);
  CHECK(acked[0].count == 4);
  CHECK(c.analyzer.finish().empty());
}

TEST_CASE("a duplicate ACK and an ACK round trip") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcSendOnly, 10, 8);
  auto& a1 = c.response(kRcAcknowledge, 10, kAck, 1);
  CHECK(of(a1, EventType::AckMatched).at(0).delta_ns == 10'000);
  auto& a2 = c.response(kRcAcknowledge, 10, kAck, 1);
  REQUIRE(of(a2, EventType::DuplicateAck).size() == 1);
  CHECK(of(a2, EventType::DuplicateAck)[0].related_frame == 2);
  CHECK(c.analyzer.summaries()[0].channels[0].duplicate_acks == 1);
}

TEST_CASE("RNR NAK: the requester waits the RNR timer, then resends") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcSendOnly, 100, 64);
  auto& rnr = c.response(kRcAcknowledge, 100, wire::Aeth::rnr_nak(14), 0);  // 1.28 ms
  REQUIRE(of(rnr, EventType::RnrNak).size() == 1);
  CHECK(of(rnr, EventType::RnrNak)[0].code == 14);
  c.advance(1'280'000);
  auto& again = c.request(kRcSendOnly, 100, 64);
  const auto wait = of(again, EventType::RnrRetry);
  REQUIRE(wait.size() == 1);
  CHECK(wait[0].related_frame == 2);
  CHECK(wait[0].delta_ns == 1'290'000);
  CHECK(of(again, EventType::Retransmission).at(0).cause == Cause::Rnr);
  CHECK(c.analyzer.summaries()[0].channels[0].rnr_naks == 1);
}

TEST_CASE("a remote access error NAK is fatal, and shows in the summary") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcWriteOnly, 7, 16, wire::Reth{0x2000, 0xBAD, 16});
  auto& nak = c.response(kRcAcknowledge, 7, wire::Aeth::nak(wire::NakCode::RemoteAccessError), 0);
  REQUIRE(of(nak, EventType::NakFatal).size() == 1);
  CHECK(of(nak, EventType::NakFatal)[0].code == 2);
  CHECK(severity(EventType::NakFatal) == Severity::Error);
  CHECK(c.analyzer.summaries()[0].channels[0].naks[2] == 1);
  const auto end = c.analyzer.finish();
  REQUIRE(end.size() == 1);
  CHECK(end[0].type == EventType::Unacknowledged);
}

TEST_CASE("a 2500-byte READ at MTU 1024 takes PSNs 20..22; the next request starts at 23") {
  using namespace wire::opcode;
  Conversation c;
  // A WRITE first teaches the analyser the path MTU.
  c.request(kRcWriteFirst, 18, 1024, wire::Reth{0, 1, 2048});
  c.request(kRcWriteLast, 19, 1024);
  c.request(kRcReadRequest, 20, 0, wire::Reth{0x3000, 9, 2500});
  auto& next = c.request(kRcSendOnly, 23, 4);
  CHECK(next.events.empty());  // no PSN gap: the READ used 20..22
  c.response(kRcReadResponseFirst, 20, kAck, 1, 1024);
  c.response(kRcReadResponseMiddle, 21, 0, 0, 1024);
  auto& last = c.response(kRcReadResponseLast, 22, kAck, 2, 452);
  const auto m = of(last, EventType::ReadMatched);
  REQUIRE(m.size() == 1);
  CHECK(m[0].related_frame == 3);
  CHECK(m[0].psn_begin == 20);
  CHECK(m[0].value == 2500);
  auto& ack = c.response(kRcAcknowledge, 23, kAck, 3);
  CHECK(of(ack, EventType::AckMatched).at(0).count == 1);
  CHECK(c.analyzer.finish().empty());
}

TEST_CASE("a WRITE whose payloads do not add up to the RETH DMA length is reported") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcWriteFirst, 1, 1024, wire::Reth{0, 1, 4096});
  auto& last = c.request(kRcWriteLast, 2, 1024);
  const auto m = of(last, EventType::LengthMismatch);
  REQUIRE(m.size() == 1);
  CHECK(m[0].value == 2048);
  CHECK(m[0].count == 4096);
}

TEST_CASE("atomic: the ATOMIC ACK returns the original value") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcFetchAdd, 5, 0);
  auto& ack = c.response(kRcAtomicAcknowledge, 5, kAck, 1);
  const auto m = of(ack, EventType::AtomicMatched);
  REQUIRE(m.size() == 1);
  CHECK(m[0].value == 41);
  CHECK(m[0].related_frame == 1);
}

TEST_CASE("bad bytes: garbage on UDP 4791 and unknown opcodes are marked, never analysed") {
  using namespace wire::opcode;
  Conversation c;
  auto& ok = c.request(kRcSendOnly, 1, 4);
  std::vector<std::uint8_t> frame(ok.captured_length);
  // Rebuild a valid frame, then cut it inside the BTH.
  wire::FrameSpec s;
  s.src_ip = *wire::IpAddress::parse("10.0.0.2");
  s.dst_ip = *wire::IpAddress::parse("10.0.0.1");
  s.packet.bth.opcode = kRcSendOnly;
  std::vector<std::uint8_t> bytes(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, bytes) == bytes.size());
  auto cut = bytes;
  cut.resize(14 + 20 + 8 + 5);
  auto& bad = c.raw(cut);
  CHECK(bad.malformed());
  CHECK(of(bad, EventType::Malformed).size() == 1);
  CHECK_FALSE(describe(bad.events.at(0)).empty());

  auto unknown = bytes;
  unknown[14 + 20 + 8] = 0x1F;  // reserved RC opcode
  auto& u = c.raw(unknown);
  CHECK(of(u, EventType::UnknownOpcode).size() == 1);

  auto corrupt = bytes;
  corrupt.back() ^= 0xFF;  // the ICRC's last byte
  auto& k = c.raw(corrupt);
  CHECK(of(k, EventType::IcrcMismatch).size() == 1);

  const CaptureStats& st = c.analyzer.stats();
  CHECK(st.malformed == 1);
  CHECK(st.unknown_opcode == 1);
  CHECK(st.icrc_errors == 1);
  CHECK(st.roce == 3);  // the cut frame's IP length is wrong: malformed before RoCE
}

TEST_CASE("JSON Lines output parses and carries the required fields") {
  using namespace wire::opcode;
  Conversation c;
  auto& w = c.request(kRcWriteOnly, 0x123456, 100, wire::Reth{0xDEADBEEF00, 0x77, 100});
  std::string line;
  render_packet_json(w, line);
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  const auto j = nlohmann::json::parse(line);
  CHECK(j["frame"] == 1);
  CHECK(j["opcode"] == 0x0A);
  CHECK(j["opname"] == "RC RDMA WRITE Only");
  CHECK(j["psn"] == 0x123456);
  CHECK(j["dqpn"] == kRspQp);
  CHECK(j["src"] == "10.0.0.2");
  CHECK(j["dst"] == "10.0.0.1");
  CHECK(j["ackreq"] == false);
  CHECK(j["pkey"] == 0xFFFF);
  CHECK(j["payload_len"] == 100);
  CHECK(j["reth"]["va"] == 0xDEADBEEF00u);
  CHECK(j["reth"]["len"] == 100);
  CHECK(j["icrc"]["ok"] == true);
  CHECK(j["events"].is_array());

  auto& n = c.response(kRcAcknowledge, 0x123456, 0x60, 0);
  line.clear();
  render_packet_json(n, line);
  const auto k = nlohmann::json::parse(line);
  CHECK(k["aeth"]["syndrome"] == 0x60);
  REQUIRE(k["events"].size() == 1);
  CHECK(k["events"][0]["type"] == "nak_psn_sequence");
  CHECK(k["events"][0]["text"].get<std::string>().find("0x123456") != std::string::npos);

  std::string sum;
  render_summary_json(c.analyzer.stats(), c.analyzer.summaries(), sum);
  const auto s = nlohmann::json::parse(sum);
  CHECK(s["conversations"].size() == 1);
  CHECK(s["conversations"][0]["channels"][0]["naks"]["psn_sequence"] == 1);
}

TEST_CASE("texts exist in Chinese too") {
  Event e{EventType::Timeout, 9, 8, 0x102};
  e.delta_ns = 20'000'000;
  e.code = 12;
  e.count = 3;
  i18n::set_current(i18n::Lang::Zh);
  const std::string zh = describe(e);
  i18n::set_current(i18n::Lang::En);
  const std::string en = describe(e);
  CHECK(zh != en);
  CHECK(zh.find("超时") != std::string::npos);
  CHECK(en.find("timeout = 12") != std::string::npos);
  CHECK(en.find("20.0 ms") != std::string::npos);
}

TEST_CASE("the event table: a text for every event, a summary exactly for the expert items") {
  for (const EventInfo& row : event_table()) {
    CAPTURE(row.name);
    CHECK(row.text != nullptr);
    CHECK((row.expert == ExpertGroup::None) == (row.summary == nullptr));
    CHECK(&event_info(row.type) == &row);
  }
}

TEST_CASE("VLAN, IPv6, Linux cooked (SLL2) and RoCEv1 packets are analysed like plain RoCEv2") {
  using namespace wire::opcode;
  wire::FrameSpec s;
  s.src_ip = *wire::IpAddress::parse("fd00::2");
  s.dst_ip = *wire::IpAddress::parse("fd00::1");
  s.vlan_tci = 0x6064;  // priority 3, VLAN 100
  s.packet.bth.opcode = kRcSendOnly;
  s.packet.bth.dest_qp = 0x33;
  s.packet.bth.psn = 0x10;
  const std::vector<std::uint8_t> payload(16, 1);
  s.packet.payload = payload;
  std::vector<std::uint8_t> vlan(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, vlan) == vlan.size());

  // The same packet as `tcpdump -i any` writes it: a 20-byte SLL2 header
  // (protocol 0x86DD first) instead of Ethernet + 802.1Q.
  s.vlan_tci.reset();
  std::vector<std::uint8_t> eth(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, eth) == eth.size());
  constexpr std::array<std::uint8_t, 20> kSll2{0x86, 0xDD, 0, 0, 0, 0, 0, 2, 0, 1,
                                               0,    6,    2, 0, 0, 0, 0, 2, 0, 0};
  std::vector<std::uint8_t> sll2(kSll2.size() + eth.size() - 14);
  std::copy(kSll2.begin(), kSll2.end(), sll2.begin());
  std::copy(eth.begin() + 14, eth.end(), sll2.begin() + kSll2.size());

  Analyzer analyzer;
  PacketRecord rec;
  decode_record(vlan, vlan.size(), wire::LinkType::Ethernet, 1, 1000, rec);
  analyzer.feed(rec);
  CHECK(rec.is_roce());
  REQUIRE(rec.icrc.has_value());
  CHECK(rec.icrc->ok());
  CHECK(rec.conversation == 1);
  decode_record(sll2, sll2.size(), wire::LinkType::LinuxSll2, 2, 2000, rec);
  analyzer.feed(rec);
  CHECK(rec.is_roce());
  CHECK(rec.icrc->ok());
  CHECK(rec.conversation == 1);
  // The second copy carries the same PSN: the analyser sees a resend.
  CHECK(of(rec, EventType::Retransmission).size() == 1);
  // RoCEv1: the same transport packet after a GRH, ethertype 0x8915.
  s.version = wire::RoceVersion::V1;
  s.packet.bth.psn = 0x11;
  std::vector<std::uint8_t> v1(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, v1) == v1.size());
  decode_record(v1, v1.size(), wire::LinkType::Ethernet, 3, 3000, rec);
  analyzer.feed(rec);
  CHECK(rec.decoded.roce == wire::RoceVersion::V1);
  CHECK(rec.icrc->ok());
  CHECK(rec.conversation == 1);
  CHECK(rec.events.empty());  // PSN 0x11 follows 0x10
  CHECK(analyzer.stats().roce_v1 == 1);
  const auto sums = analyzer.summaries();
  REQUIRE(sums.size() == 1);
  CHECK(sums[0].a.addr.to_string() == "fd00::2");
  CHECK(sums[0].b.qpn == 0x33);
}

TEST_CASE("memory stays bounded: PSN spaces beyond max_channels are only counted") {
  Analyzer analyzer(AnalyzerOptions{16, 2});
  PacketRecord rec;
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t qp = 1; qp <= 3; ++qp) {
    wire::FrameSpec s;
    s.src_ip = *wire::IpAddress::parse("10.0.0.2");
    s.dst_ip = *wire::IpAddress::parse("10.0.0.1");
    s.packet.bth.opcode = wire::opcode::kRcSendOnly;
    s.packet.bth.dest_qp = qp;
    bytes.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, bytes) == bytes.size());
    decode_record(bytes, bytes.size(), wire::LinkType::Ethernet, qp, qp * 1000, rec);
    analyzer.feed(rec);
    CHECK(rec.conversation == (qp <= 2 ? qp : 0u));
  }
  CHECK(analyzer.stats().untracked == 1);
  CHECK(analyzer.summaries().size() == 2);
  // At most 16 unacknowledged packets are remembered per PSN space.
  Analyzer small(AnalyzerOptions{16, 8});
  for (std::uint32_t psn = 0; psn < 100; ++psn) {
    wire::FrameSpec s;
    s.src_ip = *wire::IpAddress::parse("10.0.0.2");
    s.dst_ip = *wire::IpAddress::parse("10.0.0.1");
    s.packet.bth.opcode = wire::opcode::kRcSendOnly;
    s.packet.bth.psn = psn;
    bytes.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, bytes) == bytes.size());
    decode_record(bytes, bytes.size(), wire::LinkType::Ethernet, psn + 1, psn * 1000, rec);
    small.feed(rec);
  }
  const auto end = small.finish();
  CHECK(end.empty());  // no response half: nothing is claimed about acknowledgement
}

TEST_CASE("every event type has a name, a severity and a text in both languages") {
  for (int t = 0; t <= static_cast<int>(EventType::UnknownOpcode); ++t) {
    for (int code : {0, 1, 2, 0x10, 0x12, 0x13, 0x14, 0x15}) {
      Event e{static_cast<EventType>(t), 7, 3, 0x10};
      // Malformed events carry a wire::ErrorKind in `code` (0..6).
      if (e.type == EventType::Malformed && code > 6) continue;
      e.code = static_cast<std::uint8_t>(code);
      e.count = 2;
      e.delta_ns = 1500;
      CAPTURE(t);
      CHECK(event_name(e.type) != "unknown");
      for (auto lang : {i18n::Lang::En, i18n::Lang::Zh}) {
        i18n::set_current(lang);
        std::string text;
        CHECK_NOTHROW(text = describe(e));
        CHECK_FALSE(text.empty());
        CHECK_FALSE(severity_label(severity(e.type)).empty());
      }
      i18n::set_current(i18n::Lang::En);
    }
  }
}

TEST_CASE("reordering without a NAK is reported as tolerated (adaptive routing)") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcSendOnly, 0, 8);
  c.request(kRcSendOnly, 2, 8);  // PSN 1 took a longer path
  auto& late = c.request(kRcSendOnly, 1, 8);
  const auto e = of(late, EventType::OutOfOrder);
  REQUIRE(e.size() == 1);
  CHECK(e[0].code == 1);
  CHECK(describe(e[0]).find("tolerated") != std::string::npos);
  auto& ack = c.response(kRcAcknowledge, 2, kAck, 3);
  CHECK(of(ack, EventType::AckMatched).at(0).count == 3);
  CHECK(c.analyzer.summaries()[0].channels[0].naks[0] == 0);
}

TEST_CASE("a reordered WRITE whose Middle overtook its First is no length mismatch") {
  // As on lab 09's leaf-spine with adaptive routing: a 0-byte WRITE at PSN
  // 1, then a 4-packet WRITE (PSNs 2..5, 4 x 1024 bytes,
  // DMA length 4096) whose Middle PSN 4 arrives first, before its First.
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcWriteOnly, 1, 0, wire::Reth{0, 1, 0});
  c.request(kRcWriteMiddle, 4, 1024);  // PSNs 2 and 3 are missing: a gap
  c.request(kRcWriteFirst, 2, 1024, wire::Reth{0, 1, 4096});
  c.request(kRcWriteMiddle, 3, 1024);
  auto& last = c.request(kRcWriteLast, 5, 1024);
  // Summed in arrival order, First + Middle 3 + Last make 3072 of 4096:
  // the packets were there, only not in order, so nothing is reported.
  CHECK(of(last, EventType::LengthMismatch).empty());
  // A message that arrives in order after the reordering is checked again.
  c.request(kRcWriteFirst, 6, 1024, wire::Reth{0, 1, 4096});
  auto& short_last = c.request(kRcWriteLast, 7, 1024);
  REQUIRE(of(short_last, EventType::LengthMismatch).size() == 1);
  CHECK(of(short_last, EventType::LengthMismatch)[0].value == 2048);
}

namespace {
// A frame from `src` to `dst` carrying `opcode` for QP `dqpn` at PSN `psn`.
std::vector<std::uint8_t> frame_for(const char* src, const char* dst, std::uint8_t opcode,
                                    std::uint32_t dqpn, std::uint32_t psn) {
  wire::FrameSpec s;
  s.src_ip = *wire::IpAddress::parse(src);
  s.dst_ip = *wire::IpAddress::parse(dst);
  s.packet.bth.opcode = opcode;
  s.packet.bth.dest_qp = dqpn;
  s.packet.bth.psn = psn;
  if (opcode == wire::opcode::kRcFetchAdd) s.packet.atomic_eth = wire::AtomicEth{0x1000, 7, 1, 0};
  if (opcode == wire::opcode::kRcAcknowledge) s.packet.aeth = wire::Aeth{0x1F, 1};
  if (opcode == wire::opcode::kRcAtomicAcknowledge) {
    s.packet.aeth = wire::Aeth{0x1F, 1};
    s.packet.atomic_ack_eth = wire::AtomicAckEth{41};
  }
  std::vector<std::uint8_t> out(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, out) == out.size());
  return out;
}

/// Feeds frames to an analyser, numbered from 1 and 1 µs apart.
class FrameFeeder {
 public:
  PacketRecord feed(const std::vector<std::uint8_t>& bytes) {
    PacketRecord r;
    ++frame_;
    decode_record(bytes, bytes.size(), wire::LinkType::Ethernet, frame_,
                  static_cast<std::int64_t>(frame_) * 1000, r);
    analyzer.feed(r);
    return r;
  }

  Analyzer analyzer;

 private:
  std::uint64_t frame_ = 0;
};
}  // namespace

TEST_CASE("two QP pairs between the same two hosts: each response joins its own PSN space") {
  using namespace wire::opcode;
  FrameFeeder f;
  Analyzer& a = f.analyzer;
  std::vector<PacketRecord> recs;
  const auto feed = [&](const std::vector<std::uint8_t>& bytes) { recs.push_back(f.feed(bytes)); };
  // Client QP 0x11 -> owner QP 0x11 at PSN 0x100; client QP 0x12 -> owner QP
  // 0x12 at PSN 0x200; both FetchAdds in flight, then both ATOMIC ACKs.
  feed(frame_for("10.0.0.2", "10.0.0.1", kRcFetchAdd, 0x11, 0x100));
  feed(frame_for("10.0.0.2", "10.0.0.1", kRcFetchAdd, 0x12, 0x200));
  feed(frame_for("10.0.0.1", "10.0.0.2", kRcAtomicAcknowledge, 0x11, 0x100));
  feed(frame_for("10.0.0.1", "10.0.0.2", kRcAtomicAcknowledge, 0x12, 0x200));
  for (const Event& e : a.finish()) CHECK(e.type != EventType::Unacknowledged);
  for (const auto& r : recs) CHECK(of(r, EventType::UnmatchedResponse).empty());
  CHECK(of(recs[2], EventType::AtomicMatched).at(0).related_frame == 1);
  CHECK(of(recs[3], EventType::AtomicMatched).at(0).related_frame == 2);
  const auto convs = a.summaries();
  REQUIRE(convs.size() == 2);
  for (const auto& v : convs) {
    REQUIRE(v.channels.size() == 1);
    CHECK(v.channels[0].requester.qpn == v.channels[0].responder.qpn);  // 0x11<->0x11, 0x12<->0x12
  }
}

// Two QPs of one host, their PSN windows overlapping: A (to responder QP
// 0x21, requester QP 0x11) starts at PSN 100, B (0x22, 0x12) at 102. They
// send in turns: A 100, B 102, A 101, B 103, A 102, B 104, A 103, then
// the ACK of PSN 103 to QP 0x11, then B's ACK of 104 to QP 0x12. When
// the first ACK comes both have PSN 103 outstanding; the request half that
// started nearest below it is B's, but A's newest request is PSN 103 and
// B's is 104: an ACK answers the newest request its requester sent, so the
// ACK joins A. A then has 4 requests and B 3, each acknowledged once.
TEST_CASE(
    "two QPs of one host with overlapping PSN windows: the ACK joins the QP whose newest request "
    "it names") {
  using namespace wire::opcode;
  FrameFeeder f;
  const auto feed = [&](const std::vector<std::uint8_t>& bytes) { f.feed(bytes); };
  for (std::uint32_t i = 0; i < 4; ++i) {
    feed(frame_for("10.0.0.2", "10.0.0.1", kRcSendOnly, 0x21, 100 + i));
    if (i < 3) feed(frame_for("10.0.0.2", "10.0.0.1", kRcSendOnly, 0x22, 102 + i));
  }
  feed(frame_for("10.0.0.1", "10.0.0.2", kRcAcknowledge, 0x11, 103));
  feed(frame_for("10.0.0.1", "10.0.0.2", kRcAcknowledge, 0x12, 104));
  const auto convs = f.analyzer.summaries();
  REQUIRE(convs.size() == 2);
  for (const auto& v : convs) {
    REQUIRE(v.channels.size() == 1);
    const ChannelSummary& c = v.channels[0];
    CAPTURE(c.responder.qpn);
    // Requester QP 0x11 with responder QP 0x21, 0x12 with 0x22.
    CHECK(c.responder.qpn == c.requester.qpn + 0x10);
    CHECK(c.request_packets == (c.responder.qpn == 0x21 ? 4U : 3U));
    CHECK(c.acks == 1);
  }
}

TEST_CASE("reordering at the start of a capture: older PSNs that come later are late, not resent") {
  using namespace wire::opcode;
  Conversation c;
  c.request(kRcWriteOnly, 9, 8, wire::Reth{0x1000, 1, 8});
  c.request(kRcWriteOnly, 10, 8, wire::Reth{0x1008, 1, 8});
  for (std::uint32_t psn = 5; psn <= 8; ++psn) {
    CAPTURE(psn);
    auto& r = c.request(kRcWriteOnly, psn, 8, wire::Reth{0x1000 + 8 * psn, 1, 8});
    CHECK(of(r, EventType::OutOfOrder).size() == 1);
    CHECK(of(r, EventType::Retransmission).empty());
    CHECK(of(r, EventType::Timeout).empty());
  }
}

// Lab 08's AR-off case in miniature, captured at the receiver's port. The
// network reorders: PSN 2 overtakes PSN 1, the responder NAKs PSN 1, and the
// requester's go-back-N resends of 1, 2, 3 are reordered too, so 2 arrives
// first and 1 after it. Frames are 100 ns apart. The rule under test
// (analyzer.cpp, reordered_go_back_n): first transmissions seen out of order
// put the tap after the reordering; there a resend that goes back behind the
// go-back-N round less than 8.192 µs after the NAK (4.096 µs × 2^1, the
// shortest local ACK timeout IBTA 9.7.6.1.3 allows) belongs to that round.
TEST_CASE("a go-back-N resend overtaken on the way is not a timeout at a receiver-side tap") {
  using namespace wire::opcode;
  auto run = [](bool reordered_originals, std::int64_t pause_before_psn1) {
    Conversation c;
    c.step(100);
    c.request(kRcSendOnly, 0, 8);
    if (reordered_originals) {
      c.request(kRcSendOnly, 2, 8);  // PSN 1 overtaken
      c.request(kRcSendOnly, 1, 8);  // frame 3: arrives late
    } else {
      c.request(kRcSendOnly, 1, 8);
      c.request(kRcSendOnly, 2, 8);
    }
    c.request(kRcSendOnly, 3, 8);
    auto& nak = c.response(kRcAcknowledge, 1, 0x60, 1);  // frame 5
    CHECK(of(nak, EventType::NakSequence).size() == 1);
    auto& first = c.request(kRcSendOnly, 2, 8);  // frame 6: the first resend seen
    CHECK(of(first, EventType::GoBackN).size() == 1);
    c.advance(pause_before_psn1);
    auto& back = c.request(kRcSendOnly, 1, 8);  // frame 7: behind the round
    std::vector<Event> out;
    for (const Event& e : back.events) out.push_back(e);
    return std::pair{out, std::string(describe(of(back, EventType::Retransmission).at(0)))};
  };
  auto only = [](const std::vector<Event>& v, EventType t) {
    return std::count_if(v.begin(), v.end(), [t](const Event& e) { return e.type == t; });
  };

  SUBCASE("reordering seen, 200 ns after the NAK: part of the go-back-N round") {
    const auto [events, text] = run(true, 0);
    CHECK(only(events, EventType::Timeout) == 0);
    const auto* rx = &*std::find_if(events.begin(), events.end(), [](const Event& e) {
      return e.type == EventType::Retransmission;
    });
    CHECK(rx->cause == Cause::Nak);
    CHECK(rx->code == 1);
    CHECK(rx->value == 5);  // the NAK's frame
    CHECK(text.find("receiver side") != std::string::npos);
  }
  SUBCASE("reordering seen, but 20 µs after the NAK: a timeout is possible, and named") {
    const auto [events, text] = run(true, 20'000);
    CHECK(only(events, EventType::Timeout) == 1);
  }
  SUBCASE("no reordering seen (a tap at the requester): a resend behind the round is a timeout") {
    const auto [events, text] = run(false, 0);
    CHECK(only(events, EventType::Timeout) == 1);
  }
}

namespace {

/// The transport packet of `s` (BTH through ICRC) on an InfiniBand link:
/// LRH from `slid` to `dlid` (local, SL 0, VL 0), ICRC and VCRC sealed.
std::vector<std::uint8_t> on_ib(const wire::FrameSpec& s, std::uint16_t slid, std::uint16_t dlid) {
  std::vector<std::uint8_t> roce(wire::frame_size(s));
  REQUIRE(wire::encode_frame(s, roce) == roce.size());
  const std::size_t bth = 14 + 20 + 8;  // Ethernet, IPv4, UDP
  std::vector<std::uint8_t> p(wire::ib::kLrhSize + roce.size() - bth + wire::ib::kVcrcSize);
  wire::ib::Lrh h;
  h.lnh = wire::ib::Lnh::Local;
  h.slid = slid;
  h.dlid = dlid;
  h.pkt_len_words = static_cast<std::uint16_t>((p.size() - wire::ib::kVcrcSize) / 4);
  wire::ib::write_lrh(h, p.data());
  std::copy(roce.begin() + bth, roce.end(), p.begin() + wire::ib::kLrhSize);
  REQUIRE(wire::ib::seal(p));
  return p;
}

}  // namespace

TEST_CASE("native InfiniBand: conversations keyed by LID, VCRC checked, counted apart") {
  wire::FrameSpec s;
  s.src_ip = *wire::IpAddress::parse("10.0.0.1");
  s.dst_ip = *wire::IpAddress::parse("10.0.0.2");
  s.packet.bth.opcode = 0x04;  // RC SEND Only, LID 7 QP ? -> LID 12 QP 0x1d
  s.packet.bth.dest_qp = 0x1d;
  s.packet.bth.psn = 0x10;
  s.packet.bth.ack_req = true;
  const std::vector<std::uint8_t> payload(64, 3);
  s.packet.payload = payload;
  const auto send = on_ib(s, 7, 12);
  wire::FrameSpec a;
  a.src_ip = s.dst_ip;
  a.dst_ip = s.src_ip;
  a.packet.bth.opcode = 0x11;  // RC ACKNOWLEDGE, back to QP 0x2e
  a.packet.bth.dest_qp = 0x2e;
  a.packet.bth.psn = 0x10;
  a.packet.aeth = wire::Aeth{kAck, 1};
  const auto ack = on_ib(a, 12, 7);
  s.packet.bth.psn = 0x11;
  auto bad = on_ib(s, 7, 12);
  bad[wire::ib::kLrhSize + 12 + 5] ^= 0x01;  // a payload bit, after both CRCs were sealed

  Analyzer analyzer;
  PacketRecord rec;
  decode_record(send, send.size(), wire::LinkType::Infiniband, 1, 1000, rec);
  analyzer.feed(rec);
  CHECK(rec.decoded.roce == wire::RoceVersion::NativeIb);
  REQUIRE(rec.icrc.has_value());
  REQUIRE(rec.vcrc.has_value());
  CHECK(rec.icrc->ok());
  CHECK(rec.vcrc->ok());
  CHECK(rec.conversation == 1);
  decode_record(ack, ack.size(), wire::LinkType::Infiniband, 2, 5000, rec);
  analyzer.feed(rec);
  CHECK(rec.conversation == 1);
  for (const Event& e : rec.events) {
    CAPTURE(event_name(e.type));
    CHECK(severity(e.type) == Severity::Info);  // the ACK answers the SEND
  }
  decode_record(bad, bad.size(), wire::LinkType::Infiniband, 3, 9000, rec);
  analyzer.feed(rec);
  CHECK(of(rec, EventType::IcrcMismatch).size() == 1);
  const auto vcrc = of(rec, EventType::VcrcMismatch);
  REQUIRE(vcrc.size() == 1);
  CHECK(describe(vcrc[0]).find("VCRC mismatch") != std::string::npos);

  const CaptureStats& st = analyzer.stats();
  CHECK(st.roce == 3);
  CHECK(st.native_ib == 3);
  CHECK(st.roce_v1 == 0);
  CHECK(st.icrc_errors == 1);
  CHECK(st.vcrc_errors == 1);
  const auto sums = analyzer.summaries();
  REQUIRE(sums.size() == 1);
  CHECK(endpoint_string(sums[0].a) == "LID 7 QP 0x00002e");
  CHECK(endpoint_string(sums[0].b) == "LID 12 QP 0x00001d");
  REQUIRE_FALSE(sums[0].channels.empty());
  CHECK(sums[0].channels[0].acks == 1);

  std::string text;
  render_packet_text(rec, 0, text);
  CHECK(text.find("InfiniBand (LRH, SL 0, VL 0)") != std::string::npos);
  CHECK(text.find("SLID       7") != std::string::npos);
  CHECK(text.find("VCRC  0x") != std::string::npos);
  CHECK(text.find("WRONG") != std::string::npos);
  std::string json;
  render_packet_json(rec, json);
  const auto j = nlohmann::json::parse(json);
  CHECK(j["roce"] == "ib");
  CHECK(j["lrh"]["slid"] == 7);
  CHECK(j["lrh"]["dlid"] == 12);
  CHECK(j["vcrc"]["ok"] == false);
}
