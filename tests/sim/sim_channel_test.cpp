// Completion channels and CQ events: one event per arm, solicited-only
// arming, the acknowledgement count, no event without an arm. The rules are
// rdma_rxe's and uverbs' (rxe_cq_post() and rxe_req_notify_cq() in
// drivers/infiniband/sw/rxe, ib_uverbs_comp_handler() in
// drivers/infiniband/core/uverbs_main.c).
#include <doctest/doctest.h>

#include <cerrno>

#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

// A second QP pair beside Pair's, on CQs created on one completion channel
// per host: qa2 on A sends, qb2 on B receives.
struct ChannelSetup {
  ChannelSetup() {
    ch_a = p.a.create_comp_channel();
    ch_b = p.b.create_comp_channel();
    REQUIRE(ch_a != nullptr);
    REQUIRE(ch_b != nullptr);
    cq_a = p.a.create_cq(64, ch_a);
    cq_b = p.b.create_cq(64, ch_b);
    REQUIRE(cq_a != nullptr);
    REQUIRE(cq_b != nullptr);
    qa = p.make_qp(*p.pd_a, *cq_a);
    qb = p.make_qp(*p.pd_b, *cq_b);
    REQUIRE(qa != nullptr);
    REQUIRE(qb != nullptr);
    REQUIRE(p.connect(*qa, p.b, qb->qp_num(), 0x100, 0x200) == 0);
    REQUIRE(p.connect(*qb, p.a, qa->qp_num(), 0x200, 0x100) == 0);
  }
  // A SEND of 16 bytes from qa, signalled, with `flags` added.
  int send(std::uint64_t wr_id, unsigned flags = 0) {
    ibv_sge sge{p.mr_a->iova(), 16, p.mr_a->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | flags;
    ibv_send_wr* bad = nullptr;
    return qa->post_send(&wr, &bad);
  }
  int recv(std::uint64_t wr_id) {
    ibv_sge sge{p.mr_b->iova(), 64, p.mr_b->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return qb->post_recv(&wr, &bad);
  }
  Pair p;
  sim::CompletionChannel* ch_a = nullptr;
  sim::CompletionChannel* ch_b = nullptr;
  sim::CompletionQueue* cq_a = nullptr;
  sim::CompletionQueue* cq_b = nullptr;
  sim::QueuePair* qa = nullptr;
  sim::QueuePair* qb = nullptr;
};

}  // namespace

TEST_CASE("no completion event without an arm") {
  ChannelSetup s;
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.send(2) == 0);
  REQUIRE(s.p.fabric.run());
  // Both completions are in their CQs; neither CQ was armed.
  CHECK(s.cq_a->size() == 1);
  CHECK(s.cq_b->size() == 1);
  CHECK(s.ch_a->pending() == 0);
  CHECK(s.ch_b->pending() == 0);
  CHECK(s.ch_a->get_event() == nullptr);
}

TEST_CASE("one event per arm, whatever the number of completions") {
  ChannelSetup s;
  REQUIRE(s.cq_a->req_notify(false) == 0);
  CHECK(s.cq_a->armed());
  for (int i = 0; i < 3; ++i) REQUIRE(s.recv(static_cast<std::uint64_t>(i)) == 0);
  for (int i = 0; i < 3; ++i) REQUIRE(s.send(static_cast<std::uint64_t>(10 + i)) == 0);
  REQUIRE(s.p.fabric.run());
  // Three send completions, one event: the first disarmed the CQ.
  CHECK(s.cq_a->size() == 3);
  CHECK_FALSE(s.cq_a->armed());
  REQUIRE(s.ch_a->pending() == 1);
  CHECK(s.ch_a->get_event() == s.cq_a);
  CHECK(s.cq_a->events_read() == 1);
  CHECK(s.ch_a->get_event() == nullptr);
  // Re-armed, the next completion fires the second event.
  REQUIRE(s.cq_a->req_notify(false) == 0);
  REQUIRE(s.recv(3) == 0);
  REQUIRE(s.send(13) == 0);
  REQUIRE(s.p.fabric.run());
  CHECK(s.ch_a->pending() == 1);
}

TEST_CASE("a completion that came before the arm fires nothing (the re-arm race)") {
  ChannelSetup s;
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.send(2) == 0);
  REQUIRE(s.p.fabric.run());
  REQUIRE(s.cq_a->size() == 1);
  // Armed now, with a completion already waiting in the CQ: no event; the
  // program must poll after arming to find it.
  REQUIRE(s.cq_a->req_notify(false) == 0);
  REQUIRE(s.p.fabric.run());
  CHECK(s.ch_a->pending() == 0);
  CHECK(s.cq_a->armed());
  ibv_wc wc{};
  CHECK(s.cq_a->poll_now(1, &wc) == 1);
  CHECK(wc.wr_id == 2);
}

TEST_CASE("solicited-only arming wakes for a solicited receive only") {
  ChannelSetup s;
  REQUIRE(s.cq_b->req_notify(true) == 0);
  REQUIRE(s.cq_a->req_notify(true) == 0);
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.recv(2) == 0);
  // Unsolicited: the receive completes, the arm stays.
  REQUIRE(s.send(10) == 0);
  REQUIRE(s.p.fabric.run());
  CHECK(s.cq_b->size() == 1);
  CHECK(s.ch_b->pending() == 0);
  CHECK(s.cq_b->armed());
  // Solicited (the SE bit on the wire): one event.
  REQUIRE(s.send(11, IBV_SEND_SOLICITED) == 0);
  REQUIRE(s.p.fabric.run());
  CHECK(s.cq_b->size() == 2);
  CHECK(s.ch_b->pending() == 1);
  CHECK_FALSE(s.cq_b->armed());
  // The sender's CQ, armed solicited-only, never fires: send completions are
  // posted as not solicited (rxe_comp.c).
  CHECK(s.cq_a->size() == 2);
  CHECK(s.ch_a->pending() == 0);
  CHECK(s.cq_a->armed());
}

TEST_CASE("arming for the next completion is not narrowed by a solicited-only arm") {
  ChannelSetup s;
  REQUIRE(s.cq_b->req_notify(false) == 0);
  REQUIRE(s.cq_b->req_notify(true) == 0);  // rxe keeps IB_CQ_NEXT_COMP
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.send(10) == 0);  // not solicited
  REQUIRE(s.p.fabric.run());
  CHECK(s.ch_b->pending() == 1);
}

TEST_CASE("a flushed receive counts as solicited") {
  ChannelSetup s;
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.cq_b->req_notify(true) == 0);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  REQUIRE(s.qb->modify(at, IBV_QP_STATE) == 0);
  REQUIRE(s.p.fabric.run());
  ibv_wc wc{};
  REQUIRE(s.cq_b->poll_now(1, &wc) == 1);
  CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
  CHECK(s.ch_b->pending() == 1);
}

TEST_CASE("events read must be acknowledged before the CQ is destroyed") {
  ChannelSetup s;
  REQUIRE(s.cq_a->req_notify(false) == 0);
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.send(2) == 0);
  REQUIRE(s.p.fabric.run());
  REQUIRE(s.ch_a->get_event() == s.cq_a);
  // The channel cannot go while a CQ uses it.
  CHECK(s.p.a.destroy_comp_channel(s.ch_a) == EBUSY);
  REQUIRE(s.p.pd_a->destroy_qp(s.qa) == 0);
  // One event read, none acknowledged: libibverbs would wait forever here;
  // the simulator refuses.
  CHECK(s.p.a.destroy_cq(s.cq_a) == EBUSY);
  CHECK(s.cq_a->ack_events(2) == EINVAL);  // more than were read
  CHECK(s.cq_a->events_acked() == 0);
  REQUIRE(s.cq_a->ack_events(1) == 0);
  CHECK(s.cq_a->events_acked() == 1);
  CHECK(s.p.a.destroy_cq(s.cq_a) == 0);
  CHECK(s.p.a.destroy_comp_channel(s.ch_a) == 0);
}

TEST_CASE("events not read yet go with their CQ") {
  ChannelSetup s;
  REQUIRE(s.cq_a->req_notify(false) == 0);
  REQUIRE(s.recv(1) == 0);
  REQUIRE(s.send(2) == 0);
  REQUIRE(s.p.fabric.run());
  REQUIRE(s.ch_a->pending() == 1);
  REQUIRE(s.p.pd_a->destroy_qp(s.qa) == 0);
  CHECK(s.p.a.destroy_cq(s.cq_a) == 0);  // nothing read, nothing to acknowledge
  CHECK(s.ch_a->pending() == 0);
  CHECK(s.ch_a->users() == 0);
}

TEST_CASE("a CQ on another device's channel is refused, and moderation is not supported") {
  ChannelSetup s;
  errno = 0;
  CHECK(s.p.a.create_cq(8, s.ch_b) == nullptr);
  CHECK(errno == EINVAL);
  // As rxe: no ibv_modify_cq (the simulator has no moderation model).
  CHECK(s.cq_a->modify_moderation(4, 100) == EOPNOTSUPP);
}
