// bench_sim: how fast the simulator runs on one core.
//
//   1. 1 GiB of RDMA WRITE at path MTU 4096 (256 WRITEs of 4 MiB, 32 in
//      flight), payload throughput in simulated bits per wall-clock second;
//   2. 1 million 64-byte SENDs (receives posted in batches), simulated
//      packets (requests and ACKs) per wall-clock second;
// each without a capture and with one (headers only for the WRITE, whole
// frames for the SENDs), and with and without the receive-side ICRC check.
// Not a test: run it by hand on a Release build and read the figures.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "rdmalab/sim/device.hpp"

using namespace rdmalab;

namespace {

struct Setup {
  explicit Setup(const sim::FabricConfig& fc, std::size_t buffer, ibv_mtu mtu)
      : fabric(fc), a(fabric.add_host(host("A", 2))), b(fabric.add_host(host("B", 1))) {
    buf_a.assign(buffer, 0x5A);
    buf_b.assign(buffer, 0);
    pd_a = a.alloc_pd();
    pd_b = b.alloc_pd();
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    mr_a = pd_a->reg_mr(buf_a.data(), buf_a.size(), access);
    mr_b = pd_b->reg_mr(buf_b.data(), buf_b.size(), access);
    cq_a = a.create_cq(1 << 16);
    cq_b = b.create_cq(1 << 16);
    qa = make_qp(*pd_a, *cq_a);
    qb = make_qp(*pd_b, *cq_b);
    connect(*qa, b, qb->qp_num(), mtu);
    connect(*qb, a, qa->qp_num(), mtu);
  }
  static sim::HostConfig host(const char* name, std::uint8_t last) {
    sim::HostConfig h;
    h.name = name;
    h.mac = {2, 0, 0, 0, 0, last};
    h.ip = wire::IpAddress::from_v4({10, 0, 0, last});
    return h;
  }
  static sim::QueuePair* make_qp(sim::ProtectionDomain& pd, sim::CompletionQueue& cq) {
    ibv_qp_init_attr ia{};
    ia.send_cq = cq.get();
    ia.recv_cq = cq.get();
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = 8192;
    ia.cap.max_recv_wr = 8192;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    return pd.create_qp(ia);
  }
  static void connect(sim::QueuePair& qp, sim::Device& peer, std::uint32_t dqpn, ibv_mtu mtu) {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    (void)qp.modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    at = ibv_qp_attr{};
    at.qp_state = IBV_QPS_RTR;
    at.path_mtu = mtu;
    at.dest_qp_num = dqpn;
    at.max_dest_rd_atomic = 1;
    at.min_rnr_timer = 12;
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = peer.gid(0);
    at.ah_attr.port_num = 1;
    (void)qp.modify(at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    at = ibv_qp_attr{};
    at.qp_state = IBV_QPS_RTS;
    at.timeout = 14;
    at.retry_cnt = 7;
    at.rnr_retry = 7;
    at.max_rd_atomic = 1;
    (void)qp.modify(at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
  }

  sim::Fabric fabric;
  sim::Device& a;
  sim::Device& b;
  std::vector<std::uint8_t> buf_a, buf_b;
  sim::ProtectionDomain* pd_a;
  sim::ProtectionDomain* pd_b;
  sim::MemoryRegion* mr_a;
  sim::MemoryRegion* mr_b;
  sim::CompletionQueue* cq_a;
  sim::CompletionQueue* cq_b;
  sim::QueuePair* qa;
  sim::QueuePair* qb;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of this thread: on a shared, loaded machine the honest measure
// of "one core" (wall time also counts the time other processes ran).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void bench_write(bool capture, bool verify) {
  sim::FabricConfig fc;
  fc.verify_icrc = verify;
  constexpr std::size_t kMsg = 4u << 20;
  constexpr int kCount = 256;  // 1 GiB
  constexpr int kDepth = 32;
  Setup s(fc, kMsg, IBV_MTU_4096);
  const std::string path = (std::filesystem::temp_directory_path() / "bench_sim_write.pcap");
  if (capture) s.fabric.start_capture(path, 128);
  // Work requests built before the timed loop (perftest's habit).
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(s.buf_a.data()), kMsg, s.mr_a->lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(s.buf_b.data());
  wr.wr.rdma.rkey = s.mr_b->rkey();
  ibv_send_wr* bad = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  int posted = 0, done = 0;
  ibv_wc wc[64];
  while (done < kCount) {
    while (posted < kCount && posted - done < kDepth) {
      if (s.qa->post_send(&wr, &bad) != 0) return;
      ++posted;
    }
    const int n = s.cq_a->poll(64, wc);
    if (n <= 0) break;
    for (int i = 0; i < n; ++i)
      if (wc[i].status != IBV_WC_SUCCESS) std::printf("error %d\n", wc[i].status);
    done += n;
  }
  const double wall = seconds_since(t0);
  const double cpu = cpu_seconds() - c0;
  s.fabric.stop_capture();
  if (capture) std::filesystem::remove(path);
  const double bytes = static_cast<double>(kMsg) * kCount;
  const auto& st = s.fabric.stats();
  std::printf(
      "1 GiB WRITE MTU 4096  %-24s %-14s: %5.3f s cpu (%5.3f wall) %5.1f Gb/s payload,"
      " %4.2f Mpkt/s; virtual %.1f ms\n",
      capture ? "capture (128-byte snap)" : "no capture",
      verify ? "ICRC checked" : "ICRC unchecked", cpu, wall, bytes * 8 / cpu / 1e9,
      static_cast<double>(st.packets_sent) / cpu / 1e6, static_cast<double>(s.fabric.now()) / 1e6);
}

void bench_send(bool capture, bool verify) {
  sim::FabricConfig fc;
  fc.verify_icrc = verify;
  constexpr int kCount = 1'000'000;
  constexpr int kBatch = 4096;
  Setup s(fc, std::size_t{64} * kBatch, IBV_MTU_4096);
  const std::string path = (std::filesystem::temp_directory_path() / "bench_sim_send.pcap");
  if (capture) s.fabric.start_capture(path);
  std::vector<ibv_sge> sges(kBatch), rsges(kBatch);
  std::vector<ibv_send_wr> wrs(kBatch);
  std::vector<ibv_recv_wr> rwrs(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    const auto off = static_cast<std::size_t>(i) * 64;
    sges[static_cast<std::size_t>(i)] = {reinterpret_cast<std::uintptr_t>(s.buf_a.data() + off), 64,
                                         s.mr_a->lkey()};
    rsges[static_cast<std::size_t>(i)] = {reinterpret_cast<std::uintptr_t>(s.buf_b.data() + off),
                                          64, s.mr_b->lkey()};
    ibv_send_wr& w = wrs[static_cast<std::size_t>(i)];
    w.sg_list = &sges[static_cast<std::size_t>(i)];
    w.num_sge = 1;
    w.opcode = IBV_WR_SEND;
    // Signal every 64th SEND, as perftest does with its CQ moderation.
    w.send_flags = (i % 64 == 63) ? IBV_SEND_SIGNALED : 0;
    w.next = i + 1 < kBatch ? &wrs[static_cast<std::size_t>(i) + 1] : nullptr;
    ibv_recv_wr& r = rwrs[static_cast<std::size_t>(i)];
    r.sg_list = &rsges[static_cast<std::size_t>(i)];
    r.num_sge = 1;
    r.next = i + 1 < kBatch ? &rwrs[static_cast<std::size_t>(i) + 1] : nullptr;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  std::vector<ibv_wc> wc(kBatch);
  for (int sent = 0; sent < kCount; sent += kBatch) {
    ibv_recv_wr* rbad = nullptr;
    ibv_send_wr* bad = nullptr;
    if (s.qb->post_recv(rwrs.data(), &rbad) != 0 || s.qa->post_send(wrs.data(), &bad) != 0) {
      std::printf("post failed\n");
      return;
    }
    int got = 0;  // the sender's signalled completions
    while (got < kBatch / 64) {
      const int n = s.cq_a->poll(kBatch, wc.data());
      if (n <= 0) return;
      got += n;
    }
    int recvd = 0;
    while (recvd < kBatch) {
      const int n = s.cq_b->poll(kBatch, wc.data());
      if (n <= 0) return;
      recvd += n;
    }
  }
  const double wall = seconds_since(t0);
  const double cpu = cpu_seconds() - c0;
  s.fabric.stop_capture();
  if (capture) std::filesystem::remove(path);
  const auto& st = s.fabric.stats();
  std::printf(
      "1M 64-byte SENDs      %-24s %-14s: %5.3f s cpu (%5.3f wall) %4.2f Mpkt/s"
      " (%lu packets), %4.2f M SENDs/s\n",
      capture ? "capture (whole frames)" : "no capture", verify ? "ICRC checked" : "ICRC unchecked",
      cpu, wall, static_cast<double>(st.packets_sent) / cpu / 1e6,
      static_cast<unsigned long>(st.packets_sent), kCount / cpu / 1e6);
}

}  // namespace

// Usage: bench_sim [write|send] [capture|nocapture] [checked|unchecked]
// (every combination by default; the extra words pick one, for a profiler).
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const std::string cap = argc > 2 ? argv[2] : "";
  const std::string chk = argc > 3 ? argv[3] : "";
  const auto pick = [&](bool capture, bool verify) {
    return (cap.empty() || cap == (capture ? "capture" : "nocapture")) &&
           (chk.empty() || chk == (verify ? "checked" : "unchecked"));
  };
  if (only.empty() || only == "write")
    for (bool capture : {false, true})
      for (bool verify : {true, false})
        if (pick(capture, verify)) bench_write(capture, verify);
  if (only.empty() || only == "send")
    for (bool capture : {false, true})
      for (bool verify : {true, false})
        if (pick(capture, verify)) bench_send(capture, verify);
  // Speed must not be bought with memory: the peak of the whole run.
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS %ld KiB\n", ru.ru_maxrss);
  return 0;
}
