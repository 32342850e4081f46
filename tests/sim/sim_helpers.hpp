// Shared set-up for the simulator tests: two hosts, one connected QP pair,
// registered buffers, and a reader that turns a capture back into packets.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../support/command.hpp"
#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/sim/cm.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/wire/icrc.hpp"

namespace simtest {

using namespace rdmalab;

struct PairConfig {
  ibv_qp_type type = IBV_QPT_RC;
  ibv_mtu mtu = IBV_MTU_1024;
  std::uint32_t psn_a = 0;  // A's send PSN (= B's receive PSN)
  std::uint32_t psn_b = 0;
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t min_rnr_timer = 12;  // 0.64 ms
  std::uint8_t rd_atomic = 4;
  std::size_t buffer = 1 << 20;
  std::uint32_t max_wr = 256;
  bool ipv6 = false;
  /// Register the buffers at fixed IOVAs (0x10000000 on A, 0x20000000 on B)
  /// so that the capture does not depend on heap addresses.
  bool fixed_iova = false;
  sim::FabricConfig fabric;
  sim::Time tx_packet_ns = 0;
  /// HostConfig::dcqcn_np and dcqcn_rp of both hosts.
  bool dcqcn_np = true;
  bool dcqcn_rp = true;
  /// On an InfiniBand fabric (fabric.link_layer): the address vectors' SL,
  /// and whether they are global (a GRH on every packet). The DLID is the
  /// peer's LID.
  std::uint8_t sl = 0;
  bool ib_global = false;
};

/// A temporary file name unique to this test process.
inline std::string temp_pcap(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("rdmalab_sim_" + std::to_string(::getpid()) + "_" + name + ".pcap"))
      .string();
}

/// Host A (requester side in most tests) and host B, one QP each,
/// connected through RESET -> INIT -> RTR -> RTS exactly as verbs code does.
struct Pair {
  explicit Pair(const PairConfig& c = {})
      : cfg(c),
        fabric(c.fabric),
        a(fabric.add_host(host("A", 2, c))),
        b(fabric.add_host(host("B", 1, c))) {
    buf_a.assign(c.buffer, 0);
    buf_b.assign(c.buffer, 0);
    pd_a = a.alloc_pd();
    pd_b = b.alloc_pd();
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                       IBV_ACCESS_REMOTE_ATOMIC;
    mr_a = c.fixed_iova ? pd_a->reg_mr_iova(buf_a.data(), buf_a.size(), 0x10000000, access)
                        : pd_a->reg_mr(buf_a.data(), buf_a.size(), access);
    mr_b = c.fixed_iova ? pd_b->reg_mr_iova(buf_b.data(), buf_b.size(), 0x20000000, access)
                        : pd_b->reg_mr(buf_b.data(), buf_b.size(), access);
    cq_a = a.create_cq(4096);
    cq_b = b.create_cq(4096);
    qa = make_qp(*pd_a, *cq_a);
    qb = make_qp(*pd_b, *cq_b);
    REQUIRE(qa != nullptr);
    REQUIRE(qb != nullptr);
    REQUIRE(connect(*qa, b, qb->qp_num(), c.psn_a, c.psn_b) == 0);
    REQUIRE(connect(*qb, a, qa->qp_num(), c.psn_b, c.psn_a) == 0);
  }

  static sim::HostConfig host(const char* name, std::uint8_t last, const PairConfig& c) {
    sim::HostConfig h;
    h.name = name;
    h.mac = {0x02, 0, 0, 0, 0, last};
    h.ip = c.ipv6 ? wire::IpAddress::from_v6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last})
                  : wire::IpAddress::from_v4({10, 99, 0, last});
    h.tx_packet_ns = c.tx_packet_ns;
    h.dcqcn_np = c.dcqcn_np;
    h.dcqcn_rp = c.dcqcn_rp;
    return h;
  }

  sim::QueuePair* make_qp(sim::ProtectionDomain& pd, sim::CompletionQueue& cq) const {
    ibv_qp_init_attr ia{};
    ia.send_cq = cq.get();
    ia.recv_cq = cq.get();
    ia.qp_type = cfg.type;
    ia.cap.max_send_wr = cfg.max_wr;
    ia.cap.max_recv_wr = cfg.max_wr;
    ia.cap.max_send_sge = 4;
    ia.cap.max_recv_sge = 4;
    ia.cap.max_inline_data = 64;
    return pd.create_qp(ia);
  }

  int connect(sim::QueuePair& qp, sim::Device& peer, std::uint32_t dest_qpn, std::uint32_t sq_psn,
              std::uint32_t rq_psn) const {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.pkey_index = 0;
    at.port_num = 1;
    at.qp_access_flags =
        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    at.qkey = 0x11111111;
    const bool ud = cfg.type == IBV_QPT_UD;
    int rc = qp.modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                               (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
    if (rc != 0) return rc;
    at = ibv_qp_attr{};
    at.qp_state = IBV_QPS_RTR;
    at.path_mtu = cfg.mtu;
    at.dest_qp_num = dest_qpn;
    at.rq_psn = rq_psn;
    at.max_dest_rd_atomic = cfg.rd_atomic;
    at.min_rnr_timer = cfg.min_rnr_timer;
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = peer.gid(0);
    at.ah_attr.grh.hop_limit = 64;
    at.ah_attr.port_num = 1;
    if (cfg.fabric.link_layer == wire::LinkLayer::Infiniband) {
      at.ah_attr.is_global = cfg.ib_global ? 1 : 0;
      at.ah_attr.dlid = peer.lid();
      at.ah_attr.sl = cfg.sl;
    }
    int mask = IBV_QP_STATE;
    if (cfg.type != IBV_QPT_UD)
      mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (cfg.type == IBV_QPT_RC) mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    rc = qp.modify(at, mask);
    if (rc != 0) return rc;
    at = ibv_qp_attr{};
    at.qp_state = IBV_QPS_RTS;
    at.sq_psn = sq_psn;
    at.timeout = cfg.timeout;
    at.retry_cnt = cfg.retry_cnt;
    at.rnr_retry = cfg.rnr_retry;
    at.max_rd_atomic = cfg.rd_atomic;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (cfg.type == IBV_QPT_RC)
      mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    return qp.modify(at, mask);
  }

  /// Posts one send WR from A (signalled) with one SGE into buf_a.
  int post(ibv_wr_opcode op, std::uint64_t local_off, std::uint32_t len, std::uint64_t remote_off,
           std::uint64_t wr_id, std::uint32_t rkey = 0, sim::QueuePair* qp = nullptr) {
    ibv_sge sge{mr_a->iova() + local_off, len, mr_a->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
      wr.wr.atomic.remote_addr = mr_b->iova() + remote_off;
      wr.wr.atomic.rkey = rkey != 0 ? rkey : mr_b->rkey();
      wr.wr.atomic.compare_add = 1;  // add 1, or compare with 1
      wr.wr.atomic.swap = 2;
    } else {
      wr.wr.rdma.remote_addr = mr_b->iova() + remote_off;
      wr.wr.rdma.rkey = rkey != 0 ? rkey : mr_b->rkey();
    }
    ibv_send_wr* bad = nullptr;
    return (qp != nullptr ? qp : qa)->post_send(&wr, &bad);
  }

  /// Posts a receive on B of `len` bytes at `off` in buf_b.
  int post_recv_b(std::uint64_t off, std::uint32_t len, std::uint64_t wr_id) {
    ibv_sge sge{mr_b->iova() + off, len, mr_b->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return qb->post_recv(&wr, &bad);
  }

  /// Polls one completion from a CQ (advancing the fabric as needed).
  static ibv_wc poll_one(sim::CompletionQueue& cq) {
    ibv_wc wc{};
    const int n = cq.poll(1, &wc);
    REQUIRE(n == 1);
    return wc;
  }

  void fill_a(std::uint8_t seed) {
    for (std::size_t i = 0; i < buf_a.size(); ++i)
      buf_a[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
  }

  PairConfig cfg;
  sim::Fabric fabric;
  sim::Device& a;
  sim::Device& b;
  std::vector<std::uint8_t> buf_a, buf_b;
  sim::ProtectionDomain* pd_a = nullptr;
  sim::ProtectionDomain* pd_b = nullptr;
  sim::MemoryRegion* mr_a = nullptr;
  sim::MemoryRegion* mr_b = nullptr;
  sim::CompletionQueue* cq_a = nullptr;
  sim::CompletionQueue* cq_b = nullptr;
  sim::QueuePair* qa = nullptr;
  sim::QueuePair* qb = nullptr;
};

/// One RoCE packet of a capture, decoded with rdmalab::wire.
struct Pkt {
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;
  wire::IpAddress src;
  std::uint16_t udp_src = 0;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::uint32_t dest_qp = 0;
  bool ack_req = false;
  std::size_t payload = 0;
  std::optional<std::uint8_t> syndrome;
  std::uint32_t msn = 0;
  bool icrc_ok = false;
  bool malformed = false;
  // The IP header's DSCP and ECN (IPv4 TOS / IPv6 traffic class), the BTH's
  // BECN bit, and whether an IPv4 header checksum verifies (true for IPv6).
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;
  bool becn = false;
  bool ip_checksum_ok = true;
};

/// Every RoCE packet of a pcap, with its ICRC checked.
inline std::vector<Pkt> read_capture(const std::string& path) {
  std::vector<Pkt> out;
  capture::PcapReader r(path);
  capture::Packet pk;
  while (r.next(pk)) {
    const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Ethernet, pk.original_length);
    if (!f.is_roce()) continue;
    Pkt p;
    p.frame = pk.frame;
    p.time_ns = pk.time_ns;
    p.malformed = f.error.has_value() && f.error->kind != wire::ErrorKind::SnapTruncated;
    if (f.ib) {
      p.src = *f.src_address();
      p.udp_src = f.udp ? f.udp->src_port : 0;
      p.opcode = f.ib->bth.opcode;
      p.psn = f.ib->bth.psn;
      p.dest_qp = f.ib->bth.dest_qp;
      p.ack_req = f.ib->bth.ack_req;
      p.becn = f.ib->bth.becn;
      p.payload = f.ib->payload_length;
      if (f.ib->aeth) {
        p.syndrome = f.ib->aeth->syndrome;
        p.msn = f.ib->aeth->msn;
      }
    }
    const std::uint8_t tc = f.ipv4 ? f.ipv4->tos : f.ipv6 ? f.ipv6->traffic_class : 0;
    p.dscp = static_cast<std::uint8_t>(tc >> 2);
    p.ecn = static_cast<std::uint8_t>(tc & 0x03);
    if (f.ipv4) p.ip_checksum_ok = wire::ipv4_checksum(pk.data.subspan(f.ip_offset, 20)) == 0;
    const auto c = wire::check_icrc(f, pk.data);
    p.icrc_ok = c.has_value() && c->ok();
    out.push_back(p);
  }
  return out;
}

/// The packets sent by the host with this address.
inline std::vector<Pkt> from(const std::vector<Pkt>& all, const wire::IpAddress& src) {
  std::vector<Pkt> out;
  for (const Pkt& p : all)
    if (p.src == src) out.push_back(p);
  return out;
}

/// One host's RC QP for the CM tests: a PD, a CQ, a QP and a 1 KiB MR;
/// to_rts() applies what the CM id's init_qp_attr gives, state by state, and
/// keeps the RTR attributes (the address vector the CM chose).
struct CmHost {
  sim::Device* dev;
  sim::ProtectionDomain* pd = nullptr;
  sim::CompletionQueue* cq = nullptr;
  sim::QueuePair* qp = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1024);
  sim::MemoryRegion* mr = nullptr;
  ibv_qp_attr rtr{};

  explicit CmHost(sim::Device& d) : dev(&d) {
    pd = d.alloc_pd();
    cq = d.create_cq(16);
    ibv_qp_init_attr ia{};
    ia.qp_type = IBV_QPT_RC;
    ia.send_cq = cq->get();
    ia.recv_cq = cq->get();
    ia.cap.max_send_wr = 4;
    ia.cap.max_recv_wr = 4;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    qp = pd->create_qp(ia);
    mr = pd->reg_mr(buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  }
  void to_rts(const sim::cm::Id& id) {
    for (ibv_qp_state s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
      ibv_qp_attr a{};
      a.qp_state = s;
      int mask = 0;
      REQUIRE(id.init_qp_attr(a, mask) == 0);
      if (s == IBV_QPS_RTR) rtr = a;
      REQUIRE(qp->modify(a, mask) == 0);
    }
  }
};

/// The next CM event of `ch`, which must be of type `t`.
inline std::optional<sim::cm::Event> next_cm_event(sim::cm::EventChannel& ch,
                                                   sim::cm::EventType t) {
  auto e = ch.get_event();
  REQUIRE(e.has_value());
  CHECK(e->type == t);
  return e;
}

using testsupport::run_command;
using testsupport::split_lines;

}  // namespace simtest
