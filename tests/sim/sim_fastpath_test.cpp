// The engine's shortcuts must not show in what it produces: frames held back
// for the capture keep only the bytes within the snap length, the ICRC is not
// computed when nothing reads it, and arrivals in a link's FIFO run in the
// same order as those in the heap.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

struct Record {
  std::int64_t time_ns = 0;
  std::size_t original_length = 0;
  std::vector<std::uint8_t> bytes;
};

std::vector<Record> read_records(const std::string& path) {
  std::vector<Record> out;
  capture::PcapReader r(path);
  capture::Packet pk;
  while (r.next(pk))
    out.push_back(Record{pk.time_ns, pk.original_length,
                         std::vector<std::uint8_t>(pk.data.begin(), pk.data.end())});
  return out;
}

// A run with several QPs sharing one link (so frames are built out of
// timestamp order and wait for the capture), WRITEs and READs of several
// packets and small SENDs; `link` adjusts both directions.
std::vector<Record> run(std::uint32_t snaplen, bool verify_icrc, sim::CapturePoint point,
                        const sim::LinkConfig& link, const std::string& name) {
  PairConfig c;
  c.fixed_iova = true;
  c.fabric.verify_icrc = verify_icrc;
  c.fabric.capture_point = point;
  c.fabric.default_link = link;
  Pair p(c);
  sim::QueuePair* qa2 = p.make_qp(*p.pd_a, *p.cq_a);
  sim::QueuePair* qb2 = p.make_qp(*p.pd_b, *p.cq_b);
  REQUIRE(p.connect(*qa2, p.b, qb2->qp_num(), 100, 200) == 0);
  REQUIRE(p.connect(*qb2, p.a, qa2->qp_num(), 200, 100) == 0);
  const std::string path = temp_pcap(name);
  p.fabric.start_capture(path, snaplen);
  p.fill_a(3);
  int expected = 0;
  for (std::uint32_t i = 0; i < 8; ++i) {
    REQUIRE(p.post_recv_b(i * 4096, 4096, 100 + i) == 0);
    REQUIRE(p.post(IBV_WR_SEND, i * 64, 64, 0, i) == 0);
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 5000 + i * 100, 65536 + i * 8192, 10 + i, 0, qa2) == 0);
    REQUIRE(p.post(IBV_WR_RDMA_READ, 131072 + i * 4096, 3000, i * 4096, 20 + i) == 0);
    expected += 3;
  }
  for (int n = 0; n < expected; ++n) CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.run();
  p.fabric.stop_capture();
  auto records = read_records(path);
  std::remove(path.c_str());
  return records;
}

void check_prefixes(const std::vector<Record>& whole, const std::vector<Record>& snapped,
                    std::size_t snaplen) {
  REQUIRE(whole.size() == snapped.size());
  bool some_cut = false;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    CHECK(whole[i].time_ns == snapped[i].time_ns);
    CHECK(whole[i].original_length == snapped[i].original_length);
    const std::size_t kept = std::min(snaplen, whole[i].bytes.size());
    REQUIRE(snapped[i].bytes.size() == kept);
    CHECK(std::memcmp(whole[i].bytes.data(), snapped[i].bytes.data(), kept) == 0);
    some_cut = some_cut || kept < whole[i].bytes.size();
    if (i > 0) CHECK(whole[i - 1].time_ns <= whole[i].time_ns);
  }
  CHECK(some_cut);
}

}  // namespace

TEST_CASE("a snap length keeps the first bytes of exactly the frames a whole capture keeps") {
  for (const auto point : {sim::CapturePoint::SenderPort, sim::CapturePoint::ReceiverPort}) {
    for (const bool verify : {true, false}) {
      CAPTURE(verify);
      const sim::LinkConfig link;
      const auto whole = run(0, verify, point, link, "fast_whole");
      const auto snapped = run(128, verify, point, link, "fast_snap");
      check_prefixes(whole, snapped, 128);
      // A whole-frame capture always carries a valid ICRC, checked or not.
      for (const Record& r : whole) {
        const wire::Frame f =
            wire::decode_frame(r.bytes, wire::LinkType::Ethernet, r.original_length);
        const auto c = wire::check_icrc(f, r.bytes);
        REQUIRE(c.has_value());
        CHECK(c->ok());
      }
    }
  }
}

TEST_CASE("jitter and duplicates mix the heap and the link FIFOs: the same capture every run") {
  sim::LinkConfig link;
  link.jitter_ns = 1500;  // arrivals out of order: some go to the heap
  link.duplicate = 0.05;
  link.loss = 0.01;
  const auto first = run(0, true, sim::CapturePoint::ReceiverPort, link, "fast_jitter1");
  const auto second = run(0, true, sim::CapturePoint::ReceiverPort, link, "fast_jitter2");
  REQUIRE(first.size() == second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].time_ns == second[i].time_ns);
    CHECK(first[i].bytes == second[i].bytes);
    // At the receiving port frames are captured as they arrive: in time order.
    if (i > 0) CHECK(first[i - 1].time_ns <= first[i].time_ns);
  }
  const auto snapped = run(100, false, sim::CapturePoint::ReceiverPort, link, "fast_jitter3");
  check_prefixes(first, snapped, 100);
}
