// The verbs surface of the simulator: object life cycle, the QP state
// machine of ibv_modify_qp, and the errors of post_send/post_recv.
#include <doctest/doctest.h>

#include <cerrno>

#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

sim::HostConfig host(const char* name, std::uint8_t last) {
  sim::HostConfig h;
  h.name = name;
  h.ip = wire::IpAddress::from_v4({192, 168, 0, last});
  h.mac = {2, 0, 0, 0, 0, last};
  h.port_mtu = 1024;
  return h;
}

ibv_qp_init_attr init_attr(sim::CompletionQueue& cq, ibv_qp_type type) {
  ibv_qp_init_attr ia{};
  ia.send_cq = cq.get();
  ia.recv_cq = cq.get();
  ia.qp_type = type;
  ia.cap.max_send_wr = 2;
  ia.cap.max_recv_wr = 2;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  return ia;
}

}  // namespace

TEST_CASE("device: port attributes and the IPv4-mapped GID") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("h", 7));
  const ibv_port_attr pa = d.query_port(1);
  CHECK(pa.state == IBV_PORT_ACTIVE);
  CHECK(pa.active_mtu == IBV_MTU_1024);
  CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET);
  const ibv_gid g = d.gid(0);
  const std::uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 0, 7};
  CHECK(std::memcmp(g.raw, want, 16) == 0);
}

TEST_CASE("PD, MR, CQ and QP life cycle: EBUSY while children live") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("h", 1));
  sim::ProtectionDomain* pd = d.alloc_pd();
  REQUIRE(pd != nullptr);
  std::vector<std::uint8_t> buf(4096);
  sim::MemoryRegion* mr = pd->reg_mr(buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  REQUIRE(mr != nullptr);
  CHECK(mr->lkey() == mr->rkey());
  CHECK(mr->length() == 4096);
  sim::CompletionQueue* cq = d.create_cq(16);
  REQUIRE(cq != nullptr);
  sim::QueuePair* qp = pd->create_qp(init_attr(*cq, IBV_QPT_RC));
  REQUIRE(qp != nullptr);
  CHECK(qp->state() == IBV_QPS_RESET);

  CHECK(d.dealloc_pd(pd) == EBUSY);
  CHECK(d.destroy_cq(cq) == EBUSY);
  CHECK(pd->destroy_qp(qp) == 0);
  CHECK(d.destroy_cq(cq) == 0);
  CHECK(d.dealloc_pd(pd) == EBUSY);  // the MR is still registered
  CHECK(pd->dereg_mr(mr) == 0);
  CHECK(d.dealloc_pd(pd) == 0);
}

TEST_CASE("reg_mr and create_qp/create_cq fail like verbs: nullptr and errno") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("h", 1));
  sim::ProtectionDomain* pd = d.alloc_pd();
  std::vector<std::uint8_t> buf(64);
  errno = 0;
  CHECK(pd->reg_mr(buf.data(), 64, IBV_ACCESS_REMOTE_WRITE) == nullptr);  // needs LOCAL_WRITE
  CHECK(errno == EINVAL);
  CHECK(pd->reg_mr(nullptr, 64, 0) == nullptr);
  CHECK(d.create_cq(0) == nullptr);
  sim::CompletionQueue* cq = d.create_cq(4);
  ibv_qp_init_attr ia = init_attr(*cq, IBV_QPT_RC);
  ibv_cq foreign{};
  ia.send_cq = &foreign;
  errno = 0;
  CHECK(pd->create_qp(ia) == nullptr);
  CHECK(errno == EINVAL);
  ia = init_attr(*cq, IBV_QPT_RAW_PACKET);
  CHECK(pd->create_qp(ia) == nullptr);
}

TEST_CASE("modify_qp: transitions and required attributes follow man ibv_modify_qp") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("a", 1));
  sim::Device& peer = f.add_host(host("b", 2));
  sim::ProtectionDomain* pd = d.alloc_pd();
  sim::CompletionQueue* cq = d.create_cq(8);
  sim::QueuePair* qp = pd->create_qp(init_attr(*cq, IBV_QPT_RC));
  REQUIRE(qp != nullptr);

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  CHECK(qp->modify(a, IBV_QP_STATE) == EINVAL);  // RESET -> RTR is not a transition
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL);  // PKEY_INDEX, ACCESS missing
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
                          IBV_QP_SQ_PSN) == EINVAL);  // SQ_PSN not allowed here
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  CHECK(qp->state() == IBV_QPS_INIT);

  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = 0x99;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid(0);
  a.ah_attr.port_num = 1;
  const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  CHECK(qp->modify(a, rtr & ~IBV_QP_MIN_RNR_TIMER) == EINVAL);
  a.path_mtu = IBV_MTU_4096;  // above the port MTU of 1024
  CHECK(qp->modify(a, rtr) == EINVAL);
  a.path_mtu = IBV_MTU_1024;
  a.ah_attr.grh.dgid.raw[15] = 77;  // nobody has this GID
  CHECK(qp->modify(a, rtr) == EINVAL);
  a.ah_attr.grh.dgid = peer.gid(0);
  CHECK(qp->modify(a, rtr) == 0);
  CHECK(qp->state() == IBV_QPS_RTR);

  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 8;  // 3 bits
  const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  CHECK(qp->modify(a, rts) == EINVAL);
  a.retry_cnt = 7;
  CHECK(qp->modify(a, rts & ~IBV_QP_TIMEOUT) == EINVAL);
  CHECK(qp->modify(a, rts) == 0);
  CHECK(qp->state() == IBV_QPS_RTS);

  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_SQD;
  CHECK(qp->modify(a, IBV_QP_STATE) == 0);
  a.qp_state = IBV_QPS_RTS;
  CHECK(qp->modify(a, IBV_QP_STATE) == 0);
  a.qp_state = IBV_QPS_ERR;
  CHECK(qp->modify(a, IBV_QP_STATE) == 0);
  a.qp_state = IBV_QPS_RTS;
  CHECK(qp->modify(a, IBV_QP_STATE) == EINVAL);
  a.qp_state = IBV_QPS_RESET;
  CHECK(qp->modify(a, IBV_QP_STATE) == 0);

  ibv_qp_attr q{};
  ibv_qp_init_attr qi{};
  CHECK(qp->query(q, IBV_QP_STATE, qi) == 0);
  CHECK(q.qp_state == IBV_QPS_RESET);
  CHECK(q.timeout == 14);
  CHECK(qi.send_cq == cq->get());
}

TEST_CASE("UD and UC transitions need their own attribute sets") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("a", 1));
  sim::ProtectionDomain* pd = d.alloc_pd();
  sim::CompletionQueue* cq = d.create_cq(8);
  sim::QueuePair* ud = pd->create_qp(init_attr(*cq, IBV_QPT_UD));
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = 0x1234;
  CHECK(ud->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
        EINVAL);
  CHECK(ud->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
  a.qp_state = IBV_QPS_RTR;
  CHECK(ud->modify(a, IBV_QP_STATE) == 0);
  a.qp_state = IBV_QPS_RTS;
  CHECK(ud->modify(a, IBV_QP_STATE) == EINVAL);  // SQ_PSN required
  CHECK(ud->modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);

  sim::QueuePair* uc = pd->create_qp(init_attr(*cq, IBV_QPT_UC));
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  CHECK(uc->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_512;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = d.gid(0);  // loopback to itself
  // MAX_DEST_RD_ATOMIC is an RC attribute: not allowed for UC.
  CHECK(uc->modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC) == EINVAL);
  CHECK(uc->modify(
            a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) == 0);
}

TEST_CASE("post_send/post_recv errors: RESET, full queue, too many SGEs, wrong opcode") {
  sim::Fabric f;
  sim::Device& d = f.add_host(host("a", 1));
  sim::ProtectionDomain* pd = d.alloc_pd();
  sim::CompletionQueue* cq = d.create_cq(8);
  sim::QueuePair* qp = pd->create_qp(init_attr(*cq, IBV_QPT_RC));
  std::vector<std::uint8_t> buf(64);
  sim::MemoryRegion* mr = pd->reg_mr(buf.data(), 64, IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data()), 8, mr->lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  ibv_send_wr* bad = nullptr;
  CHECK(qp->post_send(&wr, &bad) == EINVAL);  // RESET
  CHECK(bad == &wr);
  ibv_recv_wr rw{};
  rw.sg_list = &sge;
  rw.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  CHECK(qp->post_recv(&rw, &rbad) == EINVAL);  // RESET
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  REQUIRE(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  CHECK(qp->post_send(&wr, &bad) == EINVAL);  // INIT: receives only
  // A chain: the third WR overflows the 2-entry receive queue.
  ibv_recv_wr r3[3]{};
  for (auto& r : r3) {
    r.sg_list = &sge;
    r.num_sge = 1;
  }
  r3[0].next = &r3[1];
  r3[1].next = &r3[2];
  CHECK(qp->post_recv(r3, &rbad) == ENOMEM);
  CHECK(rbad == &r3[2]);
  rw.num_sge = 2;  // max_recv_sge is 1
  CHECK(qp->post_recv(&rw, &rbad) == EINVAL);

  // In ERR a posted request is accepted and flushed.
  a.qp_state = IBV_QPS_ERR;
  REQUIRE(qp->modify(a, IBV_QP_STATE) == 0);
  ibv_wc wc[4];
  CHECK(cq->poll_now(4, wc) == 2);  // the two receives posted before
  CHECK(wc[0].status == IBV_WC_WR_FLUSH_ERR);
  wr.wr_id = 42;
  CHECK(qp->post_send(&wr, &bad) == 0);
  CHECK(cq->poll_now(4, wc) == 1);
  CHECK(wc[0].wr_id == 42);
  CHECK(wc[0].status == IBV_WC_WR_FLUSH_ERR);
}

TEST_CASE("UD rejects RDMA WRITE, UC rejects READ and atomics") {
  PairConfig c;
  c.type = IBV_QPT_UC;
  Pair p(c);
  CHECK(p.post(IBV_WR_RDMA_READ, 0, 8, 0, 1) == EINVAL);
  CHECK(p.post(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, 0, 1) == EINVAL);
  CHECK(p.post(IBV_WR_RDMA_WRITE, 0, 8, 0, 1) == 0);
  c.type = IBV_QPT_UD;
  Pair u(c);
  CHECK(u.post(IBV_WR_RDMA_WRITE, 0, 8, 0, 1) == EINVAL);
}

TEST_CASE("a full send queue gives ENOMEM, poll with an idle fabric returns 0") {
  PairConfig c;
  c.max_wr = 2;
  Pair p(c);
  CHECK(p.post(IBV_WR_RDMA_WRITE, 0, 8, 0, 1) == 0);
  CHECK(p.post(IBV_WR_RDMA_WRITE, 0, 8, 0, 2) == 0);
  CHECK(p.post(IBV_WR_RDMA_WRITE, 0, 8, 0, 3) == ENOMEM);
  ibv_wc wc[4];
  CHECK(p.cq_a->poll(4, wc) >= 1);
  p.fabric.run();
  CHECK(p.cq_a->poll(4, wc) <= 1);
  CHECK(p.cq_a->poll(4, wc) == 0);  // nothing left to happen
}
