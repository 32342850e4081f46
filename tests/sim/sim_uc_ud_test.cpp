// UC (no ACKs, a lost packet drops its message) and UD (DETH, Q_Key, GRH).
#include <doctest/doctest.h>

#include "rdmalab/wire/opcode.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;
namespace op = rdmalab::wire::opcode;

TEST_CASE("UC: WRITEs and SENDs complete at the sender, no ACK is ever sent") {
  PairConfig c;
  c.type = IBV_QPT_UC;
  Pair p(c);
  const std::string path = temp_pcap("uc");
  p.fabric.start_capture(path);
  p.fill_a(1);
  REQUIRE(p.post_recv_b(8192, 4096, 1) == 0);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 2500, 0, 1) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 3000, 0, 2) == 0);
  CHECK(Pair::poll_one(*p.cq_a).wr_id == 1);
  CHECK(Pair::poll_one(*p.cq_a).wr_id == 2);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  CHECK(wc.byte_len == 3000);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 2500) == 0);
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data() + 8192, 3000) == 0);
  p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  REQUIRE(all.size() == 6);
  for (const Pkt& k : all) {
    CHECK(k.src == p.a.config().ip);  // nothing comes back
    CHECK(k.icrc_ok);
    CHECK_FALSE(k.ack_req);
  }
  CHECK(all[0].opcode == 0x26);  // UC RDMA WRITE First
  CHECK(all[3].opcode == 0x20);  // UC SEND First
}

TEST_CASE("UC: a lost packet silently drops its message, the next one is delivered") {
  PairConfig c;
  c.type = IBV_QPT_UC;
  Pair p(c);
  p.fabric.link(p.a, p.b).drops.push_back(sim::DropRule::psn(1));
  p.fill_a(2);
  REQUIRE(p.post_recv_b(0, 4096, 10) == 0);
  REQUIRE(p.post_recv_b(4096, 4096, 11) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 3000, 0, 1) == 0);    // PSNs 0-2, PSN 1 lost
  REQUIRE(p.post(IBV_WR_SEND, 100, 2000, 0, 2) == 0);  // PSNs 3-4
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  const ibv_wc wc = Pair::poll_one(*p.cq_b);
  // The first receive WQE was reused for the second message.
  CHECK(wc.wr_id == 10);
  CHECK(wc.byte_len == 2000);
  CHECK(std::memcmp(p.buf_a.data() + 100, p.buf_b.data(), 2000) == 0);
  ibv_wc more;
  CHECK(p.cq_b->poll(1, &more) == 0);
}

namespace {

struct UdPair {
  UdPair() : p(config()) {
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.port_num = 1;
    ah.grh.dgid = p.b.gid(0);
    ah.grh.hop_limit = 64;
    handle = p.pd_a->create_ah(ah);
    REQUIRE(handle != nullptr);
  }
  static PairConfig config() {
    PairConfig c;
    c.type = IBV_QPT_UD;
    return c;
  }
  int send(std::uint32_t len, std::uint32_t qkey, std::uint64_t id) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data()), len, p.mr_a->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = handle->get();
    wr.wr.ud.remote_qpn = p.qb->qp_num();
    wr.wr.ud.remote_qkey = qkey;
    ibv_send_wr* bad = nullptr;
    return p.qa->post_send(&wr, &bad);
  }
  Pair p;
  sim::AddressHandle* handle = nullptr;
};

}  // namespace

TEST_CASE("UD: SEND Only with DETH, the receive buffer starts with the 40-byte GRH") {
  UdPair u;
  const std::string path = temp_pcap("ud");
  u.p.fabric.start_capture(path);
  u.p.fill_a(3);
  REQUIRE(u.p.post_recv_b(0, 2048, 5) == 0);
  REQUIRE(u.send(1000, 0x11111111, 1) == 0);
  CHECK(Pair::poll_one(*u.p.cq_a).status == IBV_WC_SUCCESS);
  const ibv_wc wc = Pair::poll_one(*u.p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.byte_len == 1040);
  CHECK((wc.wc_flags & IBV_WC_GRH) != 0);
  CHECK(wc.src_qp == u.p.qa->qp_num());
  // RoCEv2 over IPv4: the IPv4 header sits in the last 20 bytes of the GRH.
  CHECK(u.p.buf_b[20] == 0x45);
  CHECK(u.p.buf_b[20 + 12] == 10);  // source address 10.99.0.2
  CHECK(u.p.buf_b[20 + 15] == 2);
  CHECK(std::memcmp(u.p.buf_a.data(), u.p.buf_b.data() + 40, 1000) == 0);
  u.p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  REQUIRE(all.size() == 1);
  CHECK(all[0].opcode == op::kUdSendOnly);
  CHECK(all[0].icrc_ok);
}

TEST_CASE("UD: wrong Q_Key and no receive WQE drop silently") {
  UdPair u;
  REQUIRE(u.send(100, 0x22222222, 1) == 0);  // wrong Q_Key
  REQUIRE(u.send(100, 0x11111111, 2) == 0);  // no receive posted
  CHECK(Pair::poll_one(*u.p.cq_a).wr_id == 1);
  CHECK(Pair::poll_one(*u.p.cq_a).wr_id == 2);
  u.p.fabric.run();
  ibv_wc wc;
  CHECK(u.p.cq_b->poll(1, &wc) == 0);
}

TEST_CASE("UD: a message above the port MTU completes with success and sends nothing") {
  // IBTA C10-93.1.1 (and rxe_req.c): no packet, no error. The port MTU of
  // the pair's hosts is 4096, so 4097 bytes is one too many and 4096 fits.
  UdPair u;
  const std::string path = temp_pcap("ud_mtu");
  u.p.fabric.start_capture(path);
  REQUIRE(u.p.post_recv_b(0, 8192, 5) == 0);
  REQUIRE(u.send(4097, 0x11111111, 3) == 0);
  const ibv_wc big = Pair::poll_one(*u.p.cq_a);
  CHECK(big.wr_id == 3);
  CHECK(big.status == IBV_WC_SUCCESS);
  u.p.fabric.run();
  ibv_wc wc;
  CHECK(u.p.cq_b->poll(1, &wc) == 0);
  REQUIRE(u.send(4096, 0x11111111, 4) == 0);
  CHECK(Pair::poll_one(*u.p.cq_a).wr_id == 4);
  const ibv_wc rx = Pair::poll_one(*u.p.cq_b);
  CHECK(rx.status == IBV_WC_SUCCESS);
  CHECK(rx.byte_len == 40 + 4096);
  u.p.fabric.stop_capture();
  const auto all = read_capture(path);
  std::remove(path.c_str());
  REQUIRE(all.size() == 1);  // only the 4096-byte message
  CHECK(all[0].opcode == op::kUdSendOnly);
}
