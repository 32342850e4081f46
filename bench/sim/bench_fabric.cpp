// bench_fabric: how fast the simulator runs a switched fabric on one core.
//
//   1. incast: 16 senders WRITE into one receiver through one switch, all at
//      100 Gb/s, PFC and ECN on priority 3 and DCQCN in the NICs (the
//      hpcc-dcqcn preset), for 10 ms of virtual time (each sender keeps 4
//      WRITEs of 1 MiB in flight);
//   2. all-to-all: 128 hosts on a leaf-spine of 8 leaves and 4 spines
//      (16 hosts per leaf), every host WRITEs 64 KiB to every other in turn,
//      for 1 ms of virtual time.
// Every hop is simulated and every frame's ICRC checked at the receiving
// NIC. Reports wall and CPU time, end-to-end packets (frames the hosts sent)
// and packet-hops (those plus every frame a switch sent on) per CPU second,
// the events the engine ran per packet, the payload rate, and the peak RSS.
// Both cases use a path MTU of 4096 unless told otherwise, so most packets
// carry 4 KiB: each is copied out of the sender's memory and into the
// receiver's, and its ICRC computed once and checked once. Not a test: run it
// on a Release build and read the figures.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/topology.hpp"

using namespace rdmalab;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr std::uint8_t kTclass = (26 << 2) | 2;  // DSCP 26, ECT(0)

// The path MTU of every QP (the second argument: 256 ... 4096).
ibv_mtu g_mtu = IBV_MTU_4096;

struct Node {
  sim::Device* dev = nullptr;
  std::vector<std::uint8_t> buf;
  sim::ProtectionDomain* pd = nullptr;
  sim::MemoryRegion* mr = nullptr;
  sim::CompletionQueue* cq = nullptr;
};

struct Conn {
  sim::QueuePair* src = nullptr;
  sim::QueuePair* dst = nullptr;
  Node* from = nullptr;
  Node* to = nullptr;
};

sim::QueuePair* make_qp(Node& n, std::uint32_t depth) {
  ibv_qp_init_attr ia{};
  ia.send_cq = n.cq->get();
  ia.recv_cq = n.cq->get();
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = depth;
  ia.cap.max_recv_wr = 1;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  return n.pd->create_qp(ia);
}

void bring_up(sim::QueuePair& qp, const Node& peer, std::uint32_t dest) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  (void)qp.modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = g_mtu;
  at.dest_qp_num = dest;
  at.max_dest_rd_atomic = 1;
  at.min_rnr_timer = 12;
  at.ah_attr.is_global = 1;
  at.ah_attr.grh.dgid = peer.dev->gid(0);
  at.ah_attr.grh.hop_limit = 64;
  at.ah_attr.grh.traffic_class = kTclass;
  at.ah_attr.port_num = 1;
  (void)qp.modify(at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTS;
  at.timeout = 14;
  at.retry_cnt = 7;
  at.rnr_retry = 7;
  at.max_rd_atomic = 1;
  (void)qp.modify(at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

std::vector<std::unique_ptr<Node>> nodes_of(const sim::Topology& t, std::size_t bytes) {
  std::vector<std::unique_ptr<Node>> out;
  for (sim::Device* d : t.hosts) {
    auto n = std::make_unique<Node>();
    n->dev = d;
    n->buf.assign(bytes, 0x5A);
    n->pd = d->alloc_pd();
    n->mr = n->pd->reg_mr(n->buf.data(), n->buf.size(),
                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    n->cq = d->create_cq(1024);
    out.push_back(std::move(n));
  }
  return out;
}

Conn connect(Node& a, Node& b, std::uint32_t depth) {
  Conn c{make_qp(a, depth), make_qp(b, depth), &a, &b};
  bring_up(*c.src, b, c.dst->qp_num());
  bring_up(*c.dst, a, c.src->qp_num());
  return c;
}

void post_write(const Conn& c, std::uint32_t len, std::uint64_t id) {
  ibv_sge sge{c.from->mr->iova(), len, c.from->mr->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = c.to->mr->iova();
  wr.wr.rdma.rkey = c.to->mr->rkey();
  ibv_send_wr* bad = nullptr;
  if (c.src->post_send(&wr, &bad) != 0) std::printf("post_send failed\n");
}

void report(const char* name, const sim::Fabric& f, double wall, double cpu) {
  const auto& st = f.stats();
  const auto hops = st.packets_sent + st.switch_hops;
  std::printf(
      "%-44s: %6.3f s cpu (%6.3f wall); %9llu packets, %9llu packet-hops, %4.1f events a packet;"
      " %5.2f M packets/s, %5.2f M packet-hops/s, %5.1f Gb/s payload; virtual %.2f ms\n",
      name, cpu, wall, static_cast<unsigned long long>(st.packets_sent),
      static_cast<unsigned long long>(hops),
      static_cast<double>(st.events) / static_cast<double>(st.packets_sent),
      static_cast<double>(st.packets_sent) / cpu / 1e6, static_cast<double>(hops) / cpu / 1e6,
      static_cast<double>(st.payload_bytes_sent) * 8 / cpu / 1e9,
      static_cast<double>(f.now()) / 1e6);
}

void bench_incast() {
  sim::FabricConfig fc;
  fc.dcqcn = sim::hpcc_dcqcn(100'000'000'000ULL);
  sim::Fabric fabric(fc);
  sim::TopologySpec spec = *sim::TopologySpec::parse("star:17");
  spec.switch_config.pfc[3].enabled = true;
  spec.switch_config.ecn[3] = sim::EcnConfig::from(fc.dcqcn->ecn);
  const sim::Topology t = sim::build_topology(fabric, spec);
  auto nodes = nodes_of(t, 1 << 20);
  std::vector<Conn> conns;
  for (std::size_t i = 1; i < nodes.size(); ++i) conns.push_back(connect(*nodes[i], *nodes[0], 8));
  for (std::size_t i = 0; i < conns.size(); ++i)
    for (int k = 0; k < 4; ++k) post_write(conns[i], 1 << 20, i);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  constexpr sim::Time kEnd = 10 * sim::kMillisecond;
  std::vector<ibv_wc> wc(64);
  while (fabric.now() < kEnd) {
    fabric.run_for(10 * sim::kMicrosecond);
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      const int n = nodes[i]->cq->poll_now(64, wc.data());
      for (int k = 0; k < n; ++k) post_write(conns[i - 1], 1 << 20, i - 1);
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report("16:1 incast, 100 Gb/s, DCQCN, 10 ms", fabric, wall, cpu_seconds() - c0);
}

void bench_all_to_all() {
  sim::Fabric fabric;
  sim::TopologySpec spec = *sim::TopologySpec::parse("leaf-spine:8x4x16");
  spec.switch_config.pfc[3].enabled = true;
  spec.switch_config.ecn[3].enabled = true;
  const sim::Topology t = sim::build_topology(fabric, spec);
  auto nodes = nodes_of(t, 64UL * 1024);
  const std::size_t n = nodes.size();
  // One QP per ordered pair; each host walks its peers in turn, one WRITE
  // of 64 KiB in flight per QP, starting at a different peer per host.
  std::vector<std::vector<Conn>> conns(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t k = 1; k < n; ++k)
      conns[a].push_back(connect(*nodes[a], *nodes[(a + k) % n], 2));
  std::vector<std::size_t> next(n, 0);
  for (std::size_t a = 0; a < n; ++a) post_write(conns[a][next[a]++ % (n - 1)], 64 * 1024, a);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  constexpr sim::Time kEnd = 1 * sim::kMillisecond;
  std::vector<ibv_wc> wc(64);
  while (fabric.now() < kEnd) {
    fabric.run_for(5 * sim::kMicrosecond);
    for (std::size_t a = 0; a < n; ++a) {
      const int got = nodes[a]->cq->poll_now(64, wc.data());
      for (int k = 0; k < got; ++k) post_write(conns[a][next[a]++ % (n - 1)], 64 * 1024, a);
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report("all-to-all, 128 hosts, leaf-spine 8x4x16, 1 ms", fabric, wall, cpu_seconds() - c0);
}

}  // namespace

// Usage: bench_fabric [incast|all-to-all|both] [MTU] (both, 4096 by default).
int main(int argc, char** argv) {
  const std::string only = argc > 1 && std::string(argv[1]) != "both" ? argv[1] : "";
  const std::string mtu = argc > 2 ? argv[2] : "4096";
  g_mtu = mtu == "256"    ? IBV_MTU_256
          : mtu == "512"  ? IBV_MTU_512
          : mtu == "1024" ? IBV_MTU_1024
          : mtu == "2048" ? IBV_MTU_2048
                          : IBV_MTU_4096;
  if (mtu != "4096" && g_mtu == IBV_MTU_4096) {
    std::fprintf(stderr, "bench_fabric: MTU must be 256, 512, 1024, 2048 or 4096, not %s\n",
                 mtu.c_str());
    return 2;
  }
  if (only.empty() || only == "incast") bench_incast();
  if (only.empty() || only == "all-to-all") bench_all_to_all();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS %ld KiB\n", ru.ru_maxrss);
  return 0;
}
