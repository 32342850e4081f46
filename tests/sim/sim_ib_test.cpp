// The simulator's InfiniBand link layer: the subnet manager's LIDs and the
// port attributes, native IB packets (LRH [GRH] BTH ... ICRC VCRC) on every
// link, ERF captures, forwarding by DLID, the VCRC and ICRC checks, what is
// refused, and tshark reading the captures as the simulator sent them. Every
// number checked is derived in the comment above it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/sim/cm.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/sim_backend.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/icrc.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "sim_helpers.hpp"

#ifdef RDMALAB_TSHARK
constexpr const char* kTshark = RDMALAB_TSHARK;
#else
constexpr const char* kTshark = nullptr;  // not found when configured: its test is skipped
#endif

namespace {

using namespace rdmalab;
using simtest::Pair;
using simtest::PairConfig;
using simtest::run_command;
using simtest::split_lines;

sim::FabricConfig ib_fabric() {
  sim::FabricConfig fc;
  fc.link_layer = wire::LinkLayer::Infiniband;
  return fc;
}

PairConfig ib_pair(std::uint8_t sl = 0, bool global = false) {
  PairConfig c;
  c.fabric = ib_fabric();
  c.fixed_iova = true;
  c.sl = sl;
  c.ib_global = global;
  return c;
}

/// fe80::<GUID> for a MAC, the GUID its modified EUI-64, written out.
ibv_gid gid_of(std::array<std::uint8_t, 8> guid) {
  ibv_gid g{};
  g.raw[0] = 0xFE;
  g.raw[1] = 0x80;
  std::copy(guid.begin(), guid.end(), g.raw + 8);
  return g;
}

bool same_gid(const std::array<std::uint8_t, 16>& a, const ibv_gid& b) {
  return std::memcmp(a.data(), b.raw, 16) == 0;
}

/// One packet of an ERF capture, decoded with rdmalab::wire.
struct IbPkt {
  std::int64_t time_ns = 0;
  std::uint8_t erf_type = 0;
  std::size_t wire_bytes = 0;  // the packet, LRH through VCRC (the ERF wlen)
  wire::ib::Lrh lrh;
  std::optional<wire::Grh> grh;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::uint32_t dest_qp = 0;
  std::size_t payload = 0;
  bool vcrc_ok = false;
  bool icrc_ok = false;
  bool error = false;
};

std::vector<IbPkt> read_ib(const std::string& path) {
  std::vector<IbPkt> out;
  capture::PcapReader r(path);
  REQUIRE(r.datalink() == 197);  // LINKTYPE_ERF
  capture::Packet pk;
  while (r.next(pk)) {
    IbPkt p;
    p.time_ns = pk.time_ns;
    wire::erf::Record rec;
    REQUIRE_FALSE(wire::erf::parse(pk.data, rec));
    p.erf_type = rec.type;
    p.wire_bytes = rec.wlen;
    CHECK(rec.time_ns() == pk.time_ns);
    const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Erf, pk.original_length);
    p.error = f.error.has_value();
    REQUIRE(f.roce == wire::RoceVersion::NativeIb);
    REQUIRE(f.lrh.has_value());
    REQUIRE(f.ib.has_value());
    p.lrh = *f.lrh;
    p.grh = f.grh;
    p.opcode = f.ib->bth.opcode;
    p.psn = f.ib->bth.psn;
    p.dest_qp = f.ib->bth.dest_qp;
    p.payload = f.ib->payload_length;
    const auto v = wire::check_vcrc(f, pk.data);
    const auto i = wire::check_icrc(f, pk.data);
    p.vcrc_ok = v.has_value() && v->ok();
    p.icrc_ok = i.has_value() && i->ok();
    out.push_back(p);
  }
  return out;
}

std::vector<IbPkt> with_opcode(const std::vector<IbPkt>& all, std::uint8_t op) {
  std::vector<IbPkt> out;
  for (const IbPkt& p : all)
    if (p.opcode == op) out.push_back(p);
  return out;
}

ibv_wc wait_one(sim::CompletionQueue& cq) {
  return Pair::poll_one(cq);
}

}  // namespace

// --- The subnet manager and the port ---------------------------------------------

TEST_CASE("InfiniBand ports: LIDs in joining order, the SM on the first, one fe80:: GID each") {
  sim::Fabric fabric(ib_fabric());
  std::vector<sim::Device*> hosts;
  for (std::uint8_t i = 0; i < 3; ++i) {
    sim::HostConfig h;
    h.name = "h" + std::to_string(i);
    h.mac = {0x02, 0x00, 0x5E, 0x10, 0x20, static_cast<std::uint8_t>(0x30 + i)};
    h.ip = wire::IpAddress::from_v4({10, 0, 0, static_cast<std::uint8_t>(i + 1)});
    hosts.push_back(&fabric.add_host(h));
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    CAPTURE(i);
    const ibv_port_attr a = hosts[i]->query_port(1);
    CHECK(a.state == IBV_PORT_ACTIVE);
    CHECK(a.link_layer == IBV_LINK_LAYER_INFINIBAND);
    CHECK(a.lid == i + 1);
    CHECK(hosts[i]->lid() == i + 1);
    CHECK(a.sm_lid == 1);
    CHECK(a.lmc == 0);
    CHECK(a.gid_tbl_len == 1);
    // Only the first host runs the subnet manager.
    CHECK(((a.port_cap_flags & IBV_PORT_SM) != 0) == (i == 0));
    // MAC 02:00:5e:10:20:3i as a modified EUI-64: 02 ^ 02 = 00, then
    // 00 5e ff fe 10 20 3i.
    const auto guid = std::array<std::uint8_t, 8>{
        0x00, 0x00, 0x5E, 0xFF, 0xFE, 0x10, 0x20, static_cast<std::uint8_t>(0x30 + i)};
    CHECK(hosts[i]->port_guid() == (0x00005EFFFE102030ULL + i));
    const ibv_gid g = hosts[i]->gid(0);
    const ibv_gid want = gid_of(guid);
    CHECK(std::memcmp(g.raw, want.raw, 16) == 0);
    const ibv_gid none = hosts[i]->gid(1);
    CHECK(std::all_of(none.raw, none.raw + 16, [](std::uint8_t b) { return b == 0; }));
  }
  // Ethernet, as before: no LID, the IP address as the GID.
  sim::Fabric eth;
  sim::HostConfig h;
  h.name = "e";
  h.mac = {0x02, 0, 0, 0, 0, 1};
  h.ip = wire::IpAddress::from_v4({10, 99, 0, 1});
  sim::Device& e = eth.add_host(h);
  const ibv_port_attr a = e.query_port(1);
  CHECK(a.link_layer == IBV_LINK_LAYER_ETHERNET);
  CHECK(a.lid == 0);
  CHECK(a.sm_lid == 0);
  CHECK(a.port_cap_flags == 0);
  CHECK(e.lid() == 0);
  CHECK(std::memcmp(e.gid(0).raw, h.ip.bytes.data(), 16) == 0);
}

TEST_CASE("InfiniBand address vectors: by DLID, a GRH optional, an SL with a VL") {
  Pair p(ib_pair());
  ibv_ah_attr av{};
  av.port_num = 1;
  av.dlid = p.b.lid();
  CHECK(p.pd_a->create_ah(av) != nullptr);
  av.is_global = 1;
  av.grh.dgid = p.b.gid(0);
  CHECK(p.pd_a->create_ah(av) != nullptr);
  // A GRH whose GID is another host's than the DLID's.
  av.grh.dgid = p.a.gid(0);
  errno = 0;
  CHECK(p.pd_a->create_ah(av) == nullptr);
  CHECK(errno == EINVAL);
  av.is_global = 0;
  av.dlid = 3;  // two hosts: LIDs 1 and 2
  CHECK(p.pd_a->create_ah(av) == nullptr);
  av.dlid = 0;
  CHECK(p.pd_a->create_ah(av) == nullptr);
  av.dlid = p.b.lid();
  av.sl = 8;  // the ports have VLs 0-7, SL n on VL n
  CHECK(p.pd_a->create_ah(av) == nullptr);
  av.sl = 7;
  CHECK(p.pd_a->create_ah(av) != nullptr);

  // ibv_modify_qp to RTR checks the AV alike.
  auto* qp = p.make_qp(*p.pd_a, *p.cq_a);
  REQUIRE(qp != nullptr);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  REQUIRE(qp->modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
          0);
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = IBV_MTU_1024;
  at.dest_qp_num = p.qb->qp_num();
  at.max_dest_rd_atomic = 1;
  at.ah_attr.port_num = 1;
  at.ah_attr.dlid = 9;
  const int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  CHECK(qp->modify(at, mask) == EINVAL);
  at.ah_attr.dlid = p.b.lid();
  CHECK(qp->modify(at, mask) == 0);
}

// --- RC back to back --------------------------------------------------------------

TEST_CASE("RC over InfiniBand back to back: SEND, WRITE, READ, atomic; an ERF capture of them") {
  // SL 3: every packet on VL 3. A is host 1 (LID 1), B host 2 (LID 2).
  Pair p(ib_pair(3));
  const auto path = simtest::temp_pcap("ib_rc");
  p.fabric.start_capture(path);
  p.fill_a(11);

  // SEND of 100 bytes into a receive at B.
  REQUIRE(p.post_recv_b(0, 256, 50) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 100, 0, 1) == 0);
  ibv_wc wc = wait_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.wr_id == 1);
  wc = wait_one(*p.cq_b);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RECV);
  CHECK(wc.byte_len == 100);
  // The receive names its sender by LID and SL, as an IB HCA does.
  CHECK(wc.slid == p.a.lid());
  CHECK(wc.sl == 3);
  CHECK(std::memcmp(p.buf_b.data(), p.buf_a.data(), 100) == 0);

  // WRITE of 3000 bytes at MTU 1024: First, Middle, Last.
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 4096, 3000, 8192, 2) == 0);
  wc = wait_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(std::memcmp(p.buf_b.data() + 8192, p.buf_a.data() + 4096, 3000) == 0);

  // READ of 2500 bytes back: three response packets.
  REQUIRE(p.post(IBV_WR_RDMA_READ, 16384, 2500, 8192, 3) == 0);
  wc = wait_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RDMA_READ);
  CHECK(std::memcmp(p.buf_a.data() + 16384, p.buf_b.data() + 8192, 2500) == 0);

  // FETCH_ADD of 1 on 41 at B: B holds 42, A gets 41.
  const std::uint64_t before = 41;
  std::memcpy(p.buf_b.data() + 32768, &before, 8);
  REQUIRE(p.post(IBV_WR_ATOMIC_FETCH_AND_ADD, 40960, 8, 32768, 4) == 0);
  wc = wait_one(*p.cq_a);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_FETCH_ADD);
  std::uint64_t old = 0;
  std::uint64_t now = 0;
  std::memcpy(&old, p.buf_a.data() + 40960, 8);
  std::memcpy(&now, p.buf_b.data() + 32768, 8);
  CHECK(old == 41);
  CHECK(now == 42);
  p.fabric.stop_capture();

  const std::vector<IbPkt> all = read_ib(path);
  std::filesystem::remove(path);
  REQUIRE_FALSE(all.empty());
  for (const IbPkt& k : all) {
    CAPTURE(k.opcode);
    CAPTURE(k.psn);
    CHECK(k.erf_type == wire::erf::kTypeInfiniband);
    CHECK_FALSE(k.error);
    CHECK(k.vcrc_ok);
    CHECK(k.icrc_ok);
    CHECK(k.lrh.lnh == wire::ib::Lnh::Local);  // no GRH: the AVs are not global
    CHECK_FALSE(k.grh.has_value());
    CHECK(k.lrh.sl == 3);
    CHECK(k.lrh.vl == 3);
    CHECK(k.lrh.lver == 0);
    // The packet on the wire is PktLen words and the VCRC.
    CHECK(k.wire_bytes == k.lrh.packet_bytes() + wire::ib::kVcrcSize);
    // Requests from A (LID 1) to B's QP, responses from B (LID 2) to A's.
    const bool response = wire::find_opcode(k.opcode)->is_response();
    CHECK(k.lrh.slid == (response ? p.b.lid() : p.a.lid()));
    CHECK(k.lrh.dlid == (response ? p.a.lid() : p.b.lid()));
    CHECK(k.dest_qp == (response ? p.qa->qp_num() : p.qb->qp_num()));
  }
  // What went on the wire: SEND Only, ACK; WRITE First, Middle, Last, ACK;
  // READ Request, Response First, Middle, Last; FetchAdd, Atomic ACK.
  const std::vector<std::uint8_t> want = {0x04, 0x11, 0x06, 0x07, 0x08, 0x11,
                                          0x0C, 0x0D, 0x0E, 0x0F, 0x14, 0x12};
  std::vector<std::uint8_t> got;
  for (const IbPkt& k : all) got.push_back(k.opcode);
  CHECK(got == want);
  // PktLen by hand (LRH 8, BTH 12, extension headers, payload, pad, ICRC 4):
  //   SEND Only 100 bytes: 8 + 12 + 100 + 4 = 124 = 31 words;
  //   ACK: 8 + 12 + AETH 4 + 4 = 28 = 7 words;
  //   WRITE First: 8 + 12 + RETH 16 + 1024 + 4 = 1064 = 266 words;
  //   WRITE Last, 3000 - 2048 = 952 bytes: 8 + 12 + 952 + 4 = 976 = 244;
  //   READ Request: 8 + 12 + 16 + 4 = 40 = 10; Response Last, 2500 - 2048 =
  //   452 bytes: 8 + 12 + AETH 4 + 452 + 4 = 480 = 120;
  //   FetchAdd: 8 + 12 + AtomicETH 28 + 4 = 52 = 13; Atomic ACK: 8 + 12 + 4
  //   + AtomicAckETH 8 + 4 = 36 = 9.
  const std::map<std::uint8_t, std::uint16_t> words = {{0x04, 31},  {0x11, 7},  {0x06, 266},
                                                       {0x08, 244}, {0x0C, 10}, {0x0F, 120},
                                                       {0x14, 13},  {0x12, 9}};
  for (const IbPkt& k : all)
    if (const auto it = words.find(k.opcode); it != words.end()) {
      CAPTURE(k.opcode);
      CHECK(k.lrh.pkt_len_words == it->second);
    }
}

TEST_CASE("InfiniBand serialisation: the packet and its two delimiters at the link's rate") {
  // The capture at the sender's port stamps a packet when its first bit
  // leaves; the three packets of one WRITE leave back to back, so each
  // starts when the one before it has been serialised:
  //   WRITE First  8 + 12 + 16 + 1024 + 4 + VCRC 2 = 1066 bytes, + 2 (SDP,
  //                EGP) = 1068 byte times;
  //   WRITE Middle 8 + 12 + 1024 + 4 + 2 = 1050, + 2 = 1052.
  // QDR 1X carries 8 Gb/s of data: one byte per ns, 1068 and 1052 ns.
  // EDR 4X, 100 Gb/s: 1068 x 8 / 100 = 85.44 and 1052 x 8 / 100 = 84.16,
  // which the link rounds down to the ns: 85 and 84.
  struct Case {
    double rate_bps;
    sim::Time first_ns;
    sim::Time middle_ns;
  };
  for (const Case& c : {Case{8e9, 1068, 1052}, Case{100e9, 85, 84}}) {
    CAPTURE(c.rate_bps);
    PairConfig cfg = ib_pair();
    cfg.fabric.default_link.rate_bps = c.rate_bps;
    Pair p(cfg);
    const auto path = simtest::temp_pcap("ib_timing");
    p.fabric.start_capture(path);
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3000, 0, 1) == 0);
    CHECK(wait_one(*p.cq_a).status == IBV_WC_SUCCESS);
    p.fabric.stop_capture();
    const auto all = read_ib(path);
    std::filesystem::remove(path);
    const auto first = with_opcode(all, 0x06);
    const auto middle = with_opcode(all, 0x07);
    const auto last = with_opcode(all, 0x08);
    REQUIRE(first.size() == 1);
    REQUIRE(middle.size() == 1);
    REQUIRE(last.size() == 1);
    CHECK(first[0].wire_bytes == 1066);
    CHECK(middle[0].wire_bytes == 1050);
    CHECK(first[0].time_ns == 0);  // posted at time 0 on an idle link
    CHECK(middle[0].time_ns - first[0].time_ns == c.first_ns);
    CHECK(last[0].time_ns - middle[0].time_ns == c.middle_ns);
    CHECK(sim::kIbWireOverhead == 2);
  }
}

TEST_CASE("a global address vector: LNH 3, a GRH between the ports' fe80:: GIDs") {
  Pair p(ib_pair(1, true));
  const auto path = simtest::temp_pcap("ib_global");
  p.fabric.start_capture(path);
  REQUIRE(p.post_recv_b(0, 4096, 7) == 0);
  REQUIRE(p.post(IBV_WR_SEND, 0, 2000, 0, 1) == 0);
  CHECK(wait_one(*p.cq_a).status == IBV_WC_SUCCESS);
  CHECK(wait_one(*p.cq_b).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();
  const auto all = read_ib(path);
  std::filesystem::remove(path);
  // SEND First (1024), SEND Last (976), ACK.
  REQUIRE(all.size() == 3);
  for (const IbPkt& k : all) {
    CAPTURE(k.opcode);
    CHECK(k.lrh.lnh == wire::ib::Lnh::Global);
    REQUIRE(k.grh.has_value());
    CHECK(k.grh->next_header == wire::ib::kGrhNextHeaderIba);
    CHECK(k.grh->hop_limit == 64);
    CHECK(k.lrh.sl == 1);
    CHECK(k.lrh.vl == 1);
    CHECK(k.vcrc_ok);
    CHECK(k.icrc_ok);
    const bool ack = k.opcode == 0x11;
    CHECK(same_gid(k.grh->sgid, ack ? p.b.gid(0) : p.a.gid(0)));
    CHECK(same_gid(k.grh->dgid, ack ? p.a.gid(0) : p.b.gid(0)));
    // PayLen: BTH through ICRC, PktLen less LRH and GRH.
    CHECK(k.grh->payload_length == k.lrh.packet_bytes() - 8 - 40);
  }
  // SEND First: 8 + 40 + 12 + 1024 + 4 = 1088 = 272 words.
  CHECK(all[0].lrh.pkt_len_words == 272);
  // A's GID: MAC 02:00:00:00:00:02, GUID 00 00 00 ff fe 00 00 02.
  CHECK(same_gid(all[0].grh->sgid, gid_of({0, 0, 0, 0xFF, 0xFE, 0, 0, 2})));
}

TEST_CASE("UD over InfiniBand: the AH's DLID and SL; a GRH in the buffer only from a global AH") {
  PairConfig cfg = ib_pair();
  cfg.type = IBV_QPT_UD;
  Pair p(cfg);
  const auto path = simtest::temp_pcap("ib_ud");
  p.fabric.start_capture(path);
  for (const bool global : {false, true}) {
    CAPTURE(global);
    ibv_ah_attr av{};
    av.port_num = 1;
    av.dlid = p.b.lid();
    av.sl = 5;
    av.is_global = global ? 1 : 0;
    av.grh.dgid = p.b.gid(0);
    av.grh.hop_limit = 1;
    sim::AddressHandle* ah = p.pd_a->create_ah(av);
    REQUIRE(ah != nullptr);
    std::fill(p.buf_b.begin(), p.buf_b.begin() + 40, std::uint8_t{0xEE});
    REQUIRE(p.post_recv_b(0, 40 + 512, 9) == 0);
    p.fill_a(global ? 3 : 4);
    ibv_sge sge{p.mr_a->iova(), 300, p.mr_a->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah->get();
    wr.wr.ud.remote_qpn = p.qb->qp_num();
    wr.wr.ud.remote_qkey = 0x11111111;
    ibv_send_wr* bad = nullptr;
    REQUIRE(p.qa->post_send(&wr, &bad) == 0);
    CHECK(wait_one(*p.cq_a).status == IBV_WC_SUCCESS);
    const ibv_wc wc = wait_one(*p.cq_b);
    CHECK(wc.status == IBV_WC_SUCCESS);
    // byte_len counts the 40 bytes kept for the GRH, present or not.
    CHECK(wc.byte_len == 40 + 300);
    CHECK(wc.src_qp == p.qa->qp_num());
    CHECK(wc.slid == p.a.lid());
    CHECK(wc.sl == 5);
    CHECK(((wc.wc_flags & IBV_WC_GRH) != 0) == global);
    CHECK(std::memcmp(p.buf_b.data() + 40, p.buf_a.data(), 300) == 0);
    if (global) {
      // The GRH as it came: its source and destination GIDs at 8 and 24.
      CHECK(std::memcmp(p.buf_b.data() + 8, p.a.gid(0).raw, 16) == 0);
      CHECK(std::memcmp(p.buf_b.data() + 24, p.b.gid(0).raw, 16) == 0);
    } else {
      // Without a GRH the 40 bytes are not written.
      CHECK(std::all_of(p.buf_b.begin(), p.buf_b.begin() + 40,
                        [](std::uint8_t b) { return b == 0xEE; }));
    }
    CHECK(p.pd_a->destroy_ah(ah) == 0);
  }
  p.fabric.stop_capture();
  const auto all = read_ib(path);
  std::filesystem::remove(path);
  REQUIRE(all.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(all[i].opcode == 0x64);  // UD SEND Only
    CHECK(all[i].lrh.dlid == p.b.lid());
    CHECK(all[i].lrh.slid == p.a.lid());
    CHECK(all[i].lrh.sl == 5);
    CHECK(all[i].lrh.vl == 5);
    CHECK(all[i].vcrc_ok);
    CHECK(all[i].icrc_ok);
  }
  CHECK(all[0].lrh.lnh == wire::ib::Lnh::Local);
  CHECK(all[1].lrh.lnh == wire::ib::Lnh::Global);
}

// --- Switches -----------------------------------------------------------------------

namespace {

struct Node {
  sim::Device* dev = nullptr;
  std::vector<std::uint8_t> buf;
  sim::ProtectionDomain* pd = nullptr;
  sim::MemoryRegion* mr = nullptr;
  sim::CompletionQueue* cq = nullptr;
};

struct RcFlow {
  Node* src;
  Node* dst;
  sim::QueuePair* qs;
  sim::QueuePair* qd;
};

sim::QueuePair* rc_qp(Node& n) {
  ibv_qp_init_attr ia{};
  ia.send_cq = n.cq->get();
  ia.recv_cq = n.cq->get();
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 64;
  ia.cap.max_recv_wr = 64;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  return n.pd->create_qp(ia);
}

// INIT -> RTR -> RTS towards `peer` by its LID, on service level `sl`.
void bring_up(sim::QueuePair& qp, const Node& peer, std::uint32_t dest, std::uint8_t sl = 0) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  REQUIRE(qp.modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = IBV_MTU_2048;
  at.dest_qp_num = dest;
  at.max_dest_rd_atomic = 1;
  at.min_rnr_timer = 12;
  at.ah_attr.dlid = peer.dev->lid();
  at.ah_attr.sl = sl;
  at.ah_attr.port_num = 1;
  REQUIRE(qp.modify(at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0);
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTS;
  at.timeout = 10;
  at.retry_cnt = 7;
  at.rnr_retry = 7;
  at.max_rd_atomic = 1;
  REQUIRE(qp.modify(at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

std::vector<std::unique_ptr<Node>> nodes_of(const sim::Topology& t) {
  std::vector<std::unique_ptr<Node>> out;
  for (std::size_t i = 0; i < t.hosts.size(); ++i) {
    auto n = std::make_unique<Node>();
    n->dev = t.hosts[i];
    n->buf.assign(1 << 16, 0);
    for (std::size_t k = 0; k < n->buf.size(); ++k)
      n->buf[k] = static_cast<std::uint8_t>(i * 37 + k * 11 + (k >> 8));
    n->pd = n->dev->alloc_pd();
    n->mr = n->pd->reg_mr_iova(n->buf.data(), n->buf.size(), 0x10000000ULL + (i << 24),
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    n->cq = n->dev->create_cq(256);
    out.push_back(std::move(n));
  }
  return out;
}

RcFlow rc_flow(Node& src, Node& dst, std::uint8_t sl = 0) {
  RcFlow f{&src, &dst, rc_qp(src), rc_qp(dst)};
  REQUIRE(f.qs != nullptr);
  REQUIRE(f.qd != nullptr);
  bring_up(*f.qs, dst, f.qd->qp_num(), sl);
  bring_up(*f.qd, src, f.qs->qp_num(), sl);
  return f;
}

// A signalled WRITE of `len` bytes from the start of src's buffer to `off`
// in dst's.
void rc_write(const RcFlow& f, std::uint64_t off, std::uint32_t len, std::uint64_t id) {
  ibv_sge sge{f.src->mr->iova(), len, f.src->mr->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = f.dst->mr->iova() + off;
  wr.wr.rdma.rkey = f.dst->mr->rkey();
  ibv_send_wr* bad = nullptr;
  REQUIRE(f.qs->post_send(&wr, &bad) == 0);
}

// Follows the linear forwarding tables from switch `sw` for `dlid`, hop by
// hop over the ports' peers, to the host it ends at ("" when it does not).
std::string follow(sim::Fabric& fabric, sim::SwitchId sw, std::uint16_t dlid) {
  std::map<std::string, sim::SwitchId> by_name;
  for (std::uint32_t i = 0; i < fabric.switch_count(); ++i)
    by_name[fabric.switch_config(sim::SwitchId{i}).name] = sim::SwitchId{i};
  for (std::size_t hops = 0; hops < 8; ++hops) {
    const auto port = fabric.lft_port(sw, dlid);
    if (!port) return "";
    const std::string peer = fabric.switch_port_stats(sw, *port).peer;
    const auto colon = peer.find(':');
    if (colon == std::string::npos) return peer;  // a host
    sw = by_name.at(peer.substr(0, colon));
  }
  return "";
}

}  // namespace

TEST_CASE("leaf-spine over InfiniBand: every switch forwards by DLID to the LID's host") {
  sim::Fabric fabric(ib_fabric());
  sim::TopologySpec spec = *sim::TopologySpec::parse("leaf-spine:2x2x2");
  spec.host_link.rate_bps = spec.fabric_link.rate_bps = 100e9;
  const sim::Topology t = sim::build_topology(fabric, spec);
  REQUIRE(t.hosts.size() == 4);
  // The tables: from every switch, every LID leads to its host. Hosts h0..h3
  // joined in that order: LIDs 1..4.
  for (std::size_t i = 0; i < t.hosts.size(); ++i) CHECK(t.hosts[i]->lid() == i + 1);
  for (const sim::SwitchId sw : t.switches)
    for (const sim::Device* h : t.hosts) {
      CAPTURE(fabric.switch_config(sw).name);
      CAPTURE(h->name());
      CHECK(follow(fabric, sw, h->lid()) == h->name());
    }
  CHECK_FALSE(fabric.lft_port(t.switches[0], 5).has_value());  // no host has LID 5
  // No flow hashing on InfiniBand.
  CHECK_FALSE(
      fabric.ecmp_port(t.switches[0], t.hosts[0]->config().ip, t.hosts[3]->config().ip, 0xC000)
          .has_value());
  // Leaf 0's ports: spine0, spine1 (the uplinks first), then h0, h1. The
  // remote LIDs 3 and 4 take different spines: the uplink DLID mod 2.
  CHECK(fabric.lft_port(t.switches[0], 3) == 1);
  CHECK(fabric.lft_port(t.switches[0], 4) == 0);
  CHECK(fabric.lft_port(t.switches[0], 1) == 2);
  CHECK(fabric.lft_port(t.switches[0], 2) == 3);

  // Traffic: every host WRITEs to another, across the spines and within a
  // leaf; port captures on leaf 0's host ports see only frames to or from
  // their host.
  auto nodes = nodes_of(t);
  const std::vector<std::pair<std::size_t, std::size_t>> pairs = {
      {0, 2}, {1, 3}, {2, 1}, {3, 0}, {0, 1}};
  std::vector<RcFlow> flows;
  for (const auto& [s, d] : pairs) flows.push_back(rc_flow(*nodes[s], *nodes[d]));
  const auto cap0 = simtest::temp_pcap("ib_leaf_h0");
  const auto cap1 = simtest::temp_pcap("ib_leaf_h1");
  fabric.start_port_capture(t.switches[0], 2, cap0);
  fabric.start_port_capture(t.switches[0], 3, cap1);
  for (std::size_t i = 0; i < flows.size(); ++i) rc_write(flows[i], (i + 1) * 8192, 6000, i);
  for (const RcFlow& f : flows) CHECK(wait_one(*f.src->cq).status == IBV_WC_SUCCESS);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(flows[i].dst->buf.data() + (i + 1) * 8192, flows[i].src->buf.data(), 6000) ==
          0);
  }
  fabric.stop_port_capture(t.switches[0], 2);
  fabric.stop_port_capture(t.switches[0], 3);
  CHECK(fabric.stats().packets_dropped == 0);
  CHECK(fabric.stats().wrong_dlid == 0);
  CHECK(fabric.stats().bad_vcrc == 0);
  CHECK(fabric.stats().switch_hops > 0);
  for (const auto& [path, lid] : {std::pair{cap0, 1}, std::pair{cap1, 2}}) {
    const auto all = read_ib(path);
    std::filesystem::remove(path);
    CHECK_FALSE(all.empty());
    std::size_t to_host = 0;
    for (const IbPkt& k : all) {
      CHECK(k.vcrc_ok);
      CHECK((k.lrh.dlid == lid) != (k.lrh.slid == lid));
      to_host += k.lrh.dlid == lid ? 1 : 0;
    }
    CHECK(to_host > 0);
  }
}

// --- Credit-based flow control ---------------------------------------------------

namespace {

// Runs the fabric until every flow has `writes` completions, noting when
// each flow's last one came (ns).
std::vector<sim::Time> run_writes(sim::Fabric& fabric, const std::vector<RcFlow>& flows,
                                  std::size_t writes) {
  std::vector<std::size_t> done(flows.size(), 0);
  std::vector<sim::Time> last(flows.size(), 0);
  std::size_t left = flows.size() * writes;
  while (left > 0 && fabric.now() < 10 * sim::kMillisecond) {
    fabric.run_for(100);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      ibv_wc wc{};
      while (flows[i].src->cq->poll_now(1, &wc) == 1) {
        CHECK(wc.status == IBV_WC_SUCCESS);
        ++done[i];
        --left;
        last[i] = fabric.now();
      }
    }
  }
  CHECK(left == 0);
  return last;
}

// Packets of the tests below: WRITEs of 64 KiB at a 2048-byte path MTU,
// 32 packets each. A middle packet is LRH 8 + BTH 12 + 2048 + ICRC 4 +
// VCRC 2 = 2074 bytes (the first has a RETH: 2090), 33 blocks of 64 bytes
// either way; at 100 Gb/s with its 2 delimiter bytes it takes
// 2076 x 8 / 100 = 166 ns. A host's port waits for a whole packet of the
// path MTU: ceil((2048 + 86) / 64) = 34 blocks.
constexpr std::uint32_t kWriteBytes = 65536;
constexpr std::uint64_t kPacketBytes = 2074;
constexpr std::uint64_t kBufferBytes = 1024 * 64;  // SwitchConfig's default, in bytes

}  // namespace

TEST_CASE("InfiniBand incast: credits hold the senders back, nothing is dropped") {
  // Four senders WRITE 8 x 64 KiB each to one host through one switch, every
  // link 100 Gb/s with 1 us of propagation. Derived before the run:
  //  - Nothing is dropped: a packet only leaves for a port with room for it
  //    (the shared buffer's admission is Ethernet's). No retransmission.
  //  - The receiver's port carries 4 x 8 x 32 = 1024 packets back to back:
  //    about 1024 x 166 ns = 170 us, from the first arrival at 1.17 us.
  //    The last completion comes one hop and the ACK's way back after it:
  //    1.17 + 170 + 1 + 2 = 174 us, within 5 us.
  //  - An ingress port never holds more than its credits, 1024 blocks
  //    (65,536 bytes; whole packets: 31 x 2074 = 64,294). Once the senders
  //    are held back, a sender's 1024 blocks are its packets queued at the
  //    switch plus what is on the way: the port serves the four in turn,
  //    one packet of each every 4 x 166 = 664 ns, and a credit takes
  //    1 us back, the next packet 166 ns + 1 us forward: 2.17 us / 664 ns =
  //    3.3 packets (108 blocks) in the loop, and up to 33 blocks at the
  //    sender short of a packet. So each ingress port holds at least
  //    (1024 - 108 - 34) / 33 = 26 packets (53,924 bytes) at its peak, and
  //    the egress queue at least four times that.
  //  - PortXmitWait: a sender held back sends one packet (166 ns) per 664 ns
  //    and waits the other 498 ns. Unhindered for its first ~37 packets (31
  //    on its credits, the rest on those that come back meanwhile), it waits
  //    through the other 256 - 37 = 219: 219 x 498 ns = 109 us, +/- 10%.
  sim::Fabric fabric(ib_fabric());
  sim::TopologySpec spec = *sim::TopologySpec::parse("star:5");
  const sim::Topology t = sim::build_topology(fabric, spec);
  REQUIRE(fabric.switch_config(t.switches[0]).ib_vl_buffer_blocks == 1024);
  auto nodes = nodes_of(t);
  std::vector<RcFlow> flows;
  for (std::size_t i = 1; i <= 4; ++i) flows.push_back(rc_flow(*nodes[i], *nodes[0]));
  constexpr std::size_t kWrites = 8;
  for (std::size_t k = 0; k < kWrites; ++k)
    for (const RcFlow& f : flows) rc_write(f, 0, kWriteBytes, k);
  const std::vector<sim::Time> last = run_writes(fabric, flows, kWrites);
  const sim::Time end = *std::max_element(last.begin(), last.end());
  CHECK(fabric.stats().packets_dropped == 0);
  for (const RcFlow& f : flows) {
    CHECK(f.qs->stats().timeouts == 0);
    CHECK(f.qs->stats().naks_received == 0);
  }
  const sim::SwitchPortStats rx_port = fabric.switch_port_stats(t.switches[0], 0);
  CHECK(rx_port.tc[0].tx_packets >= 1024);
  CHECK(rx_port.tc[0].dropped == 0);
  CHECK(end >= 174 * sim::kMicrosecond - 5 * sim::kMicrosecond);
  CHECK(end <= 174 * sim::kMicrosecond + 5 * sim::kMicrosecond);
  CHECK(rx_port.tc[0].max_queue_bytes <= 4 * kBufferBytes);
  CHECK(rx_port.tc[0].max_queue_bytes >= 4 * 26 * kPacketBytes);
  for (std::size_t i = 1; i <= 4; ++i) {
    CAPTURE(i);
    const sim::SwitchPortStats in = fabric.switch_port_stats(t.switches[0], i);
    CHECK(in.max_ingress_bytes[0] <= kBufferBytes);
    CHECK(in.max_ingress_bytes[0] >= 26 * kPacketBytes);
    const sim::HostPortStats h = fabric.host_port_stats(*t.hosts[i]);
    CHECK(h.xmit_wait_ns[0] >= 98 * sim::kMicrosecond);
    CHECK(h.xmit_wait_ns[0] <= 120 * sim::kMicrosecond);
    for (std::size_t vl = 1; vl < sim::kTrafficClasses; ++vl) CHECK(h.xmit_wait_ns[vl] == 0);
  }
  // The receiver's port never waits: a host takes everything.
  CHECK(rx_port.xmit_wait_ns[0] == 0);
}

TEST_CASE(
    "InfiniBand head-of-line blocking: a victim on the congested VL, on its own, and mapped back") {
  // A dumbbell: h0..h3 on the left switch, h4..h7 on the right, host links
  // 100 Gb/s, the trunk 200 Gb/s, 1 us each. h0, h1 and h2 WRITE 8 x 64 KiB
  // each to h4 on SL 0 (VL 0): h4's port is the bottleneck. The victim h3
  // WRITEs 8 x 64 KiB to h5, whose port is idle. Derived before the run:
  //  - Victim on VL 0: the right switch's trunk port fills its VL 0 buffer
  //    with packets for h4, so the trunk's VL 0 moves only as h4's port
  //    frees credits, one packet per 166 ns. The left switch's VL 0 queue
  //    to the trunk is first come, first served, and each sender refills it
  //    as its own credits come back: the four take turns, h3 one packet in
  //    four. Three packets for h4 leave per 3 x 166 = 498 ns, and one of
  //    h3's with them: h3 sends at 2076 x 8 / 498 = 33 Gb/s, a third of its
  //    port, though its path has room. Its 256 packets take 256 x 498 ns =
  //    127 us. Its first packets go faster, while the right switch's buffer
  //    still has room; the first hops and the last ACK's way back add
  //    6.4 us: between 120 and 135 us.
  //  - Victim on VL 1 (SL 1): its own queue on the trunk and its own
  //    credits at the right switch. The trunk carries 100 Gb/s for h4 and
  //    100 Gb/s for h5: room for both. h3 sends at its port's rate: 256 x
  //    166 ns = 42.5 us; its last packet's way to h5 (three links of 1 us,
  //    sent on at 200 and 100 Gb/s: 3.25 us) and the ACK's way back (3 us)
  //    end it at 48.8 us, within 1 us.
  //  - The left switch's trunk port waits for credits on VL 0 in both runs
  //    (h0..h2 offer 300 Gb/s on VL 0, h4's port takes 100), and never on
  //    VL 1: 100 Gb/s on it needs 29 KB of credits in the loop (as in the
  //    incast above), and it has 64 KiB.
  //  - Nothing is dropped.
  //  - Victim on SL 1, but the switches' SL-to-VL tables map every SL to VL
  //    0 (no QoS configured): the left switch puts it on VL 0, so it is the
  //    first case again (120 .. 135 us), nothing uses VL 1 on the trunk, and
  //    h5's port sees its packets with SL 1 in VL 0, the VCRC rewritten (and
  //    h5's ACKs in VL 1: a host's table is the identity).
  struct Case {
    std::uint8_t sl;
    bool one_vl;
  };
  for (const Case c : {Case{0, false}, Case{1, false}, Case{1, true}}) {
    CAPTURE(int{c.sl});
    CAPTURE(c.one_vl);
    sim::Fabric fabric(ib_fabric());
    sim::TopologySpec spec = *sim::TopologySpec::parse("dumbbell:4");
    spec.fabric_link.rate_bps = 200e9;
    if (c.one_vl) spec.switch_config.sl_to_vl.fill(0);
    const sim::Topology t = sim::build_topology(fabric, spec);
    REQUIRE(t.hosts.size() == 8);
    auto nodes = nodes_of(t);
    std::vector<RcFlow> flows;
    for (std::size_t i = 0; i < 3; ++i) flows.push_back(rc_flow(*nodes[i], *nodes[4]));
    flows.push_back(rc_flow(*nodes[3], *nodes[5], c.sl));
    // The right switch's port to h5: port 0 is the trunk, then h4, h5, ...
    const auto cap = simtest::temp_pcap("ib_sl2vl");
    fabric.start_port_capture(t.switches[1], 2, cap);
    constexpr std::size_t kWrites = 8;
    for (std::size_t k = 0; k < kWrites; ++k)
      for (const RcFlow& f : flows) rc_write(f, 0, kWriteBytes, k);
    const std::vector<sim::Time> last = run_writes(fabric, flows, kWrites);
    fabric.stop_port_capture(t.switches[1], 2);
    std::size_t to_h5 = 0;
    for (const IbPkt& k : read_ib(cap)) {
      CHECK(k.vcrc_ok);
      CHECK(k.icrc_ok);
      CHECK(k.lrh.sl == c.sl);
      // To h5 on the switch's VL; h5's ACKs on its own (the hosts' table is
      // the identity).
      const bool to_host = k.lrh.dlid == t.hosts[5]->lid();
      CHECK(k.lrh.vl == (to_host && c.one_vl ? 0 : c.sl));
      to_h5 += to_host ? 1U : 0U;
    }
    std::filesystem::remove(cap);
    CHECK(to_h5 == 256);
    CHECK(fabric.stats().packets_dropped == 0);
    const sim::SwitchPortStats trunk = fabric.switch_port_stats(t.switches[0], 0);
    CHECK(trunk.xmit_wait_ns[0] > 0);
    CHECK(trunk.xmit_wait_ns[1] == 0);
    if (c.sl == 0 || c.one_vl) {
      CHECK(last[3] >= 120 * sim::kMicrosecond);
      CHECK(last[3] <= 135 * sim::kMicrosecond);
    } else {
      CHECK(last[3] >= 48 * sim::kMicrosecond);
      CHECK(last[3] <= 50 * sim::kMicrosecond);
      CHECK(trunk.tc[1].tx_packets >= 256);
    }
  }
}

TEST_CASE("InfiniBand credits below the bandwidth-delay product cap a flow at credits / loop") {
  // One sender, one receiver, a switch between, 100 Gb/s and 1 us links; the
  // switch's ports keep 100 blocks per VL. The sender starts a packet with
  // credits for a whole one of its MTU (34 blocks) and each takes 33:
  // three at once (100 -> 67 -> 34 -> 1). A packet's credits are back
  // 166 (sent) + 1000 + 166 (sent on by the switch) + 1000 = 2332 ns after
  // it started, when the next one goes: packet k starts at
  // floor(k / 3) x 2332 + (k mod 3) x 166 ns. The last of 256 (k = 255) at
  // 85 x 2332 = 198,220 ns reaches the receiver 2332 ns later, and its ACK
  // (30 bytes) comes back in 2 x 1 us: the WRITEs complete at 202.6 us,
  // +/- 1 us. 3 x 2048 bytes per 2332 ns: 21 Gb/s of the link's 100.
  sim::Fabric fabric(ib_fabric());
  sim::TopologySpec spec = *sim::TopologySpec::parse("star:2");
  spec.switch_config.ib_vl_buffer_blocks = 100;
  const sim::Topology t = sim::build_topology(fabric, spec);
  auto nodes = nodes_of(t);
  const std::vector<RcFlow> flows = {rc_flow(*nodes[0], *nodes[1])};
  for (std::size_t k = 0; k < 8; ++k) rc_write(flows[0], 0, kWriteBytes, k);
  const sim::Time end = run_writes(fabric, flows, 8)[0];
  CHECK(end >= 201'600);
  CHECK(end <= 203'600);
  CHECK(fabric.stats().packets_dropped == 0);
  CHECK(fabric.switch_port_stats(t.switches[0], 0).max_ingress_bytes[0] <= 3 * 2090);
}

TEST_CASE("InfiniBand incast: no drop for any fan-in or seed, the smallest buffer included") {
  // Whatever the fan-in, the seed (jitter on the host links) and the
  // buffer, from the smallest allowed (66 blocks: one largest packet) up,
  // credits keep every packet: no drop, no retransmission, every byte
  // placed, and no ingress port ever holds more than its buffer.
  for (const std::uint32_t blocks : {66U, 1024U})
    for (const std::size_t fan_in : {2U, 3U, 7U})
      for (const std::uint64_t seed : {1U, 2U, 3U}) {
        CAPTURE(blocks);
        CAPTURE(fan_in);
        CAPTURE(seed);
        sim::FabricConfig fc = ib_fabric();
        fc.seed = seed;
        sim::Fabric fabric(fc);
        sim::TopologySpec spec = *sim::TopologySpec::parse("star:" + std::to_string(fan_in + 1));
        spec.host_link.jitter_ns = 150;
        spec.switch_config.ib_vl_buffer_blocks = blocks;
        const sim::Topology t = sim::build_topology(fabric, spec);
        auto nodes = nodes_of(t);
        std::vector<RcFlow> flows;
        for (std::size_t i = 1; i <= fan_in; ++i) flows.push_back(rc_flow(*nodes[i], *nodes[0]));
        for (std::size_t i = 0; i < flows.size(); ++i)
          for (std::size_t k = 0; k < 2; ++k) rc_write(flows[i], 0, kWriteBytes, k);
        (void)run_writes(fabric, flows, 2);
        CHECK(fabric.stats().packets_dropped == 0);
        for (std::size_t i = 0; i < flows.size(); ++i) {
          CHECK(flows[i].qs->stats().timeouts == 0);
          CHECK(flows[i].qs->stats().naks_received == 0);
          CHECK(fabric.switch_port_stats(t.switches[0], i + 1).max_ingress_bytes[0] <=
                std::uint64_t{blocks} * 64);
        }
      }
}

TEST_CASE("InfiniBand adaptive routing: one flow over both spines, placed whole with the QP's AR") {
  // Leaf-spine 2 x 2, one host per leaf; the switches route adaptively and
  // the path over spine 1 is 2 us longer. h0 WRITEs 64 KiB (32 packets of
  // 2048) to h1. Leaf 0's uplinks run at the host's rate, so no queue forms
  // and every packet is a tie, broken at random: both spines carry some
  // (the chance that 32 fair draws all pick one is 2^-31), the later ones
  // over spine 0 overtake the earlier ones over spine 1. With the QP's AR
  // mode the responder holds the early ones: no NAK, no resend (32 packets
  // up the spines in all), the bytes right. Without it, sequence errors,
  // NAKs and resends.
  for (const bool ar : {true, false}) {
    CAPTURE(ar);
    sim::Fabric fabric(ib_fabric());
    sim::TopologySpec spec = *sim::TopologySpec::parse("leaf-spine:2x2x1");
    spec.switch_config.routing = sim::Routing::Adaptive;
    const sim::Topology t = sim::build_topology(fabric, spec);
    fabric.switch_link(t.switches[0], 1).delay_ns += 2 * sim::kMicrosecond;
    auto nodes = nodes_of(t);
    const std::vector<RcFlow> flows = {rc_flow(*nodes[0], *nodes[1])};
    sim::QueuePair::Options o;
    o.adaptive_routing = ar;
    flows[0].qs->set_options(o);
    flows[0].qd->set_options(o);
    rc_write(flows[0], 0, kWriteBytes, 1);
    (void)run_writes(fabric, flows, 1);
    CHECK(std::memcmp(nodes[1]->buf.data(), nodes[0]->buf.data(), kWriteBytes) == 0);
    std::uint64_t up0 = 0;
    std::uint64_t up1 = 0;
    for (const auto& q : fabric.switch_port_stats(t.switches[0], 0).tc) up0 += q.tx_packets;
    for (const auto& q : fabric.switch_port_stats(t.switches[0], 1).tc) up1 += q.tx_packets;
    CHECK(up0 > 0);
    CHECK(up1 > 0);
    if (ar) {
      CHECK(up0 + up1 == 32);
      CHECK(flows[0].qd->stats().out_of_order_held > 0);
      CHECK(flows[0].qs->stats().naks_received == 0);
    } else {
      CHECK(up0 + up1 > 32);
      CHECK(flows[0].qs->stats().naks_received > 0);
    }
  }
}

// --- Bit errors ---------------------------------------------------------------------

TEST_CASE(
    "a flipped bit on an InfiniBand link: the VCRC catches it, the receiver drops and counts") {
  SUBCASE("back to back: the destination's port drops it") {
    PairConfig cfg = ib_pair();
    cfg.fabric.capture_point = sim::CapturePoint::ReceiverPort;
    Pair p(cfg);
    // The second packet of a 3000-byte WRITE (PSN 1) travels with one bit
    // flipped; the responder NAKs PSN 2 (sequence error), the requester
    // sends 1 and 2 again.
    p.fabric.link(p.a, p.b).corruptions.push_back(sim::DropRule::psn(1));
    const auto path = simtest::temp_pcap("ib_flip");
    p.fabric.start_capture(path);
    p.fill_a(5);
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 3000, 0, 1) == 0);
    CHECK(wait_one(*p.cq_a).status == IBV_WC_SUCCESS);
    CHECK(std::memcmp(p.buf_b.data(), p.buf_a.data(), 3000) == 0);
    p.fabric.stop_capture();
    CHECK(p.fabric.stats().packets_corrupted == 1);
    CHECK(p.fabric.stats().bad_vcrc == 1);
    CHECK(p.fabric.stats().bad_icrc == 0);  // the link layer dropped it first
    CHECK(p.qa->stats().naks_received == 1);
    // The receiving port's capture shows the damaged packet as it arrived:
    // both CRCs fail on it, and on nothing else.
    const auto all = read_ib(path);
    std::filesystem::remove(path);
    std::size_t bad = 0;
    for (const IbPkt& k : all) {
      CHECK(k.vcrc_ok == k.icrc_ok);
      if (!k.vcrc_ok) {
        ++bad;
        CHECK(k.psn == 1);
        CHECK(k.opcode == 0x07);
      }
    }
    CHECK(bad == 1);
  }
  SUBCASE("through a switch: the switch's port drops it") {
    sim::Fabric fabric(ib_fabric());
    const sim::Topology t = sim::build_topology(fabric, *sim::TopologySpec::parse("star:2"));
    auto nodes = nodes_of(t);
    const RcFlow f = rc_flow(*nodes[0], *nodes[1]);
    // On a switched fabric a host's link is its port to the switch.
    fabric.link(*t.hosts[0], *t.hosts[1]).corruptions.push_back(sim::DropRule::psn(0));
    rc_write(f, 0, 1000, 1);
    CHECK(wait_one(*nodes[0]->cq).status == IBV_WC_SUCCESS);
    CHECK(std::memcmp(nodes[1]->buf.data(), nodes[0]->buf.data(), 1000) == 0);
    CHECK(fabric.stats().packets_corrupted == 1);
    CHECK(fabric.stats().bad_vcrc == 1);
    CHECK(fabric.stats().bad_icrc == 0);
    CHECK(f.qs->stats().timeouts == 1);  // the only packet lost: the ACK timer resends it
  }
}

// --- Refused --------------------------------------------------------------------------

TEST_CASE("PFC, ECN marking and DCQCN are refused on InfiniBand; adaptive routing is not") {
  const auto refused = [](const std::invalid_argument& e) {
    return std::string(e.what()).find("InfiniBand") != std::string::npos;
  };
  {
    sim::FabricConfig fc = ib_fabric();
    fc.dcqcn = sim::DcqcnParams{};
    try {
      sim::Fabric f(fc);
      FAIL("DCQCN accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(refused(e));
      CHECK(std::string(e.what()).find("DCQCN") != std::string::npos);
    }
  }
  sim::Fabric fabric(ib_fabric());
  sim::SwitchConfig pfc;
  pfc.pfc[3].enabled = true;
  CHECK_THROWS_AS(fabric.add_switch(pfc), std::invalid_argument);
  sim::SwitchConfig ecn;
  ecn.ecn[3].enabled = true;
  CHECK_THROWS_AS(fabric.add_switch(ecn), std::invalid_argument);
  // A port's buffer per VL: at least the largest packet (4096 + 86 bytes,
  // 66 blocks), at most what a flow control packet can advertise (2048).
  for (const std::uint32_t blocks : {65U, 2049U}) {
    sim::SwitchConfig small;
    small.ib_vl_buffer_blocks = blocks;
    CHECK_THROWS_AS(fabric.add_switch(small), std::invalid_argument);
  }
  try {
    (void)fabric.add_switch(pfc);
  } catch (const std::invalid_argument& e) {
    CHECK(refused(e));
    CHECK(std::string(e.what()).find("PFC") != std::string::npos);
  }
  CHECK(fabric.switch_count() == 0);
  CHECK_NOTHROW(fabric.add_switch(sim::SwitchConfig{}));
  sim::SwitchConfig ar;
  ar.routing = sim::Routing::Adaptive;
  ar.ib_vl_buffer_blocks = 66;
  CHECK_NOTHROW(fabric.add_switch(ar));
  ar.ib_vl_buffer_blocks = 2048;
  CHECK_NOTHROW(fabric.add_switch(ar));
  sim::HostConfig storm;
  storm.name = "s";
  storm.pfc_storm.enabled = true;
  CHECK_THROWS_AS(fabric.add_host(storm), std::invalid_argument);
  // A link's CE-marking rules, set at any time, are refused at the first
  // packet they would see.
  {
    Pair p(ib_pair());
    p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::nth(1));
    CHECK_THROWS_AS((void)p.post(IBV_WR_RDMA_WRITE, 0, 64, 0, 1), std::invalid_argument);
  }
  // On Ethernet, all of it as before.
  sim::FabricConfig eth;
  eth.dcqcn = sim::DcqcnParams{};
  sim::Fabric e(eth);
  CHECK_NOTHROW(e.add_switch(pfc));
  CHECK_NOTHROW(e.add_switch(ecn));
  CHECK_NOTHROW(e.add_switch(ar));
}

// --- tshark ---------------------------------------------------------------------------

namespace {

// tshark's fields for every packet of `path`, and the frames it finds
// malformed or with expert information.
struct Tshark {
  std::vector<std::vector<std::string>> rows;
  std::string bad;
};

Tshark tshark_read(const std::string& path) {
  const std::string tshark = std::string("'") + (kTshark != nullptr ? kTshark : "tshark") + "'";
  Tshark t;
  t.rows = split_lines(run_command(
      tshark + " -n -r '" + path +
      "' -T fields -e frame.time_epoch -e erf.types.type -e infiniband.lrh.dlid"
      " -e infiniband.lrh.slid -e infiniband.lrh.sl -e infiniband.lrh.vl -e infiniband.lrh.lnh"
      " -e infiniband.lrh.pktlen -e infiniband.bth.opcode -e infiniband.bth.destqp"
      " -e infiniband.bth.psn -e infiniband.grh.sgid -e infiniband.grh.dgid 2>/dev/null"));
  t.bad = run_command(tshark + " -n -r '" + path +
                      "' -Y '_ws.malformed || _ws.expert' -T fields -e frame.number 2>/dev/null");
  return t;
}

// The GID as tshark prints an IPv6-style address: fe80::ff:fe00:2.
std::string gid_text(const std::array<std::uint8_t, 16>& g) {
  std::array<std::uint8_t, 16> b = g;
  return wire::IpAddress::from_v6(b).to_string();
}

}  // namespace

TEST_CASE("tshark reads the simulator's InfiniBand captures as the simulator sent them" *
          doctest::skip(kTshark == nullptr)) {
  for (const bool global : {false, true}) {
    CAPTURE(global);
    Pair p(ib_pair(2, global));
    const auto path = simtest::temp_pcap(global ? "ib_tshark_g" : "ib_tshark");
    p.fabric.start_capture(path);
    p.fill_a(9);
    REQUIRE(p.post_recv_b(0, 4096, 1) == 0);
    REQUIRE(p.post(IBV_WR_SEND, 0, 1500, 0, 1) == 0);
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 2100, 8192, 2) == 0);
    REQUIRE(p.post(IBV_WR_RDMA_READ, 16384, 1200, 8192, 3) == 0);
    REQUIRE(p.post(IBV_WR_ATOMIC_CMP_AND_SWP, 40960, 8, 32768, 4) == 0);
    for (int i = 0; i < 4; ++i) CHECK(wait_one(*p.cq_a).status == IBV_WC_SUCCESS);
    p.fabric.stop_capture();
    const auto sent = read_ib(path);
    const Tshark t = tshark_read(path);
    std::filesystem::remove(path);
    REQUIRE(t.rows.size() == sent.size());
    CHECK(sent.size() >= 12);
    for (std::size_t i = 0; i < sent.size(); ++i) {
      CAPTURE(i);
      const IbPkt& k = sent[i];
      const auto& r = t.rows[i];
      REQUIRE(r.size() == 13);
      const auto num = [&](std::size_t c) { return std::stoull(r[c], nullptr, 0); };
      char when[32];
      std::snprintf(when, sizeof when, "%lld.%09lld",
                    static_cast<long long>(k.time_ns / 1000000000),
                    static_cast<long long>(k.time_ns % 1000000000));
      CHECK(r[0] == when);
      CHECK(num(1) == wire::erf::kTypeInfiniband);
      CHECK(num(2) == k.lrh.dlid);
      CHECK(num(3) == k.lrh.slid);
      CHECK(num(4) == k.lrh.sl);
      CHECK(num(5) == k.lrh.vl);
      CHECK(num(6) == static_cast<unsigned>(k.lrh.lnh));
      CHECK(num(7) == k.lrh.pkt_len_words);
      CHECK(num(8) == k.opcode);
      CHECK(num(9) == k.dest_qp);
      CHECK(num(10) == k.psn);
      // And what the simulator was asked for.
      CHECK(num(4) == 2);
      CHECK(num(5) == 2);
      CHECK(num(6) == (global ? 3u : 2u));
      CHECK((num(3) == p.a.lid() || num(3) == p.b.lid()));
      CHECK(num(2) + num(3) == p.a.lid() + p.b.lid());
      if (global) {
        REQUIRE(k.grh.has_value());
        CHECK(r[11] == gid_text(k.grh->sgid));
        CHECK(r[12] == gid_text(k.grh->dgid));
      } else {
        CHECK(r[11].empty());
      }
    }
    CHECK(t.bad.empty());
  }
}

// --- The CM over InfiniBand -------------------------------------------------------------

TEST_CASE("the CM over InfiniBand: IPoIB addresses, MADs to QP 1 by LID, a path of LIDs") {
  const auto path = simtest::temp_pcap("ib_cm");
  sim::Fabric fabric(ib_fabric());
  sim::HostConfig h0{"sim0", {2, 0, 0, 0, 0, 1}, *wire::IpAddress::parse("10.99.0.1")};
  sim::HostConfig h1{"sim1", {2, 0, 0, 0, 0, 2}, *wire::IpAddress::parse("10.99.0.2")};
  sim::Device& d0 = fabric.add_host(h0);  // LID 1
  sim::Device& d1 = fabric.add_host(h1);  // LID 2
  fabric.start_capture(path);
  sim::cm::Manager cm(fabric, {&d0, &d1});
  auto* pch = cm.create_event_channel();
  auto* ach = cm.create_event_channel();
  sim::cm::Id* listener = pch->create_id();
  REQUIRE(listener->listen(h0.ip, 7471) == 0);
  sim::cm::Id* active = ach->create_id();
  REQUIRE(active->resolve_addr(std::nullopt, h0.ip, 7471) == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::AddrResolved);
  CHECK(active->device() == &d1);
  REQUIRE(active->resolve_route() == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::RouteResolved);
  simtest::CmHost a(d1);
  simtest::CmHost p(d0);
  sim::cm::ConnParam offer;
  offer.qp_num = a.qp->qp_num();
  REQUIRE(active->connect(offer) == 0);
  auto req = simtest::next_cm_event(*pch, sim::cm::EventType::ConnectRequest);
  REQUIRE(req->id != nullptr);
  p.to_rts(*req->id);
  sim::cm::ConnParam answer;
  answer.qp_num = p.qp->qp_num();
  REQUIRE(req->id->accept(answer) == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::ConnectResponse);
  a.to_rts(*active);
  // The path inside the subnet, on both sides: the peer's LID, no GRH.
  for (const simtest::CmHost* h : {&a, &p}) {
    CHECK(h->rtr.ah_attr.is_global == 0);
    CHECK(h->rtr.ah_attr.sl == 0);
  }
  REQUIRE(active->establish() == 0);
  simtest::next_cm_event(*pch, sim::cm::EventType::Established);
  for (auto [from, to] : {std::pair{&a, &p}, std::pair{&p, &a}}) {
    std::fill(from->buf.begin(), from->buf.begin() + 64, std::uint8_t{0x5A});
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(from->buf.data()), 64, from->mr->lkey()};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to->buf.data());
    wr.wr.rdma.rkey = to->mr->rkey();
    ibv_send_wr* bad = nullptr;
    REQUIRE(from->qp->post_send(&wr, &bad) == 0);
    ibv_wc wc{};
    REQUIRE(from->cq->poll(1, &wc) == 1);
    CHECK(wc.status == IBV_WC_SUCCESS);
    CHECK(to->buf[63] == 0x5A);
  }
  REQUIRE(active->disconnect() == 0);
  simtest::next_cm_event(*pch, sim::cm::EventType::Disconnected);
  REQUIRE(req->id->disconnect() == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::Disconnected);
  // Nobody listens on 7999: the REJ finds its way back by the REQ's LID.
  sim::cm::Id* lost = ach->create_id();
  REQUIRE(lost->resolve_addr(std::nullopt, h0.ip, 7999) == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::AddrResolved);
  REQUIRE(lost->resolve_route() == 0);
  simtest::next_cm_event(*ach, sim::cm::EventType::RouteResolved);
  offer.qp_num = 0x99;
  REQUIRE(lost->connect(offer) == 0);
  auto rej = simtest::next_cm_event(*ach, sim::cm::EventType::Rejected);
  CHECK(rej->status == wire::cm::kRejInvalidServiceId);
  fabric.stop_capture();

  // Every packet native IB and whole; the MADs UD SEND Only between the
  // QPs 1 by LID, without a GRH; the REQ's path in LIDs and fe80:: GIDs.
  capture::PcapReader reader(path);
  capture::Packet pk;
  std::vector<std::string> mads;
  std::size_t data = 0;
  while (reader.next(pk)) {
    const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Erf, pk.original_length);
    REQUIRE(f.roce == wire::RoceVersion::NativeIb);
    REQUIRE(f.ib.has_value());
    CHECK_FALSE(f.error.has_value());
    CHECK(f.lrh->lnh == wire::ib::Lnh::Local);
    CHECK(wire::check_vcrc(f, pk.data)->ok());
    CHECK(wire::check_icrc(f, pk.data)->ok());
    CHECK(f.lrh->dlid + f.lrh->slid == 3);  // between LIDs 1 and 2
    if (f.ib->bth.dest_qp != wire::cm::kGsiQpn) {
      ++data;
      continue;
    }
    CHECK(f.ib->bth.opcode == 0x64);
    REQUIRE(f.ib->deth.has_value());
    CHECK(f.ib->deth->qkey == wire::cm::kGsiQkey);
    CHECK(f.ib->deth->src_qp == wire::cm::kGsiQpn);
    CHECK(f.lrh->vl == 0);  // a data VL: only subnet management uses VL 15
    const auto mad = wire::cm::decode(f.ib->payload);
    REQUIRE(mad.has_value());
    mads.emplace_back(wire::cm::attr_name(wire::cm::attr_of(*mad)));
    if (const auto* r = std::get_if<wire::cm::Req>(&*mad)) {
      CHECK(f.lrh->slid == d1.lid());
      CHECK(r->local_lid == d1.lid());
      CHECK(r->remote_lid == d0.lid());
      CHECK(std::memcmp(r->local_gid.raw, d1.gid(0).raw, 16) == 0);
      CHECK(std::memcmp(r->remote_gid.raw, d0.gid(0).raw, 16) == 0);
      CHECK(r->subnet_local == 1);
      CHECK(r->hop_limit == 0);
      CHECK(r->ca_guid == d1.port_guid());
    }
  }
  CHECK(mads == std::vector<std::string>{"REQ", "REP", "RTU", "DREQ", "DREP", "REQ", "REJ"});
  CHECK(data == 4);  // a WRITE and its ACK each way

  // rdmapcap's analyser links the handshake to the connection's first
  // packets: each side's first PSN as the other announced.
  {
    capture::PcapReader r2(path);
    dissect::Analyzer analyzer;
    dissect::PacketRecord rec;
    std::vector<dissect::Event> linked;
    while (r2.next(pk)) {
      dissect::decode_record(pk.data, pk.original_length, *r2.link_type(), pk.frame, pk.time_ns,
                             rec);
      analyzer.feed(rec);
      CHECK_FALSE(rec.malformed());
      for (const auto& e : rec.events)
        if (e.type == dissect::EventType::CmLinked) linked.push_back(e);
    }
    REQUIRE(linked.size() == 2);
    for (const auto& e : linked) CHECK(e.value == e.psn);
  }

  if (kTshark != nullptr) {
    // tshark reads the CM's MADs in the IB capture: the REQ's path as sent.
    const std::string tshark = std::string("'") + kTshark + "'";
    const std::string req_fields =
        run_command(tshark + " -n -r '" + path +
                    "' -Y infiniband.cm.req -T fields -e infiniband.cm.req.prim_locallid"
                    " -e infiniband.cm.req.prim_remotelid -e infiniband.cm.req.prim_subnetlocal"
                    " -e infiniband.cm.req.prim_sl 2>/dev/null");
    const auto rows = split_lines(req_fields);
    REQUIRE(rows.size() == 2);
    for (const auto& r : rows) {
      REQUIRE(r.size() == 4);
      CHECK(std::stoul(r[0], nullptr, 0) == d1.lid());
      CHECK(std::stoul(r[1], nullptr, 0) == d0.lid());
      CHECK(std::stoul(r[2], nullptr, 0) == 1);
      CHECK(std::stoul(r[3], nullptr, 0) == 0);
    }
    CHECK(run_command(tshark + " -n -r '" + path +
                      "' -Y '_ws.malformed || _ws.expert' -T fields -e frame.number"
                      " 2>/dev/null")
              .empty());
  }
  std::filesystem::remove(path);
}

TEST_CASE("the verbs backend on an InfiniBand simulation: the port, its LIDs and its IB GID") {
  verbs::SimBackendOptions o;
  o.fabric.link_layer = wire::LinkLayer::Infiniband;
  auto backend = verbs::make_sim_backend(o);
  // sim0 and sim1 joined in that order: LIDs 1 and 2, the SM on sim0.
  for (const auto& sim : {std::pair{"sim0", 1}, std::pair{"sim1", 2}}) {
    const char* const name = sim.first;
    const int lid = sim.second;
    CAPTURE(name);
    const auto ctx = backend->open(name);
    CHECK(ctx->info().transport == "simulated InfiniBand");
    const verbs::PortInfo port = ctx->query_port(1);
    CHECK(port.state == IBV_PORT_ACTIVE);
    CHECK(port.link_layer == IBV_LINK_LAYER_INFINIBAND);
    CHECK(port.lid == lid);
    CHECK(port.sm_lid == 1);
    CHECK(port.lmc == 0);
    CHECK(port.phys_state == 5);  // LinkUp
    const auto gids = ctx->gid_table(1);
    REQUIRE(gids.size() == 1);
    CHECK(gids[0].type == verbs::GidType::IB);
    CHECK(gids[0].netdev.empty());
    const sim::Device* dev = backend->device(name);
    REQUIRE(dev != nullptr);
    CHECK(std::memcmp(gids[0].gid.raw, dev->gid(0).raw, 16) == 0);
    CHECK(gids[0].to_string().rfind("fe80::", 0) == 0);
  }
}
