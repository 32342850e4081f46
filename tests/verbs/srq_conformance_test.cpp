// Shared receive queues and asynchronous events through the wrapper, on
// either backend (compiled once per backend, as conformance_test.cpp): two RC
// QPs take their receives from one SRQ, each completion names its QP, and the
// armed limit comes back as IBV_EVENT_SRQ_LIMIT_REACHED.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"
#ifdef RDMALAB_CONFORMANCE_SIM
#include "rdmalab/verbs/sim_backend.hpp"
#endif

using namespace rdmalab;
using namespace rdmalab::verbs;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kBuf = 8192;
constexpr std::uint32_t kSlot = 1024;

std::unique_ptr<Backend> srq_backend() {
#ifdef RDMALAB_CONFORMANCE_SIM
  return make_sim_backend(SimBackendOptions{});
#else
  return make_verbs_backend();
#endif
}

std::pair<std::string, std::string> srq_device_names(Backend& b) {
  if (const char* env = std::getenv("RDMALAB_DEVICES"); env != nullptr && *env != '\0') {
    const std::string s(env);
    const auto comma = s.find(',');
    if (comma == std::string::npos) return {s, s};
    return {s.substr(0, comma), s.substr(comma + 1)};
  }
  const auto devs = b.devices();
  REQUIRE_FALSE(devs.empty());
  return {devs.front().name, devs.size() > 1 ? devs[1].name : devs.front().name};
}

struct Host {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<ProtectionDomain> pd;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<Srq> srq;
  std::array<std::unique_ptr<QueuePair>, 2> qps;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf);
  std::unique_ptr<MemoryRegion> mr;
  int gid_index = 0;
  ibv_gid gid{};
};

void bring_up(QueuePair& qp, const Host& me, const Host& peer, std::uint32_t peer_qpn,
              std::uint32_t my_psn, std::uint32_t peer_psn) {
  (void)qp.to_init(InitAttrs{});
  RtrAttrs rtr;
  rtr.remote.gid = peer.gid;
  rtr.remote.qpn = peer_qpn;
  rtr.remote.psn = peer_psn;
  rtr.sgid_index = me.gid_index;
  rtr.min_rnr_timer = 1;
  (void)qp.to_rtr(rtr);
  RtsAttrs rts;
  rts.sq_psn = my_psn;
  rts.timeout = 10;
  (void)qp.to_rts(rts);
}

}  // namespace

TEST_CASE("SRQ: two QPs share it, wc.qp_num names each, the limit raises one async event") {
  auto backend = srq_backend();
  const auto [na, nb] = srq_device_names(*backend);
  Host a, b;
  for (auto [h, name] : {std::pair{&a, na}, std::pair{&b, nb}}) {
    h->ctx = backend->open(name);
    h->pd = h->ctx->alloc_pd();
    h->cq = h->ctx->create_cq(16);
    h->mr = h->pd->reg_mr(h->buf.data(), kBuf, IBV_ACCESS_LOCAL_WRITE);
    const auto table = h->ctx->gid_table(1);
    h->gid_index = choose_gid(table, std::nullopt).value_or(0);
    for (const auto& g : table)
      if (g.index == h->gid_index) h->gid = g.gid;
  }
  SrqInitAttrs sa;
  sa.max_wr = 8;
  b.srq = b.pd->create_srq(sa);
  for (std::size_t i = 0; i < 2; ++i) {
    QpInitAttrs init;
    init.send_cq = a.cq.get();
    init.recv_cq = a.cq.get();
    a.qps[i] = a.pd->create_qp(init);
    init.send_cq = b.cq.get();
    init.recv_cq = b.cq.get();
    init.srq = b.srq.get();
    b.qps[i] = b.pd->create_qp(init);
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const auto pa = static_cast<std::uint32_t>(0x100 + i);
    const auto pb = static_cast<std::uint32_t>(0x200 + i);
    bring_up(*a.qps[i], a, b, b.qps[i]->qpn(), pa, pb);
    bring_up(*b.qps[i], b, a, a.qps[i]->qpn(), pb, pa);
  }
  // A QP with an SRQ has no receive queue of its own.
  ibv_sge g{reinterpret_cast<std::uintptr_t>(b.buf.data()), kSlot, b.mr->lkey()};
  ibv_recv_wr rwr{};
  rwr.sg_list = &g;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  CHECK(b.qps[0]->post_recv(&rwr, &rbad) == EINVAL);
  // Four WQEs, wr_id 10..13, then the limit armed at 3: the first message
  // leaves 3 (not below 3, no event), the second leaves 2 < 3 (the event).
  for (std::uint32_t k = 0; k < 4; ++k) {
    g.addr = reinterpret_cast<std::uintptr_t>(b.buf.data() + k * kSlot);
    rwr.wr_id = 10 + k;
    REQUIRE(b.srq->post_recv(&rwr, &rbad) == 0);
  }
  ibv_srq_attr attr{};
  attr.srq_limit = 3;
  REQUIRE(b.srq->modify(attr, IBV_SRQ_LIMIT) == 0);
  for (std::size_t i = 0; i < 2; ++i) {
    std::memset(a.buf.data(), static_cast<int>('a' + i), 100);
    ibv_sge s{reinterpret_cast<std::uintptr_t>(a.buf.data()), 100, a.mr->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = i;
    wr.sg_list = &s;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    REQUIRE(a.qps[i]->post_send(&wr, &bad) == 0);
    const auto sent = a.cq->wait(1, 5s);
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].status == IBV_WC_SUCCESS);
    const auto got = b.cq->wait(1, 5s);
    REQUIRE(got.size() == 1);
    CHECK(got[0].status == IBV_WC_SUCCESS);
    CHECK(got[0].wr_id == 10 + i);
    CHECK(got[0].qp_num == b.qps[i]->qpn());
    CHECK(b.buf[i * kSlot] == static_cast<std::uint8_t>('a' + i));
    const auto ev = b.ctx->get_async_event(i == 0 ? 200ms : 5s);
    if (i == 0) {
      CHECK_FALSE(ev.has_value());
    } else {
      REQUIRE(ev.has_value());
      CHECK(ev->type == IBV_EVENT_SRQ_LIMIT_REACHED);
      CHECK(ev->srq == b.srq->get());
      CHECK(async_event_name(ev->type) == "IBV_EVENT_SRQ_LIMIT_REACHED");
    }
  }
  // The event disarmed the limit.
  REQUIRE(b.srq->query(attr) == 0);
  CHECK(attr.srq_limit == 0);
}
