// The adaptive-routing model: packets sprayed over paths of different
// delays arrive out of order. Without AR support in the NICs that means NAKs
// and go-back-N; with it, each WRITE packet carries its RETH, is placed where
// it lands, and a following WRITE with immediate tells the receiver the data
// is complete.
#include <doctest/doctest.h>

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

TEST_CASE("AR on: every WRITE packet is a WRITE Only with RETH, no NAK, no resend") {
  Pair p(sprayed());
  enable_ar(p);
  const std::string path = temp_pcap("ar");
  p.fabric.start_capture(path, 128);
  p.fill_a(2);
  post_write_then_imm(p, 256 * 1024);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(wc.imm_data == 0x01020304);
  // When the immediate completes, every byte of the data is in place.
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 256 * 1024) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.qb->stats().naks_sent == 0);
  CHECK(p.qa->stats().retransmitted_packets == 0);
  p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  const auto req = from(all, p.a.config().ip);
  REQUIRE(req.size() == 65);
  for (std::size_t i = 0; i < 64; ++i) CHECK(req[i].opcode == op::kRcWriteOnly);
  CHECK(req[64].opcode == op::kRcWriteOnlyImm);
  CHECK(req[63].ack_req);
  CHECK_FALSE(req[62].ack_req);
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
