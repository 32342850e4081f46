// The Wireshark plugin's state, without Wireshark: what it stores per frame
// must equal what the analyser reports when run straight through a capture
// (as rdmapcap does), whatever order the frames are looked up in.
#include "rdmalab/wireshark/frame_store.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"

using namespace rdmalab;
using rdmalab::wireshark::FrameStore;
using rdmalab::wireshark::IcrcStatus;

namespace {

std::string data(const char* name) {
  return std::string(RDMALAB_TEST_DATA) + "/" + name;
}

// Feeds a whole capture, as Wireshark's first pass does.
std::uint64_t feed_all(FrameStore& store, const std::string& path) {
  capture::PcapReader reader(path);
  const auto link = reader.link_type();
  REQUIRE(link.has_value());
  capture::Packet p;
  std::uint64_t frames = 0;
  while (reader.next(p)) {
    CHECK(store.feed(p.data, p.original_length, *link, p.frame, p.time_ns));
    frames = p.frame;
  }
  return frames;
}

// (frame, event type) of every event, as the analyser reports them when
// run straight through (rdmapcap's loop), end-of-capture events included.
struct Tagged {
  std::uint64_t frame;
  dissect::EventType type;
  std::uint64_t related;
  friend bool operator==(const Tagged&, const Tagged&) = default;
};

std::vector<Tagged> reference(const std::string& path) {
  capture::PcapReader reader(path);
  const auto link = reader.link_type();
  REQUIRE(link.has_value());
  capture::Packet p;
  dissect::PacketRecord rec;
  dissect::Analyzer analyzer;
  std::vector<Tagged> out;
  while (reader.next(p)) {
    dissect::decode_record(p.data, p.original_length, *link, p.frame, p.time_ns, rec);
    analyzer.feed(rec);
    for (const auto& e : rec.events) out.push_back({e.frame, e.type, e.related_frame});
  }
  for (const auto& e : analyzer.finish()) out.push_back({e.frame, e.type, e.related_frame});
  return out;
}

std::vector<Tagged> stored(const FrameStore& store, const std::vector<std::uint64_t>& order) {
  std::vector<Tagged> out;
  for (std::uint64_t f : order) {
    const auto found = store.find(f);
    if (!found) continue;
    for (const auto& e : found->events) out.push_back({e.frame, e.type, e.related_frame});
    for (const auto& e : found->end_events) out.push_back({e.frame, e.type, e.related_frame});
  }
  return out;
}

bool by_frame_then_type(const Tagged& a, const Tagged& b) {
  return std::tie(a.frame, a.type, a.related) < std::tie(b.frame, b.type, b.related);
}

}  // namespace

TEST_CASE("stored events equal a straight analyser run, in any lookup order") {
  const char* files[] = {
      "loss_drop_one_nak.pcap",        "loss_tail_drop_timeout.pcap", "loss_drop_ack.pcap",
      "dead_peer_retry_exceeded.pcap", "reorder_gap5_write.pcap",     "read_bw_s512.pcap",
      "atomic_fetch_add.pcap",         "rc_pingpong_s64.pcap",        "write_bw_s4096_m1024.pcap"};
  for (const char* name : files) {
    CAPTURE(name);
    FrameStore store;
    const std::uint64_t frames = feed_all(store, data(name));
    store.finish();
    std::vector<std::uint64_t> order(frames);
    for (std::uint64_t i = 0; i < frames; ++i) order[i] = i + 1;
    std::vector<Tagged> expected = reference(data(name));
    std::stable_sort(expected.begin(), expected.end(), by_frame_then_type);
    CHECK_FALSE(expected.empty());

    std::vector<Tagged> in_order = stored(store, order);
    std::stable_sort(in_order.begin(), in_order.end(), by_frame_then_type);
    CHECK(in_order == expected);

    // Random access, as clicks in the packet list: same findings.
    std::mt19937 rng(42);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<Tagged> shuffled = stored(store, order);
    std::stable_sort(shuffled.begin(), shuffled.end(), by_frame_then_type);
    CHECK(shuffled == expected);
  }
}

TEST_CASE("a frame fed twice is analysed once") {
  capture::PcapReader reader(data("loss_drop_one_nak.pcap"));
  capture::Packet p;
  FrameStore store;
  std::vector<std::uint8_t> first_bytes;
  std::int64_t first_time = 0;
  std::size_t first_len = 0;
  while (reader.next(p)) {
    if (p.frame == 1) {
      first_bytes.assign(p.data.begin(), p.data.end());
      first_time = p.time_ns;
      first_len = p.original_length;
    }
    CHECK(store.feed(p.data, p.original_length, wire::LinkType::Ethernet, p.frame, p.time_ns));
  }
  const std::uint64_t last = store.last_fed();
  CHECK(last == p.frame);  // the last frame read
  // A first-pass call for an old frame (Wireshark redissecting before the
  // flag is set) must not feed the analyser again: no new retransmission.
  CHECK_FALSE(store.feed(first_bytes, first_len, wire::LinkType::Ethernet, 1, first_time));
  CHECK(store.last_fed() == last);
  const auto f1 = store.find(1);
  REQUIRE(f1.has_value());
  for (const auto& e : f1->events) CHECK(e.type != dissect::EventType::Retransmission);
}

TEST_CASE(
    "the end-of-capture retry conclusion is attached to its earlier frame only after finish") {
  FrameStore store;
  feed_all(store, data("dead_peer_retry_exceeded.pcap"));
  const auto expected = reference(data("dead_peer_retry_exceeded.pcap"));
  const auto it = std::find_if(expected.begin(), expected.end(), [](const Tagged& t) {
    return t.type == dissect::EventType::StillRetrying;
  });
  REQUIRE(it != expected.end());
  const auto before = store.find(it->frame);
  REQUIRE(before.has_value());
  CHECK(before->end_events.empty());
  store.finish();
  store.finish();  // a second call changes nothing
  const auto after = store.find(it->frame);
  REQUIRE(after.has_value());
  REQUIRE(after->end_events.size() == 1);
  // The capture ends with the third retry, before a fourth could be due:
  // still retrying as far as the capture shows (retry_cnt 3 gave up later).
  CHECK(after->end_events[0].type == dissect::EventType::StillRetrying);
  CHECK(after->end_events[0].count == 3);
}

TEST_CASE("ICRC status is stored per frame") {
  FrameStore store;
  feed_all(store, data("write_bw_s512.pcap"));
  const auto f = store.find(1);
  REQUIRE(f.has_value());
  CHECK(f->icrc == IcrcStatus::Good);
  CHECK(f->icrc_expected == f->icrc_actual);
}

TEST_CASE("messages: number, packet index and length") {
  SUBCASE("3072-byte WRITEs at MTU 1024: three packets each, RETH length") {
    FrameStore store;
    const auto frames = feed_all(store, data("mtu_write_s3072_m1024.pcap"));
    std::uint32_t checked = 0;
    for (std::uint64_t f = 1; f <= frames; ++f) {
      const auto found = store.find(f);
      if (!found || found->message.id == 0) continue;
      CHECK(found->message.index >= 1);
      CHECK(found->message.index <= 3);
      REQUIRE(found->message.length.has_value());
      CHECK(*found->message.length == 3072);
      ++checked;
    }
    CHECK(checked > 0);
    CHECK(checked % 3 == 0);
  }
  SUBCASE("SEND Only: one packet, length = payload") {
    FrameStore store;
    feed_all(store, data("send_bw_s64.pcap"));
    const auto f = store.find(1);
    REQUIRE(f.has_value());
    CHECK(f->message.id == 1);
    CHECK(f->message.index == 1);
    REQUIRE(f->message.length.has_value());
    CHECK(*f->message.length == 64);
  }
  SUBCASE("READ responses name their request and its message") {
    FrameStore store;
    const auto frames = feed_all(store, data("read_bw_s512.pcap"));
    std::uint32_t responses = 0;
    for (std::uint64_t f = 1; f <= frames; ++f) {
      const auto found = store.find(f);
      if (!found || found->message.request_frame == 0) continue;
      const auto req = store.find(found->message.request_frame);
      REQUIRE(req.has_value());
      CHECK(req->message.id == found->message.id);
      CHECK(found->message.index == 1);  // 512 bytes: READ Response Only
      REQUIRE(found->message.length.has_value());
      CHECK(*found->message.length == 512);
      CHECK(found->message.request_frame < f);
      ++responses;
    }
    CHECK(responses > 0);
  }
  SUBCASE("reordering: a packet never lands beyond its message's last packet") {
    // 8192-byte WRITEs at MTU 1024; netem makes every fifth packet overtake
    // the four before it, so Middle packets arrive before their First.
    FrameStore store;
    const auto frames = feed_all(store, data("reorder_gap5_write.pcap"));
    std::uint32_t checked = 0;
    for (std::uint64_t f = 1; f <= frames; ++f) {
      const auto found = store.find(f);
      if (!found || found->message.id == 0) continue;
      CHECK(found->message.index >= 1);
      CHECK(found->message.index <= 8);
      ++checked;
    }
    CHECK(checked > 0);
  }
  SUBCASE("a resent packet keeps its message number") {
    FrameStore store;
    feed_all(store, data("loss_drop_one_nak.pcap"));
    const auto original = store.find(12);
    const auto resent = store.find(15);
    REQUIRE(original.has_value());
    REQUIRE(resent.has_value());
    CHECK(resent->message.id == original->message.id);
    CHECK(resent->message.index == original->message.index);
  }
}

TEST_CASE("reset forgets the previous capture") {
  FrameStore store;
  feed_all(store, data("loss_drop_one_nak.pcap"));
  store.finish();
  store.reset();
  CHECK(store.last_fed() == 0);
  CHECK_FALSE(store.finished());
  CHECK_FALSE(store.find(1).has_value());
  feed_all(store, data("send_bw_s64.pcap"));
  const auto f = store.find(1);
  REQUIRE(f.has_value());
  CHECK(f->message.id == 1);  // numbering starts again
}

TEST_CASE("congestion: ECN per packet, CNPs, pause frames at the configured port speed") {
  // congestion_pfc.pcap: two requesters, 200 CE-marked SENDs each, 8 CNPs
  // to each requester QP (rdmapcap summary), one 802.3x PAUSE of 100 quanta
  // (frame 1) and PFC frames for priority 3 of 65535 quanta (frame 500).
  dissect::AnalyzerOptions options;
  options.link_speed_bps = 25'000'000'000;  // 25 Gb/s: a quantum is 512 / 25e9 s = 20.48 ns
  FrameStore store(options);
  const std::uint64_t frames = feed_all(store, data("congestion_pfc.pcap"));
  std::size_t ce = 0, cnps = 0, pauses = 0;
  for (std::uint64_t f = 1; f <= frames; ++f) {
    const auto found = store.find(f);
    if (!found) continue;
    if (found->ecn == 3) ++ce;
    if (found->cnp) {
      ++cnps;
      CHECK((found->cnp_qp == 0x002000 || found->cnp_qp == 0x002001));
    }
    if (found->pause) {
      ++pauses;
      CHECK(found->link_speed_bps == 25'000'000'000);
      CHECK(!found->ecn);
    }
  }
  CHECK(ce == 400);
  CHECK(cnps == 16);
  CHECK(pauses == 7);
  const auto pause = store.find(1);
  REQUIRE(pause);
  REQUIRE(pause->pause);
  CHECK(!pause->pause->pfc());
  CHECK(pause->pause->quanta[0] == 100);
  CHECK(wire::pause_quanta_ns(pause->pause->quanta[0], pause->link_speed_bps) == 2048);
  const auto pfc = store.find(500);
  REQUIRE(pfc);
  REQUIRE(pfc->pause);
  CHECK(pfc->pause->class_enable == 0x0008);
  CHECK(pfc->pause->quanta[3] == 65535);
  // The options outlive a reset(); reset(options) replaces them.
  store.reset();
  CHECK(store.options().link_speed_bps == 25'000'000'000);
  store.reset(dissect::AnalyzerOptions{});
  CHECK(store.options().link_speed_bps == 0);
}
