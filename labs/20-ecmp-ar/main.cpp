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
//
// On InfiniBand (--link-layer ib) the switches are IB switches: they forward
// by the packet's DLID through a linear forwarding table (one port per LID;
// among equal-cost ports this subnet manager's table takes port DLID mod
// their number, Fabric::lft_port), and there is no UDP to hash. The LIDs are
// the joining order: sim0..sim3 are LIDs 1..4, so A's packets (DLID 3) and
// B's (DLID 4) take leaf0's uplinks 1 and 0: no collision, and none to find.
//   - static (the ecmp run's place): the table's outcome, read from leaf0
//     and checked on its counters; each flow alone on its uplink;
//   - ar, ar-nic-off: as on RoCE, with IB's frames;
//   - qps: every QP of a connection goes to the same DLID (LMC 0: one LID
//     per port), so all of a connection's packets take one uplink, whatever
//     Q: more QPs do not spread load on a static IB table.
#include <arpa/inet.h>
#include <fmt/format.h>

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
// On InfiniBand the QPs' address vectors are local (no GRH, so no traffic
// class) with SL 0: every packet travels on VL 0, the switches' class 0.
constexpr std::uint8_t kIbVl = 0;
// What every packet of a link layer carries besides its payload and its
// extension headers, and what a link serialises on top of it.
struct Frames {
  std::uint64_t headers = 0;
  std::uint64_t wire = 0;
};
// RoCEv2 over IPv4: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; 20 more
// bytes per frame on the wire (preamble, delimiter, gap).
constexpr Frames kRoceFrames{14 + 20 + 8 + 12 + 4, sim::kEthernetWireOverhead};
// InfiniBand with a local address vector: LRH 8, BTH 12, ICRC 4, VCRC 2; 2
// more bytes per packet on the wire (the start and end delimiters,
// sim::kIbWireOverhead).
constexpr Frames kIbFrames{8 + 12 + 4 + 2, sim::kIbWireOverhead};
// Either way a WRITE's First/Only adds a RETH (16), its Last/Only with
// immediate an ImmDt (4), an ACK an AETH (4).
constexpr std::uint64_t kReth = 16;
constexpr std::uint64_t kImm = 4;
constexpr std::uint64_t kAeth = 4;
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

// Static is the ecmp run's place on InfiniBand: the forwarding table's path.
enum class Kind : std::uint8_t { Ecmp, Static, Ar, ArNicOff, Qps };

std::string run_id(Kind k, std::uint32_t q) {
  switch (k) {
    case Kind::Ecmp: return "ecmp";
    case Kind::Static: return "static";
    case Kind::Ar: return "ar";
    case Kind::ArNicOff: return "ar-nic-off";
    case Kind::Qps: return fmt::format("qps-{}", q);
  }
  return {};
}

// ns a frame of `bytes` takes on a link of `bps`, as the simulator counts it
// (truncated to the ns, frame by frame).
std::int64_t ser_ns(std::uint64_t bytes, double bps, const Frames& fr) {
  return static_cast<std::int64_t>(static_cast<double>((bytes + fr.wire) * 8) * 1e9 / bps);
}

// The frames of one WRITE with immediate of `len` bytes (len > 0).
std::vector<std::uint64_t> write_frames(std::uint64_t len, const Frames& fr) {
  std::vector<std::uint64_t> f;
  const std::uint64_t packets = (len + kMtu - 1) / kMtu;
  for (std::uint64_t p = 0, left = len; p < packets; ++p) {
    const std::uint64_t payload = std::min<std::uint64_t>(left, kMtu);
    left -= payload;
    f.push_back(fr.headers + (p == 0 ? kReth : 0) + (p + 1 == packets ? kImm : 0) +
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

QpLoad qp_load(std::uint32_t chunk, std::uint32_t messages, double bps, const Frames& fr) {
  QpLoad l;
  if (chunk == 0) return l;
  const std::vector<std::uint64_t> f = write_frames(chunk, fr);
  for (const std::uint64_t b : f) {
    l.packets += messages;
    l.bytes += b * messages;
    l.busy_ns += ser_ns(b, bps, fr) * messages;
  }
  l.first_ser = ser_ns(f.front(), bps, fr);
  l.last_ser = ser_ns(f.back(), bps, fr);
  return l;
}

// The last completion when a link of the path is busy for `busy_ns` from
// the moment the first frame reaches leaf0: the first frame crosses the
// host link (its serialisation and d); the busiest uplink sends for
// busy_ns; the last frame crosses the spine and leaf1 (store and forward:
// its serialisation and d on each, after d on the uplink); the ACK of the
// last packet crosses four links back.
std::int64_t completion_ns(std::int64_t first_ser, std::int64_t busy_ns, std::int64_t last_ser,
                           double bps, const Frames& fr) {
  const std::int64_t ack = ser_ns(fr.headers + kAeth, bps, fr);
  return first_ser + kDelayNs + busy_ns + kDelayNs + 2 * (last_ser + kDelayNs) +
         4 * (ack + kDelayNs);
}

// InfiniBand under static routing: the most credit, in 64-byte blocks, a
// sender needs at once, when it sends its connection's frames back to back
// (its NIC serving its Q QPs one after another, each QP's messages in turn).
// A packet takes its blocks when it starts; they are freed when its last
// byte has left the next switch and heard of one propagation delay later.
// It crosses its link (its time, d, at most kJitterNs on a host link),
// starts on the next link at once or behind the one flow that link carries
// (which the jitter can make it wait for, by at most kJitterNs plus the
// difference between two packets' times), leaves (its time again) and the
// credit comes back (d): a loop of at most 2 d + 2 t + kJitterNs + (t_max -
// t_min). At each start the blocks of the packets started within their
// loops are out, and the port needs a whole path-MTU packet's blocks for the
// next (a host's port waits for those, fabric.hpp). The same holds on every
// later hop without the jitter. Under the blocks a port advertises per VL,
// no port ever waits for credits.
struct CreditNeed {
  std::int64_t loop_ns = 0;  // the longest loop
  std::uint64_t blocks = 0;
};

CreditNeed credit_need(std::uint32_t size, std::uint32_t messages, std::uint32_t q, double bps,
                       const Frames& fr) {
  const auto blocks_of = [](std::uint64_t bytes) {
    return (bytes + sim::kIbCreditBlock - 1) / sim::kIbCreditBlock;
  };
  std::vector<std::uint64_t> frames;
  for (std::uint32_t i = 0; i < q; ++i) {
    const std::uint32_t chunk = chunk_of(size, q, i);
    if (chunk == 0) continue;
    const std::vector<std::uint64_t> f = write_frames(chunk, fr);
    for (std::uint32_t m = 0; m < messages; ++m) frames.insert(frames.end(), f.begin(), f.end());
  }
  std::vector<std::int64_t> start(frames.size()), ser(frames.size());
  std::int64_t t = 0, lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
  for (std::size_t k = 0; k < frames.size(); ++k) {
    ser[k] = ser_ns(frames[k], bps, fr);
    start[k] = t;
    t += ser[k];
    lo = std::min(lo, ser[k]);
    hi = std::max(hi, ser[k]);
  }
  CreditNeed c;
  const std::uint64_t next = blocks_of(fr.headers + kReth + kImm + kMtu);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    std::uint64_t out = 0;
    for (std::size_t i = k; i-- > 0;) {
      if (start[i] + 2 * kDelayNs + 2 * hi + kJitterNs + (hi - lo) <= start[k]) break;
      if (start[i] + 2 * kDelayNs + 2 * ser[i] + kJitterNs + (hi - lo) > start[k])
        out += blocks_of(frames[i]);
    }
    c.blocks = std::max(c.blocks, out + next);
  }
  c.loop_ns = 2 * kDelayNs + 2 * hi + kJitterNs + (hi - lo);
  return c;
}

// The derivations of the chapter, from the knobs alone.
struct Derived {
  bool ib = false;  // --link-layer ib
  Frames fr;        // that link layer's frames
  double rate_bps = 0;
  std::uint64_t flow_bytes = 0;       // payload one connection WRITEs
  QpLoad flow;                        // one connection on one QP
  std::int64_t alone_ns = 0;          // one flow alone on its path
  std::int64_t collision_ns = 0;      // two flows through one uplink
  double alone_gbps = 0;              // flow bits / alone_ns
  double collision_gbps = 0;          // flow bits / collision_ns, each flow
  double collision_max_gbps = 0;      // each flow at most: flow bits / (T_c - one frame)
  double payload_gbps = 0;            // a full link's payload rate, middle frames
  std::uint64_t queue_cap_bytes = 0;  // (buffer + largest frame) / 2; RoCE only
  std::uint32_t vl_blocks = 0;        // IB: what a switch port advertises per VL
  CreditNeed credit;                  // IB: one connection on one QP (credit_need)
};

// On InfiniBand the same derivations hold with IB's frames: a link still
// serialises every frame at R, a switch still stores and forwards, and
// credit-based flow control only holds a sender back where a queue would
// otherwise grow past a port's buffer (nothing is dropped for it).
Derived derive(const Options& o) {
  Derived d;
  d.ib = o.common.link_layer == "ib";
  d.fr = d.ib ? kIbFrames : kRoceFrames;
  const Frames& fr = d.fr;
  d.rate_bps = o.rate_gbps * 1e9;
  d.flow_bytes = std::uint64_t{o.size} * o.messages;
  d.flow = qp_load(o.size, o.messages, d.rate_bps, fr);
  d.alone_ns = completion_ns(d.flow.first_ser, d.flow.busy_ns, d.flow.last_ser, d.rate_bps, fr);
  d.collision_ns =
      completion_ns(d.flow.first_ser, 2 * d.flow.busy_ns, d.flow.last_ser, d.rate_bps, fr);
  const auto bits = static_cast<double>(d.flow_bytes * 8);
  d.alone_gbps = bits / static_cast<double>(d.alone_ns);
  d.collision_gbps = bits / static_cast<double>(d.collision_ns);
  // The two flows' frames alternate in the shared queue: the flow that
  // finishes first has its last frame at most one largest frame earlier.
  const std::int64_t largest = ser_ns(fr.headers + kReth + kImm + kMtu, d.rate_bps, fr);
  d.collision_max_gbps = bits / static_cast<double>(d.collision_ns - largest);
  d.payload_gbps = o.rate_gbps * kMtu / static_cast<double>(fr.headers + kMtu + fr.wire);
  d.queue_cap_bytes = (kBufferBytes + fr.headers + kReth + kImm + kMtu) / 2;
  d.vl_blocks = sim::kIbDefaultVlBufferBlocks;
  if (d.ib) d.credit = credit_need(o.size, o.messages, 1, d.rate_bps, fr);
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
                            double bps, const Frames& fr) {
  Expectation e;
  double binom = 1;  // C(n, k)
  const double all = std::ldexp(1.0, static_cast<int>(n));
  for (std::uint32_t k = 0; k <= n; ++k) {
    const std::uint32_t m = std::max({k, n - k, q});
    const std::int64_t t = completion_ns(qp.first_ser, m * qp.busy_ns, qp.last_ser, bps, fr);
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
  std::vector<std::size_t> spine;    // where leaf0's hash (IB: table) sends each QP
  std::vector<std::uint16_t> sport;  // RoCE: each QP's UDP source port
  std::size_t sends = 0, recvs = 0;  // completions seen
  sim::Time last = 0;                // the last send completion, from the start
  bool ok = true;                    // every completion as expected
};

struct SpineLoad {
  std::uint32_t qps = 0;  // QPs leaf0's hash (IB: table) sends there
  std::uint64_t predicted_packets = 0;
  std::uint64_t predicted_bytes = 0;
  std::int64_t predicted_busy_ns = 0;
  std::uint64_t packets = 0;  // leaf0's uplink, traffic class 3 (IB: VL 0), measured
  std::uint64_t bytes = 0;
  std::uint64_t max_queue_bytes = 0;
  double utilisation = 0;  // of the run's time
};

struct RunResult {
  Kind kind = Kind::Ecmp;
  std::uint32_t q = 1;
  bool complete = true;  // every WRITE completed well, every byte in place
  std::uint32_t candidates = 0;
  bool shared = false;  // IB: leaf0's table sends A and B up one uplink
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
  std::int64_t xmit_wait_ns = 0;  // IB: waiting for credits, all ports
  CreditNeed credit;              // IB, static routing: derived
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
  // Routing::Ecmp on an IB switch is its linear forwarding table.
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
  // spine p (topology.hpp numbers a leaf's uplinks first). On InfiniBand
  // the forwarding table's entry for the receiver's LID, whatever the QP.
  const auto spine_of = [&](std::size_t c, std::uint16_t sport) {
    if (d.ib) return f->lft_port(leaf0, conns[c].rx.lid).value_or(0);
    return f->ecmp_port(leaf0, ip(conns[c].tx), ip(conns[c].rx), sport).value_or(0);
  };
  const auto add_pair = [&](std::size_t c, lab::Narrator& w) {
    Conn& k = conns[c];
    k.txq.emplace_back().role = k.tx.role;
    lab::add_qp(w, k.tx, k.txq.back(), depth, depth);
    k.rxq.emplace_back().role = k.rx.role;
    lab::add_qp(w, k.rx, k.rxq.back(), depth, depth);
    const std::uint16_t sport =
        d.ib ? 0 : wire::udp_source_port(k.txq.back().qp->qpn(), k.rxq.back().qp->qpn());
    k.sport.push_back(sport);
    k.spine.push_back(spine_of(c, sport));
  };

  RunResult r;
  r.kind = kind;
  r.q = q;
  if (kind == Kind::Qps) {
    say.step(tr(d.ib ? M("step.qps_ib") : M("step.qps"), q));
    for (std::size_t c = 0; c < 2; ++c)
      for (std::uint32_t i = 0; i < q; ++i) add_pair(c, c == 0 && i == 0 ? say : quiet);
    if (d.ib)
      say.say(tr(M("why.qps_ib"), q, conns[0].rx.lid, conns[0].spine[0], conns[1].rx.lid,
                 conns[1].spine[0]));
    else
      say.say(tr(M("why.qps"), q));
  } else if (d.ib) {
    // InfiniBand: nothing to search. One QP pair per connection, and what
    // leaf0's table does with their receivers' LIDs.
    say.step(tr(M("step.table")));
    add_pair(0, say);
    add_pair(1, say);
    say.say(tr(M("why.table")));
    for (std::size_t c = 0; c < 2; ++c)
      say.block(
          tr(M("lft_row"), conns[c].rx.lid, dev[c + 2], c == 0 ? "A" : "B", conns[c].spine[0]));
    r.shared = conns[0].spine[0] == conns[1].spine[0];
    say.say(tr(r.shared ? M("why.lft_shared") : M("why.lft_apart"), conns[0].rx.lid,
               conns[0].spine[0], conns[1].rx.lid, conns[1].spine[0]));
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
  // (On InfiniBand the address vector is local: no GRH, no traffic class.)
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
  say.say(tr(d.ib ? M("why.connect_ib") : M("why.connect")));

  n.step(tr(narrate_setup ? M("step.run") : M("step.again"), run_id(kind, q)));
  switch (kind) {
    case Kind::Ecmp: n.say(tr(M("why.ecmp"))); break;
    case Kind::Static: n.say(tr(M("why.static"), conns[0].spine[0], conns[1].spine[0])); break;
    case Kind::Ar: n.say(tr(d.ib ? M("why.ar_ib") : M("why.ar"))); break;
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
      const QpLoad l = qp_load(k.chunk[i], o.messages, d.rate_bps, d.fr);
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
      if (d.ib)
        r.qp_json.push_back({{"connection", c == 0 ? "A" : "B"},
                             {"qp_num", k.txq[i].qp->qpn()},
                             {"peer_qp_num", k.rxq[i].qp->qpn()},
                             {"dlid", k.rx.lid},
                             {"lft_spine", k.spine[i]},
                             {"chunk_bytes", k.chunk[i]}});
      else
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
    const std::size_t tc = d.ib ? kIbVl : kRoceTc;
    sl.packets = st.tc[tc].tx_packets;
    sl.bytes = st.tc[tc].tx_bytes;
    sl.max_queue_bytes = st.tc[tc].max_queue_bytes;
    sl.utilisation = static_cast<double>((sl.bytes + d.fr.wire * sl.packets) * 8) /
                     (static_cast<double>(r.completion_ns) * d.rate_bps / 1e9);
    r.max_qps = std::max(r.max_qps, sl.qps);
    // Under ECMP the busiest uplink carries its QPs' frames; adaptive
    // routing spreads them, and only the host links are bound to a flow.
    if (!adaptive) busiest = std::max(busiest, sl.predicted_busy_ns);
  }
  r.bound_ns = completion_ns(first_ser, busiest, last_ser, d.rate_bps, d.fr);
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
  r.derived_ns = completion_ns(first_ser, serial, last_ser, d.rate_bps, d.fr);
  r.derived_gbps = 2 * bits / static_cast<double>(r.derived_ns);
  if (d.ib && !adaptive) r.credit = credit_need(o.size, o.messages, q, d.rate_bps, d.fr);
  // Random hashing is ECMP's; an IB table has no chance in it.
  if (kind == Kind::Qps && !d.ib)
    r.random =
        balls_into_bins(2 * q, q, qp_load(chunk_of(o.size, q, 0), o.messages, d.rate_bps, d.fr),
                        2 * bits, d.rate_bps, d.fr);
  for (const sim::SwitchId sw : simb->topology().switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p)
      for (const auto& tq : f->switch_port_stats(sw, p).tc) r.drops += tq.dropped;
  // InfiniBand: the time any port, a switch's or a host's, had a packet for
  // VL 0 and too few credits for it (PortXmitWait).
  if (d.ib) {
    for (const sim::SwitchId sw : simb->topology().switches)
      for (std::size_t p = 0; p < f->switch_ports(sw); ++p)
        r.xmit_wait_ns += f->switch_port_stats(sw, p).xmit_wait_ns[kIbVl];
    for (const Conn& k : conns)
      for (const lab::Endpoint* e : {&k.tx, &k.rx})
        r.xmit_wait_ns +=
            f->host_port_stats(*simb->device(e->ctx->info().name)).xmit_wait_ns[kIbVl];
  }
  return r;
}

std::string table(const RunResult& r, const Derived& d) {
  std::string t;
  const auto row = [&](const std::string& name, const std::string& value) {
    t += fmt::format(" {:<34} {}\n", name, value);
  };
  // Two flows on one uplink: the ECMP collision, or an IB table that sends
  // both receivers' LIDs up one uplink.
  const bool one_uplink = r.kind == Kind::Ecmp || (r.kind == Kind::Static && r.shared);
  const double expect = one_uplink ? d.collision_gbps : d.alone_gbps;
  row(tr(M("row.goodput")), tr(M("val.goodput"), r.conn_gbps[0], r.conn_gbps[1], expect));
  row(tr(M("row.completion")), tr(M("val.completion"), lab::to_us(r.completion_ns),
                                  lab::to_us(one_uplink ? d.collision_ns : d.alone_ns)));
  for (std::size_t s = 0; s < kSpines; ++s) {
    const SpineLoad& sl = r.spines[s];
    row(tr(M("row.spine"), s), tr(M("val.spine"), sl.packets, static_cast<double>(sl.bytes) / 1e6,
                                  100 * sl.utilisation, sl.max_queue_bytes));
  }
  row(tr(M("row.drops")), fmt::format("{}", r.drops));
  if (d.ib) row(tr(M("row.xmit_wait")), tr(M("val.xmit_wait"), r.xmit_wait_ns));
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

// On InfiniBand: no hash, so no random column; the table's outcome and
// what the runs measured.
std::string qps_table_ib(const std::vector<RunResult>& rs) {
  std::string t =
      fmt::format(" {:>2}  {:^13} {:>4}   {:^15}  {:>7}  {:>7}\n", "Q", tr(M("col.qps")),
                  tr(M("col.max")), tr(M("col.packets")), "Gb/s", tr(M("col.derived")));
  for (const RunResult& r : rs)
    t += fmt::format(" {:>2}  {:>5} / {:<5} {:>4}   {:>6} / {:<6}  {:>7.2f}  {:>7.2f}\n", r.q,
                     r.spines[0].qps, r.spines[1].qps, r.max_qps, r.spines[0].packets,
                     r.spines[1].packets, r.total_gbps, r.derived_gbps);
  t.pop_back();
  return t;
}

nlohmann::json run_json(const RunResult& r, bool ib) {
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
  if (r.kind != Kind::Qps && r.candidates > 0) j["candidates"] = r.candidates;
  if (r.kind == Kind::Static) j["shared_uplink"] = r.shared;
  if (ib) j["xmit_wait_ns"] = r.xmit_wait_ns;
  if (r.kind == Kind::Qps && r.random.throughput_gbps > 0) {
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
  if (r.kind == Kind::Ecmp || r.kind == Kind::Static || r.kind == Kind::Qps) {
    // ECMP: every packet of a QP takes the uplink its hash names. IB: every
    // packet the uplink the table gives its DLID, the same for all the QPs
    // of a connection.
    bool same = true;
    for (const SpineLoad& s : r.spines)
      same = same && s.packets == s.predicted_packets && s.bytes == s.predicted_bytes;
    const std::string split = fmt::format("{} / {}", r.spines[0].packets, r.spines[1].packets);
    if (!d.ib)
      n.check(id + ".hash", tr(M("check.hash")), same, split);
    else
      n.check(id + ".table", tr(r.kind == Kind::Qps ? M("check.one_uplink") : M("check.table")),
              same, split);
    if (d.ib) {
      n.check(id + ".no_drops", tr(M("check.no_drops_ib")), r.drops == 0,
              fmt::format("{}", r.drops));
      // run_lab refused the knobs under which the credits could run out.
      if (!r.shared)
        n.check(id + ".no_wait",
                tr(M("check.no_wait"), lab::to_us(r.credit.loop_ns), r.credit.blocks, d.vl_blocks),
                r.xmit_wait_ns == 0, fmt::format("{} ns", r.xmit_wait_ns));
    } else
      n.check(id + ".no_drops", tr(M("check.no_drops"), d.queue_cap_bytes), r.drops == 0,
              fmt::format("{}", r.drops));
    // One QP per connection: the busiest uplink idles only when no frame is
    // queued for it, and leaf1's ports to the receivers carry one flow each
    // at no more than R: the derivation is exact but for the jitter of the
    // four host-link crossings (the first frame, the last, the last ACK
    // twice). With more QPs, an uplink draining its queue while the other
    // sends to the same receiver can congest leaf1's port to it, which the
    // derivation leaves out: only its floor holds (chapter 28). On an IB
    // table all of a receiver's packets take one path, whatever Q: leaf1's
    // port to it is fed by one uplink at most R, and the bound holds for
    // every Q.
    if (r.q == 1 || d.ib)
      n.check(id + ".tight", tr(M("check.tight"), lab::to_us(r.derived_ns + 4 * kJitterNs)),
              r.completion_ns <= r.derived_ns + 4 * kJitterNs,
              fmt::format("{} ns", r.completion_ns));
  }
  if (r.kind == Kind::Ecmp || (r.kind == Kind::Static && r.shared)) {
    n.check(id + ".half", tr(M("check.half"), d.collision_max_gbps),
            r.conn_gbps[0] <= d.collision_max_gbps && r.conn_gbps[1] <= d.collision_max_gbps,
            fmt::format("{:.2f} / {:.2f}", r.conn_gbps[0], r.conn_gbps[1]));
  }
  if (r.kind == Kind::Ar) {
    n.check("ar.both_spines", tr(M("check.both_spines")),
            r.spines[0].packets > 0 && r.spines[1].packets > 0,
            fmt::format("{} / {}", r.spines[0].packets, r.spines[1].packets));
    n.check(
        "ar.beats_collision",
        tr(d.ib ? M("check.beats_shared") : M("check.beats_collision"), lab::to_us(d.collision_ns)),
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
  if (o.common.backend == "verbs") throw verbs::UsageError(tr(M("needs_sim")));
  const bool ib = o.common.link_layer == "ib";
  // The IB frames derived here have no GRH: a global address vector (-g)
  // would add 40 bytes to every packet.
  if (ib && o.common.gid_index) throw verbs::UsageError(tr(M("ib_global")));
  // On InfiniBand nothing is dropped for lack of buffer; the same limit
  // keeps the runs comparable with RoCE's.
  if (o.size < 1 || std::uint64_t{o.size} * o.messages > kMaxFlowBytes)
    throw verbs::UsageError(
        tr(ib ? M("bad_size_ib") : M("bad_size"), o.size, o.messages, kMaxFlowBytes));
  Options so = o;
  so.common.backend = "sim";
  const Derived d = derive(so);
  // InfiniBand: the static-routed runs are derived with no port waiting
  // for credits; refuse the knobs under which the credits could run out.
  if (ib) {
    std::vector<std::uint32_t> static_qs;
    if (o.run == "all" || o.run == "ecmp" || o.run == "static") static_qs.push_back(1);
    if (o.run == "all" || o.run == "qps") {
      if (o.qps != 0)
        static_qs.push_back(o.qps);
      else
        static_qs.insert(static_qs.end(), {1, 2, 4, 8});
    }
    for (const std::uint32_t q : static_qs) {
      const CreditNeed c = credit_need(o.size, o.messages, q, d.rate_bps, d.fr);
      if (c.blocks > d.vl_blocks)
        throw verbs::UsageError(
            tr(M("ib_credits"), o.rate_gbps, q, lab::to_us(c.loop_ns), c.blocks, d.vl_blocks));
    }
  }
  lab::CommonOptions qo = so.common;
  qo.quiet = true;
  qo.step = false;
  qo.json = false;
  lab::Narrator quiet(qo, "lab20");

  n.step(tr(M("step.backend")));
  n.result()["backend"] = "sim";
  n.say(tr(M("why.fabric"), o.rate_gbps));
  n.step(tr(M("step.derive")));
  if (ib)
    n.say(tr(M("why.derive_ib"), o.messages, o.size, d.flow.packets, lab::to_us(d.flow.busy_ns),
             lab::to_us(d.alone_ns), d.alone_gbps, lab::to_us(d.collision_ns), d.collision_gbps,
             d.payload_gbps, d.fr.headers + kMtu + d.fr.wire, lab::to_us(d.credit.loop_ns),
             d.credit.blocks, d.vl_blocks));
  else
    n.say(tr(M("why.derive"), o.messages, o.size, d.flow.packets, lab::to_us(d.flow.busy_ns),
             lab::to_us(d.alone_ns), d.alone_gbps, lab::to_us(d.collision_ns), d.collision_gbps,
             d.payload_gbps, d.queue_cap_bytes));
  n.result()["config"] = {{"size", o.size},
                          {"messages", o.messages},
                          {"rate_gbps", o.rate_gbps},
                          {"link_layer", o.common.link_layer},
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
                           {"payload_gbps", d.payload_gbps}};
  // The frames of a 4096-byte WRITE packet (First, Middle, Last with
  // immediate) and of an ACK, as the switches count them, and what a link
  // adds to each.
  n.result()["derived"]["frame_bytes"] = {{"first", d.fr.headers + kReth + kMtu},
                                          {"middle", d.fr.headers + kMtu},
                                          {"last", d.fr.headers + kImm + kMtu},
                                          {"ack", d.fr.headers + kAeth},
                                          {"wire_overhead", d.fr.wire}};
  // A lossy queue's share of the buffer: Ethernet's; IB drops nothing for it,
  // and its credits must cover what a sender has in flight.
  if (!ib) n.result()["derived"]["queue_cap_bytes"] = d.queue_cap_bytes;
  if (ib)
    n.result()["derived"]["credits"] = {
        {"loop_ns", d.credit.loop_ns}, {"blocks", d.credit.blocks}, {"vl_blocks", d.vl_blocks}};

  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::string> captures;
  bool first = true;
  const auto one = [&](Kind k, std::uint32_t q) {
    RunResult r = run_once(n, quiet, so, d, k, q, first);
    first = false;
    runs.push_back(run_json(r, ib));
    captures.push_back(capture_of(o, run_id(k, q)));
    return r;
  };
  // "ecmp" and "static" name the same run, static routing: ECMP's hash on
  // RoCE, the forwarding table on InfiniBand.
  if (o.run == "all" || o.run == "ecmp" || o.run == "static") {
    const RunResult r = one(ib ? Kind::Static : Kind::Ecmp, 1);
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
    n.say(tr(ib ? M("why.qps_table_ib") : M("why.qps_table")));
    bool all = true;
    for (const RunResult& r : rs) all = all && r.complete;
    if (all) n.block(ib ? qps_table_ib(rs) : qps_table(rs));
    for (const RunResult& r : rs) check_run(n, d, r);
  }
  n.result()["runs"] = runs;
  n.result()["captures"] = captures;

  n.step(tr(M("step.report")));
  n.say(tr(M("why.report")));
  for (const std::string& c : captures)
    if (c.find("-qps-") == std::string::npos)
      n.block(fmt::format("rdmapcap report {} -o {}.html", c, c.substr(0, c.rfind(".pcap"))));
  if (ib)
    lab::suggest(n, {tr(M("try.ib_1")), tr(M("try.ib_2")), tr(M("try.3")), tr(M("try.4"))});
  else
    lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))->capture_default_str();
    app.add_option("--messages", o.messages, tr(M("opt.messages")))
        ->check(lab::Range(1u, 64u))
        ->capture_default_str();
    app.add_option("--rate", o.rate_gbps, tr(M("opt.rate")))
        ->check(lab::Range(1.0, 400.0))
        ->capture_default_str();
    app.add_option("--qps-per-conn", o.qps, tr(M("opt.qps")))->check(lab::Range(1u, 16u));
    app.add_option("--run", o.run, tr(M("opt.run")))
        ->check(lab::IsMember({"ecmp", "static", "ar", "qps", "all"}))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab20", "lab20-ecmp-ar", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
