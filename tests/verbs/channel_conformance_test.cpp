// Completion channels through the wrapper on either backend (compiled once
// per backend, as conformance_test.cpp): one event per arm, solicited-only
// arming, acknowledgement, an event that never comes, CQ moderation as the
// device's limits say.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "conformance_backend.hpp"
#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using namespace rdmalab::verbs;
using namespace std::chrono_literals;

namespace {

// One side with a completion channel; members in dependency order (the
// channel outlives the CQ, the CQ the QP).
struct ChannelSide {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<CompChannel> channel;
  std::unique_ptr<ProtectionDomain> pd;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<QueuePair> qp;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  std::unique_ptr<MemoryRegion> mr;
  int gid_index = 0;
};

struct ChannelPair {
  std::unique_ptr<Backend> backend = conformance::make_backend();
  ChannelSide a, b;
  ChannelPair() {
    std::string na, nb;
    if (const char* env = std::getenv("RDMALAB_DEVICES"); env != nullptr && *env != '\0') {
      const std::string s(env);
      const auto comma = s.find(',');
      na = s.substr(0, comma);
      nb = comma == std::string::npos ? na : s.substr(comma + 1);
    } else {
      const auto devs = backend->devices();
      REQUIRE_FALSE(devs.empty());
      na = devs.front().name;
      nb = devs.size() > 1 ? devs[1].name : na;
    }
    for (auto [side, name] : {std::pair{&a, na}, std::pair{&b, nb}}) {
      side->ctx = backend->open(name);
      side->channel = side->ctx->create_comp_channel();
      side->pd = side->ctx->alloc_pd();
      side->cq = side->ctx->create_cq(16, *side->channel);
      QpInitAttrs init;
      init.send_cq = side->cq.get();
      init.recv_cq = side->cq.get();
      init.sq_sig_all = true;
      side->qp = side->pd->create_qp(init);
      side->mr = side->pd->reg_mr(side->buf.data(), side->buf.size(), IBV_ACCESS_LOCAL_WRITE);
      side->gid_index = choose_gid(side->ctx->gid_table(1), std::nullopt).value_or(0);
    }
    connect(a, b, 0x000100, 0x000200);
    connect(b, a, 0x000200, 0x000100);
  }
  static void connect(ChannelSide& me, ChannelSide& peer, std::uint32_t my_psn,
                      std::uint32_t peer_psn) {
    RemoteEndpoint remote;
    for (const auto& g : peer.ctx->gid_table(1))
      if (g.index == peer.gid_index) remote.gid = g.gid;
    remote.qpn = peer.qp->qpn();
    remote.psn = peer_psn;
    (void)me.qp->to_init(InitAttrs{});
    RtrAttrs rtr;
    rtr.remote = remote;
    rtr.sgid_index = me.gid_index;
    rtr.min_rnr_timer = 1;
    (void)me.qp->to_rtr(rtr);
    RtsAttrs rts;
    rts.sq_psn = my_psn;
    (void)me.qp->to_rts(rts);
  }
  void recv_on_b(std::uint64_t id) {
    ibv_sge g{reinterpret_cast<std::uintptr_t>(b.buf.data()), 64, b.mr->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &g;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    REQUIRE(b.qp->post_recv(&wr, &bad) == 0);
  }
  void send_from_a(std::uint64_t id, unsigned flags) {
    ibv_sge g{reinterpret_cast<std::uintptr_t>(a.buf.data()), 64, a.mr->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &g;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = flags;
    ibv_send_wr* bad = nullptr;
    REQUIRE(a.qp->post_send(&wr, &bad) == 0);
  }
};

}  // namespace

TEST_CASE("completion channel: one event per arm, solicited-only, acknowledged") {
  ChannelPair p;
  // Not armed: a completion, no event.
  p.recv_on_b(1);
  p.send_from_a(10, 0);
  REQUIRE(p.a.cq->wait(1, 5s).size() == 1);
  REQUIRE(p.b.cq->wait(1, 5s).size() == 1);
  CHECK(p.b.channel->get_event(200ms) == nullptr);

  // Armed for solicited completions: the unsolicited SEND does not wake it,
  // the solicited one does, once.
  REQUIRE(p.b.cq->req_notify(true) == 0);
  p.recv_on_b(2);
  p.recv_on_b(3);
  p.send_from_a(11, 0);
  REQUIRE(p.a.cq->wait(1, 5s).size() == 1);
  CHECK(p.b.channel->get_event(200ms) == nullptr);
  p.send_from_a(12, IBV_SEND_SOLICITED);
  CompletionQueue& woke = p.b.channel->wait_event(5s);
  CHECK(&woke == p.b.cq.get());
  woke.ack_events(1);
  REQUIRE(p.a.cq->wait(1, 5s).size() == 1);
  CHECK(p.b.cq->wait(2, 5s).size() == 2);
  // Disarmed by its event: nothing more comes, and waiting says why.
  CHECK(p.b.channel->get_event(200ms) == nullptr);
  try {
    (void)p.b.channel->wait_event(200ms);
    FAIL("wait_event returned without an event");
  } catch (const VerbsError& e) {
    CHECK(e.verb() == "ibv_get_cq_event");
    CHECK(e.code().value() == ETIMEDOUT);
    CHECK_FALSE(e.hint().empty());
  }

  // Armed for the next completion: the sender's CQ fires on its send
  // completion.
  REQUIRE(p.a.cq->req_notify(false) == 0);
  p.recv_on_b(4);
  p.send_from_a(13, 0);
  CompletionQueue& sender = p.a.channel->wait_event(5s);
  CHECK(&sender == p.a.cq.get());
  sender.ack_events(1);
  CHECK(p.a.cq->wait(1, 5s).size() == 1);
  CHECK(p.b.cq->wait(1, 5s).size() == 1);
}

TEST_CASE("ibv_modify_cq answers as the device's moderation limits say") {
  ChannelPair p;
  const DeviceAttrs attrs = p.a.ctx->query_device();
  const int rc = p.a.cq->moderate(4, 100);
  if (attrs.max_cq_count == 0)
    CHECK((rc == EOPNOTSUPP || rc == -EOPNOTSUPP || rc == ENOTSUP));
  else
    CHECK(rc == 0);
}
