// The analyser on captures of whole clusters: what a conversation costs in
// memory once it has gone quiet, and a capture of 20,000 QP pairs whose every
// count is derived in the comments from the traffic the test writes.
//
// This program replaces the global operator new and delete, and their array
// forms, to count the bytes the analyser asks for (each block carries its
// size in a 16-byte header, so what is freed is subtracted exactly). The
// array forms too: libstdc++'s call the single ones, but a sanitizer's
// runtime defines its own, and the count would miss every array then.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/psn.hpp"

namespace {

std::int64_t g_live_bytes = 0;  // the tests run on one thread
constexpr std::size_t kHeader = 16;

}  // namespace

void* operator new(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
  if (p == nullptr) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  g_live_bytes += static_cast<std::int64_t>(n);
  return p + kHeader;
}

void operator delete(void* q) noexcept {
  if (q == nullptr) return;
  auto* p = static_cast<unsigned char*>(q) - kHeader;
  g_live_bytes -= static_cast<std::int64_t>(*reinterpret_cast<std::size_t*>(p));
  std::free(p);
}

void operator delete(void* q, std::size_t /*size*/) noexcept {
  operator delete(q);
}

void* operator new[](std::size_t n) {
  return operator new(n);
}

void operator delete[](void* q) noexcept {
  operator delete(q);
}

void operator delete[](void* q, std::size_t /*size*/) noexcept {
  operator delete(q);
}

using namespace rdmalab;
using namespace rdmalab::dissect;

namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;

/// Requester host h of a cluster: 10.1.(h / 250).(h % 250 + 1).
wire::IpAddress requester_host(std::uint32_t h) {
  return wire::IpAddress::from_v4(
      {10, 1, static_cast<std::uint8_t>(h / 250), static_cast<std::uint8_t>(h % 250 + 1)});
}

/// Frames encoded ahead of the measurement, fed one after the other 1 µs apart.
class Frames {
 public:
  void add(const wire::FrameSpec& s) {
    std::vector<std::uint8_t> b(wire::frame_size(s));
    REQUIRE(wire::encode_frame(s, b) == b.size());
    frames_.push_back(std::move(b));
  }
  void feed_all(Analyzer& analyzer) {
    PacketRecord rec;
    for (const auto& b : frames_) {
      ++frame_;
      decode_record(b, b.size(), wire::LinkType::Ethernet, frame_,
                    kT0 + static_cast<std::int64_t>(frame_) * 1000, rec, false);
      analyzer.feed(rec);
      for (const Event& e : rec.events) ++events_[static_cast<std::size_t>(e.type)];
    }
  }
  [[nodiscard]] std::uint64_t events(EventType t) const {
    return events_[static_cast<std::size_t>(t)];
  }

 private:
  std::vector<std::vector<std::uint8_t>> frames_;
  std::uint64_t frame_ = 0;
  std::vector<std::uint64_t> events_ = std::vector<std::uint64_t>(256, 0);
};

}  // namespace

TEST_CASE("an idle conversation costs the analyser at most 1 KiB") {
  // N QP pairs between 64 requester hosts and one responder, each one SEND
  // Only answered by its ACK, then quiet. What the analyser holds per
  // conversation, from the layouts in dissect/src/analyzer.cpp and
  // flat_map.hpp (x86-64):
  //   the channel                                     592
  //   its rings, one element each: unacknowledged
  //   request 32, first transmissions 24, the rate
  //   window's requests 16                             72
  //   one RTT sample 8, the request in the rate
  //   series (kept as it came until the 65th) 8        16
  //   two half-channel slots (16-byte key, 4-byte
  //   value) 2 x 20, in a table half full              80
  //   the conversation                                104
  //   two conversation-end slots (8-byte key, 4-byte
  //   value, padded) 2 x 16, in a table half full      64
  //                                                   ---
  //                                                   928 bytes
  // and the channels are allocated 256 at a time: per 256, the array's
  // length (new[] keeps it) and the chunk's pointer in the list, 8 + 8.
  // With N a power of two the vectors that double hold exactly N, and the
  // open-addressing tables, at most three quarters full, have 4N slots for
  // their 2N entries. Besides, the analyser keeps what belongs to the 65
  // hosts and 64 host pairs, the same for any N (the hosts' addresses and
  // table; per pair, its list of request halves waiting for responses, empty
  // by now, and that list's slot in a table): a few kilobytes. So 8,192
  // conversations cost exactly 4,096 x 928 + 16 x 16 bytes more than 4,096
  // do. The limit checked is the target, 1 KiB a conversation, all counted.
  auto live_bytes = [](std::uint32_t qps) {
    Frames frames;
    std::vector<std::uint8_t> payload(64, 0x5A);
    const auto responder = *wire::IpAddress::parse("10.0.0.1");
    for (std::uint32_t q = 0; q < qps; ++q) {
      wire::FrameSpec req;
      req.src_ip = requester_host(q % 64);
      req.dst_ip = responder;
      req.packet.bth.opcode = wire::opcode::kRcSendOnly;
      req.packet.bth.dest_qp = 0x100 + q;
      req.packet.bth.psn = q * 16;
      req.packet.payload = payload;
      frames.add(req);
      wire::FrameSpec ack;
      ack.src_ip = responder;
      ack.dst_ip = req.src_ip;
      ack.packet.bth.opcode = wire::opcode::kRcAcknowledge;
      ack.packet.bth.dest_qp = 0x10000 + q;
      ack.packet.bth.psn = q * 16;
      ack.packet.aeth = wire::Aeth{0x1F, 1};
      frames.add(ack);
    }
    Analyzer analyzer;
    const std::int64_t before = g_live_bytes;
    frames.feed_all(analyzer);
    const std::int64_t live = g_live_bytes - before;
    CHECK(frames.events(EventType::AckMatched) == qps);
    CHECK(analyzer.summaries().size() == qps);
    return live;
  };
  constexpr std::uint32_t kQps = 4096;
  const std::int64_t small = live_bytes(kQps);
  const std::int64_t large = live_bytes(2 * kQps);
  const std::int64_t per_conversation = (large - small) / kQps;
  MESSAGE("bytes per idle conversation: " << per_conversation << "; all counted, " << small / kQps
                                          << " of " << kQps << ", " << large / (2 * kQps) << " of "
                                          << 2 * kQps);
  CHECK(small <= std::int64_t{1024} * kQps);
  CHECK(large <= std::int64_t{1024} * 2 * kQps);
#if defined(__x86_64__) && defined(__GLIBCXX__)
  // The sum above, which chapter 11 of the docs shows: a change to the
  // layouts changes both.
  CHECK(large - small == std::int64_t{928} * kQps + (kQps / 256) * (8 + 8));
#endif
}

TEST_CASE("20,000 QP pairs on 40 hosts: every count as derived") {
  // 40 requester hosts with 500 QPs each (q = 0..19,999, host q / 500) talk
  // to one responder, interleaved: first every QP sends a WRITE First, then
  // every QP a WRITE Middle, then every QP a WRITE Last (3 x 512 bytes), so
  // 500 request halves between each host pair wait together. QP q starts at
  // PSN (q * 7919) mod 2^24, so the PSN spaces of one host pair are far
  // apart. Then, in reverse order, the responder's packets:
  //   every QP    one ACK: of its WRITE Last, but for q % 4 == 0 of its
  //               WRITE First only (Middle and Last stay unacknowledged)
  //   q % 10 == 0 its WRITE Last was CE-marked, and a CNP follows the ACK
  //               to requester QP 0x10000 + q
  //   q % 10 == 5 its WRITE Last was CE-marked, and no CNP came
  constexpr std::uint32_t kQps = 20'000, kPerHost = 500;
  Frames frames;
  std::vector<std::uint8_t> payload(512, 0x5A);
  const auto responder = *wire::IpAddress::parse("10.0.0.1");
  auto start_psn = [](std::uint32_t q) { return (q * 7919U) & 0xFFFFFFU; };
  constexpr std::uint8_t kOps[] = {wire::opcode::kRcWriteFirst, wire::opcode::kRcWriteMiddle,
                                   wire::opcode::kRcWriteLast};
  for (std::uint32_t i = 0; i < 3; ++i) {
    for (std::uint32_t q = 0; q < kQps; ++q) {
      wire::FrameSpec req;
      req.src_ip = requester_host(q / kPerHost);
      req.dst_ip = responder;
      req.traffic_class = (i == 2 && q % 5 == 0) ? 3 : 2;
      req.packet.bth.opcode = kOps[i];
      req.packet.bth.dest_qp = 0x100 + q;
      req.packet.bth.psn = wire::psn_add(start_psn(q), i);
      req.packet.bth.ack_req = i == 2;
      if (i == 0) req.packet.reth = wire::Reth{0x1000, 0x42, 3 * 512};
      req.packet.payload = payload;
      frames.add(req);
    }
  }
  for (std::uint32_t q = kQps; q-- > 0;) {
    wire::FrameSpec rsp;
    rsp.src_ip = responder;
    rsp.dst_ip = requester_host(q / kPerHost);
    rsp.packet.bth.dest_qp = 0x10000 + q;
    rsp.packet.bth.opcode = wire::opcode::kRcAcknowledge;
    rsp.packet.bth.psn = wire::psn_add(start_psn(q), q % 4 == 0 ? 0 : 2);
    rsp.packet.aeth = wire::Aeth{0x1F, q % 4 == 0 ? 0U : 1U};
    frames.add(rsp);
    if (q % 10 == 0) {
      rsp.packet.bth.opcode = wire::opcode::kCnp;
      rsp.packet.bth.psn = 0;
      rsp.packet.aeth.reset();
      frames.add(rsp);
    }
  }
  Analyzer analyzer;
  frames.feed_all(analyzer);
  const auto end = analyzer.finish();
  auto count_end = [&](EventType t) {
    return std::count_if(end.begin(), end.end(), [t](const Event& e) { return e.type == t; });
  };

  // Frames: 3 x 20,000 requests + 20,000 ACKs + 2,000 CNPs = 82,000.
  CHECK(analyzer.stats().roce == 82'000);
  CHECK(analyzer.stats().untracked == 0);
  // One conversation per QP pair, one channel each (requests go one way).
  const auto convs = analyzer.summaries();
  REQUIRE(convs.size() == kQps);
  std::uint64_t writes = 0, acks = 0, ce = 0, cnps = 0, gaps = 0, resent = 0, rtts = 0;
  for (const auto& v : convs) {
    REQUIRE(v.channels.size() == 1);
    const ChannelSummary& c = v.channels[0];
    writes += c.writes;
    acks += c.acks;
    ce += c.ecn_ce;
    cnps += c.cnps;
    gaps += c.psn_gaps;
    resent += c.retransmitted_packets;
    rtts += c.rtt_samples;
    CHECK(c.request_packets == 3);
    CHECK(c.payload_bytes == 3 * 512);
  }
  CHECK(writes == kQps);  // every WRITE complete, its DMA length matched
  CHECK(frames.events(EventType::LengthMismatch) == 0);
  // Every ACK joins its own QP's channel among the 500 waiting between its
  // two hosts and names a packet it sent first: one matched ACK and one RTT
  // sample each.
  CHECK(acks == kQps);
  CHECK(frames.events(EventType::AckMatched) == kQps);
  CHECK(rtts == kQps);
  // CE marks: q % 5 == 0, 4,000 requests, 4,000 EcnMarked events; the
  // 2,000 CNPs (q % 10 == 0) each reach their channel (its ACK came first).
  CHECK(ce == 4'000);
  CHECK(frames.events(EventType::EcnMarked) == 4'000);
  CHECK(frames.events(EventType::Cnp) == 2'000);
  CHECK(cnps == 2'000);
  // Nothing lost, nothing resent: no gap, no retransmission.
  CHECK(gaps == 0);
  CHECK(resent == 0);
  // End of capture: the 5,000 QPs with q % 4 == 0 have two packets never
  // acknowledged; CE without a CNP: the 2,000 QPs with q % 10 == 5.
  CHECK(std::count_if(end.begin(), end.end(), [](const Event& e) {
          return e.type == EventType::Unacknowledged && e.count == 2;
        }) == 5'000);
  CHECK(count_end(EventType::CeWithoutCnp) == 2'000);
}
