// The simulator's capture: valid RoCEv2 frames that rdmalab::wire and
// tshark both decode without a malformed mark, with a correct ICRC, virtual
// nanosecond timestamps, and a headers-only snap length for big transfers.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>

#include "rdmalab/wire/opcode.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n' ? 1u : 0u;
  return n;
}

// A capture with every kind of packet the simulator sends: RC SEND/WRITE
// (First/Middle/Last/Only, immediate), READ request and responses, atomics
// and atomic ACKs, ACK, NAK sequence error, RNR NAK, remote access NAK.
std::string rich_capture(bool ipv6) {
  PairConfig c;
  c.ipv6 = ipv6;
  c.min_rnr_timer = 1;
  Pair p(c);
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::psn(2));
  const std::string path = temp_pcap(ipv6 ? "rich6" : "rich4");
  p.fabric.start_capture(path);
  p.fill_a(1);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 5000, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 3000, 0, 2) == 0);  // no receive yet: RNR NAK
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.run_until([&] { return p.qb->stats().rnr_naks_sent > 0; });
  REQUIRE(p.post_recv_b(0, 4096, 1) == 0);
  REQUIRE(p.post_recv_b(0, 4096, 2) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE_WITH_IMM, 0, 77, 100, 3) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_READ, 0, 2500, 0, 4) == 0);
  REQUIRE(p.post(IBV_WR_ATOMIC_FETCH_AND_ADD, 4096, 8, 8192, 5) == 0);
  REQUIRE(p.post(IBV_WR_ATOMIC_CMP_AND_SWP, 4096, 8, 8192, 6) == 0);
  for (int i = 0; i < 4; ++i) CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 10, 0, 7, 0xBAD) == 0);  // remote access NAK
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_REM_ACCESS_ERR);
  p.fabric.run();
  p.fabric.stop_capture();
  return path;
}

}  // namespace

TEST_CASE("every frame decodes with rdmalab::wire and its ICRC verifies") {
  for (bool v6 : {false, true}) {
    CAPTURE(v6);
    const std::string path = rich_capture(v6);
    const auto all = read_capture(path);
    std::remove(path.c_str());
    CHECK(all.size() > 20);
    std::vector<bool> seen(256, false);
    std::int64_t last = -1;
    for (const Pkt& k : all) {
      CHECK(k.icrc_ok);
      CHECK_FALSE(k.malformed);
      CHECK(k.time_ns >= last);  // virtual time, in order
      last = k.time_ns;
      seen[k.opcode] = true;
    }
    namespace op = wire::opcode;
    for (std::uint8_t o :
         {op::kRcWriteFirst, op::kRcWriteMiddle, op::kRcWriteLast, op::kRcSendFirst,
          op::kRcSendLast, op::kRcWriteOnlyImm, op::kRcReadRequest, op::kRcReadResponseFirst,
          op::kRcReadResponseLast, op::kRcAcknowledge, op::kRcAtomicAcknowledge, op::kRcFetchAdd,
          op::kRcCompareSwap})
      CHECK(seen[o]);
  }
}

TEST_CASE("tshark decodes every simulated frame with no malformed or error mark") {
  REQUIRE_MESSAGE(!run_command("command -v tshark").empty(), "tshark is needed for this test");
  for (bool v6 : {false, true}) {
    CAPTURE(v6);
    const std::string path = rich_capture(v6);
    const std::size_t ours = read_capture(path).size();
    const std::string frames =
        run_command("tshark -n -r '" + path + "' -T fields -e infiniband.bth.opcode 2>/dev/null");
    const std::string bad = run_command(
        "tshark -n -o udp.check_checksum:TRUE -r '" + path +
        "' -Y '_ws.malformed || _ws.expert.severity >= \"error\"' -T fields -e frame.number "
        "2>/dev/null");
    std::remove(path.c_str());
    CHECK(count_lines(frames) == ours);  // every frame seen as InfiniBand by tshark
    CHECK(frames.find("\n\n") == std::string::npos);
    CHECK(bad.empty());
  }
}

TEST_CASE("headers-only snap length keeps the headers and the original length") {
  Pair p;
  const std::string path = temp_pcap("snap");
  p.fabric.start_capture(path, 96);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64 * 1024, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();
  capture::PcapReader r(path);
  capture::Packet pk;
  std::size_t n = 0;
  while (r.next(pk)) {
    CHECK(pk.data.size() <= 96);
    const auto f = wire::decode_frame(pk.data, wire::LinkType::Ethernet, pk.original_length);
    REQUIRE(f.ib.has_value());
    if (pk.original_length > 96) {
      CHECK(f.error.has_value());
      CHECK(f.error->kind == wire::ErrorKind::SnapTruncated);
      CHECK(f.ib->payload_length == 1024);
    }
    ++n;
  }
  std::remove(path.c_str());
  CHECK(n == 65);  // 64 WRITE packets and one ACK
}
