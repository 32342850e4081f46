// Hosts with several ports: each port its own addresses, link and LID; a QP
// sends from and hears on the port its INIT names; the CM binds to the port
// of the IP it resolves or listens on.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../support/dual_port_host.hpp"
#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/sim/cm.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/sim_backend.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;

namespace {

// Two dual-port hosts, h0 and h1: port 1 of each on switch `one`, port 2
// of each on switch `two` (the same switch when the names are equal);
// 100 Gb/s, 1 us links, the defaults.
std::string dual_port_pair(const std::string& one, const std::string& two) {
  std::string t = "switch " + one + "\n";
  if (two != one) t += "switch " + two + "\n";
  t += "host h0 ports=2\nhost h1 ports=2\n";
  for (const char* h : {"h0", "h1"}) t += "link " + one + " " + h + ":1\n";
  for (const char* h : {"h0", "h1"}) t += "link " + two + " " + h + ":2\n";
  return t;
}

// Two rails: port 1 of each host on rail0, port 2 on rail1.
const std::string kRails = dual_port_pair("rail0", "rail1");

constexpr std::size_t kBytes = 4 << 20;  // one WRITE of 4 MiB

struct Host {
  sim::Device* dev = nullptr;
  sim::ProtectionDomain* pd = nullptr;
  sim::CompletionQueue* cq = nullptr;
  sim::MemoryRegion* mr = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(2 * kBytes);

  explicit Host(sim::Device& d) : dev(&d) {
    pd = d.alloc_pd();
    cq = d.create_cq(64);
    mr = pd->reg_mr(buf.data(), buf.size(),
                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  }
  sim::QueuePair* qp() const {
    ibv_qp_init_attr ia{};
    ia.qp_type = IBV_QPT_RC;
    ia.send_cq = cq->get();
    ia.recv_cq = cq->get();
    ia.cap.max_send_wr = 8;
    ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    return pd->create_qp(ia);
  }
};

/// RESET -> INIT (on `port`) -> RTR (towards `peer`'s `peer_port`) -> RTS.
int connect(sim::QueuePair& qp, std::uint8_t port, const sim::Device& peer, std::uint8_t peer_port,
            std::uint32_t dest_qpn, bool ib, std::uint8_t av_port = 0) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = port;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int rc = qp.modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) return rc;
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.dest_qp_num = dest_qpn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.port_num = av_port != 0 ? av_port : port;
  if (ib) {
    a.ah_attr.dlid = peer.lid(peer_port);
  } else {
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer.gid(0, peer_port);
    a.ah_attr.grh.hop_limit = 64;
  }
  rc = qp.modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0) return rc;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 10;  // 4.2 ms
  a.retry_cnt = 1;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  return qp.modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

int write(sim::QueuePair& qp, const Host& from, std::size_t from_off, const Host& to,
          std::size_t to_off, std::uint64_t wr_id) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(from.buf.data() + from_off),
              static_cast<std::uint32_t>(kBytes), from.mr->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to.buf.data() + to_off);
  wr.wr.rdma.rkey = to.mr->rkey();
  ibv_send_wr* bad = nullptr;
  return qp.post_send(&wr, &bad);
}

/// One run on the rails: flow 1 h0 -> h1 from `port1`, flow 2 (when
/// `port2` is not 0) from `port2`, each port to the peer's port of the same
/// number, both posted at time 0. Returns each flow's completion time.
struct RailsRun {
  std::vector<sim::Time> done;
  std::vector<std::uint64_t> rail_tx;  // packets each rail's switch sent
  sim::FabricStats stats;
};
RailsRun run_rails(std::uint8_t port1, std::uint8_t port2, bool ib, const std::string& tap = {}) {
  sim::FabricConfig fc;
  if (ib) fc.link_layer = wire::LinkLayer::Infiniband;
  sim::Fabric fabric(fc);
  const sim::Topology t = sim::load_topology(fabric, kRails);
  Host a(*t.hosts[0]);
  Host b(*t.hosts[1]);
  if (!tap.empty()) fabric.start_port_capture(t.switches[1], 1, tap);  // rail1 -> h1:2
  std::vector<std::uint8_t> ports = {port1};
  if (port2 != 0) ports.push_back(port2);
  std::vector<sim::QueuePair*> qa;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    sim::QueuePair* x = a.qp();
    sim::QueuePair* y = b.qp();
    REQUIRE(x != nullptr);
    REQUIRE(y != nullptr);
    REQUIRE(connect(*x, ports[i], *b.dev, ports[i], y->qp_num(), ib) == 0);
    REQUIRE(connect(*y, ports[i], *a.dev, ports[i], x->qp_num(), ib) == 0);
    qa.push_back(x);
  }
  for (std::size_t i = 0; i < qa.size(); ++i)
    REQUIRE(write(*qa[i], a, i * kBytes, b, i * kBytes, i) == 0);
  RailsRun r;
  r.done.assign(qa.size(), 0);
  for (std::size_t n = 0; n < qa.size(); ++n) {
    ibv_wc wc{};
    REQUIRE(a.cq->poll(1, &wc) == 1);
    CHECK(wc.status == IBV_WC_SUCCESS);
    r.done[wc.wr_id] = fabric.now();
  }
  fabric.run();
  for (const sim::SwitchId sw : t.switches) {
    std::uint64_t tx = 0;
    for (std::size_t p = 0; p < fabric.switch_ports(sw); ++p)
      for (const auto& q : fabric.switch_port_stats(sw, p).tc) tx += q.tx_packets;
    r.rail_tx.push_back(tx);
  }
  r.stats = fabric.stats();
  fabric.stop_port_capture(t.switches[1], 1);
  return r;
}

}  // namespace

TEST_CASE("a dual-port host: two ports with their own addresses, GIDs and LIDs") {
  for (const bool ib : {false, true}) {
    CAPTURE(ib);
    sim::FabricConfig fc;
    if (ib) fc.link_layer = wire::LinkLayer::Infiniband;
    sim::Fabric fabric(fc);
    const sim::Topology t = sim::load_topology(fabric, kRails);
    const sim::Device& h0 = *t.hosts[0];
    const sim::Device& h1 = *t.hosts[1];
    CHECK(h0.port_count() == 2);
    CHECK(h0.ip(1) == *wire::IpAddress::parse("10.0.0.1"));
    CHECK(h0.ip(2) == *wire::IpAddress::parse("10.1.0.1"));
    CHECK(h1.ip(2) == *wire::IpAddress::parse("10.1.0.2"));
    CHECK(h1.mac(2) == wire::MacAddress{0x02, 0, 0, 0x01, 0, 0x01});
    for (const int p : {1, 2})
      CHECK(h0.query_port(static_cast<std::uint8_t>(p)).state == IBV_PORT_ACTIVE);
    CHECK(h0.query_port(3).state == IBV_PORT_NOP);
    CHECK(h0.query_port(0).state == IBV_PORT_NOP);
    if (ib) {
      // The trivial SM numbers ports in the order the hosts joined, each
      // host's in turn: h0:1, h0:2, h1:1, h1:2.
      CHECK(h0.lid(1) == 1);
      CHECK(h0.lid(2) == 2);
      CHECK(h1.lid(1) == 3);
      CHECK(h1.lid(2) == 4);
      CHECK(h0.query_port(2).lid == 2);
      CHECK((h0.query_port(1).port_cap_flags & IBV_PORT_SM) != 0);
      CHECK((h0.query_port(2).port_cap_flags & IBV_PORT_SM) == 0);
      // Each port's GID is fe80:: and its own GUID (from its own MAC).
      // 02:00:00:01:00:00 -> 00:00:00:FF:FE:01:00:00 (the U/L bit inverted).
      CHECK(h0.port_guid(2) == 0x000000FFFE010000ULL);
      const ibv_gid g = h0.gid(0, 2);
      CHECK(g.raw[0] == 0xFE);
      CHECK(g.raw[1] == 0x80);
      CHECK(g.raw[11] == 0xFF);
      CHECK(g.raw[12] == 0xFE);
      CHECK(g.raw[13] == 0x01);
    } else {
      const ibv_gid g = h0.gid(0, 2);
      CHECK(g.raw[10] == 0xFF);
      CHECK(g.raw[12] == 10);
      CHECK(g.raw[13] == 1);
      CHECK(h0.lid(2) == 0);
    }
    CHECK(h0.gid(0, 3).raw[10] == 0);  // no such port: an all-zero GID
  }
}

TEST_CASE("two rails: a flow on each port finishes as if alone; on one port they share it") {
  for (const bool ib : {false, true}) {
    CAPTURE(ib);
    // Derived: the rails share nothing (not a link, not a switch), so a
    // flow on each runs exactly as one flow alone: the same completion time
    // to the ns. Two flows from one port share its link: the 2 x 1024
    // packets of 4 KiB are serialised one after the other, so the second
    // completes one flow's serialisation later than a flow alone,
    // 1024 x s, s the time of one packet on a 100 Gb/s link:
    //   RoCE: (14 + 20 + 8 + 12 + 4096 + 4 + 20) x 8 / 100 = 333.9 ns,
    //         333 ns as the simulator rounds it down;
    //   IB:   (8 + 12 + 4096 + 4 + 2 + 2) x 8 / 100 = 329.9 ns, 329 ns.
    // The second flow's first packet carries a RETH too: 16 bytes more,
    // 335.2 (RoCE) or 331.2 (IB) ns, 335 or 331 rounded down. So the last
    // completion is alone + 1023 x s + s_first, to the ns (measured: RoCE
    // 345,341 ns alone, 686,335 ns shared; IB 341,233 and 678,131).
    const sim::Time s = ib ? 329 : 333;
    const sim::Time s_first = s + 2;
    const RailsRun alone = run_rails(1, 0, ib);
    const RailsRun rails = run_rails(1, 2, ib);
    const RailsRun shared = run_rails(1, 1, ib);
    REQUIRE(alone.done.size() == 1);
    CHECK(rails.done[0] == alone.done[0]);
    CHECK(rails.done[1] == alone.done[0]);
    const sim::Time last = std::max(shared.done[0], shared.done[1]);
    CHECK(last == alone.done[0] + 1023 * s + s_first);
    // Each rail's switch carried one flow: 1024 requests and their ACKs
    // (one per AckReq; the last packet at least) - the same count on both.
    CHECK(rails.rail_tx[0] == alone.rail_tx[0]);
    CHECK(rails.rail_tx[1] == alone.rail_tx[0]);
    CHECK(alone.rail_tx[1] == 0);
    CHECK(shared.rail_tx[1] == 0);
    CHECK(rails.stats.wrong_port == 0);
  }
}

TEST_CASE("port 2's packets carry port 2's addresses on rail 1") {
  const std::string tap = simtest::temp_pcap("rail1");
  (void)run_rails(1, 2, false, tap);
  capture::PcapReader r(tap);
  capture::Packet pk;
  std::size_t requests = 0;
  std::size_t acks = 0;
  const auto src2 = *wire::IpAddress::parse("10.1.0.1");
  const auto dst2 = *wire::IpAddress::parse("10.1.0.2");
  while (r.next(pk)) {
    const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Ethernet, pk.original_length);
    REQUIRE(f.ib.has_value());
    const auto src = f.src_address();
    REQUIRE(src.has_value());
    CHECK((*src == src2 || *src == dst2));
    if (*src == src2) {
      ++requests;
      CHECK(f.eth->src == wire::MacAddress{0x02, 0, 0, 0x01, 0, 0});
    } else {
      ++acks;
    }
    const auto c = wire::check_icrc(f, pk.data);
    CHECK((c && c->ok()));
  }
  CHECK(requests == 1024);
  CHECK(acks >= 1);
  std::remove(tap.c_str());
}

TEST_CASE("a QP hears only on its own port; ports and address vectors are checked") {
  // Both ports of both hosts on one switch, so that h0:1 reaches h1:2.
  sim::Fabric fabric;
  const sim::Topology t = sim::load_topology(fabric, dual_port_pair("s", "s"));
  Host a(*t.hosts[0]);
  Host b(*t.hosts[1]);
  sim::QueuePair* x = a.qp();
  sim::QueuePair* y = b.qp();
  // Checks: no port 3, and an address vector on another port than the QP's.
  CHECK(connect(*x, 3, *b.dev, 1, y->qp_num(), false) == EINVAL);
  CHECK(connect(*x, 1, *b.dev, 1, y->qp_num(), false, 2) == EINVAL);
  ibv_ah_attr av{};
  av.is_global = 1;
  av.grh.dgid = b.dev->gid(0, 2);
  av.port_num = 3;
  errno = 0;
  CHECK(a.pd->create_ah(av) == nullptr);
  CHECK(errno == EINVAL);
  av.port_num = 2;
  CHECK(a.pd->create_ah(av) != nullptr);

  // x (h0:1) sends to h1's port 2, where y does not listen: y is on port 1.
  sim::QueuePair* x2 = a.qp();
  REQUIRE(connect(*x2, 1, *b.dev, 2, y->qp_num(), false) == 0);
  REQUIRE(connect(*y, 1, *a.dev, 1, x2->qp_num(), false) == 0);
  REQUIRE(write(*x2, a, 0, b, 0, 7) == 0);
  ibv_wc wc{};
  REQUIRE(a.cq->poll(1, &wc) == 1);
  // Every request reached h1's port 2 and was dropped there; the requester
  // ran out of its one retry.
  CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
  CHECK(fabric.stats().wrong_port > 0);
  CHECK(fabric.stats().packets_delivered == 0);
}

TEST_CASE("the CM binds to the port of the address: REQ, REP and RTU on rail 1") {
  for (const bool ib : {false, true}) {
    CAPTURE(ib);
    sim::FabricConfig fc;
    if (ib) fc.link_layer = wire::LinkLayer::Infiniband;
    sim::Fabric fabric(fc);
    const sim::Topology t = sim::load_topology(fabric, kRails);
    sim::Device& d0 = *t.hosts[0];
    sim::Device& d1 = *t.hosts[1];
    sim::cm::Manager cm(fabric, {&d0, &d1});
    auto* pch = cm.create_event_channel();
    auto* ach = cm.create_event_channel();
    sim::cm::Id* listener = pch->create_id();
    REQUIRE(listener->listen(d1.ip(2), 7471) == 0);
    // The same service on port 1's address is another listener.
    CHECK(pch->create_id()->listen(d1.ip(1), 7471) == 0);
    sim::cm::Id* active = ach->create_id();
    REQUIRE(active->resolve_addr(std::nullopt, d1.ip(2), 7471) == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::AddrResolved);
    CHECK(active->device() == &d0);
    REQUIRE(active->resolve_route() == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::RouteResolved);
    simtest::CmHost a(d0), p(d1);
    sim::cm::ConnParam offer;
    offer.qp_num = a.qp->qp_num();
    REQUIRE(active->connect(offer) == 0);
    auto req = simtest::next_cm_event(*pch, sim::cm::EventType::ConnectRequest);
    CHECK(req->listen_id == listener);
    p.to_rts(*req->id);
    CHECK(p.rtr.ah_attr.port_num == 2);
    sim::cm::ConnParam answer;
    answer.qp_num = p.qp->qp_num();
    REQUIRE(req->id->accept(answer) == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::ConnectResponse);
    a.to_rts(*active);
    CHECK(a.rtr.ah_attr.port_num == 2);
    if (ib) CHECK(a.rtr.ah_attr.dlid == d1.lid(2));
    REQUIRE(active->establish() == 0);
    simtest::next_cm_event(*pch, sim::cm::EventType::Established);
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(a.buf.data()), 64, a.mr->lkey()};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf.data());
    wr.wr.rdma.rkey = p.mr->rkey();
    ibv_send_wr* bad = nullptr;
    REQUIRE(a.qp->post_send(&wr, &bad) == 0);
    ibv_wc wc{};
    REQUIRE(a.cq->poll(1, &wc) == 1);
    CHECK(wc.status == IBV_WC_SUCCESS);
    // Nothing went over rail 0: the MADs and the WRITE took port 2.
    for (std::size_t port = 0; port < fabric.switch_ports(t.switches[0]); ++port)
      for (const auto& q : fabric.switch_port_stats(t.switches[0], port).tc)
        CHECK(q.tx_packets == 0);
  }
}

TEST_CASE("topology files: ports=, NAME:P link ends, and their mistakes") {
  const auto message = [](const char* text) {
    sim::Fabric fabric;
    try {
      (void)sim::load_topology(fabric, text);
    } catch (const sim::TopologyError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message("switch s\nhost h ports=2 ip=10.5.0.1,10.6.0.1\nlink s h:2\n").empty());
  CHECK(message("switch s\nhost h ports=2\nlink s h:3\n").find("'h:3'") != std::string::npos);
  CHECK(message("switch s\nhost h\nlink s h:2\n").find("'h:2'") != std::string::npos);
  CHECK(message("switch s\nswitch t\nhost h\nlink s t:1\n").find("'t:1'") != std::string::npos);
  CHECK(message("switch s\nhost h ports=9\n").find("ports") != std::string::npos);
  CHECK(message("switch s\nhost h ports=0\n").find("ports") != std::string::npos);
  CHECK(message("switch s\nhost h ports=2 ip=10.5.0.1,10.6.0.1,10.7.0.1\n").find("ip") !=
        std::string::npos);
  const std::string twice = message("switch s\nhost h ports=2\nlink s h:2\nlink s h:2\n");
  CHECK(twice.find("port 2") != std::string::npos);
  CHECK(twice.find("line 4") != std::string::npos);
  sim::Fabric fabric;
  const auto t = sim::load_topology(fabric, "switch s\nhost h ports=2 ip=10.5.0.1,10.6.0.1\n");
  CHECK(t.hosts[0]->ip(2) == *wire::IpAddress::parse("10.6.0.1"));
  // More ports than a NIC may have.
  sim::HostConfig big;
  big.more_ports.resize(sim::kMaxHostPorts);
  CHECK_THROWS_AS((void)fabric.add_host(big), std::invalid_argument);
}

TEST_CASE("the verbs backend on a dual-port NIC: phys_port_cnt, each port's LID and GID") {
  for (const bool ib : {false, true}) {
    CAPTURE(ib);
    verbs::SimBackendOptions o;
    if (ib) o.fabric.link_layer = wire::LinkLayer::Infiniband;
    o.hosts.push_back(testsupport::dual_port_host());
    auto backend = verbs::make_sim_backend(o);
    const auto ctx = backend->open("sim0");
    CHECK(ctx->query_device().phys_port_cnt == 2);
    const verbs::PortInfo p2 = ctx->query_port(2);
    CHECK(p2.state == IBV_PORT_ACTIVE);
    CHECK(p2.lid == (ib ? 2 : 0));
    const auto gids = ctx->gid_table(2);
    REQUIRE(gids.size() == 1);
    const sim::Device* dev = backend->device("sim0");
    REQUIRE(dev != nullptr);
    CHECK(std::memcmp(gids[0].gid.raw, dev->gid(0, 2).raw, 16) == 0);
    CHECK(std::memcmp(gids[0].gid.raw, dev->gid(0, 1).raw, 16) != 0);
    CHECK_THROWS_AS((void)ctx->query_port(3), verbs::VerbsError);
  }
}
