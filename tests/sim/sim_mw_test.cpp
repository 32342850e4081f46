// Memory windows in the simulator (IBTA 10.6.7): allocation, type 1 and
// type 2 binds, the responder's checks of a window's rkey, local and remote
// invalidation, and every rejection, with the statuses and errno values
// rdma_rxe gives.
#include <arpa/inet.h>

#include "sim_helpers.hpp"

using namespace simtest;

namespace {

constexpr std::size_t kOff = 0x8000;  // the window's MR: buf_b[kOff, kOff + kLen)
constexpr std::size_t kLen = 0x4000;
constexpr int kBindable =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;

// A pair (qa <-> qb) plus a second connection between the same PDs
// (qa2 <-> qb2), and an MR on B registered for binding windows.
struct MwPair : Pair {
  MwPair() {
    mr_bind = pd_b->reg_mr(buf_b.data() + kOff, kLen, kBindable);
    REQUIRE(mr_bind != nullptr);
    cq_a2 = a.create_cq(256);
    cq_b2 = b.create_cq(256);
    qa2 = make_qp(*pd_a, *cq_a2);
    qb2 = make_qp(*pd_b, *cq_b2);
    REQUIRE(connect(*qa2, b, qb2->qp_num(), 0x100, 0x200) == 0);
    REQUIRE(connect(*qb2, a, qa2->qp_num(), 0x200, 0x100) == 0);
  }

  std::uint64_t win_addr(std::uint64_t off = 0) const { return mr_bind->iova() + off; }

  /// Posts a signalled IBV_WR_BIND_MW on `qp` and polls its completion; on
  /// success records the new rkey in the ibv_mw, as a verbs program does.
  static ibv_wc bind(sim::QueuePair& qp, sim::CompletionQueue& cq, sim::MemoryWindow& mw,
                     sim::MemoryRegion* mr, std::uint64_t addr, std::uint64_t len, int access) {
    ibv_send_wr wr{};
    wr.wr_id = 77;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = mw.get();
    wr.bind_mw.rkey = ibv_inc_rkey(mw.get()->rkey);
    wr.bind_mw.bind_info.mr = mr != nullptr ? mr->get() : nullptr;
    wr.bind_mw.bind_info.addr = addr;
    wr.bind_mw.bind_info.length = len;
    wr.bind_mw.bind_info.mw_access_flags = static_cast<unsigned>(access);
    ibv_send_wr* bad = nullptr;
    REQUIRE(qp.post_send(&wr, &bad) == 0);
    const ibv_wc wc = poll_one(cq);
    CHECK(wc.wr_id == 77);
    if (wc.status == IBV_WC_SUCCESS) mw.get()->rkey = wr.bind_mw.rkey;
    return wc;
  }
  ibv_wc bind_b(sim::MemoryWindow& mw, std::uint64_t off, std::uint64_t len,
                int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) {
    return bind(*qb, *cq_b, mw, mr_bind, win_addr(off), len, access);
  }

  /// A 64-byte WRITE from A (on qa, or qa2) into the window's MR at `off`.
  ibv_wc write(std::uint32_t rkey, std::uint64_t off, sim::QueuePair* qp = nullptr,
               std::uint32_t len = 64) {
    sim::QueuePair* q = qp != nullptr ? qp : qa;
    REQUIRE(post(IBV_WR_RDMA_WRITE, 0, len, kOff + off, 5, rkey, q) == 0);
    return poll_one(q == qa ? *cq_a : *cq_a2);
  }

  /// Posts an unsignalled or signalled local op on qb.
  int post_b(ibv_wr_opcode op, std::uint32_t inv_rkey, std::uint64_t id) {
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = inv_rkey;
    ibv_send_wr* bad = nullptr;
    return qb->post_send(&wr, &bad);
  }

  /// SEND with Invalidate of `rkey` from A to B (a receive is posted first).
  void send_inv(std::uint32_t rkey) {
    REQUIRE(post_recv_b(0, 256, 41) == 0);
    ibv_sge sge{mr_a->iova(), 32, mr_a->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = 40;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    ibv_send_wr* bad = nullptr;
    REQUIRE(qa->post_send(&wr, &bad) == 0);
  }

  sim::MemoryRegion* mr_bind = nullptr;
  sim::CompletionQueue* cq_a2 = nullptr;
  sim::CompletionQueue* cq_b2 = nullptr;
  sim::QueuePair* qa2 = nullptr;
  sim::QueuePair* qb2 = nullptr;
};

}  // namespace

TEST_CASE("alloc_mw: type 2 starts free, type 1 valid; keys never collide with an MR's") {
  MwPair p;
  sim::MemoryWindow* w2 = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  sim::MemoryWindow* w1 = p.pd_b->alloc_mw(IBV_MW_TYPE_1);
  REQUIRE(w2 != nullptr);
  REQUIRE(w1 != nullptr);
  CHECK(w2->state() == sim::MemoryWindow::State::Free);
  CHECK(w1->state() == sim::MemoryWindow::State::Valid);
  CHECK(w2->get()->type == IBV_MW_TYPE_2);
  CHECK(w2->get()->pd == p.pd_b->get());
  CHECK(w2->get()->rkey == w2->rkey());
  CHECK((w2->rkey() >> 8) != (w1->rkey() >> 8));
  CHECK((w2->rkey() >> 8) != (p.mr_bind->rkey() >> 8));
  CHECK(p.mr_bind->get()->lkey == p.mr_bind->lkey());
  CHECK(p.mr_bind->get()->pd == p.pd_b->get());
  errno = 0;
  CHECK(p.pd_b->alloc_mw(static_cast<ibv_mw_type>(0)) == nullptr);
  CHECK(errno == EINVAL);
  // A PD with a window cannot go away; a window of another PD is not ours.
  sim::ProtectionDomain* other = p.b.alloc_pd();
  sim::MemoryWindow* w3 = other->alloc_mw(IBV_MW_TYPE_2);
  CHECK(p.b.dealloc_pd(other) == EBUSY);
  CHECK(p.pd_b->dealloc_mw(w3) == EINVAL);
  CHECK(other->dealloc_mw(w3) == 0);
  CHECK(p.b.dealloc_pd(other) == 0);
}

TEST_CASE("type 2 bind: new key byte, WRITE and READ through the window on its QP") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  const std::uint32_t old_key = mw->rkey();
  const ibv_wc wc = p.bind_b(*mw, 0x100, 0x200);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_BIND_MW);
  CHECK(mw->rkey() == ibv_inc_rkey(old_key));
  CHECK((mw->rkey() >> 8) == (old_key >> 8));
  CHECK(mw->state() == sim::MemoryWindow::State::Valid);
  CHECK(mw->qp() == p.qb);
  CHECK(mw->mr() == p.mr_bind);
  CHECK(p.mr_bind->bound_windows() == 1);
  p.fill_a(3);
  CHECK(p.write(mw->rkey(), 0x100).status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_b.data() + kOff + 0x100, p.buf_a.data(), 64) == 0);
  std::memset(p.buf_a.data(), 0, 64);
  REQUIRE(p.post(IBV_WR_RDMA_READ, 0, 64, kOff + 0x100, 6, mw->rkey()) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_b.data() + kOff + 0x100, p.buf_a.data(), 64) == 0);
  // The key of before the bind names no window any more.
  CHECK(p.write(old_key, 0x100).status == IBV_WC_REM_ACCESS_ERR);
  CHECK(p.qb->state() == IBV_QPS_ERR);
}

TEST_CASE("type 2 window: rejected on another QP of the same PD (NAK, REM_ACCESS_ERR, QP in ERR)") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0, 0x1000).status == IBV_WC_SUCCESS);
  p.fill_a(9);
  const ibv_wc wc = p.write(mw->rkey(), 0, p.qa2);
  CHECK(wc.status == IBV_WC_REM_ACCESS_ERR);
  CHECK(p.qb2->stats().naks_sent == 1);
  CHECK(p.qa2->stats().naks_received == 1);
  CHECK(p.qb2->state() == IBV_QPS_ERR);
  CHECK(p.buf_b[kOff] == 0);  // nothing written
  // The QP it is bound to still takes it.
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_SUCCESS);
  CHECK(p.qb->state() == IBV_QPS_RTS);
}

TEST_CASE("window rights: a read-only window refuses a WRITE") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0, 0x1000, IBV_ACCESS_REMOTE_READ).status == IBV_WC_SUCCESS);
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("window range: as rxe, the responder checks the MR's bounds, not the window's") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0x100, 0x100).status == IBV_WC_SUCCESS);
  // Outside the window but inside its MR: accepted (rxe's check_rkey()).
  CHECK(p.write(mw->rkey(), 0x1000).status == IBV_WC_SUCCESS);
  // Outside the MR: refused.
  CHECK(p.write(mw->rkey(), kLen - 32).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("bind errors complete with IBV_WC_MW_BIND_ERR and put the QP in ERR") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  const int rw = IBV_ACCESS_REMOTE_WRITE;

  SUBCASE("MR registered without IBV_ACCESS_MW_BIND") {
    sim::MemoryRegion* plain = p.pd_b->reg_mr(p.buf_b.data(), 4096, IBV_ACCESS_LOCAL_WRITE);
    CHECK(MwPair::bind(*p.qb, *p.cq_b, *mw, plain, plain->iova(), 64, rw).status ==
          IBV_WC_MW_BIND_ERR);
  }
  SUBCASE("a writable window over an MR without local write") {
    sim::MemoryRegion* ro = p.pd_b->reg_mr(p.buf_b.data(), 4096, IBV_ACCESS_MW_BIND);
    CHECK(MwPair::bind(*p.qb, *p.cq_b, *mw, ro, ro->iova(), 64, rw).status == IBV_WC_MW_BIND_ERR);
  }
  SUBCASE("range beyond the MR") {
    CHECK(p.bind_b(*mw, kLen - 16, 64).status == IBV_WC_MW_BIND_ERR);
  }
  SUBCASE("zero length (a type 2 window cannot be unbound by binding)") {
    CHECK(p.bind_b(*mw, 0, 0).status == IBV_WC_MW_BIND_ERR);
  }
  SUBCASE("QP of another PD") {
    sim::ProtectionDomain* pd2 = p.b.alloc_pd();
    sim::QueuePair* q = p.make_qp(*pd2, *p.cq_b2);
    REQUIRE(p.connect(*q, p.a, p.qa2->qp_num(), 0, 0) == 0);
    CHECK(MwPair::bind(*q, *p.cq_b2, *mw, p.mr_bind, p.win_addr(), 64, rw).status ==
          IBV_WC_MW_BIND_ERR);
    CHECK(q->state() == IBV_QPS_ERR);
    CHECK(mw->state() == sim::MemoryWindow::State::Free);
    REQUIRE(pd2->destroy_qp(q) == 0);
    return;
  }
  SUBCASE("binding a window that is already bound") {
    REQUIRE(p.bind_b(*mw, 0, 64).status == IBV_WC_SUCCESS);
    CHECK(p.bind_b(*mw, 0, 64).status == IBV_WC_MW_BIND_ERR);
  }
  SUBCASE("the ibv_mw's rkey is stale (not the key the NIC holds)") {
    REQUIRE(p.bind_b(*mw, 0, 64).status == IBV_WC_SUCCESS);
    REQUIRE(p.post_b(IBV_WR_LOCAL_INV, mw->rkey(), 3) == 0);
    REQUIRE(Pair::poll_one(*p.cq_b).status == IBV_WC_SUCCESS);
    mw->get()->rkey = ibv_inc_rkey(mw->get()->rkey);  // a program that forgot what it bound
    CHECK(p.bind_b(*mw, 0, 64).status == IBV_WC_MW_BIND_ERR);
  }
  CHECK(p.qb->state() == IBV_QPS_ERR);
}

TEST_CASE("bind post errors: EINVAL before RTS, on UD, with SGEs") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_BIND_MW;
  wr.bind_mw.mw = mw->get();
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey());
  wr.bind_mw.bind_info =
      ibv_mw_bind_info{p.mr_bind->get(), p.win_addr(), 64, IBV_ACCESS_REMOTE_READ};
  ibv_send_wr* bad = nullptr;
  sim::QueuePair* fresh = p.make_qp(*p.pd_b, *p.cq_b2);  // RESET
  CHECK(fresh->post_send(&wr, &bad) == EINVAL);
  CHECK(bad == &wr);
  ibv_sge sge{p.mr_bind->iova(), 8, p.mr_bind->lkey()};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  CHECK(p.qb->post_send(&wr, &bad) == EINVAL);
  PairConfig ud;
  ud.type = IBV_QPT_UD;
  Pair u(ud);
  sim::MemoryWindow* uw = u.pd_b->alloc_mw(IBV_MW_TYPE_2);
  wr.num_sge = 0;
  wr.bind_mw.mw = uw->get();
  CHECK(u.qb->post_send(&wr, &bad) == EINVAL);
}

TEST_CASE("LOCAL_INV revokes a type 2 window; it can be bound again with the next key") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0, 0x1000).status == IBV_WC_SUCCESS);
  const std::uint32_t first = mw->rkey();
  REQUIRE(p.post_b(IBV_WR_LOCAL_INV, first, 8) == 0);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_LOCAL_INV);
  CHECK(mw->state() == sim::MemoryWindow::State::Free);
  CHECK(p.mr_bind->bound_windows() == 0);
  REQUIRE(p.bind_b(*mw, 0, 0x1000).status == IBV_WC_SUCCESS);
  CHECK(mw->rkey() == ibv_inc_rkey(first));
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_SUCCESS);
  CHECK(p.write(first, 0).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("LOCAL_INV of what is no valid type 2 window: IBV_WC_LOC_QP_OP_ERR") {
  MwPair p;
  SUBCASE("an ordinary MR") {
    REQUIRE(p.post_b(IBV_WR_LOCAL_INV, p.mr_bind->rkey(), 8) == 0);
  }
  SUBCASE("a free window") {
    sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
    REQUIRE(p.post_b(IBV_WR_LOCAL_INV, mw->rkey(), 8) == 0);
  }
  SUBCASE("a type 1 window") {
    sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_1);
    REQUIRE(p.post_b(IBV_WR_LOCAL_INV, mw->rkey(), 8) == 0);
  }
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_LOC_QP_OP_ERR);
  CHECK(p.qb->state() == IBV_QPS_ERR);
}

TEST_CASE(
    "SEND with Invalidate revokes the window: WITH_INV at the receiver, the next WRITE fails") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0, 0x1000).status == IBV_WC_SUCCESS);
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_SUCCESS);
  p.send_inv(mw->rkey());
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  const ibv_wc r = Pair::poll_one(*p.cq_b);
  CHECK(r.status == IBV_WC_SUCCESS);
  CHECK(r.wr_id == 41);
  CHECK((r.wc_flags & IBV_WC_WITH_INV) != 0);
  CHECK(r.invalidated_rkey == mw->rkey());
  CHECK(mw->state() == sim::MemoryWindow::State::Free);
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("SEND with Invalidate of an MR's key: class J, REM_INV_REQ_ERR at the receiver only") {
  MwPair p;
  p.send_inv(p.mr_b->rkey());
  // The requester's SEND is ACKed and succeeds...
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(p.qb->stats().acks_sent == 1);
  // ...the receive completes in error and the responder QP is in error.
  const ibv_wc r = Pair::poll_one(*p.cq_b);
  CHECK(r.wr_id == 41);
  CHECK(r.status == IBV_WC_REM_INV_REQ_ERR);
  CHECK(p.qb->state() == IBV_QPS_ERR);
}

TEST_CASE("an MR with a bound window cannot be deregistered; a window keeps no dead QP") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(p.bind_b(*mw, 0, 64).status == IBV_WC_SUCCESS);
  CHECK(p.pd_b->dereg_mr(p.mr_bind) == EINVAL);
  REQUIRE(p.pd_b->destroy_qp(p.qb) == 0);
  p.qb = nullptr;
  CHECK(mw->state() == sim::MemoryWindow::State::Valid);
  CHECK(mw->qp() == nullptr);
  CHECK(p.pd_b->dealloc_mw(mw) == 0);
  CHECK(p.mr_bind->bound_windows() == 0);
  CHECK(p.pd_b->dereg_mr(p.mr_bind) == 0);
}

TEST_CASE("type 1 window: ibv_bind_mw updates the rkey; valid on every QP of the PD") {
  MwPair p;
  sim::MemoryWindow* mw = p.pd_b->alloc_mw(IBV_MW_TYPE_1);
  const std::uint32_t before = mw->get()->rkey;
  ibv_mw_bind b{};
  b.wr_id = 90;
  b.send_flags = IBV_SEND_SIGNALED;
  b.bind_info = ibv_mw_bind_info{p.mr_bind->get(), p.win_addr(), 0x1000,
                                 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
  REQUIRE(p.qb->bind_mw(mw->get(), b) == 0);
  CHECK(mw->get()->rkey == ibv_inc_rkey(before));
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_BIND_MW);
  CHECK(mw->rkey() == mw->get()->rkey);
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_SUCCESS);
  CHECK(p.write(mw->rkey(), 0, p.qa2).status == IBV_WC_SUCCESS);
  // Unbound by a bind of length 0: the key stops working.
  b.bind_info = ibv_mw_bind_info{nullptr, 0, 0, 0};
  REQUIRE(p.qb->bind_mw(mw->get(), b) == 0);
  CHECK(Pair::poll_one(*p.cq_b).status == IBV_WC_SUCCESS);
  CHECK(p.write(mw->rkey(), 0).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE(
    "ibv_bind_mw errors: EINVAL for a type 2 window or a range without MR, EPERM across PDs") {
  MwPair p;
  sim::MemoryWindow* w2 = p.pd_b->alloc_mw(IBV_MW_TYPE_2);
  sim::MemoryWindow* w1 = p.pd_b->alloc_mw(IBV_MW_TYPE_1);
  ibv_mw_bind b{};
  b.bind_info = ibv_mw_bind_info{p.mr_bind->get(), p.win_addr(), 64, IBV_ACCESS_REMOTE_READ};
  CHECK(p.qb->bind_mw(w2->get(), b) == EINVAL);
  b.bind_info.mr = nullptr;
  CHECK(p.qb->bind_mw(w1->get(), b) == EINVAL);
  sim::ProtectionDomain* pd2 = p.b.alloc_pd();
  sim::MemoryRegion* other = pd2->reg_mr(p.buf_b.data(), 64, kBindable);
  b.bind_info.mr = other->get();
  b.bind_info.addr = other->iova();
  const std::uint32_t before = w1->get()->rkey;
  CHECK(p.qb->bind_mw(w1->get(), b) == EPERM);
  CHECK(w1->get()->rkey == before);
}
