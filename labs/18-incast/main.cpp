// Lab 18: incast — N senders WRITE into one receiver through a switched
// fabric, three times: lossy, with PFC, and with ECN + DCQCN.
//
// Read this file next to docs/en/26-lab18-incast.md. The fabric is a
// dumbbell on the simulator (a switch needs the simulator): the N senders,
// a victim sender and a second victim sender on the left switch; the
// receiver and the two victims' receivers on the right switch. Every host
// link runs at --rate; the link between the switches runs at (N + 2) x
// --rate, as fast as every left host together, so that it is never a
// bottleneck of its own: the one congested queue is the right switch's
// egress to the receiver, and anything that slows a victim is a pause.
//   - lossy: no PFC, no ECN: the bottleneck queue fills the shared buffer's
//     dynamic threshold and tail-drops; the requesters recover by NAK
//     (PSN sequence error) and go-back-N, or by timeout;
//   - pfc: PFC on priority 3 (DSCP 26 -> traffic class 3): no drop, pause
//     frames, and the victim (same priority, another receiver) stalls with
//     the paused link; the second victim (DSCP 0, class 0) does not;
//   - dcqcn: ECN marking at the switches and DCQCN in the NICs (the
//     reference code's parameters, scaled to --rate), PFC still on with
//     XOFF above Kmax: CNPs and the senders' rates moving toward link / N.
//     Fast recovery gives back most of every cut, so differences between
//     senders fade slowly: chapter 26 derives that 4 senders are within 10%
//     of link / N over [300 ms, 350 ms], which a long run checks.
// On InfiniBand (--link-layer ib) the one run is `credits`: IB links are
// lossless by credit-based flow control, with no PFC, ECN or DCQCN to
// configure. Nothing is dropped, the bottleneck queue is bounded by the
// credits of the one port it is fed from, and the victim on SL 3 waits in
// the left switch's queue to the link between the switches behind the
// incast: it gets one turn in N + 1, as each sender does.
// Each run is a fresh fabric with the same seed; the tables come from the
// switches' and the NICs' counters, named as the real ones.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/fabric_host.hpp"
#include "rdmalab/lab/incast.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using i18n::tr;
using lab18::M;

namespace {

// The fabric, its constants and the set-up lab 19 shares (lab/incast.hpp).
using namespace lab::incast;

struct Options {
  lab::CommonOptions common;
  std::uint32_t senders = 8;
  std::uint32_t size = 1024 * 1024;
  std::uint32_t messages = 2;
  double rate_gbps = 100;
  std::string run = "all";
  std::string dcqcn = "hpcc-dcqcn";
};

enum class Kind : std::uint8_t { Lossy, Pfc, Dcqcn, Credits };

std::string kind_id(Kind k) {
  return k == Kind::Lossy   ? "lossy"
         : k == Kind::Pfc   ? "pfc"
         : k == Kind::Dcqcn ? "dcqcn"
                            : "credits";
}

// The derivations of the chapter, from the knobs alone.
struct Derived {
  double rate_bps = 0;
  double isl_bps = 0;
  std::uint64_t packets_per_message = 0;
  std::int64_t message_ser_ns = 0;  // one message through one host link
  std::int64_t ideal_ns = 0;        // the last completion of an ideal incast
  double ideal_goodput_gbps = 0;
  double payload_gbps = 0;  // the link's rate in payload, middle frames
  std::uint64_t headroom_bytes = 0;
  std::uint64_t lossy_queue_cap = 0;     // (B + L) / 2
  std::uint64_t lossy_excess_bytes = 0;  // what the bottleneck must hold
  double victim_bound_gbps = 0;          // 2 R / N under HOL blocking
  std::int64_t victim_ideal_ns = 0;      // a victim's messages alone on the fabric
  double victim_ideal_gbps = 0;
  double fair_share_gbps = 0;  // R / N
  // The window over which chapter 26 derives every sender within 10% of
  // link / N (hpcc-dcqcn, 4 senders), from the start of the run.
  sim::Time fair_from_ns = 0;
  sim::Time fair_to_ns = 0;
  bool fair_due = false;  // the derivation covers this preset and fan-in
  sim::DcqcnParams dcqcn;
  std::uint64_t dcqcn_xoff_bytes = 0;
  // InfiniBand's credits run: the victim's rate, one turn in N + 1 of the
  // left switch's queue to the link between the switches, as each sender
  // gets: it sends what one sender sends, in the incast's time.
  double credit_victim_gbps = 0;
};

Derived derive(const Options& o) {
  Derived d;
  const bool ib = o.common.link_layer == "ib";
  const Ideal ideal = derive_ideal({o.senders, o.messages, o.size, ib}, o.rate_gbps);
  d.rate_bps = ideal.rate_bps;
  d.isl_bps = ideal.isl_bps;
  d.packets_per_message = ideal.packets_per_message;
  d.message_ser_ns = ideal.message_ser_ns;
  d.ideal_ns = ideal.ideal_ns;
  d.victim_ideal_ns = ideal.victim_ideal_ns;
  d.victim_ideal_gbps = ideal.victim_ideal_gbps;
  d.headroom_bytes = ideal.headroom_bytes;
  const std::uint64_t total = std::uint64_t{o.senders} * o.messages;
  d.ideal_goodput_gbps = static_cast<double>(total * o.size * 8) / static_cast<double>(d.ideal_ns);
  d.payload_gbps = o.rate_gbps * 4096.0 /
                   static_cast<double>(ib ? kIbHeaders + 4096 + kIbWireOverhead
                                          : kHeaders + 4096 + kWireOverhead);
  d.credit_victim_gbps =
      static_cast<double>(std::uint64_t{o.messages} * o.size * 8) / static_cast<double>(d.ideal_ns);
  d.lossy_queue_cap = (kBufferBytes + kLargestFrame) / 2;
  // N senders at R into one port of R: while they all send, the queue gains
  // (N - 1) / N of what arrives.
  d.lossy_excess_bytes = total * o.size / o.senders * (o.senders - 1);
  d.victim_bound_gbps = 2 * o.rate_gbps / o.senders;
  d.fair_share_gbps = o.rate_gbps / o.senders;
  // Chapter 26: at 4 senders, differences between senders decay with tau
  // between 42 and 127 ms and keep a spread of about 2.8% over 50 ms; by
  // 300 ms what the first cycles left (up to 30%) is down to 3%.
  d.fair_from_ns = 300 * sim::kMillisecond;
  d.fair_to_ns = 350 * sim::kMillisecond;
  d.fair_due = o.dcqcn == "hpcc-dcqcn" && o.senders == 4;
  // The presets and their sources: lib/sim/include/rdmalab/sim/dcqcn.hpp.
  d.dcqcn = o.dcqcn == "mlx5"          ? sim::mlx5()
            : o.dcqcn == "dcqcn-paper" ? sim::dcqcn_paper()
                                       : sim::hpcc_dcqcn(static_cast<std::uint64_t>(d.rate_bps));
  d.dcqcn_xoff_bytes = 2 * d.dcqcn.ecn.kmax_bytes;
  return d;
}

struct FlowResult {
  std::vector<sim::Time> done;  // each message's completion, from the start
  bool ok = true;
  [[nodiscard]] sim::Time last() const { return *std::max_element(done.begin(), done.end()); }
};

// A sender's rate rising again after cuts: the first increase event (fast
// recovery) after a Decrease, Rc = ceil((Rt + Rc) / 2).
struct Recovery {
  sim::Time at_ns = 0;         // from the start of the run
  std::uint64_t from_bps = 0;  // Rc after the last cut
  std::uint64_t to_bps = 0;    // Rc after the increase
  std::uint64_t target_bps = 0;
};

struct RunResult {
  Kind kind = Kind::Lossy;
  bool complete = true;  // every WRITE completed well, every byte in place
  sim::Time completion_ns = 0;
  double goodput_gbps = 0;
  double fct_median_us = 0;
  double fct_p99_us = 0;
  std::uint64_t drops = 0;
  std::uint64_t roce_drops = 0;
  std::uint64_t headroom_overflow = 0;
  std::uint64_t pause_frames = 0;
  std::uint64_t xon_frames = 0;
  std::int64_t paused_ns = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t np_ecn_marked = 0;
  std::uint64_t np_cnp_sent = 0;
  std::uint64_t rp_cnp_handled = 0;
  std::uint64_t max_queue_bytes = 0;
  sim::Time max_queue_at_ns = 0;  // from the start of the run
  std::uint64_t retransmitted = 0;
  std::uint64_t naks = 0;
  std::uint64_t timeouts = 0;
  // InfiniBand: PortXmitWait on VL 3, every switch port and host together,
  // and the senders' own (their mean).
  std::int64_t xmit_wait_ns = 0;
  std::int64_t sender_wait_ns = 0;
  double victim_gbps = 0;
  double other_victim_gbps = 0;
  std::vector<double> mean_rate_gbps;  // dcqcn: each sender's limiter rate
  std::uint64_t rate_samples = 0;
  std::vector<std::vector<Recovery>> recoveries;  // dcqcn: per sender, in time order
  // dcqcn: each sender's rate on its link over [fair_from_ns, fair_to_ns],
  // measured when every sender was still sending at both ends.
  bool window_measured = false;
  std::vector<double> window_gbps;
  sim::Time first_done_ns = 0;  // when the first sender completed its last message
};

// The recoveries kept per sender (a long run has one every few hundred us).
constexpr std::size_t kRecoveriesKept = 8;

// One run on a fresh fabric. `n` narrates the set-up of the first pair of
// each kind; `quiet` takes the rest.
RunResult run_once(lab::Narrator& n, lab::Narrator& quiet, const Options& o, const Derived& d,
                   Kind kind, bool narrate_setup) {
  const std::uint32_t N = o.senders;
  lab::Narrator& say = narrate_setup ? n : quiet;
  verbs::SimBackendOptions sim;
  sim::TopologySpec spec = topology(N, d.rate_bps, d.isl_bps);
  sim::SwitchConfig& sc = spec.switch_config;
  if (kind == Kind::Pfc || kind == Kind::Dcqcn) {
    sc.pfc[kRoceTc].enabled = true;
    sc.pfc[kRoceTc].xoff_bytes = kind == Kind::Pfc ? kXoffBytes : d.dcqcn_xoff_bytes;
    sc.pfc[kRoceTc].resume_offset_bytes = kResumeBytes;
    sc.pfc[kRoceTc].headroom_bytes = d.headroom_bytes;
  }
  if (kind == Kind::Dcqcn) {
    sc.ecn[kRoceTc] = sim::EcnConfig::from(d.dcqcn.ecn);
    sim.fabric.dcqcn = d.dcqcn;
  }
  sim.topology = spec;
  // Headers only: the payloads are thousands of identical frames.
  sim.snaplen = 128;
  lab::CommonOptions co = o.common;
  co.capture =
      o.common.capture.substr(0, o.common.capture.rfind(".pcap")) + "-" + kind_id(kind) + ".pcap";
  lab::Environment env = lab::open_environment(quiet, co, sim);
  sim::Fabric* f = env.fabric();
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  if (f == nullptr || simb == nullptr) throw verbs::UsageError(tr(M("needs_sim")));

  // Every host, QP and connection (lab/incast.hpp has the map).
  Hosts hosts(N);
  open_and_connect(say, quiet, env, co, {N, o.messages, o.size}, M("why.tclass"), hosts);
  auto& tx = hosts.tx;
  auto& rx = hosts.rx;
  auto& vtx = hosts.vtx;
  auto& vrx = hosts.vrx;
  auto& wtx = hosts.wtx;
  auto& wrx = hosts.wrx;

  // Where the counters are: the right switch's port to the receiver (the
  // bottleneck), every switch port's drops and pauses.
  const sim::Topology& topo = simb->topology();
  const sim::SwitchId right = topo.switches.at(1);
  std::size_t bottleneck = 0;
  for (std::size_t p = 0; p < f->switch_ports(right); ++p)
    if (f->switch_port_stats(right, p).peer == device(N + 2)) bottleneck = p;

  // Start: every sender posts its messages at once, as do the victims.
  n.step(tr(narrate_setup ? M("step.run") : M("step.again"), kind_id(kind)));
  n.say(tr(kind == Kind::Lossy     ? M("why.lossy")
           : kind == Kind::Pfc     ? M("why.pfc")
           : kind == Kind::Credits ? M("why.credits")
                                   : M("why.dcqcn"),
           kXoffBytes / 1024, d.headroom_bytes / 1024, d.dcqcn.ecn.kmin_bytes / 1000,
           d.dcqcn.ecn.kmax_bytes / 1000, d.dcqcn.ecn.pmax, d.dcqcn_xoff_bytes / 1000,
           tr(o.dcqcn == "mlx5"          ? M("preset.mlx5")
              : o.dcqcn == "dcqcn-paper" ? M("preset.dcqcn_paper")
                                         : M("preset.hpcc_dcqcn"))));
  const sim::Time t0 = f->now();
  // When the bottleneck queue peaked (the counters keep only how high).
  std::uint64_t peak = 0;
  sim::Time peak_at = 0;
  f->on_queue([&](const sim::QueueSample& q) {
    if (q.sw != right.index || q.port != bottleneck || q.tc != kRoceTc || q.queue_bytes <= peak)
      return;
    peak = q.queue_bytes;
    peak_at = q.time - t0;
  });
  for (std::uint32_t m = 0; m < o.messages; ++m) {
    for (std::uint32_t i = 0; i < N; ++i)
      lab::post_write(tx[i], rx[0], std::uint64_t{i} * o.size, o.size, m + 1);
    lab::post_write(vtx, vrx, 0, o.size, m + 1);
    lab::post_write(wtx, wrx, 0, o.size, m + 1);
  }
  n.call(tr(M("every_sender")),
         fmt::format("ibv_post_send(qp, {} x {{RDMA_WRITE, length {}, IBV_SEND_SIGNALED}})",
                     o.messages, o.size),
         {});

  std::vector<FlowResult> flows(N + 2);
  std::vector<lab::Endpoint*> senders;
  senders.reserve(N + 2);
  for (auto& e : tx) senders.push_back(&e);
  senders.push_back(&vtx);
  senders.push_back(&wtx);
  std::vector<sim::QueuePair*> sqp;
  sqp.reserve(senders.size());
  for (auto* e : senders) sqp.push_back(simb->sim_qp(*e->qp));
  RunResult r;
  r.kind = kind;
  r.mean_rate_gbps.assign(N, 0.0);
  // DCQCN: each sender's recoveries, from its reaction point's events.
  r.recoveries.assign(N, {});
  std::vector<std::optional<std::uint64_t>> cut_to(N);  // Rc after the last cut, until an increase
  if (kind == Kind::Dcqcn)
    for (std::uint32_t i = 0; i < N; ++i)
      if (sim::DcqcnRp* rp = sqp[i]->dcqcn())
        rp->set_observer([&r, &cut_to, i, t0](const sim::DcqcnSample& s) {
          using Ev = sim::DcqcnSample::Event;
          if (s.event == Ev::Decrease) {
            cut_to[i] = s.rate_bps;
          } else if ((s.event == Ev::FastRecovery || s.event == Ev::Additive ||
                      s.event == Ev::Hyper) &&
                     cut_to[i]) {
            if (r.recoveries[i].size() < kRecoveriesKept)
              r.recoveries[i].push_back({s.time - t0, *cut_to[i], s.rate_bps, s.target_bps});
            cut_to[i].reset();
          }
        });
  std::vector<double> rate_sum(N, 0.0);
  sim::Time next_sample = t0;
  // The window's two ends: each sender's packets sent, and whether every
  // sender still had a message to send.
  std::vector<std::uint64_t> window_from(N, 0);
  bool window_from_taken = false;
  bool window_to_taken = false;
  bool window_ok = false;
  const auto all_sending = [&] {
    for (std::uint32_t i = 0; i < N; ++i)
      if (flows[i].done.size() >= o.messages) return false;
    return true;
  };
  std::array<ibv_wc, 16> wcs{};
  std::size_t done = 0;
  const std::size_t want = std::size_t{N + 2} * o.messages;
  f->run_until(
      [&] {
        for (std::size_t s = 0; s < senders.size(); ++s) {
          const int k = senders[s]->cq->poll(wcs);
          for (int j = 0; j < k; ++j) {
            const ibv_wc& wc = wcs[static_cast<std::size_t>(j)];
            flows[s].ok = flows[s].ok && wc.status == IBV_WC_SUCCESS;
            flows[s].done.push_back(f->now() - t0);
            ++done;
          }
        }
        if (kind == Kind::Dcqcn && !window_from_taken && f->now() - t0 >= d.fair_from_ns) {
          window_from_taken = true;
          window_ok = all_sending();
          for (std::uint32_t i = 0; i < N; ++i) window_from[i] = sqp[i]->stats().packets_sent;
        }
        if (kind == Kind::Dcqcn && !window_to_taken && f->now() - t0 >= d.fair_to_ns) {
          window_to_taken = true;
          r.window_measured = window_ok && all_sending();
          if (r.window_measured)
            for (std::uint32_t i = 0; i < N; ++i)
              // Frames of 4154 bytes and 20 of preamble, delimiter and gap
              // (a message's First, 16 bytes more, is one frame in 256).
              r.window_gbps.push_back(
                  static_cast<double>((sqp[i]->stats().packets_sent - window_from[i]) *
                                      (kHeaders + 4096 + kWireOverhead) * 8) /
                  static_cast<double>(d.fair_to_ns - d.fair_from_ns));
        }
        // DCQCN: each sender's limiter rate while every sender is still
        // sending and has had its first CNP (the rates have left the line).
        if (kind == Kind::Dcqcn && f->now() >= next_sample) {
          next_sample = f->now() + kSampleNs;
          bool all = true;
          for (std::uint32_t i = 0; i < N; ++i)
            all = all && flows[i].done.size() < o.messages && sqp[i]->stats().rp_cnp_handled > 0 &&
                  sqp[i]->dcqcn() != nullptr;
          if (all) {
            ++r.rate_samples;
            for (std::uint32_t i = 0; i < N; ++i)
              rate_sum[i] += static_cast<double>(sqp[i]->dcqcn()->rate_bps()) / 1e9;
          }
        }
        return done == want;
      },
      t0 + kRunLimit);
  f->stop_capture();
  f->on_queue({});
  if (kind == Kind::Dcqcn)
    for (std::uint32_t i = 0; i < N; ++i)
      if (sim::DcqcnRp* rp = sqp[i]->dcqcn()) rp->set_observer({});

  // The tables' numbers.
  std::vector<sim::Time> fct;
  for (std::uint32_t i = 0; i < N; ++i) {
    r.complete = r.complete && flows[i].ok && flows[i].done.size() == o.messages;
    fct.insert(fct.end(), flows[i].done.begin(), flows[i].done.end());
    r.complete =
        r.complete && std::memcmp(rx[0].buf() + std::size_t{i} * o.size, tx[i].buf(), o.size) == 0;
  }
  for (std::size_t s = N; s < N + 2; ++s)
    r.complete = r.complete && flows[s].ok && flows[s].done.size() == o.messages;
  r.complete = r.complete && std::memcmp(vrx.buf(), vtx.buf(), o.size) == 0 &&
               std::memcmp(wrx.buf(), wtx.buf(), o.size) == 0;
  if (!r.complete) return r;
  r.completion_ns = *std::max_element(fct.begin(), fct.end());
  r.first_done_ns = flows[0].last();
  for (std::uint32_t i = 1; i < N; ++i)
    r.first_done_ns = std::min(r.first_done_ns, flows[i].last());
  r.goodput_gbps = static_cast<double>(std::uint64_t{N} * o.messages * o.size * 8) /
                   static_cast<double>(r.completion_ns);
  r.fct_median_us = lab::percentile_us(fct, 0.5);
  r.fct_p99_us = lab::percentile_us(fct, 0.99);
  const double flow_bits = static_cast<double>(std::uint64_t{o.messages} * o.size * 8);
  r.victim_gbps = flow_bits / static_cast<double>(flows[N].last());
  r.other_victim_gbps = flow_bits / static_cast<double>(flows[N + 1].last());
  for (const sim::SwitchId sw : topo.switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p) {
      const sim::SwitchPortStats st = f->switch_port_stats(sw, p);
      for (const auto& q : st.tc) {
        r.drops += q.dropped;
        r.headroom_overflow += q.headroom_overflow;
        r.ecn_marked += q.ecn_marked;
      }
      r.roce_drops += st.tc[kRoceTc].dropped;
      r.pause_frames += st.tx_pause[kRoceTc];
      r.xon_frames += st.tx_xon[kRoceTc];
      r.paused_ns += st.rx_pause_duration[kRoceTc];
    }
  for (const sim::SwitchId sw : topo.switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p)
      r.xmit_wait_ns += f->switch_port_stats(sw, p).xmit_wait_ns[kRoceTc];
  for (std::uint32_t i = 0; i < N + 5; ++i)
    if (const sim::Device* h = simb->device(device(i))) {
      const sim::HostPortStats hs = f->host_port_stats(*h);
      r.paused_ns += hs.rx_pause_duration[kRoceTc];
      r.xmit_wait_ns += hs.xmit_wait_ns[kRoceTc];
      if (i < N) r.sender_wait_ns += hs.xmit_wait_ns[kRoceTc] / static_cast<std::int64_t>(N);
    }
  r.max_queue_bytes = f->switch_port_stats(right, bottleneck).tc[kRoceTc].max_queue_bytes;
  r.max_queue_at_ns = peak_at;
  for (std::uint32_t i = 0; i < N; ++i) {
    const auto& st = sqp[i]->stats();
    r.retransmitted += st.retransmitted_packets;
    r.naks += st.naks_received;
    r.timeouts += st.timeouts;
    r.rp_cnp_handled += st.rp_cnp_handled;
    const auto& rs = simb->sim_qp(*rx[i].qp)->stats();
    r.np_cnp_sent += rs.np_cnp_sent;
    r.np_ecn_marked += rs.np_ecn_marked_roce_packets;
    if (r.rate_samples > 0) r.mean_rate_gbps[i] = rate_sum[i] / static_cast<double>(r.rate_samples);
  }
  return r;
}

// Whether every sender's rate rose again after its cuts within the run.
bool all_recovered(const RunResult& r) {
  return !r.recoveries.empty() &&
         std::all_of(r.recoveries.begin(), r.recoveries.end(),
                     [](const std::vector<Recovery>& v) { return !v.empty(); });
}

std::string table(const RunResult& r, const Derived& d) {
  std::string t;
  const auto row = [&](const std::string& name, const std::string& value) {
    t += fmt::format(" {:<36} {}\n", name, value);
  };
  row(tr(M("row.goodput")), tr(M("val.goodput"), r.goodput_gbps, d.ideal_goodput_gbps));
  row(tr(M("row.completion")),
      tr(M("val.completion"), lab::to_us(r.completion_ns), lab::to_us(d.ideal_ns)));
  row(tr(M("row.fct")), fmt::format("{:.1f} / {:.1f} µs", r.fct_median_us, r.fct_p99_us));
  const bool credits = r.kind == Kind::Credits;
  row(tr(M("row.drops")), tr(credits ? M("val.drops_vl") : M("val.drops"), r.drops, r.roce_drops));
  if (credits) {
    // No pause frames, ECN or CNPs on InfiniBand: the credits' waits.
    row(tr(M("row.xmit_wait")), fmt::format("{:.1f} µs", lab::to_us(r.xmit_wait_ns)));
    row(tr(M("row.sender_wait")), fmt::format("{:.1f} µs", lab::to_us(r.sender_wait_ns)));
  } else {
    row(tr(M("row.pauses")), fmt::format("{} / {}", r.pause_frames, r.xon_frames));
    row(tr(M("row.paused")), fmt::format("{:.1f} µs", lab::to_us(r.paused_ns)));
    row(tr(M("row.ecn")), fmt::format("{}", r.ecn_marked));
    row(tr(M("row.cnp")), fmt::format("{} / {}", r.np_cnp_sent, r.rp_cnp_handled));
  }
  row(tr(M("row.queue")), tr(M("val.queue"), r.max_queue_bytes, lab::to_us(r.max_queue_at_ns)));
  row(tr(M("row.retx")), tr(M("val.retx"), r.retransmitted, r.naks, r.timeouts));
  row(tr(credits ? M("row.victim_sl") : M("row.victim")),
      fmt::format("{:.2f} Gb/s", r.victim_gbps));
  row(tr(credits ? M("row.other_sl") : M("row.other")),
      fmt::format("{:.2f} Gb/s", r.other_victim_gbps));
  if (r.kind == Kind::Dcqcn && r.rate_samples > 0) {
    const auto [lo, hi] = std::minmax_element(r.mean_rate_gbps.begin(), r.mean_rate_gbps.end());
    double mean = 0;
    for (const double v : r.mean_rate_gbps)
      mean += v / static_cast<double>(r.mean_rate_gbps.size());
    row(tr(M("row.rates")), tr(M("val.rates"), *lo, *hi, mean, d.fair_share_gbps));
  }
  if (r.kind == Kind::Dcqcn) {
    const std::string name =
        tr(M("row.window"), lab::to_us(d.fair_from_ns) / 1000, lab::to_us(d.fair_to_ns) / 1000);
    if (r.window_measured) {
      const auto [lo, hi] = std::minmax_element(r.window_gbps.begin(), r.window_gbps.end());
      row(name, tr(M("val.window"), *lo, *hi, d.fair_share_gbps));
    } else {
      row(name, tr(M("val.window_short"), lab::to_us(r.first_done_ns) / 1000));
    }
  }
  if (r.kind == Kind::Dcqcn && all_recovered(r)) {
    // The first recovery of every sender: from, to and when (lowest .. highest).
    std::vector<double> from, to, at;
    for (const auto& v : r.recoveries) {
      from.push_back(static_cast<double>(v.front().from_bps) / 1e9);
      to.push_back(static_cast<double>(v.front().to_bps) / 1e9);
      at.push_back(lab::to_us(v.front().at_ns));
    }
    const auto span = [](const std::vector<double>& x) {
      const auto [a, b] = std::minmax_element(x.begin(), x.end());
      return std::pair{*a, *b};
    };
    const auto [f0, f1] = span(from);
    const auto [t0, t1] = span(to);
    const auto [a0, a1] = span(at);
    row(tr(M("row.recovery")), tr(M("val.recovery"), f0, f1, t0, t1, a0, a1));
    std::string seq;
    for (const Recovery& x : r.recoveries.front())
      seq += fmt::format("{}{:.2f}", seq.empty() ? "" : ", ", static_cast<double>(x.to_bps) / 1e9);
    row(tr(M("row.recoveries")), seq + " Gb/s");
  }
  t.pop_back();
  return t;
}

nlohmann::json run_json(const RunResult& r, const Derived& d) {
  nlohmann::json j{{"run", kind_id(r.kind)},
                   {"complete", r.complete},
                   {"completion_ns", r.completion_ns},
                   {"goodput_gbps", r.goodput_gbps},
                   {"fct_median_us", r.fct_median_us},
                   {"fct_p99_us", r.fct_p99_us},
                   {"drops", r.drops},
                   {"roce_drops", r.roce_drops},
                   {"headroom_overflow", r.headroom_overflow},
                   {"pause_frames", r.pause_frames},
                   {"xon_frames", r.xon_frames},
                   {"paused_ns", r.paused_ns},
                   {"ecn_marked", r.ecn_marked},
                   {"np_ecn_marked_roce_packets", r.np_ecn_marked},
                   {"np_cnp_sent", r.np_cnp_sent},
                   {"rp_cnp_handled", r.rp_cnp_handled},
                   {"max_queue_bytes", r.max_queue_bytes},
                   {"max_queue_at_ns", r.max_queue_at_ns},
                   {"retransmitted_packets", r.retransmitted},
                   {"naks", r.naks},
                   {"timeouts", r.timeouts},
                   {"victim_gbps", r.victim_gbps},
                   {"other_victim_gbps", r.other_victim_gbps}};
  if (r.kind == Kind::Credits) {
    j["xmit_wait_ns"] = r.xmit_wait_ns;
    j["sender_xmit_wait_ns"] = r.sender_wait_ns;
  }
  if (r.kind == Kind::Dcqcn) {
    j["rate_samples"] = r.rate_samples;
    j["mean_rate_gbps"] = r.mean_rate_gbps;
    nlohmann::json rec = nlohmann::json::array();
    for (const auto& v : r.recoveries) {
      nlohmann::json one = nlohmann::json::array();
      for (const Recovery& x : v)
        one.push_back({{"at_ns", x.at_ns},
                       {"from_bps", x.from_bps},
                       {"to_bps", x.to_bps},
                       {"target_bps", x.target_bps}});
      rec.push_back(one);
    }
    j["recoveries"] = rec;
    j["window"] = {{"from_ns", d.fair_from_ns},
                   {"to_ns", d.fair_to_ns},
                   {"measured", r.window_measured},
                   {"gbps", r.window_gbps},
                   {"first_done_ns", r.first_done_ns}};
  }
  return j;
}

void check_run(lab::Narrator& n, const Options& o, const Derived& d, const RunResult& r) {
  const std::string id = kind_id(r.kind);
  n.check(id + ".complete", tr(M("check.complete")), r.complete);
  if (!r.complete) return;
  // No run beats the ideal: the bottleneck sends at most at its rate.
  n.check(id + ".ideal", tr(M("check.ideal"), lab::to_us(d.ideal_ns)),
          r.completion_ns >= d.ideal_ns,
          fmt::format("{} ns >= {} ns", r.completion_ns, d.ideal_ns));
  // A victim that nothing slows takes its own ideal time, the same sum
  // for its messages alone: 5% for the jitter and its frames meeting the
  // incast's in the queue to the link between the switches.
  const double victim_floor = 0.95 * d.victim_ideal_gbps;
  // The incast queues more than XOFF at the right switch's port from the
  // link between the switches: pauses must come.
  const bool pauses_due = d.lossy_excess_bytes > kXoffBytes;
  // Without marks nothing slows the senders, so the queue grows as in the
  // lossy run; past Kmax every ECT frame is marked: CNPs must come.
  const bool marks_due = d.lossy_excess_bytes > d.dcqcn.ecn.kmax_bytes;
  if (r.kind == Kind::Lossy) {
    if (d.lossy_excess_bytes > d.lossy_queue_cap)
      n.check("lossy.drops", tr(M("check.drops"), d.lossy_queue_cap), r.roce_drops > 0,
              fmt::format("{}", r.roce_drops));
    n.check("lossy.queue_cap", tr(M("check.queue_cap"), d.lossy_queue_cap),
            r.max_queue_bytes <= d.lossy_queue_cap, fmt::format("{}", r.max_queue_bytes));
    n.check("lossy.retransmit", tr(M("check.retransmit")), r.retransmitted >= r.roce_drops,
            fmt::format("{} >= {}", r.retransmitted, r.roce_drops));
    n.check("lossy.victim", tr(M("check.victim_free"), victim_floor), r.victim_gbps >= victim_floor,
            fmt::format("{:.2f}", r.victim_gbps));
  } else if (r.kind == Kind::Credits) {
    // Credits: nothing is sent that has no place, so nothing is dropped or
    // sent twice.
    n.check("credits.no_drops", no_drops_credits_text(), r.drops == 0, fmt::format("{}", r.drops));
    n.check("credits.no_retx", tr(M("check.no_retx")), r.retransmitted == 0 && r.timeouts == 0,
            fmt::format("{} / {}", r.retransmitted, r.timeouts));
    // The bottleneck never idles: the right switch's port from the link
    // between the switches holds up to 1024 blocks (15 packets of 4 KiB) for
    // the receiver, and a freed block's replacement arrives 2 us + one
    // frame at (N + 2) R later, when the bottleneck has sent about 6.
    n.check("credits.line_rate", line_rate_credits_text(lab::to_us(d.ideal_ns + 3 * kJitterNs)),
            r.completion_ns <= d.ideal_ns + 3 * kJitterNs, fmt::format("{} ns", r.completion_ns));
    // Every incast frame reaches the bottleneck through one port (from the
    // link between the switches): its credits bound the queue.
    n.check("credits.queue_cap", tr(M("check.credit_queue"), kIbVlBufferBytes),
            r.max_queue_bytes <= kIbVlBufferBytes, fmt::format("{}", r.max_queue_bytes));
    // The victim takes one turn in N + 1 in the left switch's queue to the
    // link between the switches, as each sender does: its messages end with
    // theirs, at the incast's time. Within 10% (the start, the end, the
    // jitter).
    n.check(
        "credits.hol", tr(M("check.hol_credits"), d.credit_victim_gbps),
        r.victim_gbps >= 0.9 * d.credit_victim_gbps && r.victim_gbps <= 1.1 * d.credit_victim_gbps,
        fmt::format("{:.2f}", r.victim_gbps));
    n.check("credits.other_vl", tr(M("check.other_vl"), victim_floor),
            r.other_victim_gbps >= victim_floor, fmt::format("{:.2f}", r.other_victim_gbps));
  } else if (r.kind == Kind::Pfc) {
    n.check("pfc.no_drops", tr(M("check.no_drops")), r.roce_drops == 0,
            fmt::format("{}", r.roce_drops));
    if (pauses_due)
      n.check("pfc.pauses", tr(M("check.pauses")), r.pause_frames > 0,
              fmt::format("{}", r.pause_frames));
    // The bottleneck never idles (an XON leaves while the queue still holds
    // XOFF - resume, 9 us of sending at 100 Gb/s, and arrives in about 1 us):
    // the ideal, plus the jitter of the three host links on the way.
    n.check("pfc.line_rate", tr(M("check.line_rate"), lab::to_us(d.ideal_ns + 3 * kJitterNs)),
            r.completion_ns <= d.ideal_ns + 3 * kJitterNs, fmt::format("{} ns", r.completion_ns));
    n.check("pfc.queue_cap", tr(M("check.pfc_queue"), (kXoffBytes + d.headroom_bytes) / 1024),
            r.max_queue_bytes <= kXoffBytes + d.headroom_bytes,
            fmt::format("{}", r.max_queue_bytes));
    if (pauses_due && o.senders >= 4)
      n.check("pfc.hol", tr(M("check.hol"), d.victim_bound_gbps),
              r.victim_gbps <= d.victim_bound_gbps, fmt::format("{:.2f}", r.victim_gbps));
    n.check("pfc.other_class", tr(M("check.other_class"), victim_floor),
            r.other_victim_gbps >= victim_floor, fmt::format("{:.2f}", r.other_victim_gbps));
  } else {
    if (marks_due)
      n.check("dcqcn.cnps", tr(M("check.cnps")), r.np_cnp_sent > 0 && r.rp_cnp_handled > 0,
              fmt::format("{} / {}", r.np_cnp_sent, r.rp_cnp_handled));
    n.check("dcqcn.no_drops", tr(M("check.no_drops")), r.roce_drops == 0,
            fmt::format("{}", r.roce_drops));
    // Without the target clamp (ClampTargetRate 0: hpcc-dcqcn, mlx5) a cut
    // that no increase preceded leaves Rt at the line rate, so a sender's
    // first recovery goes half way back to it at once: Rc = ceil((line + Rc)
    // / 2), at least line / 2, and N senders together offer N / 2 links.
    if (!d.dcqcn.clamp_target_rate && all_recovered(r)) {
      const auto line = static_cast<std::uint64_t>(d.rate_bps);
      bool ok = true;
      std::uint64_t lo = UINT64_MAX;
      for (const auto& v : r.recoveries) {
        const Recovery& x = v.front();
        ok = ok && x.target_bps == line && x.to_bps == (line + x.from_bps + 1) / 2;
        lo = std::min(lo, x.to_bps);
      }
      n.check("dcqcn.first_recovery", tr(M("check.first_recovery"), d.rate_bps / 2e9), ok,
              fmt::format("{:.2f} Gb/s", static_cast<double>(lo) / 1e9));
    }
    // Chapter 26: with hpcc-dcqcn and 4 senders, every sender's rate over
    // [300 ms, 350 ms] is within 10% of link / N (the worst of the four
    // about 8.6% off). Only a run that lasts that long measures it.
    if (d.fair_due && r.window_measured) {
      const auto [lo, hi] = std::minmax_element(r.window_gbps.begin(), r.window_gbps.end());
      const double fair = d.fair_share_gbps;
      n.check("dcqcn.fair_share",
              tr(M("check.fair_share"), lab::to_us(d.fair_from_ns) / 1000,
                 lab::to_us(d.fair_to_ns) / 1000, 0.9 * fair, 1.1 * fair),
              *lo >= 0.9 * fair && *hi <= 1.1 * fair,
              fmt::format("{:.2f} .. {:.2f} Gb/s", *lo, *hi));
    }
  }
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  // InfiniBand has one run, credits; RoCE the other three.
  const bool ib = o.common.link_layer == "ib";
  if (ib && o.run != "all" && o.run != "credits") throw verbs::UsageError(tr(M("ib_runs"), o.run));
  if (!ib && o.run == "credits") throw verbs::UsageError(tr(M("credits_ib")));
  if (o.common.backend == "verbs") throw verbs::UsageError(tr(M("needs_sim")));
  if (o.size < 2 || o.size > 4u * 1024 * 1024) throw verbs::UsageError(tr(M("bad_size"), o.size));
  Options so = o;
  so.common.backend = "sim";
  const Derived d = derive(so);
  lab::CommonOptions qo = so.common;
  qo.quiet = true;
  qo.step = false;
  qo.json = false;
  lab::Narrator quiet(qo, "lab18");

  n.step(tr(M("step.backend")));
  n.result()["backend"] = "sim";
  n.say(tr(ib ? M("why.fabric_ib") : M("why.fabric"), o.senders, o.senders + 2, o.rate_gbps,
           o.rate_gbps * (o.senders + 2)));
  n.step(tr(M("step.derive")));
  if (ib)
    n.say(tr(M("why.derive_ib"), o.senders, o.messages, o.size, d.packets_per_message,
             lab::to_us(d.message_ser_ns), lab::to_us(d.ideal_ns), d.ideal_goodput_gbps,
             d.payload_gbps, d.credit_victim_gbps, kIbVlBufferBytes));
  else
    n.say(tr(M("why.derive"), o.senders, o.messages, o.size, d.packets_per_message,
             lab::to_us(d.message_ser_ns), lab::to_us(d.ideal_ns), d.ideal_goodput_gbps,
             d.payload_gbps, d.fair_share_gbps, d.victim_bound_gbps));
  nlohmann::json cfg{{"senders", o.senders},
                     {"size", o.size},
                     {"messages", o.messages},
                     {"rate_gbps", o.rate_gbps},
                     {"isl_gbps", o.rate_gbps * (o.senders + 2)},
                     {"mtu", kMtu},
                     {"buffer_bytes", kBufferBytes},
                     {"xoff_bytes", kXoffBytes},
                     {"resume_offset_bytes", kResumeBytes},
                     {"headroom_bytes", d.headroom_bytes},
                     {"dcqcn_preset", o.dcqcn},
                     {"kmin_bytes", d.dcqcn.ecn.kmin_bytes},
                     {"kmax_bytes", d.dcqcn.ecn.kmax_bytes},
                     {"pmax", d.dcqcn.ecn.pmax},
                     {"dcqcn_xoff_bytes", d.dcqcn_xoff_bytes}};
  n.result()["config"] = cfg;
  n.result()["derived"] = {{"ideal_ns", d.ideal_ns},
                           {"ideal_goodput_gbps", d.ideal_goodput_gbps},
                           {"payload_gbps", d.payload_gbps},
                           {"lossy_queue_cap_bytes", d.lossy_queue_cap},
                           {"victim_bound_gbps", d.victim_bound_gbps},
                           {"victim_ideal_ns", d.victim_ideal_ns},
                           {"victim_ideal_gbps", d.victim_ideal_gbps},
                           {"fair_share_gbps", d.fair_share_gbps}};
  if (ib) {
    n.result()["config"]["link_layer"] = "ib";
    n.result()["config"]["ib_vl_buffer_bytes"] = kIbVlBufferBytes;
    n.result()["derived"]["credit_victim_gbps"] = d.credit_victim_gbps;
  }

  std::vector<Kind> kinds;
  if (ib) kinds.push_back(Kind::Credits);
  if (!ib && (o.run == "all" || o.run == "lossy")) kinds.push_back(Kind::Lossy);
  if (!ib && (o.run == "all" || o.run == "pfc")) kinds.push_back(Kind::Pfc);
  if (!ib && (o.run == "all" || o.run == "dcqcn")) kinds.push_back(Kind::Dcqcn);
  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::string> captures;
  bool first = true;
  for (const Kind k : kinds) {
    const RunResult r = run_once(n, quiet, so, d, k, first);
    first = false;
    if (r.complete) n.block(table(r, d));
    runs.push_back(run_json(r, d));
    check_run(n, so, d, r);
    captures.push_back(o.common.capture.substr(0, o.common.capture.rfind(".pcap")) + "-" +
                       kind_id(k) + ".pcap");
  }
  n.result()["runs"] = runs;
  n.result()["captures"] = captures;

  n.step(tr(M("step.report")));
  n.say(tr(ib ? M("why.report_ib") : M("why.report")));
  for (const std::string& c : captures)
    n.block(fmt::format("rdmapcap report {} -o {}.html", c, c.substr(0, c.rfind(".pcap"))));
  if (ib)
    lab::suggest(n, {tr(M("try.1")), tr(M("try.ib")), tr(M("try.4"))});
  else
    lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--senders", o.senders, tr(M("opt.senders")))
        ->check(lab::Range(2u, 64u))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))->capture_default_str();
    app.add_option("--messages", o.messages, tr(M("opt.messages")))
        ->check(lab::Range(1u, 1024u))
        ->capture_default_str();
    app.add_option("--rate", o.rate_gbps, tr(M("opt.rate")))
        ->check(lab::Range(1.0, 400.0))
        ->capture_default_str();
    app.add_option("--run", o.run, tr(M("opt.run")))
        ->check(lab::IsMember({"lossy", "pfc", "dcqcn", "credits", "all"}))
        ->capture_default_str();
    app.add_option("--dcqcn", o.dcqcn, tr(M("opt.dcqcn")))
        ->check(lab::IsMember({"hpcc-dcqcn", "mlx5", "dcqcn-paper"}))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab18", "lab18-incast", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
