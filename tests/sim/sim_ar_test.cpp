// The adaptive-routing model: packets sprayed over paths of different
// delays arrive out of order. Without AR support in the NICs that means NAKs
// and go-back-N; with it, the responder holds packets that arrive ahead of
// the expected PSN and executes them in order as the holes fill. Messages
// stay whole: First/Middle/Last on the wire, one MSN and one completion per
// message with its whole length.
#include <doctest/doctest.h>

#include <algorithm>

#include "rdmalab/wire/opcode.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;
namespace op = rdmalab::wire::opcode;

namespace {

PairConfig sprayed() {
  PairConfig c;
  c.mtu = IBV_MTU_4096;
  c.fabric.seed = 7;
  c.fabric.default_link.adaptive_routing = true;
  c.fabric.default_link.path_extra_ns = {0, 700, 1400, 2100};
  return c;
}

void enable_ar(Pair& p) {
  sim::QueuePair::Options o;
  o.adaptive_routing = true;
  p.qa->set_options(o);
  p.qb->set_options(o);
}

// NCCL's pattern above its size threshold: the data as an RDMA WRITE, then
// a zero-byte WRITE with immediate that completes at the receiver.
void post_write_then_imm(Pair& p, std::uint32_t len) {
  REQUIRE(p.post_recv_b(0, 0, 99) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, len, 0, 1) == 0);
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = 0x01020304;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data());
  wr.wr.rdma.rkey = p.mr_b->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
}

}  // namespace

TEST_CASE("AR off: sprayed packets arrive out of order, causing NAKs and go-back-N") {
  Pair p(sprayed());
  p.fill_a(1);
  post_write_then_imm(p, 256 * 1024);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 256 * 1024) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.qb->stats().naks_sent > 0);
  CHECK(p.qa->stats().retransmitted_packets > 0);
}

TEST_CASE("AR on: messages stay whole (First, Middle, Last), no NAK, no resend") {
  Pair p(sprayed());
  enable_ar(p);
  const std::string path = temp_pcap("ar");
  p.fabric.start_capture(path, 128);
  p.fill_a(2);
  post_write_then_imm(p, 256 * 1024);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(wc.imm_data == 0x01020304);
  CHECK(wc.byte_len == 0);  // the zero-byte WRITE with immediate
  // When the immediate completes, every byte of the data is in place.
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 256 * 1024) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.qb->stats().naks_sent == 0);
  CHECK(p.qa->stats().retransmitted_packets == 0);
  p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  // 256 KiB at a 4096-byte MTU: 64 packets (First, 62 Middle, Last), then
  // the zero-byte WRITE Only with Immediate.
  const auto req = from(all, p.a.config().ip);
  REQUIRE(req.size() == 65);
  CHECK(req[0].opcode == op::kRcWriteFirst);
  for (std::size_t i = 1; i < 63; ++i) CHECK(req[i].opcode == op::kRcWriteMiddle);
  CHECK(req[63].opcode == op::kRcWriteLast);
  CHECK(req[64].opcode == op::kRcWriteOnlyImm);
  CHECK(req[63].ack_req);
  CHECK_FALSE(req[62].ack_req);
  // Two messages: the last ACK's MSN is 2 (one per message, not per packet).
  const auto acks = from(all, p.b.config().ip);
  REQUIRE_FALSE(acks.empty());
  CHECK(acks.back().msn == 2);
}

TEST_CASE("AR on: a WRITE with immediate of four packets completes once, with its whole length") {
  PairConfig c = sprayed();
  c.fabric.capture_point = sim::CapturePoint::ReceiverPort;  // arrival order
  Pair p(c);
  enable_ar(p);
  const std::string path = temp_pcap("ar-imm");
  p.fabric.start_capture(path, 128);
  p.fill_a(4);
  constexpr std::uint32_t kLen = 16 * 1024;  // 4 packets at MTU 4096
  REQUIRE(p.post_recv_b(0, 0, 99) == 0);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), kLen, p.mr_a->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = 3;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = 0x0a0b0c0d;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data());
  wr.wr.rdma.rkey = p.mr_b->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(wc.byte_len == kLen);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), kLen) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  ibv_wc extra{};
  CHECK(p.cq_b->poll(1, &extra) == 0);  // one message, one completion
  p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  // In arrival order: the spray (paths 0, 700, 1400, 2100 ns apart, one drawn
  // per packet) must have reordered them, or this test shows nothing.
  auto req = from(all, p.a.config().ip);
  REQUIRE(req.size() == 4);
  REQUIRE_FALSE(std::is_sorted(req.begin(), req.end(),
                               [](const Pkt& x, const Pkt& y) { return x.psn < y.psn; }));
  std::sort(req.begin(), req.end(), [](const Pkt& x, const Pkt& y) { return x.psn < y.psn; });
  CHECK(req[0].opcode == op::kRcWriteFirst);
  CHECK(req[1].opcode == op::kRcWriteMiddle);
  CHECK(req[2].opcode == op::kRcWriteMiddle);
  CHECK(req[3].opcode == op::kRcWriteLastImm);
  // No NAK, no resend, and the one ACK carries MSN 1.
  CHECK(p.qb->stats().naks_sent == 0);
  CHECK(p.qa->stats().retransmitted_packets == 0);
  const auto acks = from(all, p.b.config().ip);
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].msn == 1);
}

TEST_CASE("AR on with a real loss: the hole outlives the AR timeout, one NAK, recovery") {
  Pair p(sprayed());
  enable_ar(p);
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::psn(10));
  p.fill_a(3);
  post_write_then_imm(p, 128 * 1024);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 128 * 1024) == 0);
  CHECK(p.qb->stats().naks_sent == 1);
  CHECK(p.qa->stats().naks_received == 1);
}
