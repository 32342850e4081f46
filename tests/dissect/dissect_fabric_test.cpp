// What a capture of a whole fabric holds, built with the wire library: CE
// marks, CNPs and the requester's rate around them (DCQCN seen from the
// wire), 802.1Qbb / 802.3x pause frames, and thousands of QP pairs between
// two hosts. Every number checked is derived in the comments from the
// timeline the test writes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/pause.hpp"

using namespace rdmalab;
using namespace rdmalab::dissect;

namespace {

constexpr std::uint32_t kReqQp = 0x11, kRspQp = 0x22;
constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
constexpr std::int64_t kUs = 1000;

/// A capture fed frame by frame at times the test chooses (ns after kT0).
class Capture {
 public:
  explicit Capture(AnalyzerOptions opt = {}) : analyzer(opt) {}

  /// A SEND Only of 1000 payload bytes from 10.0.0.2 to QP kRspQp; `ce`
  /// sets the IP ECN field to 11 (CE), otherwise 10 (ECT(0)), as RoCE NICs send.
  PacketRecord& request(std::uint32_t psn, std::int64_t t, bool ce = false,
                        std::uint32_t rsp_qp = kRspQp) {
    wire::FrameSpec s = spec(false, wire::opcode::kRcSendOnly, rsp_qp, psn);
    s.traffic_class = ce ? 3 : 2;
    payload_.assign(1000, 0xAB);
    s.packet.payload = payload_;
    return feed(s, t);
  }
  PacketRecord& ack(std::uint32_t psn, std::int64_t t, std::uint32_t req_qp = kReqQp) {
    wire::FrameSpec s = spec(true, wire::opcode::kRcAcknowledge, req_qp, psn);
    s.packet.aeth = wire::Aeth{0x1F, psn + 1};
    return feed(s, t);
  }
  /// InfiniBand's congestion bits: a request with FECN, an ACK with BECN.
  PacketRecord& fecn_request(std::uint32_t psn, std::int64_t t) {
    wire::FrameSpec s = spec(false, wire::opcode::kRcSendOnly, kRspQp, psn);
    s.packet.bth.fecn = true;
    return feed(s, t);
  }
  PacketRecord& becn_ack(std::uint32_t psn, std::int64_t t) {
    wire::FrameSpec s = spec(true, wire::opcode::kRcAcknowledge, kReqQp, psn);
    s.packet.aeth = wire::Aeth{0x1F, psn + 1};
    s.packet.bth.becn = true;
    return feed(s, t);
  }
  /// A READ of `len` bytes from QP kReqQp to QP kRspQp, ECT(0).
  PacketRecord& read_request(std::uint32_t psn, std::uint32_t len, std::int64_t t) {
    wire::FrameSpec s = spec(false, wire::opcode::kRcReadRequest, kRspQp, psn);
    s.traffic_class = 2;
    s.packet.reth = wire::Reth{0x1000, 1, len};
    s.packet.bth.ack_req = true;
    return feed(s, t);
  }
  /// A READ response of 1000 bytes to QP kReqQp, ECT(0) or, with `ce`, CE.
  PacketRecord& read_response(std::uint8_t opcode, std::uint32_t psn, std::int64_t t, bool ce) {
    wire::FrameSpec s = spec(true, opcode, kReqQp, psn);
    s.traffic_class = ce ? 3 : 2;
    if (opcode != wire::opcode::kRcReadResponseMiddle) s.packet.aeth = wire::Aeth{0x1F, 1};
    payload_.assign(1000, 0xCD);
    s.packet.payload = payload_;
    return feed(s, t);
  }
  /// A CNP from the requester's host to the responder QP, whose READ
  /// responses were marked.
  PacketRecord& cnp_to_responder(std::int64_t t) {
    wire::FrameSpec s = spec(false, wire::opcode::kCnp, kRspQp, 0);
    return feed(s, t);
  }
  /// A CNP from the responder's host to the requester QP.
  PacketRecord& cnp(std::int64_t t, std::uint32_t req_qp = kReqQp) {
    wire::FrameSpec s = spec(true, wire::opcode::kCnp, req_qp, 0);
    return feed(s, t);
  }
  PacketRecord& pause(const wire::PauseFrame& p, std::int64_t t) {
    bytes_.assign(60, 0);
    REQUIRE(wire::encode_pause(p, bytes_) == 60);
    decode_record(bytes_, bytes_.size(), wire::LinkType::Ethernet, ++frame_, kT0 + t, rec_);
    analyzer.feed(rec_);
    return rec_;
  }
  /// The size of a request frame on the capture (what the rate counts).
  static std::size_t request_size() {
    wire::FrameSpec s;
    s.packet.bth.opcode = wire::opcode::kRcSendOnly;
    std::vector<std::uint8_t> p(1000);
    s.packet.payload = p;
    return wire::frame_size(s);
  }

  Analyzer analyzer;

 private:
  static wire::FrameSpec spec(bool from_responder, std::uint8_t opcode, std::uint32_t dqpn,
                              std::uint32_t psn) {
    wire::FrameSpec s;
    s.src_ip = *wire::IpAddress::parse(from_responder ? "10.0.0.1" : "10.0.0.2");
    s.dst_ip = *wire::IpAddress::parse(from_responder ? "10.0.0.2" : "10.0.0.1");
    s.packet.bth.opcode = opcode;
    s.packet.bth.dest_qp = dqpn;
    s.packet.bth.psn = psn;
    return s;
  }
  PacketRecord& feed(const wire::FrameSpec& s, std::int64_t t) {
    bytes_.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, bytes_) == bytes_.size());
    decode_record(bytes_, bytes_.size(), wire::LinkType::Ethernet, ++frame_, kT0 + t, rec_);
    analyzer.feed(rec_);
    return rec_;
  }

  std::vector<std::uint8_t> payload_, bytes_;
  PacketRecord rec_;
  std::uint64_t frame_ = 0;
};

std::vector<Event> of(const std::vector<Event>& v, EventType t) {
  std::vector<Event> r;
  for (const Event& e : v)
    if (e.type == t) r.push_back(e);
  return r;
}

}  // namespace

TEST_CASE("CE marks, paced CNPs and a requester that halves its rate") {
  // The timeline (times in µs, W = the 100 µs rate window):
  //   requests n = 0..199 every 1 µs (t = n), then n = 200..399 every 2 µs
  //   (t = 200 + 2k, k = n - 200): the requester halves its packet rate at
  //   t = 200. An ACK for PSN 0 at t = 0.5 gives the channel its responses.
  //   CE on n = 160..249: 90 marks.
  //   CNPs at t = 199.5, 249.5, 299.5, 339.5: gaps 50, 50, 40 µs, so the
  //   smallest is 40 µs and the median (the middle of 40, 50, 50) 50 µs.
  // CE -> CNP, from the first CE mark after the previous CNP:
  //   160 -> 199.5 = 39.5; 200 (n = 200) -> 249.5 = 49.5;
  //   250 (n = 225) -> 299.5 = 49.5; none after that (n >= 250 unmarked).
  //   Median of {39.5, 49.5, 49.5} = 49.5 µs.
  // Requests in the W before / after each CNP:
  //   199.5: [99.5, 199.5) n = 100..199: 100 | [199.5, 299.5) k = 0..49: 50
  //   249.5: n = 150..199 and k = 0..24: 75  | k = 25..74: 50
  //   299.5: k = 0..49: 50                   | k = 50..99: 50
  //   339.5: k = 20..69: 50                  | k = 70..119: 50
  //   medians (the upper middle of four): before 75, after 50 packets.
  Capture cap;
  std::vector<Event> events;
  const std::vector<std::int64_t> cnps{199'500, 249'500, 299'500, 339'500};
  std::size_t next_cnp = 0;
  for (std::uint32_t n = 0; n < 400; ++n) {
    const std::int64_t t = n < 200 ? n * kUs : (200 + 2 * (std::int64_t{n} - 200)) * kUs;
    while (next_cnp < cnps.size() && cnps[next_cnp] < t) {
      PacketRecord& r = cap.cnp(cnps[next_cnp++]);
      CHECK(r.conversation == 1);
      CHECK(of(r.events, EventType::Cnp).size() == 1);
    }
    const bool ce = n >= 160 && n < 250;
    PacketRecord& r = cap.request(n, t, ce);
    CHECK(of(r.events, EventType::EcnMarked).size() == (ce ? 1u : 0u));
    if (n == 0) cap.ack(0, 500);
  }
  events = cap.analyzer.finish();
  const auto convs = cap.analyzer.summaries();
  REQUIRE(convs.size() == 1);
  REQUIRE(convs[0].channels.size() == 1);
  const ChannelSummary& c = convs[0].channels[0];
  CHECK(c.ecn_ce == 90);
  CHECK(c.cnps == 4);
  CHECK(c.cnp_interval_min_ns == 40 * kUs);
  CHECK(c.cnp_interval_median_ns == 50 * kUs);
  CHECK(c.ce_to_cnp_median_ns == 49'500);
  CHECK(c.rate_cnps == 4);
  const double bits = static_cast<double>(Capture::request_size() * 8);
  CHECK(c.rate_before_cnp_bps == doctest::Approx(75 * bits / 100e-6));
  CHECK(c.rate_after_cnp_bps == doctest::Approx(50 * bits / 100e-6));
  // The rate series: 100 µs bins from t = 0 while the last request (t = 598)
  // falls in bin 5 < 64: bins of 100 requests (0..99, 100..199), then 50
  // each (t = 200..298, ..., 500..598).
  CHECK(c.rate_bin_ns == 100 * kUs);
  const auto sz = static_cast<std::uint64_t>(Capture::request_size());
  CHECK(c.rate_bytes ==
        std::vector<std::uint64_t>{100 * sz, 100 * sz, 50 * sz, 50 * sz, 50 * sz, 50 * sz});
  // Findings: the CNPs are paced (90 marks, 4 CNPs), the rate fell.
  const auto paced = of(events, EventType::CnpPaced);
  REQUIRE(paced.size() == 1);
  CHECK(paced[0].delta_ns == 50 * kUs);
  CHECK(paced[0].value == 40 * kUs);
  CHECK(paced[0].count == 90);
  CHECK(of(events, EventType::CnpNoSlowdown).empty());
  CHECK(of(events, EventType::CeWithoutCnp).empty());
  i18n::set_current(i18n::Lang::En);
  CHECK(describe(paced[0]).find("paced at ~50") != std::string::npos);

  std::string json;
  render_summary_json(cap.analyzer.stats(), convs, json);
  const auto doc = nlohmann::json::parse(json);
  const auto& ch = doc["conversations"][0]["channels"][0];
  CHECK(ch["ecn_ce"] == 90);
  CHECK(ch["cnp_interval_min_ns"] == 40'000);
  CHECK(ch["cnp_interval_median_ns"] == 50'000);
  CHECK(ch["ce_to_cnp_median_ns"] == 49'500);
  CHECK(ch["rate"]["bytes"].size() == 6);
}
TEST_CASE("the rate series of a quiet channel: the bins the latest request needs, whenever asked") {
  // The series starts with 100 µs bins (the rate window) and doubles them
  // until the latest request falls in one of 64; a request stamped before
  // the first counts in bin 0. The analyser keeps a channel's first 64
  // requests as they came and bins them on the 65th, or when asked for a
  // summary; the bins must be the same either way. Each request is one
  // frame of request_size() bytes.
  constexpr std::int64_t kMs = 1000 * kUs;
  Capture cap;
  std::uint32_t psn = 0;
  const auto sz = static_cast<std::uint64_t>(Capture::request_size());
  auto bins = [&]() {
    const auto convs = cap.analyzer.summaries();
    REQUIRE(convs.size() == 1);
    REQUIRE(convs[0].channels.size() == 1);
    return std::pair{convs[0].channels[0].rate_bin_ns, convs[0].channels[0].rate_bytes};
  };
  auto expect = [&](std::size_t n,
                    std::initializer_list<std::pair<std::size_t, std::uint64_t>> at) {
    std::vector<std::uint64_t> v(n, 0);
    for (const auto& [i, requests] : at) v[i] = requests * sz;
    return v;
  };
  // 1. Five requests at 0, 1 ms, 30 ms, -0.5 ms and 102.4 ms. 102.4 ms is
  //    1024 bins of 100 µs: four doublings make it bin 64 of 1.6 ms, one
  //    past the last, so a fifth makes 3.2 ms bins and puts it in bin 32.
  //    Bin 0: 0, 1 ms and -0.5 ms; bin 9: 30 ms (9.375).
  for (const std::int64_t t : {0 * kMs, 1 * kMs, 30 * kMs, -kMs / 2, 102'400 * kUs})
    cap.request(psn++, t);
  auto [width, bytes] = bins();
  CHECK(width == 3200 * kUs);
  CHECK(bytes == expect(33, {{0, 3}, {9, 1}, {32, 1}}));
  // 2. 62 more, at 102.4 ms + k * 1.6 ms (k = 1..62); the 65th request in
  //    all (k = 60) bins the first 64. The latest, 201.6 ms, is bin 63 of
  //    3.2 ms: floor((102.4 + 1.6 k) / 3.2) = 32 + floor(k / 2), so k = 1
  //    joins 102.4 ms in bin 32, k = 2m and 2m + 1 share bin 32 + m
  //    (m = 1..30) and k = 62 is alone in bin 63.
  for (std::int64_t k = 1; k <= 62; ++k) cap.request(psn++, 102'400 * kUs + k * 1600 * kUs);
  std::tie(width, bytes) = bins();
  CHECK(width == 3200 * kUs);
  std::vector<std::uint64_t> want = expect(64, {{0, 3}, {9, 1}, {32, 2}, {63, 1}});
  for (std::size_t i = 33; i <= 62; ++i) want[i] = 2 * sz;
  CHECK(bytes == want);
  // 3. One at 400 ms: bin 125 of 3.2 ms, so the bins double to 6.4 ms and
  //    pairs merge (bin 9 makes 4; bins 32..61 make 16..30 of 4 requests;
  //    bins 62 and 63 make 31, of 3) and it lands in bin 62 (62.5).
  cap.request(psn++, 400 * kMs);
  std::tie(width, bytes) = bins();
  CHECK(width == 6400 * kUs);
  want = expect(63, {{0, 3}, {4, 1}, {31, 3}, {62, 1}});
  for (std::size_t i = 16; i <= 30; ++i) want[i] = 4 * sz;
  CHECK(bytes == want);
  std::uint64_t total = 0;
  for (const std::uint64_t b : bytes) total += b;
  CHECK(total == 68 * sz);
}

TEST_CASE("CNPs before a channel's first response join it when the hosts leave no doubt") {
  // A NIC sends CNPs for the marked packets of a message long before that
  // message's ACK, and a CNP names the requester's QP, which no request
  // carries. One requester QP 0x11 at 10.0.0.2 sends PSN 0..9 to QP 0x22 at
  // t = 0..9 µs, CE on PSN 2..5; CNPs at 3.5 and 6.5 µs; the one ACK, for
  // PSN 9, at 12 µs. The only request half from 10.0.0.2 to 10.0.0.1 that
  // waits for its responses takes both CNPs: 2 CNPs 3 µs apart, CE -> CNP
  // 1.5 µs (PSN 2 at 2 -> 3.5) and 2.5 µs (PSN 4 at 4 -> 6.5, the first mark
  // after the previous CNP), the requester end learnt from the first CNP,
  // and the ACK then joins the same channel.
  Capture cap;
  std::int64_t next_cnp = 3'500;
  for (std::uint32_t n = 0; n < 10; ++n) {
    const std::int64_t t = n * kUs;
    if (next_cnp < t) {
      PacketRecord& r = cap.cnp(next_cnp);
      CHECK(r.conversation == 1);
      next_cnp = next_cnp == 3'500 ? 6'500 : 1'000'000;
    }
    cap.request(n, t, n >= 2 && n <= 5);
  }
  CHECK(cap.ack(9, 12 * kUs).conversation == 1);
  // Marks answered by CNPs: no "CE without CNP" finding.
  CHECK(of(cap.analyzer.finish(), EventType::CeWithoutCnp).empty());
  const auto convs = cap.analyzer.summaries();
  REQUIRE(convs.size() == 1);
  REQUIRE(convs[0].channels.size() == 1);
  const ChannelSummary& c = convs[0].channels[0];
  CHECK(c.requester.qpn == kReqQp);
  CHECK(c.ecn_ce == 4);
  CHECK(c.cnps == 2);
  CHECK(c.cnp_interval_min_ns == 3 * kUs);
  CHECK(c.ce_to_cnp_median_ns == 2'500);  // the upper middle of 1.5 and 2.5 µs
  CHECK(cap.analyzer.stats().cnps_unattributed == 0);

  // Two requester QPs on 10.0.0.2, to QPs 0x22 (PSN 0..) and 0x23 (PSN
  // 1000..), neither answered yet: a CNP to QP 0x12 could belong to either
  // and is counted apart. Once an ACK to QP 0x11 has claimed the first
  // channel (its PSN 0 is outstanding there), one unknown requester is
  // left, and the next CNP to 0x12 joins its channel.
  Capture two;
  two.request(0, 0);
  two.request(1000, 1 * kUs, true, 0x23);
  CHECK(two.cnp(2 * kUs, 0x12).conversation == 0);
  CHECK(two.analyzer.stats().cnps_unattributed == 1);
  CHECK(two.ack(0, 3 * kUs).conversation == 1);
  CHECK(two.cnp(4 * kUs, 0x12).conversation == 2);
  CHECK(of(two.analyzer.finish(), EventType::CeWithoutCnp).empty());
  const auto both = two.analyzer.summaries();
  REQUIRE(both.size() == 2);
  CHECK(both[0].channels[0].cnps == 0);
  CHECK(both[1].channels[0].cnps == 1);
  CHECK(both[1].channels[0].requester.qpn == 0x12);
  CHECK(two.analyzer.stats().cnps_unattributed == 1);
  std::string text;
  i18n::set_current(i18n::Lang::En);
  render_summary_text(two.analyzer.stats(), both, text);
  CHECK(text.find("CNPs not attributed: 1") != std::string::npos);
  std::string json;
  render_summary_json(two.analyzer.stats(), both, json);
  CHECK(nlohmann::json::parse(json)["capture"]["cnps_unattributed"] == 1);
}

TEST_CASE(
    "CE-marked READ responses and the CNP to the responder's QP belong to the READ's channel") {
  // A READ's data flows back from the responder, so its marks are on the
  // READ responses and its CNP goes from the requester's host to the
  // responder's QP. QP 0x11 at 10.0.0.2 READs 3000 bytes from QP 0x22 at
  // 10.0.0.1 at t = 0; the responses PSN 0, 1, 2 arrive at 1, 2, 3 µs, the
  // last two CE-marked; the requester's NIC answers PSN 1's mark with a CNP
  // to QP 0x22 at 2.5 µs. One channel (0x11 -> 0x22) holds it all: 2 CE
  // marks, 1 CNP, CE -> CNP 0.5 µs, nothing unattributed, and no "CE
  // without CNP".
  Capture cap;
  cap.read_request(0, 3000, 0);
  CHECK(cap.read_response(wire::opcode::kRcReadResponseFirst, 0, 1 * kUs, false).channel == 0);
  PacketRecord& marked = cap.read_response(wire::opcode::kRcReadResponseMiddle, 1, 2 * kUs, true);
  CHECK(marked.conversation == 1);
  CHECK(marked.channel == 0);
  PacketRecord& cnp = cap.cnp_to_responder(2'500);
  CHECK(cnp.conversation == 1);
  CHECK(cnp.channel == 0);
  cap.read_response(wire::opcode::kRcReadResponseLast, 2, 3 * kUs, true);
  CHECK(of(cap.analyzer.finish(), EventType::CeWithoutCnp).empty());
  const auto convs = cap.analyzer.summaries();
  REQUIRE(convs.size() == 1);
  REQUIRE(convs[0].channels.size() == 1);
  const ChannelSummary& c = convs[0].channels[0];
  CHECK(c.requester.qpn == kReqQp);
  CHECK(c.responder.qpn == kRspQp);
  CHECK(c.reads == 1);
  CHECK(c.ecn_ce == 2);
  CHECK(c.cnps == 1);
  CHECK(c.ce_to_cnp_median_ns == 500);
  CHECK(cap.analyzer.stats().cnps_unattributed == 0);
}

TEST_CASE("FECN and BECN, InfiniBand's congestion notification, counted per channel") {
  // PSN 0..5, FECN on 1, 2 and 4 (three marks); ACKs for each, BECN on the
  // ACKs of 2 and 4 (two echoes). A CNP carries BECN too, but is counted
  // in cnps, not in becn.
  Capture cap;
  for (std::uint32_t n = 0; n < 6; ++n) {
    if (n == 1 || n == 2 || n == 4)
      cap.fecn_request(n, n * 2 * kUs);
    else
      cap.request(n, n * 2 * kUs);
    if (n == 2 || n == 4)
      cap.becn_ack(n, n * 2 * kUs + kUs);
    else
      cap.ack(n, n * 2 * kUs + kUs);
  }
  cap.cnp(20 * kUs);
  CHECK(of(cap.analyzer.finish(), EventType::CeWithoutCnp).empty());
  const auto convs = cap.analyzer.summaries();
  REQUIRE(convs.size() == 1);
  const ChannelSummary& c = convs[0].channels[0];
  CHECK(c.fecn == 3);
  CHECK(c.becn == 2);
  CHECK(c.cnps == 1);
  std::string text;
  i18n::set_current(i18n::Lang::En);
  render_summary_text(cap.analyzer.stats(), convs, text);
  CHECK(text.find("FECN/BECN: 3 request(s) marked FECN on the way, 2 response(s) carrying BECN") !=
        std::string::npos);
  std::string json;
  render_summary_json(cap.analyzer.stats(), convs, json);
  const auto ch = nlohmann::json::parse(json)["conversations"][0]["channels"][0];
  CHECK(ch["fecn"] == 3);
  CHECK(ch["becn"] == 2);
}

TEST_CASE("a CNP is named in decode output and the ECN field is in the JSON") {
  Capture cap;
  cap.request(0, 0, true);
  cap.ack(0, kUs);
  PacketRecord& r = cap.cnp(2 * kUs);
  std::string line;
  render_packet_json(r, line);
  const auto j = nlohmann::json::parse(line);
  CHECK(j["opname"] == "CNP CNP");
  CHECK(j["ecn"] == 0);  // this CNP was written with traffic class 0: not ECN-capable
  CHECK(j["events"][0]["type"] == "cnp");
  line.clear();
  render_packet_json(cap.request(1, 3 * kUs, true), line);
  CHECK(nlohmann::json::parse(line)["ecn"] == 3);
}

TEST_CASE("CE marks without CNPs; CNPs without a slower sender") {
  SUBCASE("the receiver never answers the marks") {
    // 20 requests 1 µs apart, all CE-marked, each ACKed: responses are in
    // the capture, CNPs are not.
    Capture cap;
    for (std::uint32_t n = 0; n < 20; ++n) {
      cap.request(n, n * kUs, true);
      cap.ack(n, n * kUs + 500);
    }
    const auto events = cap.analyzer.finish();
    const auto f = of(events, EventType::CeWithoutCnp);
    REQUIRE(f.size() == 1);
    CHECK(f[0].count == 20);
    CHECK(f[0].frame == 1);
    CHECK(f[0].value == kReqQp);
  }
  SUBCASE("only requests captured: no claim about CNPs") {
    Capture cap;
    for (std::uint32_t n = 0; n < 20; ++n) cap.request(n, n * kUs, true);
    CHECK(of(cap.analyzer.finish(), EventType::CeWithoutCnp).empty());
  }
  SUBCASE("the sender keeps its rate after a CNP") {
    // Requests every 1 µs for 400 µs, one CNP at 150.5 µs: 100 requests in
    // [50.5, 150.5) and 100 in [150.5, 250.5): the rate did not fall.
    Capture cap;
    for (std::uint32_t n = 0; n < 400; ++n) {
      cap.request(n, n * kUs);
      if (n == 0) cap.ack(0, 500);
      if (n == 150) cap.cnp(150'500);
    }
    const auto events = cap.analyzer.finish();
    const auto f = of(events, EventType::CnpNoSlowdown);
    REQUIRE(f.size() == 1);
    CHECK(f[0].count == 1);
    // 100 requests per 100 µs, as Mb/s in the finding's two halves.
    const auto mbps = static_cast<std::uint64_t>(
        std::llround(100.0 * static_cast<double>(Capture::request_size()) * 8 / 100.0));
    CHECK((f[0].value >> 32) == mbps);
    CHECK((f[0].value & 0xFFFFFFFFU) == mbps);
    const auto c = cap.analyzer.summaries()[0].channels[0];
    CHECK(c.rate_before_cnp_bps == c.rate_after_cnp_bps);
  }
}

TEST_CASE("PFC: paused intervals, refreshes, XON, 802.3x and a storm") {
  // At 100 Gb/s a quantum (512 bit times) is 5.12 ns: 65535 quanta are
  // 335539.2 ns (335539 after rounding), 1000 quanta 5120 ns, 100 quanta 512.
  AnalyzerOptions opt;
  opt.link_speed_bps = 100'000'000'000;
  Capture cap(opt);
  const wire::MacAddress a{0x02, 0, 0, 0, 0, 0x0A}, b{0x02, 0, 0, 0, 0, 0x0B};
  auto pfc = [&](std::uint16_t vector, std::uint16_t q, std::int64_t t) -> PacketRecord& {
    wire::PauseFrame p;
    p.src = a;
    p.class_enable = vector;
    for (std::size_t i = 0; i < 8; ++i)
      if ((static_cast<unsigned>(vector) >> i) & 1U) p.quanta[i] = q;
    return cap.pause(p, t);
  };
  // Priority 3: XOFF at 0 (until 335.539 µs), refreshed at 100 µs (until
  // 435.539 µs), XON at 200 µs: one interval of 200 µs.
  PacketRecord& first = pfc(0x08, 65535, 0);
  REQUIRE(first.pause);
  CHECK(first.pause->quanta[3] == 65535);
  REQUIRE(first.events.size() == 1);
  CHECK(first.events[0].type == EventType::PfcPause);
  CHECK(first.events[0].delta_ns == 335'539);
  pfc(0x08, 65535, 100 * kUs);
  pfc(0x08, 0, 200 * kUs);
  // Priorities 3 and 4 for 1000 quanta at 1 ms: 5120 ns each, expiring.
  pfc(0x18, 1000, 1000 * kUs);
  // 802.3x from b at 2 ms: 100 quanta, 512 ns, the whole link.
  wire::PauseFrame g;
  g.src = b;
  g.opcode = wire::kPauseOpcode;
  g.quanta[0] = 100;
  PacketRecord& link = cap.pause(g, 2000 * kUs);
  REQUIRE(link.pause);
  CHECK(link.pause->class_enable == 0xFF);
  std::string line;  // the record is reused by the next frame: render it now
  render_pause_json(link, line);
  // Priority 5 refreshed every 200 µs (each lasts 335.5 µs) from 3 ms to
  // 153 ms: 751 frames, one interval of 150 ms, still paused at the end
  // (the capture's last frame is the last refresh): a storm past 100 ms.
  for (std::int64_t k = 0; k <= 750; ++k) pfc(0x20, 65535, 3000 * kUs + k * 200 * kUs);
  const auto events = cap.analyzer.finish();
  const auto storms = of(events, EventType::PfcStorm);
  REQUIRE(storms.size() == 1);
  CHECK(storms[0].code == 5);
  CHECK(storms[0].delta_ns == 150'000 * kUs);
  CHECK(storms[0].count == 1);  // still paused at the end
  CHECK(cap.analyzer.stats().pause_frames == 4 + 1 + 751);
  CHECK(cap.analyzer.stats().link_speed_source == CaptureStats::SpeedSource::Given);

  const auto p = cap.analyzer.pfc();
  REQUIRE(p.size() == 4);  // a/3, a/4, b/link, a/5 in order of first frame
  CHECK(p[0].priority == 3);
  CHECK(p[0].frames == 4);
  CHECK(p[0].xon_frames == 1);
  CHECK(p[0].paused_ns == 200 * kUs + 5120);
  CHECK(p[0].longest_pause_ns == 200 * kUs);
  CHECK(p[1].priority == 4);
  CHECK(p[1].paused_ns == 5120);
  CHECK(!p[2].priority.has_value());
  CHECK(p[2].paused_ns == 512);
  CHECK(p[3].priority == 5);
  CHECK(p[3].frames == 751);
  CHECK(p[3].paused_ns == 150'000 * kUs);
  CHECK(p[3].storms == 1);
  CHECK(p[3].paused_at_end);

  std::string json;
  render_summary_json(cap.analyzer.stats(), {}, json, p);
  const auto doc = nlohmann::json::parse(json);
  CHECK(doc["pfc"].size() == 4);
  CHECK(doc["pfc"][0]["src"] == "02:00:00:00:00:0a");
  CHECK(doc["pfc"][0]["paused_ns"] == 205'120);
  CHECK(doc["pfc"][2]["priority"].is_null());
  CHECK(doc["capture"]["link_speed_source"] == "given");
  const auto pj = nlohmann::json::parse(line);
  CHECK(pj["pause"]["opcode"] == 1);
  CHECK(pj["pause"]["quanta"] == nlohmann::json::array({100}));
}

TEST_CASE("the port speed is inferred from back-to-back frames, or assumed") {
  wire::PauseFrame p;
  p.class_enable = 0x08;
  p.quanta[3] = 1000;
  // A pause frame first: no two frames to infer from, 100 Gb/s assumed.
  Capture first;
  first.pause(p, 0);
  CHECK(first.analyzer.stats().link_speed_source == CaptureStats::SpeedSource::Assumed);
  CHECK(first.analyzer.stats().link_speed_bps == 100'000'000'000ULL);
  // Two request frames of S bytes back to back at 25 Gb/s are (S + 24) * 8
  // / 25 ns apart (24: FCS, preamble, delimiter, gap); rounded down, the
  // spacing says a little over 25 Gb/s, nearest to 25 Gb/s. A third frame
  // 1 ms later changes nothing (the fastest spacing counts).
  const auto s = static_cast<std::int64_t>(Capture::request_size());
  Capture cap;
  cap.request(0, 0);
  cap.request(1, (s + 24) * 8 / 25);
  cap.request(2, 1000 * kUs);
  PacketRecord& r = cap.pause(p, 2000 * kUs);
  CHECK(cap.analyzer.stats().link_speed_source == CaptureStats::SpeedSource::Inferred);
  CHECK(cap.analyzer.stats().link_speed_bps == 25'000'000'000ULL);
  // 1000 quanta at 25 Gb/s: 512000 bits / 25e9 = 20.48 µs.
  CHECK(r.events[0].delta_ns == 20'480);
}

TEST_CASE("10,000 QP pairs between two hosts: every ACK joins its own request's PSN space") {
  // Requester QP 0x10000 + q sends one SEND Only to responder QP 0x20000 + q
  // at PSN (q * 7919) mod 2^24 (distinct starts: 7919 is prime and the
  // largest, 9999 * 7919 = 79181081, wraps well apart); only then do the
  // ACKs come, in reverse order, so all 10,000 request halves wait for
  // their responses at once. Each ACK must land in its request's
  // conversation and acknowledge that request's frame (q + 1).
  constexpr std::uint32_t kQps = 10'000;
  Analyzer analyzer;
  PacketRecord rec;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> conv(kQps);
  std::uint64_t frame = 0;
  auto feed = [&](const wire::FrameSpec& s) -> PacketRecord& {
    bytes.assign(wire::frame_size(s), 0);
    REQUIRE(wire::encode_frame(s, bytes) == bytes.size());
    ++frame;
    decode_record(bytes, bytes.size(), wire::LinkType::Ethernet, frame,
                  kT0 + static_cast<std::int64_t>(frame) * 100, rec, false);
    analyzer.feed(rec);
    return rec;
  };
  const auto host_a = *wire::IpAddress::parse("10.0.0.2");
  const auto host_b = *wire::IpAddress::parse("10.0.0.1");
  auto start_psn = [](std::uint32_t q) { return (q * 7919U) & 0xFFFFFFU; };
  for (std::uint32_t q = 0; q < kQps; ++q) {
    wire::FrameSpec s;
    s.src_ip = host_a;
    s.dst_ip = host_b;
    s.packet.bth.opcode = wire::opcode::kRcSendOnly;
    s.packet.bth.dest_qp = 0x20000 + q;
    s.packet.bth.psn = start_psn(q);
    conv[q] = feed(s).conversation;
  }
  std::uint32_t matched = 0;
  for (std::uint32_t q = kQps; q-- > 0;) {
    wire::FrameSpec s;
    s.src_ip = host_b;
    s.dst_ip = host_a;
    s.packet.bth.opcode = wire::opcode::kRcAcknowledge;
    s.packet.bth.dest_qp = 0x10000 + q;
    s.packet.bth.psn = start_psn(q);
    s.packet.aeth = wire::Aeth{0x1F, 1};
    const PacketRecord& r = feed(s);
    const auto acks = of(r.events, EventType::AckMatched);
    if (r.conversation == conv[q] && acks.size() == 1 && acks[0].related_frame == q + 1u) ++matched;
  }
  CHECK(matched == kQps);
  CHECK(analyzer.summaries().size() == kQps);
  CHECK(analyzer.stats().untracked == 0);
}
