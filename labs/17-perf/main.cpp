// Lab 17: performance — the knobs that make RDMA fast, each measured.
//
// Read this file next to docs/en/24-lab17-perf.md. One process plays both
// sides: a sender with --qps RC QPs and a receiver with as many, one CQ and
// one MR per side. The lab measures, the way perftest does:
//   - bandwidth (ib_write_bw, ib_send_bw): --tx-depth WRs in flight per QP,
//     one in every --cq-mod signalled, --post-list WRs chained per
//     ibv_post_send (one doorbell each), IBV_SEND_INLINE with --inline; the
//     time from the first post to the last completion gives "BW average" in
//     MB/sec (2^20 bytes) and "MsgRate" in Mpps;
//   - latency (ib_write_lat): a ping-pong of WRITEs, each side polling the
//     last byte of its buffer for the other's; half of each round trip is a
//     sample, reported as t_min, t_max, t_typical (the median), t_avg,
//     t_stdev and the 99% and 99.9% percentiles in usec;
//   - with --test all, one knob at a time from the same starting point.
// On the simulator the time is virtual and the NIC cost model (a doorbell,
// a WQE fetch, a payload fetch that inline data skips, a CQE write) decides
// the numbers, which the chapter derives from its equations; on a real
// device it is wall time.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/verbs/doctor.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using i18n::tr;
using lab17::M;

namespace {

// The NIC cost model the lab gives the simulator (see the chapter): a
// doorbell, a WQE fetch and a CQE write take the QP's send engine this long;
// the payload's DMA read delays a non-inline WQE's first packet by this much.
constexpr sim::Time kDoorbellNs = 100;
constexpr sim::Time kWqeFetchNs = 50;
constexpr sim::Time kPayloadFetchNs = 250;
constexpr sim::Time kCqeWriteNs = 100;
// The largest max_inline_data the lab asks for.
constexpr std::uint32_t kInlineCeiling = 1024;
// On the simulator, the pause before each run: every NIC is idle again (its
// last CQE written) when a run starts, as when a new perftest process starts.
constexpr sim::Time kPauseNs = 10 * sim::kMicrosecond;
// How long a real device may take for one message before the lab gives up.
constexpr auto kStallTimeout = std::chrono::seconds(10);
// The knob table's message size, and the values it turns the knobs to.
constexpr std::uint32_t kKnobPostList = 16;
constexpr std::uint32_t kKnobQps = 4;
constexpr std::uint32_t kKnobShallowDepth = 4;

struct Options {
  lab::CommonOptions common;
  std::string test = "all";
  std::string op = "write";
  std::vector<std::uint32_t> sizes{64, 1024, 4096, 65536};
  std::uint32_t iters = 1000;
  bool use_inline = false;
  std::uint32_t post_list = 1;
  std::uint32_t qps = 1;
  std::uint32_t tx_depth = 128;
  std::uint32_t cq_mod = 100;
  int mtu = 1024;
};

// One bandwidth run's settings.
struct BwConfig {
  ibv_wr_opcode op = IBV_WR_RDMA_WRITE;
  std::uint32_t size = 64;
  std::uint32_t iters = 1000;  // per QP
  bool use_inline = false;
  std::uint32_t post_list = 1;
  std::uint32_t qps = 1;
  std::uint32_t depth = 128;
  std::uint32_t cq_mod = 100;
};

struct BwResult {
  std::uint64_t messages = 0;
  std::uint64_t ns = 0;
  bool ok = true;
  [[nodiscard]] double mb_per_sec(std::uint32_t size) const {
    return static_cast<double>(messages) * size / (static_cast<double>(ns) * 1e-9) / 1048576.0;
  }
  [[nodiscard]] double mpps() const {
    return static_cast<double>(messages) / (static_cast<double>(ns) * 1e-9) / 1e6;
  }
};

struct LatResult {
  std::vector<double> usec;  // sorted half round trips
  bool ok = true;
  [[nodiscard]] double pct(double p) const {
    const auto i = static_cast<std::size_t>(static_cast<double>(usec.size()) * p);
    return usec[std::min(i, usec.size() - 1)];
  }
  [[nodiscard]] double avg() const {
    double s = 0;
    for (double v : usec) s += v;
    return s / static_cast<double>(usec.size());
  }
  [[nodiscard]] double stdev() const {
    const double a = avg();
    double s = 0;
    for (double v : usec) s += (v - a) * (v - a);
    return std::sqrt(s / static_cast<double>(usec.size()));
  }
};

// Both sides' resources: QP i of the sender is connected to QP i of the
// receiver; endpoint 0 of each side holds its device, PD, CQ and MR.
struct Bench {
  const lab::Environment& env;
  std::vector<lab::Endpoint>& tx;
  std::vector<lab::Endpoint>& rx;
  std::uint32_t slot = 0;  // bytes per QP in each side's buffer
  std::uint32_t max_inline = 0;
  // Receives each receiver QP keeps posted for SENDs: twice the sender's
  // queue, so that one is there for every SEND in flight even while the
  // completions of those already received wait to be polled.
  std::uint32_t rx_depth = 0;

  // Virtual time on the simulator, wall time on a real device.
  void pause() const {
    if (sim::Fabric* f = env.fabric()) f->run_for(kPauseNs);
  }
  [[nodiscard]] std::uint64_t now_ns() const {
    if (const sim::Fabric* f = env.fabric()) return static_cast<std::uint64_t>(f->now());
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
};

std::string op_name(ibv_wr_opcode op) {
  return op == IBV_WR_SEND ? "SEND" : "RDMA WRITE";
}

// Keeps a receiver QP's receive queue full (SEND only): `want` posted.
void post_recvs(lab::Endpoint& on, lab::Endpoint& base, std::uint32_t q, std::uint32_t slot,
                std::uint32_t size, std::uint32_t count) {
  for (std::uint32_t k = 0; k < count; ++k) {
    ibv_sge sge = base.sge(std::size_t{q} * slot, size);
    ibv_recv_wr wr{};
    wr.wr_id = q;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(on.qp->post_recv(&wr, &bad), "ibv_post_recv");
  }
}

// One bandwidth run, perftest's loop: keep `depth` WRs in flight on every
// QP, `post_list` per ibv_post_send, one in every `cq_mod` signalled (and
// the last); the run ends at the last completion.
BwResult run_bw(Bench& b, const BwConfig& c) {
  BwResult r;
  const std::uint32_t q_count = c.qps;
  std::vector<std::uint32_t> posted(q_count, 0), done(q_count, 0), recv_done(q_count, 0);
  const bool send = c.op == IBV_WR_SEND;
  // A SEND needs a receive: the receiver keeps rx_depth of them posted.
  if (send)
    for (std::uint32_t q = 0; q < q_count; ++q)
      post_recvs(b.rx[q], b.rx[0], q, b.slot, c.size, std::min(b.rx_depth, c.iters));
  const unsigned inline_flag = c.use_inline && c.size <= b.max_inline ? IBV_SEND_INLINE : 0;
  std::vector<ibv_sge> sges(c.post_list);
  std::vector<ibv_send_wr> wrs(c.post_list);
  std::array<ibv_wc, 64> wcs{};
  b.pause();
  const std::uint64_t start = b.now_ns();
  auto last_progress = std::chrono::steady_clock::now();
  std::uint32_t finished = 0;
  while (finished < q_count) {
    for (std::uint32_t q = 0; q < q_count; ++q) {
      while (posted[q] < c.iters) {
        const std::uint32_t chain = std::min(c.post_list, c.iters - posted[q]);
        if (posted[q] + chain - done[q] > c.depth) break;
        for (std::uint32_t k = 0; k < chain; ++k) {
          const std::uint32_t index = posted[q] + k + 1;  // 1-based per QP
          sges[k] = b.tx[0].sge(std::size_t{q} * b.slot, c.size);
          ibv_send_wr& wr = wrs[k];
          wr = ibv_send_wr{};
          wr.wr_id = (std::uint64_t{q} << 32) | index;
          wr.sg_list = &sges[k];
          wr.num_sge = 1;
          wr.opcode = c.op;
          wr.send_flags = inline_flag;
          if (index % c.cq_mod == 0 || index == c.iters) wr.send_flags |= IBV_SEND_SIGNALED;
          wr.wr.rdma.remote_addr =
              reinterpret_cast<std::uintptr_t>(b.rx[0].mr->addr()) + std::size_t{q} * b.slot;
          wr.wr.rdma.rkey = b.rx[0].mr->rkey();
          wr.next = k + 1 < chain ? &wrs[k + 1] : nullptr;
        }
        ibv_send_wr* bad = nullptr;
        verbs::check_rc(b.tx[q].qp->post_send(wrs.data(), &bad), "ibv_post_send");
        posted[q] += chain;
      }
    }
    bool got = false;
    const int n = b.tx[0].cq->poll(wcs);
    if (n < 0) verbs::check_rc(-n, "ibv_poll_cq");
    for (int i = 0; i < n; ++i) {
      got = true;
      const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
      const auto q = static_cast<std::uint32_t>(wc.wr_id >> 32);
      if (wc.status != IBV_WC_SUCCESS || q >= q_count)
        throw std::runtime_error(tr(M("wc_failed"), ibv_wc_status_str(wc.status), wc.wr_id));
      done[q] = static_cast<std::uint32_t>(wc.wr_id & 0xFFFFFFFFu);
      if (done[q] == c.iters) ++finished;
    }
    if (send) {
      const int m = b.rx[0].cq->poll(wcs);
      for (int i = 0; i < m; ++i) {
        got = true;
        const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
        const auto q = static_cast<std::uint32_t>(wc.wr_id);
        if (wc.status != IBV_WC_SUCCESS || q >= q_count || wc.byte_len != c.size) r.ok = false;
        if (q >= q_count) continue;
        // Post another receive only while SENDs may still come for it.
        if (++recv_done[q] + b.rx_depth <= c.iters)
          post_recvs(b.rx[q], b.rx[0], q, b.slot, c.size, 1);
      }
    }
    if (got) {
      last_progress = std::chrono::steady_clock::now();
    } else if (b.env.simulated) {
      if (!b.tx[0].cq->progress()) throw std::runtime_error(tr(M("stalled")));
    } else if (std::chrono::steady_clock::now() - last_progress > kStallTimeout) {
      throw std::runtime_error(tr(M("stalled")));
    }
  }
  r.ns = b.now_ns() - start;
  r.messages = std::uint64_t{c.iters} * q_count;
  // SENDs: every receive completed too (the last ones may still be coming).
  if (send) {
    const auto until = std::chrono::steady_clock::now() + kStallTimeout;
    for (std::uint32_t q = 0; q < q_count; ++q)
      while (recv_done[q] < c.iters && std::chrono::steady_clock::now() < until) {
        const int m = b.rx[0].cq->poll(wcs);
        for (int i = 0; i < m; ++i) {
          const auto rq = static_cast<std::uint32_t>(wcs[static_cast<std::size_t>(i)].wr_id);
          if (rq < q_count) ++recv_done[rq];
        }
        if (m == 0 && b.env.simulated && !b.rx[0].cq->progress()) break;
      }
    for (std::uint32_t q = 0; q < q_count; ++q) r.ok = r.ok && recv_done[q] == c.iters;
  }
  return r;
}

// Waits until `*at` holds `value`: on the simulator the fabric runs until
// it does, on a real device the CPU polls the byte (as ib_write_lat does).
bool wait_byte(const Bench& b, const volatile std::uint8_t* at, std::uint8_t value) {
  if (sim::Fabric* f = b.env.fabric())
    return f->run_until([&] { return *at == value; }, f->now() + sim::kSecond);
  const auto until = std::chrono::steady_clock::now() + kStallTimeout;
  while (*at != value)
    if (std::chrono::steady_clock::now() > until) return false;
  return true;
}

int post_write(lab::Endpoint& from, lab::Endpoint& local, const lab::Endpoint& to,
               std::uint32_t size, unsigned flags) {
  ibv_sge sge = local.sge(0, size);
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = flags | IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to.mr->addr());
  wr.wr.rdma.rkey = to.mr->rkey();
  ibv_send_wr* bad = nullptr;
  return from.qp->post_send(&wr, &bad);
}

// One latency run, ib_write_lat's ping-pong on QP 0 of each side: the
// sender WRITEs `size` bytes whose last byte is the iteration's tag, the
// receiver sees it and WRITEs back; half of each round trip is a sample.
LatResult run_lat(Bench& b, std::uint32_t size, std::uint32_t iters, bool use_inline) {
  LatResult r;
  const unsigned flags = use_inline && size <= b.max_inline ? IBV_SEND_INLINE : 0;
  std::uint8_t* a_buf = b.tx[0].buf();
  std::uint8_t* b_buf = b.rx[0].buf();
  std::array<ibv_wc, 16> wcs{};
  std::uint32_t a_out = 0, b_out = 0;  // WRITEs not yet completed
  b.pause();
  const auto reap = [&](lab::Endpoint& e, std::uint32_t& out) {
    const int n = e.cq->poll(wcs);
    for (int i = 0; i < n; ++i) {
      r.ok = r.ok && wcs[static_cast<std::size_t>(i)].status == IBV_WC_SUCCESS;
      --out;
    }
  };
  for (std::uint32_t i = 0; i < iters; ++i) {
    // The sender's WRITE ends in an odd tag, the receiver's answer in the
    // even one after it: each side waits for a value its own side never
    // writes.
    const auto a_tag = static_cast<std::uint8_t>(2 * (i % 127) + 1);
    const auto b_tag = static_cast<std::uint8_t>(a_tag + 1);
    a_buf[size - 1] = a_tag;
    const std::uint64_t t0 = b.now_ns();
    verbs::check_rc(post_write(b.tx[0], b.tx[0], b.rx[0], size, flags), "ibv_post_send");
    ++a_out;
    if (!wait_byte(b, b_buf + size - 1, a_tag)) throw std::runtime_error(tr(M("stalled")));
    b_buf[size - 1] = b_tag;
    verbs::check_rc(post_write(b.rx[0], b.rx[0], b.tx[0], size, flags), "ibv_post_send");
    ++b_out;
    if (!wait_byte(b, a_buf + size - 1, b_tag)) throw std::runtime_error(tr(M("stalled")));
    const std::uint64_t t1 = b.now_ns();
    r.usec.push_back(static_cast<double>(t1 - t0) / 2000.0);
    reap(b.tx[0], a_out);
    reap(b.rx[0], b_out);
  }
  // The last WRITEs' completions.
  for (int k = 0; (a_out > 0 || b_out > 0) && k < 1000000; ++k) {
    reap(b.tx[0], a_out);
    reap(b.rx[0], b_out);
    if (b.env.simulated && (a_out > 0 || b_out > 0) && !b.tx[0].cq->progress()) break;
  }
  r.ok = r.ok && a_out == 0 && b_out == 0;
  std::sort(r.usec.begin(), r.usec.end());
  return r;
}

std::string bw_header() {
  return fmt::format(" {:<10} {:<14} {:<20} {:<16}", "#bytes", "#iterations", "BW average[MB/sec]",
                     "MsgRate[Mpps]");
}
std::string bw_row(std::uint32_t size, std::uint64_t iters, const BwResult& r) {
  return fmt::format(" {:<10} {:<14} {:<20.2f} {:<16.6f}", size, iters, r.mb_per_sec(size),
                     r.mpps());
}
std::string lat_header() {
  return fmt::format(" {:<7} {:<11} {:<12} {:<12} {:<16} {:<12} {:<14} {:<22} {}", "#bytes",
                     "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]",
                     "t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]");
}
std::string lat_row(std::uint32_t size, std::uint32_t iters, const LatResult& r) {
  return fmt::format(
      " {:<7} {:<11} {:<12.2f} {:<12.2f} {:<16.2f} {:<12.2f} {:<14.2f} {:<22.2f} "
      "{:.2f}",
      size, iters, r.usec.front(), r.usec.back(), r.pct(0.5), r.avg(), r.stdev(), r.pct(0.99),
      r.pct(0.999));
}

nlohmann::json bw_json(const BwConfig& c, const BwResult& r, std::uint32_t max_inline) {
  return {{"op", c.op == IBV_WR_SEND ? "send" : "write"},
          {"size", c.size},
          {"iters", c.iters},
          {"inline", c.use_inline && c.size <= max_inline},
          {"post_list", c.post_list},
          {"qps", c.qps},
          {"tx_depth", c.depth},
          {"cq_mod", c.cq_mod},
          {"messages", r.messages},
          {"ns", r.ns},
          {"bw_mb_per_sec", r.mb_per_sec(c.size)},
          {"msg_rate_mpps", r.mpps()}};
}

nlohmann::json lat_json(std::uint32_t size, std::uint32_t iters, bool inl, const LatResult& r) {
  return {{"size", size},           {"iters", iters},
          {"inline", inl},          {"t_min", r.usec.front()},
          {"t_max", r.usec.back()}, {"t_typical", r.pct(0.5)},
          {"t_avg", r.avg()},       {"t_stdev", r.stdev()},
          {"p99", r.pct(0.99)},     {"p99_9", r.pct(0.999)}};
}

void open_side(lab::Narrator& n, lab::Environment& env, lab::Endpoint& e, const std::string& device,
               std::size_t buffer, int cqe, const lab::CommonOptions& o) {
  e.ctx = env.backend->open(device);
  n.call(fmt::format("ibv_open_device({})", e.ctx->info().name), {});
  lab::choose_gid(n, e, o);
  e.pd = e.ctx->alloc_pd();
  n.call("ibv_alloc_pd(ctx)", {});
  e.storage.assign((buffer + 7) / 8, 0);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  e.mr = e.pd->reg_mr(e.buf(), buffer, access);
  n.call(fmt::format("ibv_reg_mr(pd, buf, {}, IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE)",
                     buffer),
         fmt::format("lkey {}  rkey {}", lab::hex(e.mr->lkey(), 8), lab::hex(e.mr->rkey(), 8)));
  e.cq = e.ctx->create_cq(cqe);
  n.call(fmt::format("ibv_create_cq(ctx, cqe={})", cqe), {});
}

void add_qp(lab::Narrator& n, std::vector<lab::Endpoint>& side, std::size_t i,
            const std::string& role, std::uint32_t depth, std::uint32_t max_inline) {
  lab::Endpoint& base = side[0];
  lab::Endpoint& e = side[i];
  e.role = role;
  e.same_port_as(base);
  verbs::QpInitAttrs init;
  init.send_cq = base.cq.get();
  init.recv_cq = base.cq.get();
  init.max_send_wr = depth;
  init.max_recv_wr = 2 * depth;
  init.max_inline_data = max_inline;
  e.qp = base.pd->create_qp(init);
  n.call(fmt::format("ibv_create_qp(pd, IBV_QPT_RC, max_send_wr={}, max_recv_wr={}, "
                     "max_inline_data={})",
                     depth, 2 * depth, max_inline),
         fmt::format("qp_num {}", lab::hex(e.qp->qpn(), 6)));
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  if (o.cq_mod > o.tx_depth || o.post_list > o.tx_depth)
    throw verbs::UsageError(tr(M("bad_depth"), o.tx_depth, o.cq_mod, o.post_list));
  for (const std::uint32_t s : o.sizes)
    if (s < 2 || s > 1048576) throw verbs::UsageError(tr(M("bad_size"), s));
  const bool do_bw = o.test != "lat";
  const bool do_lat = o.test != "bw";
  const bool do_knobs = o.test == "all";
  const std::uint32_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  const std::uint32_t qps = std::max(o.qps, do_knobs ? kKnobQps : 1u);
  const std::uint32_t depth = o.tx_depth;

  n.step(tr(M("step.backend")));
  verbs::SimBackendOptions sim;
  sim.nic_costs = {kDoorbellNs, kWqeFetchNs, kPayloadFetchNs, kCqeWriteNs};
  lab::Environment env = lab::open_environment(n, o.common, sim);
  if (sim::Fabric* f = env.fabric()) {
    // Thousands of messages per run: no capture (lab 02 shows a WRITE's
    // packets one by one).
    f->stop_capture();
    n.say(tr(M("why.model"), kDoorbellNs, kWqeFetchNs, kPayloadFetchNs, kCqeWriteNs));
  }

  n.step(tr(M("step.resources")));
  std::vector<lab::Endpoint> tx(qps), rx(qps);
  struct Teardown {
    std::vector<lab::Endpoint>& rx;
    std::vector<lab::Endpoint>& tx;
    ~Teardown() {
      for (auto* side : {&rx, &tx})
        for (auto it = side->rbegin(); it != side->rend(); ++it) it->qp.reset();
    }
  } teardown{rx, tx};
  const std::uint32_t slot = max_size;
  const std::size_t buffer = std::size_t{slot} * qps;
  // Every receive posted (2 × depth per QP) and the sends' completions.
  const int cqe = static_cast<int>(4 * qps * depth + 16);
  open_side(n, env, tx[0], lab::requester_device(env, o.common), buffer, cqe, o.common);
  const std::uint32_t max_inline = verbs::probe_max_inline_data(*tx[0].ctx, kInlineCeiling);
  n.call("ibv_create_qp(..., max_inline_data=?)",
         tr(M("inline_granted"), max_inline, kInlineCeiling));
  n.say(tr(M("why.inline")));
  for (std::uint32_t i = 0; i < qps; ++i) add_qp(n, tx, i, tr(M("sender"), i), depth, max_inline);
  open_side(n, env, rx[0], lab::responder_device(env, o.common), buffer, cqe, o.common);
  for (std::uint32_t i = 0; i < qps; ++i) add_qp(n, rx, i, tr(M("receiver"), i), depth, max_inline);

  n.step(tr(M("step.connect")));
  lab::ConnectSpec cs;
  cs.mtu = o.mtu;
  for (std::uint32_t i = 0; i < qps; ++i) {
    tx[i].first_psn = lab::kRequesterFirstPsn + 0x100 * i;
    rx[i].first_psn = 0x800000 + 0x100 * i;
    lab::connect_pair(n, tx[i], rx[i], cs, o.common, i == 0);
  }
  Bench bench{env, tx, rx, slot, max_inline, 2 * depth};
  n.result()["max_inline_data"] = max_inline;
  n.result()["mtu"] = o.mtu;
  n.result()["model"] = env.simulated ? nlohmann::json{{"doorbell_ns", kDoorbellNs},
                                                       {"wqe_fetch_ns", kWqeFetchNs},
                                                       {"payload_fetch_ns", kPayloadFetchNs},
                                                       {"cqe_write_ns", kCqeWriteNs}}
                                      : nlohmann::json(nullptr);
  bool all_ok = true;
  BwConfig base;
  base.op = o.op == "send" ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
  base.iters = o.iters;
  base.use_inline = o.use_inline;
  base.post_list = o.post_list;
  base.qps = o.qps;
  base.depth = depth;
  base.cq_mod = o.cq_mod;

  if (do_bw) {
    n.step(tr(M("step.bw"), op_name(base.op)));
    n.say(tr(M("why.bw"), depth, o.cq_mod, o.post_list, o.qps));
    n.block(bw_header());
    nlohmann::json rows = nlohmann::json::array();
    for (const std::uint32_t s : o.sizes) {
      BwConfig c = base;
      c.size = s;
      const BwResult r = run_bw(bench, c);
      all_ok = all_ok && r.ok;
      n.block(bw_row(s, r.messages, r));
      rows.push_back(bw_json(c, r, max_inline));
    }
    n.result()["bw"] = rows;
  }

  if (do_knobs) {
    const std::uint32_t s = *std::min_element(o.sizes.begin(), o.sizes.end());
    n.step(tr(M("step.knobs"), s));
    n.say(tr(M("why.knobs")));
    struct Knob {
      std::string id;
      std::string what;
      BwConfig c;
    };
    std::vector<Knob> knobs;
    BwConfig c = base;
    c.size = s;
    knobs.push_back({"base", tr(M("knob.base")), c});
    BwConfig k = c;
    k.use_inline = !c.use_inline;
    knobs.push_back({"inline", tr(k.use_inline ? M("knob.inline_on") : M("knob.inline_off")), k});
    k = c;
    k.cq_mod = 1;
    knobs.push_back({"signal_all", tr(M("knob.signal_all")), k});
    k = c;
    k.post_list = std::min(kKnobPostList, depth);
    knobs.push_back({"post_list", tr(M("knob.post_list"), k.post_list), k});
    k = c;
    k.qps = kKnobQps;
    knobs.push_back({"qps", tr(M("knob.qps"), k.qps), k});
    k = c;
    k.depth = std::min(kKnobShallowDepth, depth);
    k.cq_mod = std::min(k.cq_mod, k.depth);
    k.post_list = std::min(k.post_list, k.depth);
    knobs.push_back({"shallow", tr(M("knob.shallow"), k.depth, k.cq_mod), k});
    k = c;
    k.use_inline = true;
    k.post_list = std::min(kKnobPostList, depth);
    k.qps = kKnobQps;
    knobs.push_back({"all", tr(M("knob.all"), k.post_list, k.qps), k});
    nlohmann::json rows = nlohmann::json::array();
    for (const Knob& kn : knobs) {
      const BwResult r = run_bw(bench, kn.c);
      all_ok = all_ok && r.ok;
      n.say(kn.what);
      n.block(bw_row(kn.c.size, r.messages, r));
      auto j = bw_json(kn.c, r, max_inline);
      j["knob"] = kn.id;
      rows.push_back(j);
    }
    n.say(tr(M("why.knobs_read")));
    n.result()["knobs"] = rows;
  }

  if (do_lat) {
    n.step(tr(M("step.lat")));
    n.say(tr(M("why.lat")));
    n.block(lat_header());
    nlohmann::json rows = nlohmann::json::array();
    for (const std::uint32_t s : o.sizes) {
      const LatResult r = run_lat(bench, s, o.iters, o.use_inline);
      all_ok = all_ok && r.ok;
      n.block(lat_row(s, o.iters, r));
      rows.push_back(lat_json(s, o.iters, o.use_inline && s <= max_inline, r));
    }
    if (do_knobs) {
      // The smallest size again with the inline knob turned the other way.
      const std::uint32_t s = *std::min_element(o.sizes.begin(), o.sizes.end());
      const LatResult r = run_lat(bench, s, o.iters, !o.use_inline);
      all_ok = all_ok && r.ok;
      n.say(tr(!o.use_inline ? M("knob.inline_on") : M("knob.inline_off")));
      n.block(lat_row(s, o.iters, r));
      rows.push_back(lat_json(s, o.iters, !o.use_inline && s <= max_inline, r));
    }
    n.say(tr(M("why.lat_read")));
    n.result()["lat"] = rows;
  }

  n.step(tr(M("step.verify")));
  n.check("completions", tr(M("check.completions")), all_ok);

  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--test", o.test, tr(M("opt.test")))
        ->check(lab::IsMember({"bw", "lat", "all"}))
        ->capture_default_str();
    app.add_option("--op", o.op, tr(M("opt.op")))
        ->check(lab::IsMember({"write", "send"}))
        ->capture_default_str();
    app.add_option("-s,--size", o.sizes, tr(M("opt.size")))->delimiter(',')->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1u, 1000000u))
        ->capture_default_str();
    app.add_flag("-I,--inline", o.use_inline, tr(M("opt.inline")));
    app.add_option("-l,--post-list", o.post_list, tr(M("opt.post_list")))
        ->check(lab::Range(1u, 1024u))
        ->capture_default_str();
    app.add_option("-q,--qps", o.qps, tr(M("opt.qps")))
        ->check(lab::Range(1u, 64u))
        ->capture_default_str();
    app.add_option("-t,--tx-depth", o.tx_depth, tr(M("opt.tx_depth")))
        ->check(lab::Range(1u, 4096u))
        ->capture_default_str();
    app.add_option("-Q,--cq-mod,--signal-every", o.cq_mod, tr(M("opt.cq_mod")))
        ->check(lab::Range(1u, 4096u))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab17", "lab17-perf", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
