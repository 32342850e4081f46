// Lab 20: ECMP and adaptive routing on a leaf-spine — an ECMP collision,
// the same flows under adaptive routing, and NCCL's several QPs per
// connection spreading over the spines.
//
// Read this file next to docs/en/28-lab20-ecmp-ar.md. The fabric is a
// leaf-spine of 2 leaves and 2 spines on the simulator (a switch needs the
// simulator): senders sim0 and sim1 on leaf0, their receivers sim2 and sim3
// on leaf1, every link at --rate. Connection A is sim0 -> sim2, connection B
// sim1 -> sim3; each WRITEs (with immediate) --messages messages of --size
// bytes. The only switch with a choice is leaf0 (which spine); a spine has one
// way down and leaf1 one port per host.
//   - ecmp: leaf0 hashes each packet's 5-tuple; the RoCEv2 UDP source port is
//     the only field that differs between the QPs of one pair of hosts. The
//     lab evaluates leaf0's hash (Fabric::ecmp_port) for candidate QPs of B
//     until one lands on A's spine: a collision. Both flows then share one
//     uplink and the other spine idles;
//   - ar: the same QPs with adaptive routing at the switches (each packet to
//     the uplink with the fewer bytes queued) and the receiving NIC's AR mode
//     (QP Options::adaptive_routing, a model): packets arrive out of order
//     and are placed right; once more with the NIC's AR mode off: the
//     responder sees sequence errors, NAKs, and the requester goes back N;
//   - qps: each connection's messages split over Q QPs (NCCL_IB_QPS_PER_CONNECTION
//     with NCCL_IB_SPLIT_DATA_ON_QPS=1), each QP its own source port: ECMP
//     spreads them, and the most-loaded spine sets the pace.
// Each run is a fresh fabric with the same seed.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/fabric_host.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/udp_port.hpp"

using namespace rdmalab;
using i18n::tr;
using lab20::M;

namespace {

// Path MTU of every QP: 4096-byte payloads, the fewest packets.
constexpr int kMtu = 4096;
// Propagation delay of every link.
constexpr sim::Time kDelayNs = 1 * sim::kMicrosecond;
// Up to this much random extra delay per frame on every host link: less
// than one frame's serialisation (a host link never reorders), enough that
// the two senders' frames do not reach leaf0 in lockstep.
constexpr sim::Time kJitterNs = 100;
// The shared buffer of each switch (the simulator's default).
constexpr std::uint64_t kBufferBytes = 16ull * 1024 * 1024;
// DSCP 26 (RoCE data, traffic class 3) as the IP traffic class byte.
constexpr std::uint8_t kRoceTclass = 26 << 2;
constexpr std::uint8_t kRoceTc = 3;
// Frame sizes over IPv4: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; a
// WRITE's First/Only adds a RETH (16), its Last/Only with immediate an
// ImmDt (4), an ACK an AETH (4); 20 more bytes per frame on the wire
// (preamble, delimiter, gap).
constexpr std::uint64_t kHeaders = 14 + 20 + 8 + 12 + 4;
constexpr std::uint64_t kReth = 16;
constexpr std::uint64_t kImm = 4;
constexpr std::uint64_t kAeth = 4;
constexpr std::uint64_t kWireOverhead = 20;
// Bytes one connection may WRITE in a run: under an ECMP collision the
// shared uplink's queue grows to about one flow's frames (two hosts at R
// into one link of R), which must stay under the dynamic threshold of a
// lossy class, (buffer + frame) / 2, about 8 MiB: 4 MiB keeps it lossless.
constexpr std::uint64_t kMaxFlowBytes = 4ull * 1024 * 1024;
// NCCL rounds each QP's share of a message up to 128 bytes
// (IB_WRITE_CHUNK_ALIGNMENT in src/transport/net_ib/p2p.cc).
constexpr std::uint32_t kChunkAlign = 128;
// How many QPs of connection B the lab tries before giving up on finding
// a collision: each lands on A's spine with probability 1/2.
constexpr int kMaxCandidates = 64;
constexpr std::size_t kSpines = 2;
// How long a run may take in virtual time before the lab gives up.
constexpr sim::Time kRunLimit = 10 * sim::kSecond;

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 1024 * 1024;
  std::uint32_t messages = 4;
  double rate_gbps = 100;
  std::uint32_t qps = 0;  // 0: the table for 1, 2, 4 and 8
  std::string run = "all";
};

enum class Kind : std::uint8_t { Ecmp, Ar, ArNicOff, Qps };

std::string run_id(Kind k, std::uint32_t q) {
  switch (k) {
    case Kind::Ecmp: return "ecmp";
    case Kind::Ar: return "ar";
    case Kind::ArNicOff: return "ar-nic-off";
    case Kind::Qps: return fmt::format("qps-{}", q);
  }
  return {};
}

// ns a frame of `bytes` takes on a link of `bps`, as the simulator counts it
// (truncated to the ns, frame by frame).
std::int64_t ser_ns(std::uint64_t bytes, double bps) {
  return static_cast<std::int64_t>(static_cast<double>((bytes + kWireOverhead) * 8) * 1e9 / bps);
}

// The frames of one WRITE with immediate of `len` bytes (len > 0).
std::vector<std::uint64_t> write_frames(std::uint64_t len) {
  std::vector<std::uint64_t> f;
  const std::uint64_t packets = (len + kMtu - 1) / kMtu;
  for (std::uint64_t p = 0, left = len; p < packets; ++p) {
    const std::uint64_t payload = std::min<std::uint64_t>(left, kMtu);
    left -= payload;
    f.push_back(kHeaders + (p == 0 ? kReth : 0) + (p + 1 == packets ? kImm : 0) +
                (payload + 3) / 4 * 4);
  }
  return f;
}

// QP i's share of a message of `size` bytes split over q QPs, as NCCL
// splits it: ceil(size / q) rounded up to 128 bytes; the last QPs may get
// less, or nothing.
std::uint32_t chunk_of(std::uint32_t size, std::uint32_t q, std::uint32_t i) {
  const std::uint64_t c =
      ((std::uint64_t{size} + q - 1) / q + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  const std::uint64_t off = c * i;
  return off >= size ? 0 : static_cast<std::uint32_t>(std::min<std::uint64_t>(c, size - off));
}

// What one QP sends in a run: `messages` WRITEs of `chunk` bytes.
struct QpLoad {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;     // frame bytes (what a switch port counts)
  std::int64_t busy_ns = 0;    // on one link of the rate
  std::int64_t first_ser = 0;  // its first frame
  std::int64_t last_ser = 0;   // its last frame
};

QpLoad qp_load(std::uint32_t chunk, std::uint32_t messages, double bps) {
  QpLoad l;
  if (chunk == 0) return l;
  const std::vector<std::uint64_t> f = write_frames(chunk);
  for (const std::uint64_t b : f) {
    l.packets += messages;
    l.bytes += b * messages;
    l.busy_ns += ser_ns(b, bps) * messages;
  }
  l.first_ser = ser_ns(f.front(), bps);
  l.last_ser = ser_ns(f.back(), bps);
  return l;
}

// The last completion when a link of the path is busy for `busy_ns` from
// the moment the first frame reaches leaf0: the first frame crosses the
// host link (its serialisation and d); the busiest uplink sends for
// busy_ns; the last frame crosses the spine and leaf1 (store and forward:
// its serialisation and d on each, after d on the uplink); the ACK of the
// last packet crosses four links back.
std::int64_t completion_ns(std::int64_t first_ser, std::int64_t busy_ns, std::int64_t last_ser,
                           double bps) {
  const std::int64_t ack = ser_ns(kHeaders + kAeth, bps);
  return first_ser + kDelayNs + busy_ns + kDelayNs + 2 * (last_ser + kDelayNs) +
         4 * (ack + kDelayNs);
}

// The derivations of the chapter, from the knobs alone.
struct Derived {
  double rate_bps = 0;
  std::uint64_t flow_bytes = 0;       // payload one connection WRITEs
  QpLoad flow;                        // one connection on one QP
  std::int64_t alone_ns = 0;          // one flow alone on its path
  std::int64_t collision_ns = 0;      // two flows through one uplink
  double alone_gbps = 0;              // flow bits / alone_ns
  double collision_gbps = 0;          // flow bits / collision_ns, each flow
  double collision_max_gbps = 0;      // each flow at most: flow bits / (T_c - one frame)
  double payload_gbps = 0;            // a full link's payload rate, middle frames
  std::uint64_t queue_cap_bytes = 0;  // (buffer + largest frame) / 2
};

Derived derive(const Options& o) {
  Derived d;
  d.rate_bps = o.rate_gbps * 1e9;
  d.flow_bytes = std::uint64_t{o.size} * o.messages;
  d.flow = qp_load(o.size, o.messages, d.rate_bps);
  d.alone_ns = completion_ns(d.flow.first_ser, d.flow.busy_ns, d.flow.last_ser, d.rate_bps);
  d.collision_ns = completion_ns(d.flow.first_ser, 2 * d.flow.busy_ns, d.flow.last_ser, d.rate_bps);
  const auto bits = static_cast<double>(d.flow_bytes * 8);
  d.alone_gbps = bits / static_cast<double>(d.alone_ns);
  d.collision_gbps = bits / static_cast<double>(d.collision_ns);
  // The two flows' frames alternate in the shared queue: the flow that
  // finishes first has its last frame at most one largest frame earlier.
  const std::int64_t largest = ser_ns(kHeaders + kReth + kImm + kMtu, d.rate_bps);
  d.collision_max_gbps = bits / static_cast<double>(d.collision_ns - largest);
  d.payload_gbps = o.rate_gbps * kMtu / static_cast<double>(kHeaders + kMtu + kWireOverhead);
  d.queue_cap_bytes = (kBufferBytes + kHeaders + kReth + kImm + kMtu) / 2;
  return d;
}

// n QPs hashed at random over two spines: the expected throughput of the
// two connections together (balls into bins), and the probability that the
// most-loaded spine has exactly n / 2 QPs. Each QP carries `qp` (the same
// share for every QP); the busiest spine, at least a host's Q QPs, sets
// the completion.
struct Expectation {
  double throughput_gbps = 0;
  double balanced = 0;
};

Expectation balls_into_bins(std::uint32_t n, std::uint32_t q, const QpLoad& qp, double bits,
                            double bps) {
  Expectation e;
  double binom = 1;  // C(n, k)
  const double all = std::ldexp(1.0, static_cast<int>(n));
  for (std::uint32_t k = 0; k <= n; ++k) {
    const std::uint32_t m = std::max({k, n - k, q});
    const std::int64_t t = completion_ns(qp.first_ser, m * qp.busy_ns, qp.last_ser, bps);
    const double p = binom / all;
    e.throughput_gbps += p * bits / static_cast<double>(t);
    if (2 * std::max(k, n - k) == n) e.balanced += p;
    binom = binom * (n - k) / (k + 1);
  }
  return e;
}

void fill(lab::Endpoint& e, std::uint32_t seed) {
  std::uint8_t* b = e.buf();
  for (std::size_t i = 0; i < e.size(); ++i)
    b[i] = static_cast<std::uint8_t>(std::size_t{seed} * 31 + i * 13 + (i >> 9));
}

// One connection: a sender host, a receiver host, and Q QPs on each.
struct Conn {
  lab::Endpoint tx, rx;
  std::deque<lab::Endpoint> txq, rxq;
  std::vector<std::uint32_t> chunk;  // each QP's share of a message
  std::vector<std::size_t> spine;    // where leaf0's hash sends each QP
  std::vector<std::uint16_t> sport;
  std::size_t sends = 0, recvs = 0;  // completions seen
  sim::Time last = 0;                // the last send completion, from the start
  bool ok = true;                    // every completion as expected
};

struct SpineLoad {
  std::uint32_t qps = 0;  // QPs leaf0's hash sends there
  std::uint64_t predicted_packets = 0;
  std::uint64_t predicted_bytes = 0;
  std::int64_t predicted_busy_ns = 0;
  std::uint64_t packets = 0;  // leaf0's uplink, traffic class 3, measured
  std::uint64_t bytes = 0;
  std::uint64_t max_queue_bytes = 0;
  double utilisation = 0;  // of the run's time
};

struct RunResult {
  Kind kind = Kind::Ecmp;
  std::uint32_t q = 1;
  bool complete = true;  // every WRITE completed well, every byte in place
  std::uint32_t candidates = 0;
  sim::Time completion_ns = 0;
  std::array<sim::Time, 2> conn_ns{};
  std::array<double, 2> conn_gbps{};
  double total_gbps = 0;
  std::array<SpineLoad, kSpines> spines{};
  std::uint32_t max_qps = 0;  // the most-loaded spine's QPs
  sim::Time bound_ns = 0;     // from the hash outcome, QPs sending side by side
  double bound_gbps = 0;
  sim::Time derived_ns = 0;  // from the hash outcome, QPs one after another
  double derived_gbps = 0;
  Expectation random;
  std::uint64_t drops = 0;
  std::uint64_t out_of_order_held = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t naks = 0;
  std::uint64_t retransmitted = 0;
  std::vector<nlohmann::json> qp_json;
};

// Posts `count` receives (no SGE: a WRITE with immediate consumes one and
// writes nothing through it).
void post_recvs(lab::Endpoint& e, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = i + 1;
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(e.qp->post_recv(&wr, &bad), "ibv_post_recv");
  }
}

void post_write_imm(lab::Endpoint& qp, lab::Endpoint& from, const lab::Endpoint& to,
                    std::uint64_t offset, std::uint32_t len, std::uint32_t imm,
                    std::uint64_t wr_id) {
  ibv_sge sge = from.sge(offset, len);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(imm);
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to.mr->addr()) + offset;
  wr.wr.rdma.rkey = to.mr->rkey();
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(qp.qp->post_send(&wr, &bad), "ibv_post_send");
}

std::string capture_of(const Options& o, const std::string& id) {
  return o.common.capture.substr(0, o.common.capture.rfind(".pcap")) + "-" + id + ".pcap";
}

// One run on a fresh fabric. `say` narrates the set-up (the real narrator
// for the first run, a quiet one after).
RunResult run_once(lab::Narrator& n, lab::Narrator& quiet, const Options& o, const Derived& d,
                   Kind kind, std::uint32_t q, bool narrate_setup) {
  lab::Narrator& say = narrate_setup ? n : quiet;
  verbs::SimBackendOptions sim;
  sim::TopologySpec spec;
  spec.kind = sim::TopologyKind::LeafSpine;
  spec.leaves = 2;
  spec.spines = kSpines;
  spec.hosts_per_leaf = 2;
  spec.host_link.rate_bps = d.rate_bps;
  spec.host_link.delay_ns = kDelayNs;
  spec.fabric_link = spec.host_link;
  spec.host_link.jitter_ns = kJitterNs;
  spec.switch_config.buffer_bytes = kBufferBytes;
  const bool adaptive = kind == Kind::Ar || kind == Kind::ArNicOff;
  spec.switch_config.routing = adaptive ? sim::Routing::Adaptive : sim::Routing::Ecmp;
  sim.topology = spec;
  // Headers only: the payloads are thousands of identical frames.
  sim.snaplen = 128;
  // At the receiving hosts' ports, in the order frames arrived: adaptive
  // routing's reordering shows in the capture.
  sim.fabric.capture_point = sim::CapturePoint::ReceiverPort;
  lab::CommonOptions co = o.common;
  co.capture = capture_of(o, run_id(kind, q));
  lab::Environment env = lab::open_environment(quiet, co, sim);
  sim::Fabric* f = env.fabric();
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  if (f == nullptr || simb == nullptr) throw verbs::UsageError(tr(M("needs_sim")));
  const sim::SwitchId leaf0 = simb->topology().switches.at(0);

  std::array<Conn, 2> conns;
  struct Teardown {
    std::array<Conn, 2>* conns;
    ~Teardown() {
      for (Conn& c : *conns) {
        for (auto& e : c.txq) e.qp.reset();
        for (auto& e : c.rxq) e.qp.reset();
      }
    }
  } teardown{&conns};

  const std::uint32_t depth = o.messages;
  const int cqe = static_cast<int>(q * o.messages * 2 + kMaxCandidates + 16);
  say.step(tr(M("step.resources")));
  say.say(tr(M("why.resources"), d.flow_bytes));
  const std::array<std::string, 4> dev{"sim0", "sim1", "sim2", "sim3"};
  for (std::size_t c = 0; c < 2; ++c) {
    Conn& k = conns[c];
    lab::Narrator& w = c == 0 ? say : quiet;
    k.tx.role = tr(M("sender"), c == 0 ? "A" : "B");
    k.rx.role = tr(M("receiver"), c == 0 ? "A" : "B");
    lab::open_host(w, env, k.tx, dev[c], d.flow_bytes, cqe, co);
    lab::open_host(w, env, k.rx, dev[c + 2], d.flow_bytes, cqe, co);
    fill(k.tx, static_cast<std::uint32_t>(c + 1));
  }
  const auto ip = [&](const lab::Endpoint& e) {
    return simb->device(e.ctx->info().name)->config().ip;
  };
  // leaf0's ECMP choice for a QP pair of connection c: its uplink p goes to
  // spine p (topology.hpp numbers a leaf's uplinks first).
  const auto spine_of = [&](std::size_t c, std::uint16_t sport) {
    return f->ecmp_port(leaf0, ip(conns[c].tx), ip(conns[c].rx), sport).value_or(0);
  };
  const auto add_pair = [&](std::size_t c, lab::Narrator& w) {
    Conn& k = conns[c];
    k.txq.emplace_back().role = k.tx.role;
    lab::add_qp(w, k.tx, k.txq.back(), depth, depth);
    k.rxq.emplace_back().role = k.rx.role;
    lab::add_qp(w, k.rx, k.rxq.back(), depth, depth);
    const std::uint16_t sport =
        wire::udp_source_port(k.txq.back().qp->qpn(), k.rxq.back().qp->qpn());
    k.sport.push_back(sport);
    k.spine.push_back(spine_of(c, sport));
  };

  RunResult r;
  r.kind = kind;
  r.q = q;
  if (kind == Kind::Qps) {
    say.step(tr(M("step.qps"), q));
    for (std::size_t c = 0; c < 2; ++c)
      for (std::uint32_t i = 0; i < q; ++i) add_pair(c, c == 0 && i == 0 ? say : quiet);
    say.say(tr(M("why.qps"), q));
  } else {
    // Connection A's QP pair as it comes; then B's candidates until leaf0's
    // hash sends one onto A's spine.
    say.step(tr(M("step.search")));
    add_pair(0, say);
    say.say(tr(M("why.search"), lab::hex(conns[0].sport[0], 4), conns[0].spine[0]));
    Conn& b = conns[1];
    for (int i = 0; i < kMaxCandidates; ++i) {
      add_pair(1, i == 0 ? say : quiet);
      ++r.candidates;
      say.block(tr(M("candidate"), r.candidates, lab::hex(b.txq.back().qp->qpn(), 6),
                   lab::hex(b.rxq.back().qp->qpn(), 6), lab::hex(b.sport.back(), 4),
                   b.spine.back()));
      if (b.spine.back() == conns[0].spine[0]) break;
    }
    if (b.spine.back() != conns[0].spine[0]) throw std::runtime_error(tr(M("no_collision")));
    // The collision is B's last candidate: keep it as B's one QP.
    while (b.txq.size() > 1) {
      b.txq.front().qp.reset();
      b.rxq.front().qp.reset();
      b.txq.pop_front();
      b.rxq.pop_front();
      b.sport.erase(b.sport.begin());
      b.spine.erase(b.spine.begin());
    }
    say.say(tr(M("why.collision"), r.candidates, b.spine[0]));
  }
  for (Conn& k : conns)
    for (std::uint32_t i = 0; i < k.txq.size(); ++i)
      k.chunk.push_back(chunk_of(o.size, static_cast<std::uint32_t>(k.txq.size()), i));

  say.step(tr(M("step.connect")));
  lab::ConnectSpec cs;
  cs.mtu = kMtu;
  cs.traffic_class = kRoceTclass;
  for (std::size_t c = 0; c < 2; ++c) {
    Conn& k = conns[c];
    for (std::size_t i = 0; i < k.txq.size(); ++i) {
      const auto slot = static_cast<std::uint32_t>(c * 64 + i);
      k.txq[i].first_psn = lab::kRequesterFirstPsn + 0x1000 * slot;
      k.rxq[i].first_psn = 0x800000 + 0x1000 * slot;
      const bool first = c == 0 && i == 0;
      lab::connect_pair(first ? say : quiet, k.txq[i], k.rxq[i], cs, co, false);
      if (kind == Kind::Ar) {
        sim::QueuePair::Options ar;
        ar.adaptive_routing = true;
        simb->sim_qp(*k.txq[i].qp)->set_options(ar);
        simb->sim_qp(*k.rxq[i].qp)->set_options(ar);
      }
      post_recvs(k.rxq[i], o.messages);
    }
  }
  say.say(tr(M("why.connect")));

  n.step(tr(narrate_setup ? M("step.run") : M("step.again"), run_id(kind, q)));
  switch (kind) {
    case Kind::Ecmp: n.say(tr(M("why.ecmp"))); break;
    case Kind::Ar: n.say(tr(M("why.ar"))); break;
    case Kind::ArNicOff: n.say(tr(M("why.ar_nic_off"))); break;
    case Kind::Qps: break;
  }
  const sim::Time t0 = f->now();
  for (std::uint32_t m = 0; m < o.messages; ++m)
    for (Conn& k : conns)
      for (std::size_t i = 0; i < k.txq.size(); ++i) {
        if (k.chunk[i] == 0) continue;
        const std::uint64_t off = std::uint64_t{m} * o.size + i * std::uint64_t{k.chunk[0]};
        post_write_imm(k.txq[i], k.tx, k.rx, off, k.chunk[i], m, m + 1);
      }
  if (kind != Kind::Qps)
    n.call(tr(M("both_senders")),
           fmt::format("ibv_post_send(qp, {} x {{RDMA_WRITE_WITH_IMM, length {}, "
                       "IBV_SEND_SIGNALED}})",
                       o.messages, o.size),
           {});

  // Expected completions; the receives must come in order per QP, each
  // with its message's immediate and its share's byte_len.
  std::array<std::size_t, 2> want_sends{};
  for (std::size_t c = 0; c < 2; ++c)
    for (const std::uint32_t ch : conns[c].chunk) want_sends[c] += ch == 0 ? 0 : o.messages;
  std::vector<std::vector<std::uint32_t>> next_imm(2);
  for (std::size_t c = 0; c < 2; ++c) next_imm[c].assign(conns[c].rxq.size(), 0);
  std::array<ibv_wc, 16> wcs{};
  f->run_until(
      [&] {
        bool all = true;
        for (std::size_t c = 0; c < 2; ++c) {
          Conn& k = conns[c];
          for (int j = 0, got = k.tx.cq->poll(wcs); j < got; ++j) {
            k.ok = k.ok && wcs[static_cast<std::size_t>(j)].status == IBV_WC_SUCCESS;
            if (++k.sends == want_sends[c]) k.last = f->now() - t0;
          }
          for (int j = 0, got = k.rx.cq->poll(wcs); j < got; ++j) {
            const ibv_wc& wc = wcs[static_cast<std::size_t>(j)];
            std::size_t i = 0;
            while (i < k.rxq.size() && k.rxq[i].qp->qpn() != wc.qp_num) ++i;
            const bool right = i < k.rxq.size() && wc.status == IBV_WC_SUCCESS &&
                               wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
                               (wc.wc_flags & IBV_WC_WITH_IMM) != 0 &&
                               ntohl(wc.imm_data) == next_imm[c][i] && wc.byte_len == k.chunk[i];
            k.ok = k.ok && right;
            if (i < k.rxq.size()) ++next_imm[c][i];
            ++k.recvs;
          }
          all = all && k.sends >= want_sends[c] && k.recvs >= want_sends[c];
        }
        return all;
      },
      t0 + kRunLimit);
  f->stop_capture();

  for (std::size_t c = 0; c < 2; ++c) {
    Conn& k = conns[c];
    r.complete = r.complete && k.ok && k.sends == want_sends[c] && k.recvs == want_sends[c] &&
                 std::memcmp(k.tx.buf(), k.rx.buf(), d.flow_bytes) == 0;
  }
  if (!r.complete) return r;
  const auto bits = static_cast<double>(d.flow_bytes * 8);
  for (std::size_t c = 0; c < 2; ++c) {
    r.conn_ns[c] = conns[c].last;
    r.conn_gbps[c] = bits / static_cast<double>(conns[c].last);
  }
  r.completion_ns = std::max(r.conn_ns[0], r.conn_ns[1]);
  r.total_gbps = 2 * bits / static_cast<double>(r.completion_ns);

  // The hash's prediction per spine, and what leaf0's uplinks counted.
  std::int64_t first_ser = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_ser = first_ser;
  std::array<std::int64_t, 2> host_busy{};
  // When each QP sends, as this simulated NIC serves its QPs: one QP's send
  // queue until it is empty, then the next (in the order they were posted
  // to), each at the host link's rate R.
  struct Burst {
    std::size_t spine = 0;
    std::int64_t start = 0;
    std::int64_t busy = 0;
  };
  std::vector<Burst> bursts;
  for (std::size_t c = 0; c < 2; ++c) {
    Conn& k = conns[c];
    for (std::size_t i = 0; i < k.txq.size(); ++i) {
      const QpLoad l = qp_load(k.chunk[i], o.messages, d.rate_bps);
      bursts.push_back({k.spine[i], host_busy[c], l.busy_ns});
      SpineLoad& s = r.spines.at(k.spine[i]);
      ++s.qps;
      s.predicted_packets += l.packets;
      s.predicted_bytes += l.bytes;
      s.predicted_busy_ns += l.busy_ns;
      host_busy[c] += l.busy_ns;
      if (l.packets > 0) {
        first_ser = std::min(first_ser, l.first_ser);
        last_ser = std::min(last_ser, l.last_ser);
      }
      const auto& ts = simb->sim_qp(*k.txq[i].qp)->stats();
      const auto& rs = simb->sim_qp(*k.rxq[i].qp)->stats();
      r.out_of_order_held += rs.out_of_order_held;
      r.out_of_sequence += rs.out_of_sequence_dropped;
      r.naks += ts.naks_received;
      r.retransmitted += ts.retransmitted_packets;
      r.qp_json.push_back({{"connection", c == 0 ? "A" : "B"},
                           {"qp_num", k.txq[i].qp->qpn()},
                           {"peer_qp_num", k.rxq[i].qp->qpn()},
                           {"udp_source_port", k.sport[i]},
                           {"ecmp_spine", k.spine[i]},
                           {"chunk_bytes", k.chunk[i]}});
    }
  }
  std::int64_t busiest = std::max(host_busy[0], host_busy[1]);
  for (std::size_t s = 0; s < kSpines; ++s) {
    SpineLoad& sl = r.spines[s];
    const sim::SwitchPortStats st = f->switch_port_stats(leaf0, s);
    sl.packets = st.tc[kRoceTc].tx_packets;
    sl.bytes = st.tc[kRoceTc].tx_bytes;
    sl.max_queue_bytes = st.tc[kRoceTc].max_queue_bytes;
    sl.utilisation = static_cast<double>((sl.bytes + kWireOverhead * sl.packets) * 8) /
                     (static_cast<double>(r.completion_ns) * d.rate_bps / 1e9);
    r.max_qps = std::max(r.max_qps, sl.qps);
    // Under ECMP the busiest uplink carries its QPs' frames; adaptive
    // routing spreads them, and only the host links are bound to a flow.
    if (!adaptive) busiest = std::max(busiest, sl.predicted_busy_ns);
  }
  r.bound_ns = completion_ns(first_ser, busiest, last_ser, d.rate_bps);
  r.bound_gbps = 2 * bits / static_cast<double>(r.bound_ns);
  // ECMP, the QPs one after another: an uplink is a queue served at R that
  // never idles while it holds a frame, so it finishes at the latest, over
  // every moment a when a burst starts on it, of a plus the work of the
  // bursts that start on it from a on (the two hosts' bursts start at the
  // same moments: their QPs carry equal shares). Adaptive routing: as the
  // bound, the host links.
  std::int64_t serial = busiest;
  if (!adaptive)
    for (const Burst& b : bursts) {
      std::int64_t work = 0;
      for (const Burst& o2 : bursts)
        if (o2.spine == b.spine && o2.start >= b.start) work += o2.busy;
      serial = std::max(serial, b.start + work);
    }
  r.derived_ns = completion_ns(first_ser, serial, last_ser, d.rate_bps);
  r.derived_gbps = 2 * bits / static_cast<double>(r.derived_ns);
  if (kind == Kind::Qps)
    r.random = balls_into_bins(2 * q, q, qp_load(chunk_of(o.size, q, 0), o.messages, d.rate_bps),
                               2 * bits, d.rate_bps);
  for (const sim::SwitchId sw : simb->topology().switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p)
      for (const auto& tq : f->switch_port_stats(sw, p).tc) r.drops += tq.dropped;
  return r;
}

std::string table(const RunResult& r, const Derived& d) {
  std::string t;
  const auto row = [&](const std::string& name, const std::string& value) {
    t += fmt::format(" {:<34} {}\n", name, value);
  };
  const double expect = r.kind == Kind::Ecmp ? d.collision_gbps : d.alone_gbps;
  row(tr(M("row.goodput")), tr(M("val.goodput"), r.conn_gbps[0], r.conn_gbps[1], expect));
  row(tr(M("row.completion")), tr(M("val.completion"), lab::to_us(r.completion_ns),
                                  lab::to_us(r.kind == Kind::Ecmp ? d.collision_ns : d.alone_ns)));
  for (std::size_t s = 0; s < kSpines; ++s) {
    const SpineLoad& sl = r.spines[s];
    row(tr(M("row.spine"), s), tr(M("val.spine"), sl.packets, static_cast<double>(sl.bytes) / 1e6,
                                  100 * sl.utilisation, sl.max_queue_bytes));
  }
  row(tr(M("row.drops")), fmt::format("{}", r.drops));
  row(tr(M("row.ooo")), tr(M("val.ooo"), r.out_of_order_held, r.out_of_sequence));
  row(tr(M("row.retx")), tr(M("val.retx"), r.retransmitted, r.naks));
  t.pop_back();
  return t;
}

std::string qps_table(const std::vector<RunResult>& rs) {
  std::string t = fmt::format(" {:>2}  {:^13} {:>4}   {:^15}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}\n",
                              "Q", tr(M("col.qps")), tr(M("col.max")), tr(M("col.packets")), "Gb/s",
                              tr(M("col.derived")), tr(M("col.bound")), tr(M("col.random")),
                              tr(M("col.balanced")));
  for (const RunResult& r : rs)
    t += fmt::format(
        " {:>2}  {:>5} / {:<5} {:>4}   {:>6} / {:<6}  {:>7.2f}  {:>7.2f}  {:>7.2f}  {:>7.2f}  "
        "{:>6.1f}%\n",
        r.q, r.spines[0].qps, r.spines[1].qps, r.max_qps, r.spines[0].packets, r.spines[1].packets,
        r.total_gbps, r.derived_gbps, r.bound_gbps, r.random.throughput_gbps,
        100 * r.random.balanced);
  t.pop_back();
  return t;
}

nlohmann::json run_json(const RunResult& r) {
  nlohmann::json spines = nlohmann::json::array();
  for (const SpineLoad& s : r.spines)
    spines.push_back({{"qps", s.qps},
                      {"predicted_packets", s.predicted_packets},
                      {"predicted_bytes", s.predicted_bytes},
                      {"packets", s.packets},
                      {"bytes", s.bytes},
                      {"max_queue_bytes", s.max_queue_bytes},
                      {"utilisation", s.utilisation}});
  nlohmann::json j{{"run", run_id(r.kind, r.q)},
                   {"qps_per_connection", r.q},
                   {"complete", r.complete},
                   {"completion_ns", r.completion_ns},
                   {"connection_ns", r.conn_ns},
                   {"connection_gbps", r.conn_gbps},
                   {"total_gbps", r.total_gbps},
                   {"spines", spines},
                   {"max_qps_per_spine", r.max_qps},
                   {"bound_ns", r.bound_ns},
                   {"bound_gbps", r.bound_gbps},
                   {"derived_ns", r.derived_ns},
                   {"derived_gbps", r.derived_gbps},
                   {"drops", r.drops},
                   {"out_of_order_held", r.out_of_order_held},
                   {"out_of_sequence", r.out_of_sequence},
                   {"naks", r.naks},
                   {"retransmitted_packets", r.retransmitted},
                   {"qps", r.qp_json}};
  if (r.kind != Kind::Qps) j["candidates"] = r.candidates;
  if (r.kind == Kind::Qps) {
    j["random_hash_gbps"] = r.random.throughput_gbps;
    j["random_hash_balanced"] = r.random.balanced;
  }
  return j;
}

void check_run(lab::Narrator& n, const Derived& d, const RunResult& r) {
  // Check ids are dotted words of [a-z0-9_]: qps_4.floor, ar_nic_off.naks.
  std::string id = run_id(r.kind, r.q);
  std::replace(id.begin(), id.end(), '-', '_');
  n.check(id + ".complete", tr(M("check.complete")), r.complete);
  if (!r.complete) return;
  // Nothing beats the busiest link: every run completes no earlier than
  // the derivation from its hash outcome (for AR: one flow alone).
  if (r.kind != Kind::ArNicOff)
    n.check(id + ".floor", tr(M("check.floor"), lab::to_us(r.derived_ns)),
            r.completion_ns >= r.derived_ns,
            fmt::format("{} ns >= {} ns", r.completion_ns, r.derived_ns));
  if (r.kind == Kind::Ecmp || r.kind == Kind::Qps) {
    // ECMP: every packet of a QP takes the uplink its hash names.
    bool same = true;
    for (const SpineLoad& s : r.spines)
      same = same && s.packets == s.predicted_packets && s.bytes == s.predicted_bytes;
    n.check(id + ".hash", tr(M("check.hash")), same,
            fmt::format("{} / {}", r.spines[0].packets, r.spines[1].packets));
    n.check(id + ".no_drops", tr(M("check.no_drops"), d.queue_cap_bytes), r.drops == 0,
            fmt::format("{}", r.drops));
    // One QP per connection: the busiest uplink idles only when no frame is
    // queued for it, and leaf1's ports to the receivers carry one flow each
    // at no more than R: the derivation is exact but for the jitter of the
    // four host-link crossings (the first frame, the last, the last ACK
    // twice). With more QPs, an uplink draining its queue while the other
    // sends to the same receiver can congest leaf1's port to it, which the
    // derivation leaves out: only its floor holds (chapter 28).
    if (r.q == 1)
      n.check(id + ".tight", tr(M("check.tight"), lab::to_us(r.derived_ns + 4 * kJitterNs)),
              r.completion_ns <= r.derived_ns + 4 * kJitterNs,
              fmt::format("{} ns", r.completion_ns));
  }
  if (r.kind == Kind::Ecmp) {
    n.check("ecmp.half", tr(M("check.half"), d.collision_max_gbps),
            r.conn_gbps[0] <= d.collision_max_gbps && r.conn_gbps[1] <= d.collision_max_gbps,
            fmt::format("{:.2f} / {:.2f}", r.conn_gbps[0], r.conn_gbps[1]));
  }
  if (r.kind == Kind::Ar) {
    n.check("ar.both_spines", tr(M("check.both_spines")),
            r.spines[0].packets > 0 && r.spines[1].packets > 0,
            fmt::format("{} / {}", r.spines[0].packets, r.spines[1].packets));
    n.check("ar.beats_collision", tr(M("check.beats_collision"), lab::to_us(d.collision_ns)),
            r.completion_ns < d.collision_ns, fmt::format("{} ns", r.completion_ns));
    n.check("ar.placed", tr(M("check.placed")), r.naks == 0 && r.retransmitted == 0,
            fmt::format("{} / {}", r.naks, r.retransmitted));
  }
  if (r.kind == Kind::ArNicOff && r.out_of_sequence > 0)
    n.check("ar_nic_off.naks", tr(M("check.naks")), r.naks > 0 && r.retransmitted > 0,
            fmt::format("{} / {}", r.naks, r.retransmitted));
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  if (o.common.link_layer != "roce") throw verbs::UsageError(tr(M("roce_only")));
  if (o.common.backend == "verbs") throw verbs::UsageError(tr(M("needs_sim")));
  if (o.size < 1 || std::uint64_t{o.size} * o.messages > kMaxFlowBytes)
    throw verbs::UsageError(tr(M("bad_size"), o.size, o.messages, kMaxFlowBytes));
  Options so = o;
  so.common.backend = "sim";
  const Derived d = derive(so);
  lab::CommonOptions qo = so.common;
  qo.quiet = true;
  qo.step = false;
  qo.json = false;
  lab::Narrator quiet(qo, "lab20");

  n.step(tr(M("step.backend")));
  n.result()["backend"] = "sim";
  n.say(tr(M("why.fabric"), o.rate_gbps));
  n.step(tr(M("step.derive")));
  n.say(tr(M("why.derive"), o.messages, o.size, d.flow.packets, lab::to_us(d.flow.busy_ns),
           lab::to_us(d.alone_ns), d.alone_gbps, lab::to_us(d.collision_ns), d.collision_gbps,
           d.payload_gbps, d.queue_cap_bytes));
  n.result()["config"] = {{"size", o.size},
                          {"messages", o.messages},
                          {"rate_gbps", o.rate_gbps},
                          {"topology", "leaf-spine:2x2x2"},
                          {"mtu", kMtu},
                          {"buffer_bytes", kBufferBytes},
                          {"chunk_alignment", kChunkAlign}};
  n.result()["derived"] = {{"flow_bytes", d.flow_bytes},
                           {"flow_packets", d.flow.packets},
                           {"flow_frame_bytes", d.flow.bytes},
                           {"flow_busy_ns", d.flow.busy_ns},
                           {"alone_ns", d.alone_ns},
                           {"collision_ns", d.collision_ns},
                           {"alone_gbps", d.alone_gbps},
                           {"collision_gbps", d.collision_gbps},
                           {"collision_max_gbps", d.collision_max_gbps},
                           {"payload_gbps", d.payload_gbps},
                           {"queue_cap_bytes", d.queue_cap_bytes}};

  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::string> captures;
  bool first = true;
  const auto one = [&](Kind k, std::uint32_t q) {
    RunResult r = run_once(n, quiet, so, d, k, q, first);
    first = false;
    runs.push_back(run_json(r));
    captures.push_back(capture_of(o, run_id(k, q)));
    return r;
  };
  if (o.run == "all" || o.run == "ecmp") {
    const RunResult r = one(Kind::Ecmp, 1);
    if (r.complete) n.block(table(r, d));
    check_run(n, d, r);
  }
  if (o.run == "all" || o.run == "ar") {
    for (const Kind k : {Kind::Ar, Kind::ArNicOff}) {
      const RunResult r = one(k, 1);
      if (r.complete) n.block(table(r, d));
      check_run(n, d, r);
    }
  }
  if (o.run == "all" || o.run == "qps") {
    std::vector<std::uint32_t> qs{1, 2, 4, 8};
    if (o.qps != 0) qs = {o.qps};
    std::vector<RunResult> rs;
    rs.reserve(qs.size());
    for (const std::uint32_t q : qs) rs.push_back(one(Kind::Qps, q));
    n.step(tr(M("step.qps_table")));
    n.say(tr(M("why.qps_table")));
    bool all = true;
    for (const RunResult& r : rs) all = all && r.complete;
    if (all) n.block(qps_table(rs));
    for (const RunResult& r : rs) check_run(n, d, r);
  }
  n.result()["runs"] = runs;
  n.result()["captures"] = captures;

  n.step(tr(M("step.report")));
  n.say(tr(M("why.report")));
  for (const std::string& c : captures)
    if (c.find("-qps-") == std::string::npos)
      n.block(fmt::format("rdmapcap report {} -o {}.html", c, c.substr(0, c.rfind(".pcap"))));
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))->capture_default_str();
    app.add_option("--messages", o.messages, tr(M("opt.messages")))
        ->check(CLI::Range(1u, 64u))
        ->capture_default_str();
    app.add_option("--rate", o.rate_gbps, tr(M("opt.rate")))
        ->check(CLI::Range(1.0, 400.0))
        ->capture_default_str();
    app.add_option("--qps-per-conn", o.qps, tr(M("opt.qps")))->check(CLI::Range(1u, 16u));
    app.add_option("--run", o.run, tr(M("opt.run")))
        ->check(CLI::IsMember({"ecmp", "ar", "qps", "all"}))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab20", "lab20-ecmp-ar", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
