// RC transport scenarios: each checked on the completions, the memory and
// the capture (decoded with rdmalab::wire, ICRC verified).
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <cstdio>

#include "rdmalab/wire/opcode.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;
namespace op = rdmalab::wire::opcode;

namespace {

std::vector<Pkt> requests(const Pair& p, const std::vector<Pkt>& all) {
  return from(all, p.a.config().ip);
}
std::vector<Pkt> responses(const Pair& p, const std::vector<Pkt>& all) {
  return from(all, p.b.config().ip);
}

struct Capture {
  explicit Capture(Pair& p, const std::string& name) : pair(p), path(temp_pcap(name)) {
    p.fabric.start_capture(path);
  }
  std::vector<Pkt> read() {
    pair.fabric.stop_capture();
    auto all = read_capture(path);
    std::remove(path.c_str());
    for (const Pkt& k : all) {
      CHECK(k.icrc_ok);
      CHECK_FALSE(k.malformed);
    }
    return all;
  }
  Pair& pair;
  std::string path;
};

}  // namespace

TEST_CASE("a 3072-byte WRITE at MTU 1024 is WRITE First, Middle, Last with AckReq on Last") {
  Pair p;
  Capture cap(p, "write3072");
  p.fill_a(1);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3072, 100, 7) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RDMA_WRITE);
  CHECK(wc.wr_id == 7);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data() + 100, 3072) == 0);
  CHECK(p.buf_b[99] == 0);
  CHECK(p.buf_b[3172] == 0);

  const auto all = cap.read();
  const auto req = requests(p, all);
  REQUIRE(req.size() == 3);
  CHECK(req[0].opcode == op::kRcWriteFirst);
  CHECK(req[1].opcode == op::kRcWriteMiddle);
  CHECK(req[2].opcode == op::kRcWriteLast);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(req[i].psn == i);
    CHECK(req[i].payload == 1024);
    CHECK(req[i].ack_req == (i == 2));
    CHECK(req[i].dest_qp == p.qb->qp_num());
  }
  const auto rsp = responses(p, all);
  REQUIRE(rsp.size() == 1);
  CHECK(rsp[0].opcode == op::kRcAcknowledge);
  CHECK(rsp[0].psn == 2);
  CHECK(rsp[0].syndrome == 0x1F);
  CHECK(rsp[0].msn == 1);
  // One UDP source port per connection, in both directions.
  CHECK(req[0].udp_src == rsp[0].udp_src);
  CHECK(req[0].udp_src >= 0xC000);
}

TEST_CASE("PSN 1 dropped in two 3072-byte WRITEs: one NAK(PSN 1), then PSNs 1-5 resent") {
  Pair p;
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::psn(1));
  Capture cap(p, "nak");
  p.fill_a(2);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3072, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 3072, 3072, 3072, 2) == 0);
  CHECK(Pair::poll_one(*p.cq_a).wr_id == 1);
  CHECK(Pair::poll_one(*p.cq_a).wr_id == 2);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 6144) == 0);

  const auto all = cap.read();
  const auto rsp = responses(p, all);
  REQUIRE(rsp.size() >= 2);
  CHECK(rsp[0].syndrome == 0x60);  // NAK PSN sequence error
  CHECK(rsp[0].psn == 1);          // the PSN the responder expected
  std::size_t naks = 0;
  for (const Pkt& k : rsp) naks += k.syndrome == 0x60 ? 1u : 0u;
  CHECK(naks == 1);  // silence after the first NAK until PSN 1 arrives
  const auto req = requests(p, all);
  std::vector<std::uint32_t> psns;
  for (const Pkt& k : req) psns.push_back(k.psn);
  // 0..5 once (1 lost on the wire but captured at the sender), then 1..5 again.
  const std::vector<std::uint32_t> want{0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5};
  CHECK(psns == want);
  CHECK(p.qa->stats().naks_received == 1);
  CHECK(p.qb->stats().naks_sent == 1);
  CHECK(p.qa->stats().retransmitted_packets == 5);
  CHECK(rsp.back().syndrome == 0x1F);
  CHECK(rsp.back().psn == 5);

  // The devices' counters, as mlx5 names them. PSNs 2-5 arrived while PSN 1
  // was expected: 4 out of sequence at the responder; one sequence NAK made
  // the requester resend; no timer expired, nothing was a duplicate.
  const auto ca = p.a.counters();
  const auto cb = p.b.counters();
  CHECK(cb.out_of_sequence == 4);
  CHECK(cb.duplicate_request == 0);
  CHECK(ca.packet_seq_err == 1);
  CHECK(ca.local_ack_timeout_err == 0);
  CHECK(ca.retry_exceeded_err == 0);
  // Like a NIC's, they outlive the QP.
  REQUIRE(p.pd_b->destroy_qp(p.qb) == 0);
  p.qb = nullptr;
  CHECK(p.b.counters().out_of_sequence == 4);
}

TEST_CASE(
    "all ACKs dropped, timeout 14, retry_cnt 3: 3 resends 67 ms apart, RETRY_EXC_ERR, flush") {
  PairConfig c;
  c.retry_cnt = 3;
  c.timeout = 14;
  Pair p(c);
  p.fabric.link(p.b, p.a).drops.push_back(sim::DropRule::responses());
  Capture cap(p, "retry");
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 512, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 512, 512, 512, 2) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 16, 0, 3) == 0);
  ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 1);
  CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
  CHECK(p.qa->state() == IBV_QPS_ERR);
  wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 2);
  CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
  wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 3);
  CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);

  const auto req = requests(p, cap.read());
  // PSN 0 is first sent at t0 with PSNs 1 and 2 right after it; each timeout
  // resends from PSN 0.
  std::vector<std::int64_t> starts;
  for (const Pkt& k : req)
    if (k.psn == 0) starts.push_back(k.time_ns);
  REQUIRE(starts.size() == 4);                   // the first transmission + 3 retries
  const double timeout_ns = 4096.0 * (1 << 14);  // 67.108864 ms
  for (std::size_t i = 1; i < starts.size(); ++i) {
    const double gap = static_cast<double>(starts[i] - starts[i - 1]);
    CHECK(gap == doctest::Approx(timeout_ns).epsilon(0.001));
  }
  CHECK(p.qa->stats().timeouts == 4);
  CHECK(p.fabric.now() >= 4 * static_cast<sim::Time>(timeout_ns));
}

TEST_CASE("SEND with no receive posted: RNR NAK, retries after the RNR timer, RNR_RETRY_EXC_ERR") {
  PairConfig c;
  c.rnr_retry = 2;
  c.min_rnr_timer = 14;  // 1.28 ms
  Pair p(c);
  Capture cap(p, "rnr");
  REQUIRE(p.post(IBV_WR_SEND, 0, 64, 0, 9) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_RNR_RETRY_EXC_ERR);
  CHECK(wc.wr_id == 9);
  CHECK(p.qa->state() == IBV_QPS_ERR);
  CHECK(p.qb->state() == IBV_QPS_RTS);  // the responder is fine

  const auto all = cap.read();
  const auto req = requests(p, all);
  const auto rsp = responses(p, all);
  REQUIRE(req.size() == 3);  // first try + rnr_retry 2
  REQUIRE(rsp.size() == 3);
  for (const Pkt& k : rsp) {
    CHECK(k.syndrome == (0x20 | 14));  // RNR NAK with the responder's min_rnr_timer
    CHECK(k.psn == 0);
  }
  for (const Pkt& k : req) CHECK(k.opcode == op::kRcSendOnly);
  const double gap = static_cast<double>(req[1].time_ns - req[0].time_ns);
  CHECK(gap >= 1.28e6);
  CHECK(gap < 1.30e6);
}

TEST_CASE("RNR then a receive is posted: the retry succeeds") {
  PairConfig c;
  c.min_rnr_timer = 1;
  Pair p(c);
  p.fill_a(3);
  REQUIRE(p.post(IBV_WR_SEND, 0, 100, 0, 1) == 0);
  p.fabric.run_until([&] { return p.qb->stats().rnr_naks_sent > 0; });
  REQUIRE(p.post_recv_b(0, 256, 77) == 0);
  ibv_wc wc = Pair::poll_one(*p.cq_a);  // A and B share nothing: A's CQ
  CHECK(wc.status == IBV_WC_SUCCESS);
  wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RECV);
  CHECK(wc.byte_len == 100);
  CHECK(wc.wr_id == 77);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 100) == 0);
}

TEST_CASE("wrong rkey: NAK remote access error, IBV_WC_REM_ACCESS_ERR, nothing written") {
  Pair p;
  Capture cap(p, "rkey");
  p.fill_a(4);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 256, 0, 5, p.mr_b->rkey() + 0x100) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 256, 0, 6) == 0);
  ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 5);
  CHECK(wc.status == IBV_WC_REM_ACCESS_ERR);
  wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 6);
  CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
  CHECK(p.buf_b[0] == 0);
  CHECK(p.qb->state() == IBV_QPS_ERR);
  const auto rsp = responses(p, cap.read());
  REQUIRE_FALSE(rsp.empty());
  CHECK(rsp[0].syndrome == 0x62);
  CHECK(rsp[0].psn == 0);
}

TEST_CASE("WRITE beyond the remote MR and WRITE to an MR without REMOTE_WRITE fail remotely") {
  Pair p;
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64, p.buf_b.size() - 32, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_REM_ACCESS_ERR);

  Pair q;
  sim::MemoryRegion* ro = q.pd_b->reg_mr(q.buf_b.data(), 4096, IBV_ACCESS_REMOTE_READ);
  REQUIRE(ro != nullptr);
  REQUIRE(q.post(IBV_WR_RDMA_WRITE, 0, 64, 0, 1, ro->rkey()) == 0);
  CHECK(Pair::poll_one(*q.cq_a).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("RDMA READ of 2500 bytes at MTU 1024: three response packets, PSNs consumed") {
  Pair p;
  Capture cap(p, "read");
  for (std::size_t i = 0; i < 4096; ++i) p.buf_b[i] = static_cast<std::uint8_t>(i * 13);
  REQUIRE(p.post(IBV_WR_RDMA_READ, 0, 2500, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 3000, 8, 3000, 2) == 0);
  ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RDMA_READ);
  CHECK(wc.byte_len == 2500);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 2500) == 0);
  CHECK(Pair::poll_one(*p.cq_a).wr_id == 2);

  const auto all = cap.read();
  const auto req = requests(p, all);
  REQUIRE(req.size() == 2);
  CHECK(req[0].opcode == op::kRcReadRequest);
  CHECK(req[0].psn == 0);
  CHECK(req[0].ack_req);
  CHECK(req[1].psn == 3);  // the READ took PSNs 0, 1, 2
  const auto rsp = responses(p, all);
  REQUIRE(rsp.size() == 4);
  CHECK(rsp[0].opcode == op::kRcReadResponseFirst);
  CHECK(rsp[1].opcode == op::kRcReadResponseMiddle);
  CHECK(rsp[2].opcode == op::kRcReadResponseLast);
  CHECK(rsp[2].payload == 2500 - 2048);
  CHECK(rsp[0].psn == 0);
  CHECK(rsp[2].psn == 2);
  CHECK(rsp[3].opcode == op::kRcAcknowledge);
}

TEST_CASE("a lost READ response: the READ is re-issued and re-executed from the resources") {
  Pair p;
  // Drop the first READ response (response PSN 1 of 0..2).
  p.fabric.link(p.b, p.a).drops.push_back(sim::DropRule::opcode(op::kRcReadResponseMiddle, 1));
  Capture cap(p, "readloss");
  for (std::size_t i = 0; i < 4096; ++i) p.buf_b[i] = static_cast<std::uint8_t>(i * 5 + 1);
  REQUIRE(p.post(IBV_WR_RDMA_READ, 0, 3000, 0, 1) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 3000) == 0);
  const auto req = requests(p, cap.read());
  REQUIRE(req.size() == 2);
  CHECK(req[1].opcode == op::kRcReadRequest);
  CHECK(req[1].psn == 1);  // re-issued from the missing response PSN
  CHECK(p.qb->stats().duplicates_received == 1);
}

TEST_CASE("atomics: FetchAdd and CmpSwap, and a duplicate replayed without executing twice") {
  Pair p;
  std::uint64_t v = 40;
  std::memcpy(p.buf_b.data() + 64, &v, 8);
  // Drop the first atomic ACK: the requester times out and resends; the
  // responder must answer from its resources, not add again.
  p.fabric.link(p.b, p.a).drops.push_back(sim::DropRule::opcode(op::kRcAtomicAcknowledge, 1));
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), 8, p.mr_a->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data() + 64);
  wr.wr.atomic.rkey = p.mr_b->rkey();
  wr.wr.atomic.compare_add = 2;
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_FETCH_ADD);
  std::uint64_t got = 0;
  std::memcpy(&got, p.buf_a.data(), 8);
  CHECK(got == 40);
  std::memcpy(&got, p.buf_b.data() + 64, 8);
  CHECK(got == 42);  // added once, although the request arrived twice
  CHECK(p.qb->stats().duplicates_received == 1);
  CHECK(p.qa->stats().timeouts == 1);

  sge.addr = reinterpret_cast<std::uintptr_t>(p.buf_a.data() + 8);
  wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  wr.wr.atomic.compare_add = 42;
  wr.wr.atomic.swap = 1000;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.opcode == IBV_WC_COMP_SWAP);
  std::memcpy(&got, p.buf_a.data() + 8, 8);
  CHECK(got == 42);
  std::memcpy(&got, p.buf_b.data() + 64, 8);
  CHECK(got == 1000);
}

TEST_CASE("PSN wrap from 0xFFFFFE: PSNs go FFFFFE, FFFFFF, 0, 1") {
  PairConfig c;
  c.psn_a = 0xFFFFFE;
  Pair p(c);
  Capture cap(p, "wrap");
  p.fill_a(5);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3072, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 100, 5000, 2) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 3072) == 0);
  const auto all = cap.read();
  std::vector<std::uint32_t> psns;
  for (const Pkt& k : requests(p, all)) psns.push_back(k.psn);
  CHECK(psns == std::vector<std::uint32_t>{0xFFFFFE, 0xFFFFFF, 0, 1});
  const auto rsp = responses(p, all);
  REQUIRE(rsp.size() == 2);
  CHECK(rsp[0].psn == 0);
  CHECK(rsp[1].psn == 1);
}

TEST_CASE("PSN wrap with a loss across the wrap: go-back-N still lands the bytes") {
  PairConfig c;
  c.psn_a = 0xFFFFFE;
  Pair p(c);
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::psn(0xFFFFFF));
  p.fill_a(6);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 4096, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 4096) == 0);
  CHECK(p.qa->stats().naks_received == 1);
}

TEST_CASE("SEND with immediate, SEND with invalidate and WRITE with immediate") {
  Pair p;
  p.fill_a(7);
  // The invalidated rkey must name a valid type 2 window (else class J):
  // one bound on B's QP, unsignalled.
  sim::MemoryRegion* bindable =
      p.pd_b->reg_mr(p.buf_b.data() + 30000, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  ibv_send_wr bw{};
  bw.opcode = IBV_WR_BIND_MW;
  bw.bind_mw.mw = mw->get();
  bw.bind_mw.rkey = ibv_inc_rkey(mw->get()->rkey);
  bw.bind_mw.bind_info =
      ibv_mw_bind_info{bindable->get(), bindable->iova(), 64, IBV_ACCESS_REMOTE_READ};
  ibv_send_wr* bbad = nullptr;
  REQUIRE(p.qb->post_send(&bw, &bbad) == 0);
  REQUIRE(p.post_recv_b(0, 4096, 11) == 0);
  REQUIRE(p.post_recv_b(4096, 4096, 12) == 0);
  REQUIRE(p.post_recv_b(8192, 16, 13) == 0);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), 2000, p.mr_a->lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(0xC0DE0001);
  wr.wr_id = 1;
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  wr.opcode = IBV_WR_SEND_WITH_INV;
  wr.invalidate_rkey = bw.bind_mw.rkey;
  wr.wr_id = 2;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htonl(0xC0DE0003);
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data() + 20000);
  wr.wr.rdma.rkey = p.mr_b->rkey();
  wr.wr_id = 3;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);

  ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.wr_id == 11);
  CHECK(wc.byte_len == 2000);
  CHECK((wc.wc_flags & IBV_WC_WITH_IMM) != 0);
  CHECK(ntohl(wc.imm_data) == 0xC0DE0001);
  wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.wr_id == 12);
  CHECK((wc.wc_flags & IBV_WC_WITH_INV) != 0);
  CHECK(wc.invalidated_rkey == bw.bind_mw.rkey);
  CHECK(mw->state() == sim::MemoryWindow::State::Free);
  wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.wr_id == 13);  // WRITE with immediate consumes a receive WQE
  CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(ntohl(wc.imm_data) == 0xC0DE0003);
  CHECK(wc.byte_len == 2000);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 2000) == 0);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data() + 4096, 2000) == 0);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data() + 20000, 2000) == 0);
  for (std::uint64_t id = 1; id <= 3; ++id) CHECK(Pair::poll_one(*p.cq_a).wr_id == id);
}

TEST_CASE("a SEND longer than the receive buffer: LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR") {
  Pair p;
  REQUIRE(p.post_recv_b(0, 100, 1) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 200, 0, 2) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_LOC_LEN_ERR);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_REM_INV_REQ_ERR);
}

TEST_CASE("unsignalled WRs produce no completion, inline data is copied at post time") {
  Pair p;
  REQUIRE(p.post_recv_b(0, 64, 1) == 0);
  std::uint8_t msg[32];
  for (int i = 0; i < 32; ++i) msg[i] = static_cast<std::uint8_t>(0xA0 + i);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(msg), 32, 0};  // lkey unused with inline
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE;  // not signalled
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  std::memset(msg, 0, sizeof msg);  // the caller may reuse the buffer at once
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 8, 100, 2) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.wr_id == 2);  // only the signalled one
  CHECK(p.cq_a->poll(1, const_cast<ibv_wc*>(&wc)) == 0);
  const ibv_wc r = Pair::poll_one(*p.cq_b);
  CHECK(r.byte_len == 32);
  CHECK(p.buf_b[0] == 0xA0);
  CHECK(p.buf_b[31] == 0xA0 + 31);
}

TEST_CASE("a bad lkey is not a post error: the WR completes with LOC_PROT_ERR") {
  Pair p;
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), 64, p.mr_a->lkey() ^ 0x100};
  ibv_send_wr wr{};
  wr.wr_id = 4;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data());
  wr.wr.rdma.rkey = p.mr_b->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_LOC_PROT_ERR);
  CHECK(p.qa->state() == IBV_QPS_ERR);

  Pair q;  // an SGE running past the end of its MR
  REQUIRE(q.post(IBV_WR_RDMA_WRITE, q.buf_a.size() - 10, 64, 0, 5) == 0);
  CHECK(Pair::poll_one(*q.cq_a).status == IBV_WC_LOC_PROT_ERR);
}

TEST_CASE("a duplicate WRITE (its ACK lost) is re-ACKed, not re-executed, tail loss times out") {
  PairConfig c;
  c.timeout = 10;  // 4.2 ms
  Pair p(c);
  p.fabric.link(p.b, p.a).drops.push_back(sim::DropRule::responses(1));
  p.fill_a(8);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 2048, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.qb->stats().duplicates_received == 2);
  // The first ACK (lost), then one re-ACK per duplicate packet, as rxe does.
  CHECK(p.qb->stats().acks_sent == 3);
  CHECK(p.qa->stats().timeouts == 1);
  CHECK(p.fabric.now() >= 4096 << 10);
  // Both packets of the WRITE came again after the timeout: 2 duplicates.
  CHECK(p.b.counters().duplicate_request == 2);
  CHECK(p.a.counters().local_ack_timeout_err == 1);
  CHECK(p.a.counters().packet_seq_err == 0);
}

TEST_CASE("a bit flipped on the wire: the receiver drops the packet for its ICRC, NAK, resend") {
  PairConfig c;
  c.fabric.capture_point = sim::CapturePoint::ReceiverPort;
  Pair p(c);
  p.fabric.link(p.a, p.b).corruptions.push_back(sim::DropRule::psn(1));
  const std::string path = temp_pcap("corrupt");
  p.fabric.start_capture(path);
  p.fill_a(4);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3072, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 3072, 3072, 3072, 2) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 6144) == 0);
  CHECK(p.fabric.stats().packets_corrupted == 1);
  CHECK(p.fabric.stats().bad_icrc == 1);
  CHECK(p.qb->stats().naks_sent == 1);

  // At the receiver's port the damaged frame is there, with a wrong ICRC;
  // the NAK asks for it again and it comes back whole.
  p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  std::vector<std::uint32_t> bad, psns;
  for (const Pkt& k : requests(p, all)) {
    if (!k.icrc_ok) bad.push_back(k.psn);
    psns.push_back(k.psn);
  }
  CHECK(bad == std::vector<std::uint32_t>{1});
  CHECK(psns == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5});
  for (const Pkt& k : responses(p, all)) CHECK(k.icrc_ok);
  CHECK(responses(p, all).front().syndrome == 0x60);
}

TEST_CASE("without the receiver's ICRC check a flipped bit lands in memory") {
  PairConfig c;
  c.fabric.verify_icrc = false;
  Pair p(c);
  p.fabric.link(p.a, p.b).corruptions.push_back(sim::DropRule::psn(1));
  p.fill_a(5);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3072, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.fabric.stats().packets_corrupted == 1);
  CHECK(p.fabric.stats().bad_icrc == 0);
  // The last byte of the second packet's payload, bit 0.
  for (std::size_t i = 0; i < 3072; ++i) {
    CAPTURE(i);
    CHECK(p.buf_b[i] == (i == 2047 ? p.buf_a[i] ^ 0x01 : p.buf_a[i]));
  }
}

TEST_CASE("random bit errors both ways: every message lands intact, each damaged packet dropped") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    PairConfig c;
    c.fabric.seed = seed;
    c.timeout = 8;  // 1 ms: a lost tail is resent soon
    Pair p(c);
    p.fabric.link(p.a, p.b).corrupt = 0.05;
    p.fabric.link(p.b, p.a).corrupt = 0.05;
    p.fill_a(static_cast<std::uint8_t>(seed));
    for (std::uint64_t i = 0; i < 32; ++i)
      REQUIRE(p.post(IBV_WR_RDMA_WRITE, i * 4096, 4096, i * 4096, i) == 0);
    for (std::uint64_t i = 0; i < 32; ++i) {
      const ibv_wc wc = Pair::poll_one(*p.cq_a);
      CHECK(wc.wr_id == i);
      CHECK(wc.status == IBV_WC_SUCCESS);
    }
    CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 32 * 4096) == 0);
    CHECK(p.fabric.stats().packets_corrupted > 0);
    CHECK(p.fabric.stats().bad_icrc == p.fabric.stats().packets_corrupted);
  }
}

TEST_CASE("ACK coalescing: one ACK may cover several messages") {
  PairConfig c;
  c.fabric.ack_coalesce_ns = 5 * sim::kMicrosecond;
  Pair p(c);
  for (std::uint64_t i = 0; i < 20; ++i) REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64, 0, i) == 0);
  for (std::uint64_t i = 0; i < 20; ++i) CHECK(Pair::poll_one(*p.cq_a).wr_id == i);
  CHECK(p.qb->stats().acks_sent < 5);
}

TEST_CASE("IPv6 hosts: RoCEv2 over IPv6 with a valid ICRC") {
  PairConfig c;
  c.ipv6 = true;
  Pair p(c);
  Capture cap(p, "ipv6");
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 1500, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  const auto all = cap.read();
  CHECK(all.size() == 3);
  CHECK_FALSE(all[0].src.v4);
}

TEST_CASE("retry_cnt 7: 7 retries by the IBTA, forever with the rxe-compatible switch") {
  PairConfig c;
  c.retry_cnt = 7;
  c.timeout = 10;  // 4.19 ms
  {
    Pair p(c);
    p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::after(0));  // a dead peer
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64, 0, 1) == 0);
    CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_RETRY_EXC_ERR);
    CHECK(p.qa->stats().packets_sent == 8);  // 1 + 7 retries
    // Each of the 8 sends timed out; the 8th expiry found no retry left.
    CHECK(p.a.counters().local_ack_timeout_err == 8);
    CHECK(p.a.counters().retry_exceeded_err == 1);
  }
  c.fabric.rxe.retry_cnt_7_infinite = true;
  Pair p(c);
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::after(0));
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64, 0, 1) == 0);
  CHECK_FALSE(p.fabric.run(p.fabric.now() + 100 * (4096 << 10)));  // never idle
  ibv_wc wc;
  CHECK(p.cq_a->poll_now(1, &wc) == 0);
  CHECK(p.qa->stats().packets_sent > 90);
  CHECK(p.qa->state() == IBV_QPS_RTS);
}

TEST_CASE("RNR with pipelined SENDs: the packets behind it get no sequence NAK") {
  PairConfig c;
  c.min_rnr_timer = 1;  // 0.01 ms
  c.retry_cnt = 0;      // a single sequence-error NAK would fail the QP
  Pair p(c);
  for (std::uint64_t i = 0; i < 4; ++i) REQUIRE(p.post(IBV_WR_SEND, 0, 32, 0, i) == 0);
  p.fabric.run_until([&] { return p.qb->stats().rnr_naks_sent >= 3; });
  for (std::uint64_t i = 0; i < 4; ++i) REQUIRE(p.post_recv_b(i * 64, 64, i) == 0);
  for (std::uint64_t i = 0; i < 4; ++i) {
    const ibv_wc wc = Pair::poll_one(*p.cq_a);
    CHECK(wc.status == IBV_WC_SUCCESS);
    CHECK(wc.wr_id == i);
  }
  CHECK(p.qb->stats().naks_sent == p.qb->stats().rnr_naks_sent);  // RNR NAKs only
}

TEST_CASE("a zero-length WRITE with immediate and rkey 0 is accepted: no memory, no R_Key check") {
  // IBTA C9-88: a zero-length RDMA WRITE carries no data, so the responder
  // checks neither R_Key nor VA (rxe does the same). TensorFlow's ACK
  // messages and GDR's buffer release are such WRITEs.
  Pair p;
  ibv_recv_wr rwr{};
  rwr.wr_id = 9;
  ibv_recv_wr* rbad = nullptr;
  REQUIRE(p.qb->post_recv(&rwr, &rbad) == 0);
  ibv_send_wr wr{};
  wr.wr_id = 8;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(0xFFFFFFFE);
  wr.wr.rdma.remote_addr = 0;
  wr.wr.rdma.rkey = 0;
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  const ibv_wc r = Pair::poll_one(*p.cq_b);
  CHECK(r.status == IBV_WC_SUCCESS);
  CHECK(r.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(r.byte_len == 0);
  CHECK(ntohl(r.imm_data) == 0xFFFFFFFE);
  // A non-zero length with the same key is refused.
  wr.num_sge = 1;
  ibv_sge g{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), 8, p.mr_a->lkey()};
  wr.sg_list = &g;
  wr.opcode = IBV_WR_RDMA_WRITE;
  REQUIRE(p.qa->post_send(&wr, &bad) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_REM_ACCESS_ERR);
}
