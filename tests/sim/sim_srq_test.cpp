// Shared receive queues: several RC QPs take their receives from one SRQ,
// the limit event, and what an empty SRQ does to every sender. The rules are
// rdma_rxe's (get_srq_wqe() in rxe_resp.c, rxe_srq_chk_attr() in rxe_srq.c).
#include <doctest/doctest.h>

#include <array>
#include <set>
#include <vector>

#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

constexpr std::size_t kQps = 3;
constexpr std::uint32_t kSlot = 4096;  // bytes per receive buffer in buf_b

// Pair's host A gets kQps sender QPs, host B kQps receiver QPs on one SRQ.
struct SrqSetup {
  explicit SrqSetup(PairConfig c = {}, std::uint32_t max_wr = 16) : p(c) {
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = max_wr;
    sa.attr.max_sge = 1;
    srq = p.pd_b->create_srq(sa);
    REQUIRE(srq != nullptr);
    for (std::size_t i = 0; i < kQps; ++i) {
      senders[i] = p.make_qp(*p.pd_a, *p.cq_a);
      ibv_qp_init_attr ia{};
      ia.send_cq = p.cq_b->get();
      ia.recv_cq = p.cq_b->get();
      ia.qp_type = IBV_QPT_RC;
      ia.cap.max_send_wr = 4;
      ia.cap.max_send_sge = 1;
      ia.srq = srq->get();  // max_recv_wr 0: ignored with an SRQ
      receivers[i] = p.pd_b->create_qp(ia);
      REQUIRE(senders[i] != nullptr);
      REQUIRE(receivers[i] != nullptr);
      const auto psn = static_cast<std::uint32_t>(0x100 * (i + 1));
      REQUIRE(p.connect(*senders[i], p.b, receivers[i]->qp_num(), psn, psn + 0x10) == 0);
      REQUIRE(p.connect(*receivers[i], p.a, senders[i]->qp_num(), psn + 0x10, psn) == 0);
    }
  }
  int post_srq(std::uint64_t wr_id, std::uint32_t slot) {
    ibv_sge sge{p.mr_b->iova() + std::uint64_t{slot} * kSlot, kSlot, p.mr_b->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return srq->post_recv(&wr, &bad);
  }
  Pair p;
  sim::SharedReceiveQueue* srq = nullptr;
  std::array<sim::QueuePair*, kQps> senders{};
  std::array<sim::QueuePair*, kQps> receivers{};
};

}  // namespace

TEST_CASE("SRQ: three QPs take receives from one SRQ in posting order; wc.qp_num names the QP") {
  SrqSetup s;
  s.p.fill_a(3);
  // Six WQEs, wr_id 100..105 over buffer slots 0..5. The senders post in
  // turn, QP 0, 1, 2, twice; each message is one packet and each QP sends as
  // soon as it posts, so the messages reach B in that order and the k-th to
  // arrive takes the k-th WQE posted: message k (from QP k % 3) completes
  // wr_id 100 + k, on receiver QP k % 3, with its bytes in slot k.
  for (std::uint32_t k = 0; k < 6; ++k) REQUIRE(s.post_srq(100 + k, k) == 0);
  CHECK(s.srq->posted() == 6);
  for (std::size_t k = 0; k < 6; ++k) {
    const auto len = static_cast<std::uint32_t>(100 + k);
    REQUIRE(s.p.post(IBV_WR_SEND, k * 512, len, 0, 1 + k, 0, s.senders[k % kQps]) == 0);
  }
  for (int k = 0; k < 6; ++k) CHECK(Pair::poll_one(*s.p.cq_a).status == IBV_WC_SUCCESS);
  for (std::size_t k = 0; k < 6; ++k) {
    const ibv_wc wc = Pair::poll_one(*s.p.cq_b);
    CHECK(wc.status == IBV_WC_SUCCESS);
    CHECK(wc.opcode == IBV_WC_RECV);
    CHECK(wc.wr_id == 100 + k);
    CHECK(wc.qp_num == s.receivers[k % kQps]->qp_num());
    CHECK(wc.byte_len == 100 + k);
    CHECK(std::memcmp(s.p.buf_b.data() + k * kSlot, s.p.buf_a.data() + k * 512, 100 + k) == 0);
  }
  CHECK(s.srq->posted() == 0);
}

TEST_CASE("SRQ: a multi-packet SEND keeps the WQE it took while another QP's message arrives") {
  PairConfig c;
  c.mtu = IBV_MTU_1024;
  SrqSetup s(c);
  s.p.fill_a(9);
  REQUIRE(s.post_srq(200, 0) == 0);
  REQUIRE(s.post_srq(201, 1) == 0);
  // 3000 bytes at MTU 1024: SEND First, Middle, Last from QP 0 and QP 1.
  REQUIRE(s.p.post(IBV_WR_SEND, 0, 3000, 0, 1, 0, s.senders[0]) == 0);
  REQUIRE(s.p.post(IBV_WR_SEND, 8192, 3000, 0, 2, 0, s.senders[1]) == 0);
  std::set<std::uint64_t> seen;
  for (int k = 0; k < 2; ++k) {
    const ibv_wc wc = Pair::poll_one(*s.p.cq_b);
    REQUIRE(wc.status == IBV_WC_SUCCESS);
    CHECK(wc.byte_len == 3000);
    seen.insert(wc.wr_id);
    // Whichever WQE a QP took holds that QP's whole message.
    const std::size_t from = wc.qp_num == s.receivers[0]->qp_num() ? 0 : 8192;
    CHECK(std::memcmp(s.p.buf_b.data() + (wc.wr_id - 200) * kSlot, s.p.buf_a.data() + from, 3000) ==
          0);
  }
  CHECK(seen == std::set<std::uint64_t>{200, 201});
}

TEST_CASE("SRQ: the limit event fires once when fewer than srq_limit WQEs are left") {
  SrqSetup s;
  for (std::uint32_t k = 0; k < 8; ++k) REQUIRE(s.post_srq(k, k) == 0);
  // Arm at 4. WQEs left after each message: 7, 6, 5, 4, 3: the fifth message
  // leaves 3 < 4, fires the event and disarms (limit 0); 2, 1, 0 fire nothing.
  ibv_srq_attr a{};
  a.srq_limit = 4;
  REQUIRE(s.srq->modify(a, IBV_SRQ_LIMIT) == 0);
  ibv_async_event ev{};
  for (std::size_t k = 0; k < 8; ++k) {
    REQUIRE(s.p.post(IBV_WR_SEND, 0, 64, 0, 1, 0, s.senders[k % kQps]) == 0);
    CHECK(Pair::poll_one(*s.p.cq_b).status == IBV_WC_SUCCESS);
    CHECK(Pair::poll_one(*s.p.cq_a).status == IBV_WC_SUCCESS);
    if (k == 4) {
      REQUIRE(s.p.b.get_async_event(ev));
      CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED);
      CHECK(ev.element.srq == s.srq->get());
      ibv_srq_attr q{};
      REQUIRE(s.srq->query(q) == 0);
      CHECK(q.srq_limit == 0);
      CHECK(q.max_wr == 16);
    } else {
      CHECK_FALSE(s.p.b.get_async_event(ev));
    }
  }
  // Re-armed at 2 with 4 WQEs posted: 3, 2, 1 left: the third message fires it.
  for (std::uint32_t k = 0; k < 4; ++k) REQUIRE(s.post_srq(10 + k, k) == 0);
  a.srq_limit = 2;
  REQUIRE(s.srq->modify(a, IBV_SRQ_LIMIT) == 0);
  for (int k = 0; k < 3; ++k) {
    REQUIRE(s.p.post(IBV_WR_SEND, 0, 64, 0, 1, 0, s.senders[0]) == 0);
    CHECK(Pair::poll_one(*s.p.cq_b).status == IBV_WC_SUCCESS);
    CHECK(Pair::poll_one(*s.p.cq_a).status == IBV_WC_SUCCESS);
    CHECK(s.p.b.get_async_event(ev) == (k == 2));
  }
}

TEST_CASE("SRQ: an empty SRQ answers RNR NAK to every sender's QP") {
  PairConfig c;
  c.rnr_retry = 0;  // the first RNR NAK ends the SEND with IBV_WC_RNR_RETRY_EXC_ERR
  SrqSetup s(c);
  const std::string path = temp_pcap("srq_rnr");
  s.p.fabric.start_capture(path);
  for (std::size_t i = 0; i < kQps; ++i)
    REQUIRE(s.p.post(IBV_WR_SEND, 0, 64, 0, 1 + i, 0, s.senders[i]) == 0);
  std::set<std::uint32_t> failed;
  for (std::size_t i = 0; i < kQps; ++i) {
    const ibv_wc wc = Pair::poll_one(*s.p.cq_a);
    CHECK(wc.status == IBV_WC_RNR_RETRY_EXC_ERR);
    failed.insert(wc.qp_num);
  }
  CHECK(failed.size() == kQps);
  s.p.fabric.stop_capture();
  const auto from_b = from(read_capture(path), s.p.b.config().ip);
  std::remove(path.c_str());
  // One RNR NAK (AETH syndrome 001xxxxx) to each sender QP, nothing else.
  std::set<std::uint32_t> nak_to;
  for (const Pkt& k : from_b) {
    REQUIRE(k.syndrome.has_value());
    CHECK((*k.syndrome >> 5) == 1);
    nak_to.insert(k.dest_qp);
  }
  CHECK(from_b.size() == kQps);
  CHECK(nak_to == std::set<std::uint32_t>{s.senders[0]->qp_num(), s.senders[1]->qp_num(),
                                          s.senders[2]->qp_num()});
  ibv_wc none;
  CHECK(s.p.cq_b->poll_now(1, &none) == 0);
}

TEST_CASE("SRQ: verbs errors as rxe gives them") {
  SrqSetup s({}, 4);
  ibv_srq_init_attr bad{};
  bad.attr.max_wr = 0;
  CHECK(s.p.pd_b->create_srq(bad) == nullptr);
  CHECK(errno == EINVAL);
  bad.attr.max_wr = 17000;  // above max_srq_wr 16384
  CHECK(s.p.pd_b->create_srq(bad) == nullptr);
  // Four WQEs fit, the fifth does not.
  for (std::uint32_t k = 0; k < 4; ++k) CHECK(s.post_srq(k, k) == 0);
  CHECK(s.post_srq(4, 4) == ENOMEM);
  ibv_srq_attr a{};
  a.srq_limit = 5;  // above max_wr 4
  CHECK(s.srq->modify(a, IBV_SRQ_LIMIT) == EINVAL);
  a.max_wr = 2;  // below the 4 WQEs posted
  CHECK(s.srq->modify(a, IBV_SRQ_MAX_WR) == EINVAL);
  a.max_wr = 8;
  CHECK(s.srq->modify(a, IBV_SRQ_MAX_WR) == 0);
  CHECK(s.post_srq(4, 4) == 0);
  ibv_srq_attr q{};
  REQUIRE(s.srq->query(q) == 0);
  CHECK(q.max_wr == 8);
  CHECK(s.srq->posted() == 5);
  // A QP with an SRQ has no receive queue of its own.
  ibv_sge sge{s.p.mr_b->iova(), 64, s.p.mr_b->lkey()};
  ibv_recv_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* badwr = nullptr;
  CHECK(s.receivers[0]->post_recv(&wr, &badwr) == EINVAL);
  // The SRQ outlives its QPs only.
  CHECK(s.p.pd_b->destroy_srq(s.srq) == EBUSY);
  for (auto* qp : s.receivers) REQUIRE(s.p.pd_b->destroy_qp(qp) == 0);
  CHECK(s.p.pd_b->destroy_srq(s.srq) == 0);
  // The device holds at most DeviceLimits::max_srq SRQs (the one above is
  // gone): that many fit, one more is refused, and a destroyed one frees room.
  ibv_srq_init_attr one{};
  one.attr.max_wr = 1;
  std::vector<sim::SharedReceiveQueue*> many;
  for (int k = 0; k < sim::DeviceLimits{}.max_srq; ++k) {
    many.push_back(s.p.pd_b->create_srq(one));
    REQUIRE(many.back() != nullptr);
  }
  CHECK(s.p.pd_b->create_srq(one) == nullptr);
  CHECK(errno == ENOMEM);
  REQUIRE(s.p.pd_b->destroy_srq(many.back()) == 0);
  CHECK(s.p.pd_b->create_srq(one) != nullptr);
}
