// The same verbs scenarios through the wrapper on either backend: compiled
// once per backend (RDMALAB_CONFORMANCE_SIM or RDMALAB_CONFORMANCE_VERBS).
// Two RC QPs are connected to each other — on the simulator between two
// simulated hosts, on real verbs on one device (or two, e.g. rxe0 and rxe1,
// given by RDMALAB_DEVICES="rxe0,rxe1").
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "conformance_backend.hpp"
#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using namespace rdmalab::verbs;
using namespace std::chrono_literals;

namespace {

std::pair<std::string, std::string> device_names(Backend& b) {
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

constexpr std::size_t kBuf = 16384;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC;

// One side: device, PD, CQ, QP, an 8-byte aligned buffer and its MR. Members
// in dependency order, so destruction runs children first.
struct Side {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<ProtectionDomain> pd;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<QueuePair> qp;
  std::vector<std::uint64_t> storage = std::vector<std::uint64_t>(kBuf / 8);
  std::unique_ptr<MemoryRegion> mr;
  int gid_index = 0;

  std::uint8_t* buf() { return reinterpret_cast<std::uint8_t*>(storage.data()); }
};

struct RcPair {
  std::unique_ptr<Backend> backend;
  Side a, b;

  explicit RcPair(std::uint8_t rnr_retry = 7, std::uint8_t retry_cnt = 7,
                  ibv_mtu mtu = IBV_MTU_1024) {
    backend = conformance::make_backend();
    const auto [na, nb] = device_names(*backend);
    for (auto [side, name] : {std::pair{&a, na}, std::pair{&b, nb}}) {
      side->ctx = backend->open(name);
      side->pd = side->ctx->alloc_pd();
      side->cq = side->ctx->create_cq(64);
      QpInitAttrs init;
      init.send_cq = side->cq.get();
      init.recv_cq = side->cq.get();
      init.sq_sig_all = true;
      side->qp = side->pd->create_qp(init);
      side->mr = side->pd->reg_mr(side->buf(), kBuf, kAccess);
      side->gid_index = choose_gid(side->ctx->gid_table(1), std::nullopt).value_or(0);
    }
    connect(a, b, 0x000100, 0x000200, rnr_retry, retry_cnt, mtu);
    connect(b, a, 0x000200, 0x000100, rnr_retry, retry_cnt, mtu);
  }

  static void connect(Side& me, Side& peer, std::uint32_t my_psn, std::uint32_t peer_psn,
                      std::uint8_t rnr_retry, std::uint8_t retry_cnt, ibv_mtu mtu) {
    const auto peer_gids = peer.ctx->gid_table(1);
    RemoteEndpoint remote;
    for (const auto& g : peer_gids)
      if (g.index == peer.gid_index) remote.gid = g.gid;
    remote.qpn = peer.qp->qpn();
    remote.psn = peer_psn;
    (void)me.qp->to_init(InitAttrs{});
    RtrAttrs rtr;
    rtr.remote = remote;
    rtr.path_mtu = mtu;
    rtr.sgid_index = me.gid_index;
    rtr.min_rnr_timer = 1;  // 0.01 ms: keep RNR tests short
    (void)me.qp->to_rtr(rtr);
    RtsAttrs rts;
    rts.sq_psn = my_psn;
    rts.timeout = 10;
    rts.retry_cnt = retry_cnt;
    rts.rnr_retry = rnr_retry;
    (void)me.qp->to_rts(rts);
  }
};

ibv_sge sge(Side& s, std::size_t offset, std::uint32_t len) {
  return ibv_sge{reinterpret_cast<std::uintptr_t>(s.buf() + offset), len, s.mr->lkey()};
}

void post_recv(Side& s, std::size_t offset, std::uint32_t len, std::uint64_t id) {
  ibv_sge g = sge(s, offset, len);
  ibv_recv_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  REQUIRE(s.qp->post_recv(&wr, &bad) == 0);
}

int post_send(Side& s, ibv_wr_opcode op, std::size_t offset, std::uint32_t len, std::uint64_t id,
              std::uint64_t remote_addr = 0, std::uint32_t rkey = 0) {
  ibv_sge g = sge(s, offset, len);
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return s.qp->post_send(&wr, &bad);
}

ibv_wc wait_one(Side& s) {
  const auto wcs = s.cq->wait(1, 5s);
  REQUIRE(wcs.size() == 1);
  return wcs.front();
}

}  // namespace

TEST_CASE("SEND/RECV: both sides complete and the bytes arrive") {
  RcPair p;
  post_recv(p.b, 0, 64, 7);
  for (int i = 0; i < 64; ++i) p.a.buf()[i] = static_cast<std::uint8_t>(i * 3);
  REQUIRE(post_send(p.a, IBV_WR_SEND, 0, 64, 1) == 0);
  const ibv_wc s = wait_one(p.a);
  CHECK(s.status == IBV_WC_SUCCESS);
  CHECK(s.opcode == IBV_WC_SEND);
  CHECK(s.wr_id == 1);
  const ibv_wc r = wait_one(p.b);
  CHECK(r.status == IBV_WC_SUCCESS);
  CHECK(r.opcode == IBV_WC_RECV);
  CHECK(r.wr_id == 7);
  CHECK(r.byte_len == 64);
  CHECK(std::memcmp(p.a.buf(), p.b.buf(), 64) == 0);
}

TEST_CASE("RDMA WRITE of 3072 bytes: the data lands, only the requester completes") {
  RcPair p;
  for (std::size_t i = 0; i < 3072; ++i) p.a.buf()[i] = static_cast<std::uint8_t>(i ^ 0x5A);
  REQUIRE(post_send(p.a, IBV_WR_RDMA_WRITE, 0, 3072, 2, p.b.mr->va() + 4096, p.b.mr->rkey()) == 0);
  const ibv_wc s = wait_one(p.a);
  CHECK(s.status == IBV_WC_SUCCESS);
  CHECK(s.opcode == IBV_WC_RDMA_WRITE);
  CHECK(std::memcmp(p.a.buf(), p.b.buf() + 4096, 3072) == 0);
  ibv_wc none[1];
  CHECK(p.b.cq->poll(none) == 0);
}

TEST_CASE("RDMA READ pulls the remote bytes") {
  RcPair p;
  for (std::size_t i = 0; i < 512; ++i) p.b.buf()[8192 + i] = static_cast<std::uint8_t>(i * 7);
  REQUIRE(post_send(p.a, IBV_WR_RDMA_READ, 0, 512, 3, p.b.mr->va() + 8192, p.b.mr->rkey()) == 0);
  const ibv_wc s = wait_one(p.a);
  CHECK(s.status == IBV_WC_SUCCESS);
  CHECK(s.opcode == IBV_WC_RDMA_READ);
  CHECK(s.byte_len == 512);
  CHECK(std::memcmp(p.a.buf(), p.b.buf() + 8192, 512) == 0);
}

TEST_CASE("atomics: FetchAdd and CmpSwap return the original value and change the remote word") {
  RcPair p;
  p.b.storage[16] = 100;
  ibv_sge g = sge(p.a, 0, 8);
  ibv_send_wr wr{};
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = p.b.mr->va() + 128;
  wr.wr.atomic.rkey = p.b.mr->rkey();
  wr.wr.atomic.compare_add = 5;
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.a.qp->post_send(&wr, &bad) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_SUCCESS);
  CHECK(p.a.storage[0] == 100);
  CHECK(p.b.storage[16] == 105);

  wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  wr.wr.atomic.compare_add = 105;
  wr.wr.atomic.swap = 7;
  REQUIRE(p.a.qp->post_send(&wr, &bad) == 0);
  const ibv_wc c = wait_one(p.a);
  CHECK(c.status == IBV_WC_SUCCESS);
  CHECK(c.opcode == IBV_WC_COMP_SWAP);
  CHECK(p.a.storage[0] == 105);
  CHECK(p.b.storage[16] == 7);
}

TEST_CASE("WRITE with immediate consumes a receive WQE and delivers imm_data") {
  RcPair p;
  post_recv(p.b, 0, 0, 9);
  std::memset(p.a.buf(), 0xAB, 64);
  ibv_sge g = sge(p.a, 0, 64);
  ibv_send_wr wr{};
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(0xC0DE0001);
  wr.wr.rdma.remote_addr = p.b.mr->va() + 1024;
  wr.wr.rdma.rkey = p.b.mr->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.a.qp->post_send(&wr, &bad) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_SUCCESS);
  const ibv_wc r = wait_one(p.b);
  CHECK(r.status == IBV_WC_SUCCESS);
  CHECK(r.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK((r.wc_flags & IBV_WC_WITH_IMM) != 0);
  CHECK(ntohl(r.imm_data) == 0xC0DE0001);
  CHECK(r.byte_len == 64);
  CHECK(p.b.buf()[1024] == 0xAB);
}

TEST_CASE("SEND with no receive posted and rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR, then flush") {
  RcPair p(/*rnr_retry=*/0);
  REQUIRE(post_send(p.a, IBV_WR_SEND, 0, 64, 11) == 0);
  REQUIRE(post_send(p.a, IBV_WR_SEND, 0, 64, 12) == 0);
  const auto wcs = p.a.cq->wait(2, 5s);
  REQUIRE(wcs.size() == 2);
  CHECK(wcs[0].wr_id == 11);
  CHECK(wcs[0].status == IBV_WC_RNR_RETRY_EXC_ERR);
  CHECK(wcs[1].wr_id == 12);
  CHECK(wcs[1].status == IBV_WC_WR_FLUSH_ERR);
  CHECK(p.a.qp->state() == IBV_QPS_ERR);
}

TEST_CASE("RDMA WRITE with a wrong rkey: IBV_WC_REM_ACCESS_ERR") {
  RcPair p;
  REQUIRE(post_send(p.a, IBV_WR_RDMA_WRITE, 0, 64, 13, p.b.mr->va(), p.b.mr->rkey() ^ 0x5500) == 0);
  const ibv_wc s = wait_one(p.a);
  CHECK(s.status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("wrong use fails the way verbs does") {
  auto backend = conformance::make_backend();
  auto ctx = backend->open(device_names(*backend).first);
  auto pd = ctx->alloc_pd();
  auto cq = ctx->create_cq(16);
  QpInitAttrs init;
  init.send_cq = cq.get();
  init.recv_cq = cq.get();
  auto qp = pd->create_qp(init);
  CHECK(qp->state() == IBV_QPS_RESET);
  std::vector<std::uint64_t> mem(8);
  auto mr = pd->reg_mr(mem.data(), 64, IBV_ACCESS_LOCAL_WRITE);
  ibv_sge g{reinterpret_cast<std::uintptr_t>(mem.data()), 64, mr->lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  ibv_send_wr* bad = nullptr;
  // Posting a send on a QP in RESET.
  CHECK(qp->post_send(&wr, &bad) != 0);
  // libibverbs documents *bad_wr as the failing WR; the rxe provider leaves
  // it NULL when the QP state rejects the whole list.
  CHECK((bad == &wr || bad == nullptr));
  // RESET -> RTR directly is not a legal transition.
  RtrAttrs rtr;
  CHECK_THROWS_AS((void)qp->to_rtr(rtr), VerbsError);
  // A remote-write registration without local write is refused.
  CHECK_THROWS_AS((void)pd->reg_mr(mem.data(), 64, IBV_ACCESS_REMOTE_WRITE), VerbsError);
  // The printed transition names the mask.
  const auto applied = qp->to_init(InitAttrs{});
  CHECK(applied.to_string().find("RESET -> INIT  mask STATE|ACCESS_FLAGS|PKEY_INDEX|PORT") == 0);
}

namespace {

// A type 2 window over `mr`, bound on B's QP; returns the bind's completion.
ibv_wc bind_type2(Side& s, MemoryWindow& mw, MemoryRegion& mr, std::uint64_t addr,
                  std::uint64_t len, unsigned access) {
  ibv_send_wr wr{};
  wr.wr_id = 50;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = mw.get();
  wr.bind_mw.rkey = ibv_inc_rkey(mw.rkey());
  wr.bind_mw.bind_info = ibv_mw_bind_info{mr.get(), addr, len, access};
  ibv_send_wr* bad = nullptr;
  REQUIRE(s.qp->post_send(&wr, &bad) == 0);
  const ibv_wc wc = wait_one(s);
  if (wc.status == IBV_WC_SUCCESS) mw.set_rkey(wr.bind_mw.rkey);
  return wc;
}

}  // namespace

TEST_CASE("type 2 memory window: bind, WRITE through it, SEND with Invalidate revokes it") {
  RcPair p;
  auto mr = p.b.pd->reg_mr(p.b.buf(), kBuf, kAccess | IBV_ACCESS_MW_BIND);
  auto mw = p.b.pd->alloc_mw(IBV_MW_TYPE_2);
  CHECK(mw->type() == IBV_MW_TYPE_2);
  const std::uint32_t before = mw->rkey();
  const ibv_wc b = bind_type2(p.b, *mw, *mr, mr->va() + 4096, 1024,
                              IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  REQUIRE(b.status == IBV_WC_SUCCESS);
  CHECK(b.opcode == IBV_WC_BIND_MW);
  CHECK(mw->rkey() == ibv_inc_rkey(before));
  std::memset(p.a.buf(), 0x6D, 64);
  REQUIRE(post_send(p.a, IBV_WR_RDMA_WRITE, 0, 64, 51, mr->va() + 4096, mw->rkey()) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_SUCCESS);
  CHECK(p.b.buf()[4096] == 0x6D);

  post_recv(p.b, 0, 64, 52);
  ibv_sge g = sge(p.a, 0, 16);
  ibv_send_wr wr{};
  wr.wr_id = 53;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_INV;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.invalidate_rkey = mw->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.a.qp->post_send(&wr, &bad) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_SUCCESS);
  const ibv_wc r = wait_one(p.b);
  CHECK(r.status == IBV_WC_SUCCESS);
#ifdef RDMALAB_CONFORMANCE_SIM
  constexpr bool kRealDevice = false;
#else
  constexpr bool kRealDevice = true;  // rxe: the kernel's bit, see wc_with_invalidate
#endif
  CHECK(wc_with_invalidate(r, kRealDevice));
  CHECK(r.invalidated_rkey == mw->rkey());

  REQUIRE(post_send(p.a, IBV_WR_RDMA_WRITE, 0, 64, 54, mr->va() + 4096, mw->rkey()) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("type 2 memory window: LOCAL_INV revokes it, then the old rkey is refused") {
  RcPair p;
  auto mr = p.b.pd->reg_mr(p.b.buf(), kBuf, kAccess | IBV_ACCESS_MW_BIND);
  auto mw = p.b.pd->alloc_mw(IBV_MW_TYPE_2);
  REQUIRE(bind_type2(p.b, *mw, *mr, mr->va(), 256, IBV_ACCESS_REMOTE_READ).status ==
          IBV_WC_SUCCESS);
  ibv_send_wr wr{};
  wr.wr_id = 60;
  wr.opcode = IBV_WR_LOCAL_INV;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.invalidate_rkey = mw->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(p.b.qp->post_send(&wr, &bad) == 0);
  const ibv_wc l = wait_one(p.b);
  CHECK(l.status == IBV_WC_SUCCESS);
  CHECK(l.opcode == IBV_WC_LOCAL_INV);
  REQUIRE(post_send(p.a, IBV_WR_RDMA_READ, 0, 64, 61, mr->va(), mw->rkey()) == 0);
  CHECK(wait_one(p.a).status == IBV_WC_REM_ACCESS_ERR);
}

TEST_CASE("binding a window to an MR registered without IBV_ACCESS_MW_BIND: IBV_WC_MW_BIND_ERR") {
  RcPair p;
  auto mw = p.b.pd->alloc_mw(IBV_MW_TYPE_2);
  const ibv_wc b = bind_type2(p.b, *mw, *p.b.mr, p.b.mr->va(), 256, IBV_ACCESS_REMOTE_READ);
  CHECK(b.status == IBV_WC_MW_BIND_ERR);
  CHECK(p.b.qp->state() == IBV_QPS_ERR);
}
