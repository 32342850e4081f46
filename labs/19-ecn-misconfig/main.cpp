// Lab 19: ECN and PFC misconfigured — three classic mistakes and a PFC
// storm, each found first in the capture, then revealed.
//
// Read this file next to docs/en/27-lab19-ecn-misconfig.md. The fabric is
// lab 18's dumbbell on the simulator: N senders, a victim sender and a
// second victim on the left switch; the receiver and the two victims'
// receivers on the right switch. Every host link runs at --rate, the link
// between the switches at (N + 2) x --rate, so that the one congested
// queue is the right switch's egress to the receiver. Every case is a
// fresh fabric with the same seed and its own capture:
//   - no-cnp: ECN marking at the switches and DCQCN in the NICs, as lab 18's
//     dcqcn run, but the receivers' notification point is off: the switch
//     marks CE, no CNP leaves, the senders never slow and PFC does the work;
//   - cnp-ignored: the receivers send CNPs, the senders' reaction point is
//     off: CNPs arrive and are ignored, and PFC again does the work;
//   - pfc-first: the NICs are right, but the switches' PFC XOFF (128 KiB)
//     is below ECN's Kmin: the bottleneck pauses before its queue can reach
//     Kmin, so it never marks; marks, if any, come from the upstream switch
//     the pauses pushed the queue into;
//   - pfc-storm: PFC only; the receiver's NIC stops draining (a model, see
//     sim::PfcStorm) and pauses its switch without a break: the pauses
//     spread upstream hop by hop, a victim on the paused priority stalls, a
//     victim on another priority does not.
//   - one-vl (InfiniBand, --link-layer ib, its one case): credits instead
//     of PFC, no ECN; the senders and the victim on SL 3, the second victim
//     on SL 0, but the switches' SL-to-VL tables map every SL to VL 0 (a
//     subnet manager that never wrote them): the SL 0 victim waits behind
//     the incast as the SL 3 one does.
// The student first sees the capture, read by the same analyser rdmapcap
// uses, then the counters, then the cause.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/fabric_host.hpp"
#include "rdmalab/lab/incast.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using i18n::tr;
using lab19::M;

namespace {

// The fabric, its constants and the set-up lab 18 shares (lab/incast.hpp).
using namespace lab::incast;
// PFC XOFF of pfc-first and pfc-storm: the simulator's default, lab 18's
// pfc run.
constexpr std::uint64_t kLowXoffBytes = kXoffBytes;
// pfc-storm: the receiver's NIC starts pausing this long after the WRITEs
// are posted (the incast is well under way), the victims post theirs this
// long after that (the pauses have spread: derived in the chapter), and the
// run ends this long after the storm began: more than rdmapcap's default
// --pfc-storm-ms (100 ms) plus one renewal of the pause.
constexpr sim::Time kStormAfterNs = 50 * sim::kMicrosecond;
constexpr sim::Time kVictimAfterNs = 1 * sim::kMillisecond;
constexpr sim::Time kStormRunNs = 150 * sim::kMillisecond;
// rdmapcap's default storm threshold (--pfc-storm-ms 100).
constexpr sim::Time kStormFindingNs = 100 * sim::kMillisecond;
// The virtual time by which the set-up is over (it takes none: the QPs are
// connected out of band); the storm's start is an absolute time.
constexpr sim::Time kSetupEndNs = 0;

struct Options {
  lab::CommonOptions common;
  std::uint32_t senders = 8;
  std::uint32_t size = 1024 * 1024;
  std::uint32_t messages = 2;
  double rate_gbps = 100;
  std::string which = "all";
};

enum class Case : std::uint8_t { NoCnp, CnpIgnored, PfcFirst, PfcStorm, OneVl };

std::string case_id(Case c) {
  switch (c) {
    case Case::NoCnp: return "no-cnp";
    case Case::CnpIgnored: return "cnp-ignored";
    case Case::PfcFirst: return "pfc-first";
    case Case::PfcStorm: return "pfc-storm";
    case Case::OneVl: return "one-vl";
  }
  return {};
}

// The case's number (1 .. 4): the narration and the capture's name use it,
// so that neither gives the cause away before the capture has been read.
int case_number(Case c) {
  return static_cast<int>(c) + 1;
}

// The derivations of the chapter, from the knobs alone.
struct Derived {
  double rate_bps = 0;
  double isl_bps = 0;
  std::int64_t message_ser_ns = 0;
  std::int64_t ideal_ns = 0;  // the last completion of an ideal incast
  std::int64_t victim_ideal_ns = 0;
  double victim_ideal_gbps = 0;
  std::uint64_t headroom_bytes = 0;
  std::uint64_t excess_bytes = 0;  // what the bottleneck must hold without CC
  sim::DcqcnParams dcqcn;
  std::uint64_t ecn_xoff_bytes = 0;  // no-cnp, cnp-ignored: 2 Kmax (lab 18)
  // pfc-first: the most the bottleneck queue can hold (XOFF, the frame that
  // crossed it, and what the link between the switches delivers until the
  // pause has stopped it).
  std::uint64_t pfc_first_queue_bound = 0;
  std::int64_t pause_ns = 0;    // 0xFFFF quanta at --rate
  std::int64_t refresh_ns = 0;  // the storm's renewal: half of it
  // one-vl: a victim that waits in turn with the senders sends what one
  // sender sends, in the incast's time (lab 18's credits run).
  double shared_vl_gbps = 0;
};

Derived derive(const Options& o) {
  Derived d;
  const bool ib = o.common.link_layer == "ib";
  const Ideal ideal = derive_ideal({o.senders, o.messages, o.size, ib}, o.rate_gbps);
  d.rate_bps = ideal.rate_bps;
  d.isl_bps = ideal.isl_bps;
  d.message_ser_ns = ideal.message_ser_ns;
  d.ideal_ns = ideal.ideal_ns;
  d.victim_ideal_ns = ideal.victim_ideal_ns;
  d.victim_ideal_gbps = ideal.victim_ideal_gbps;
  d.headroom_bytes = ideal.headroom_bytes;
  const std::uint64_t total = std::uint64_t{o.senders} * o.messages;
  d.excess_bytes = total * o.size / o.senders * (o.senders - 1);
  d.dcqcn = sim::hpcc_dcqcn(static_cast<std::uint64_t>(d.rate_bps));
  d.ecn_xoff_bytes = 2 * d.dcqcn.ecn.kmax_bytes;
  // After the right switch's port from the other switch crosses XOFF (with
  // the frame that crossed it), the pause waits behind at most one frame,
  // travels one link delay, the left switch finishes the frame it is
  // sending, and what is on the link arrives: at most two link delays and
  // two frames at the link's rate.
  d.pfc_first_queue_bound =
      kLowXoffBytes + kLargestFrame +
      2 * (static_cast<std::uint64_t>(static_cast<double>(kDelayNs) * d.isl_bps / 8e9) +
           kLargestFrame + kWireOverhead);
  d.pause_ns = static_cast<std::int64_t>(
      std::llround(65535.0 * 512.0 * 1e9 / d.rate_bps));  // rounded to the ns
  d.refresh_ns = d.pause_ns / 2;
  d.shared_vl_gbps =
      static_cast<double>(std::uint64_t{o.messages} * o.size * 8) / static_cast<double>(d.ideal_ns);
  return d;
}

// Frames a capture's analysis found, and its findings.
struct CaptureFacts {
  std::uint64_t ce = 0;
  std::uint64_t cnps = 0;
  std::uint64_t pauses = 0;
  std::uint64_t ce_without_cnp = 0;
  std::uint64_t cnp_no_slowdown = 0;
  std::uint64_t pfc_storm = 0;
  bool storm_from_receiver = false;  // a storm finding names the receiver's MAC
  std::int64_t longest_storm_ns = 0;
  // InfiniBand: packets whose LRH carries another VL than its SL (the
  // hosts' tables are the identity, so a switch's table did it), and one.
  std::uint64_t vl_not_sl = 0;
  std::uint8_t example_sl = 0;
  std::uint8_t example_vl = 0;
  std::vector<std::string> said;  // the first finding of each kind, in words
};

struct CaseResult {
  Case kind = Case::NoCnp;
  bool complete = true;  // ECN cases: every WRITE completed well, every byte in place
  sim::Time completion_ns = 0;
  std::uint64_t drops = 0;
  std::uint64_t roce_drops = 0;
  std::uint64_t pause_frames = 0;  // switches, priority 3
  std::uint64_t xon_frames = 0;
  std::int64_t paused_ns = 0;
  std::uint64_t marked_left = 0;
  std::uint64_t marked_right = 0;
  std::uint64_t marked_bottleneck = 0;
  std::uint64_t np_ecn_marked = 0;
  std::uint64_t np_cnp_sent = 0;
  std::uint64_t rp_cnp_handled = 0;
  std::uint64_t rp_cnp_ignored = 0;
  std::uint64_t max_queue_bytes = 0;
  bool rp_present = false;
  std::uint64_t lowest_rate_bps = 0;  // the senders' reaction points, over the run
  sim::Time first_pause_ns = -1;      // the right switch paused the link between the switches
  sim::Time first_mark_ns = -1;
  // pfc-storm.
  std::uint64_t storm_xoff = 0;       // the receiver's NIC
  std::int64_t storm_paused_ns = 0;   // the right switch's port to it
  std::int64_t isl_paused_ns = 0;     // the left switch's port to the right one
  std::uint32_t senders_paused = 0;   // senders the left switch paused
  std::uint32_t sender_messages = 0;  // incast messages completed
  std::uint32_t victim_messages = 0;  // the priority-3 victim's
  std::uint32_t other_messages = 0;   // the priority-0 victim's
  std::uint64_t timeouts = 0;
  double other_gbps = 0;
  std::uint64_t victim_rx_pause = 0;
  // one-vl.
  double victim_gbps = 0;         // the SL 3 victim's
  std::int64_t xmit_wait_ns = 0;  // PortXmitWait, every port and VL
  std::string capture;
  CaptureFacts wire;
};

// The hosts sim0 .. sim{2N+3}, named and addressed as the simulator's
// backend names them, each NIC configured for the case.
std::vector<sim::HostConfig> hosts_for(Case kind, std::uint32_t n) {
  std::vector<sim::HostConfig> hosts;
  const std::uint32_t count = 2 * (n + 2);
  hosts.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    sim::HostConfig h;
    h.name = fmt::format("sim{}", i);
    h.mac = {0x02,
             0x00,
             0x00,
             0x00,
             static_cast<std::uint8_t>(i >> 8),
             static_cast<std::uint8_t>(i + 1)};
    h.ip = *wire::IpAddress::parse(fmt::format("10.99.{}.{}", (i + 1) >> 8, (i + 1) & 0xFF));
    const bool left = i < n + 2;
    // no-cnp: every NIC on the receivers' side has its notification point
    // off; cnp-ignored: every NIC on the senders' side its reaction point.
    if (kind == Case::NoCnp && !left) h.dcqcn_np = false;
    if (kind == Case::CnpIgnored && left) h.dcqcn_rp = false;
    if (kind == Case::PfcStorm && i == n + 2)
      h.pfc_storm = sim::PfcStorm{true, kRoceTc, kSetupEndNs + kStormAfterNs, sim::kForever};
    hosts.push_back(h);
  }
  return hosts;
}

CaptureFacts read_capture(const std::string& path, const wire::MacAddress& receiver_mac) {
  std::uint64_t mac = 0;
  for (const std::uint8_t b : receiver_mac) mac = (mac << 8) | b;
  CaptureFacts c;
  const lab::WireFacts w = lab::read_wire(path);
  const auto count = [&](const char* name) {
    const auto it = w.events.find(name);
    return it == w.events.end() ? std::uint64_t{0} : it->second;
  };
  c.ce = count("ecn_ce");
  c.cnps = count("cnp");
  for (const dissect::PacketRecord& rec : w.records) {
    if (rec.pause && std::any_of(rec.pause->quanta.begin(), rec.pause->quanta.end(),
                                 [](std::uint16_t q) { return q != 0; }))
      ++c.pauses;
    if (const auto& lrh = rec.decoded.lrh; lrh && lrh->vl != lrh->sl) {
      if (c.vl_not_sl == 0) {
        c.example_sl = lrh->sl;
        c.example_vl = lrh->vl;
      }
      ++c.vl_not_sl;
    }
  }
  bool said_ce = false, said_cnp = false, said_storm = false;
  for (const dissect::Event& e : w.end_of_capture) {
    if (e.type == dissect::EventType::CeWithoutCnp) {
      ++c.ce_without_cnp;
      if (!said_ce) c.said.push_back(dissect::describe(e));
      said_ce = true;
    } else if (e.type == dissect::EventType::CnpNoSlowdown) {
      ++c.cnp_no_slowdown;
      if (!said_cnp) c.said.push_back(dissect::describe(e));
      said_cnp = true;
    } else if (e.type == dissect::EventType::PfcStorm) {
      ++c.pfc_storm;
      c.longest_storm_ns = std::max(c.longest_storm_ns, e.delta_ns);
      if (e.value == mac) {
        c.storm_from_receiver = true;
        c.said.insert(c.said.begin(), dissect::describe(e));
      } else if (!said_storm) {
        c.said.push_back(dissect::describe(e));
        said_storm = true;
      }
    }
  }
  return c;
}

// One case on a fresh fabric. `n` narrates the set-up of the first case;
// `quiet` takes the rest.
CaseResult run_case(lab::Narrator& n, lab::Narrator& quiet, const Options& o, const Derived& d,
                    Case kind, bool narrate_setup) {
  const std::uint32_t N = o.senders;
  lab::Narrator& say = narrate_setup ? n : quiet;
  verbs::SimBackendOptions sim;
  sim::TopologySpec spec = topology(N, d.rate_bps, d.isl_bps);
  sim::SwitchConfig& sc = spec.switch_config;
  if (kind == Case::OneVl) {
    // InfiniBand: credits, no PFC or ECN; every SL to VL 0.
    sc.sl_to_vl.fill(0);
  } else {
    sc.pfc[kRoceTc].enabled = true;
    sc.pfc[kRoceTc].xoff_bytes =
        kind == Case::NoCnp || kind == Case::CnpIgnored ? d.ecn_xoff_bytes : kLowXoffBytes;
    sc.pfc[kRoceTc].resume_offset_bytes = kResumeBytes;
    sc.pfc[kRoceTc].headroom_bytes = d.headroom_bytes;
  }
  if (kind != Case::PfcStorm && kind != Case::OneVl) {
    sc.ecn[kRoceTc] = sim::EcnConfig::from(d.dcqcn.ecn);
    sim.fabric.dcqcn = d.dcqcn;
  }
  // Where the evidence is: CE marks show only where the marked frames
  // arrive (the receivers' ports); the storm's source only where its pause
  // frames leave (the hosts' own ports).
  sim.fabric.capture_point =
      kind == Case::PfcStorm ? sim::CapturePoint::SenderPort : sim::CapturePoint::ReceiverPort;
  sim.topology = spec;
  sim.hosts = hosts_for(kind, N);
  sim.snaplen = 128;
  lab::CommonOptions co = o.common;
  co.capture =
      fmt::format("{}-case{}.pcap", o.common.capture.substr(0, o.common.capture.rfind(".pcap")),
                  case_number(kind));
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

  // The ports: the right switch's port to the receiver (the bottleneck) and
  // each switch's port to the other.
  const sim::Topology& topo = simb->topology();
  const sim::SwitchId left = topo.switches.at(0);
  const sim::SwitchId right = topo.switches.at(1);
  std::size_t bottleneck = 0, isl_left = 0, isl_right = 0;
  for (std::size_t p = 0; p < f->switch_ports(right); ++p) {
    const std::string peer = f->switch_port_stats(right, p).peer;
    if (peer == device(N + 2)) bottleneck = p;
    if (peer.rfind("sw", 0) == 0) isl_right = p;
  }
  for (std::size_t p = 0; p < f->switch_ports(left); ++p)
    if (f->switch_port_stats(left, p).peer.rfind("sw", 0) == 0) isl_left = p;

  n.step(tr(narrate_setup ? M("step.run") : M("step.again"), case_number(kind)));
  n.say(tr(kind == Case::PfcStorm ? M("why.run_storm") : M("why.run_ecn")));
  const sim::Time t0 = f->now();
  if (t0 > kSetupEndNs) throw std::logic_error("lab19: the set-up took virtual time");
  CaseResult r;
  r.kind = kind;
  r.capture = co.capture;
  f->on_queue([&](const sim::QueueSample& q) {
    if (q.kind == sim::QueueSample::Kind::Dequeue && q.ce_marked && r.first_mark_ns < 0)
      r.first_mark_ns = q.time - t0;
  });
  for (std::uint32_t m = 0; m < o.messages; ++m)
    for (std::uint32_t i = 0; i < N; ++i)
      lab::post_write(tx[i], rx[0], std::uint64_t{i} * o.size, o.size, m + 1);
  const bool storm = kind == Case::PfcStorm;
  sim::Time victims_at = t0;
  const auto post_victims = [&] {
    for (std::uint32_t m = 0; m < o.messages; ++m) {
      lab::post_write(vtx, vrx, 0, o.size, m + 1);
      lab::post_write(wtx, wrx, 0, o.size, m + 1);
    }
  };
  if (!storm) post_victims();
  n.call(tr(M("every_sender")),
         fmt::format("ibv_post_send(qp, {} x {{RDMA_WRITE, length {}, IBV_SEND_SIGNALED}})",
                     o.messages, o.size),
         {});

  std::vector<lab::Endpoint*> senders;
  senders.reserve(N + 2);
  for (auto& e : tx) senders.push_back(&e);
  senders.push_back(&vtx);
  senders.push_back(&wtx);
  std::vector<sim::QueuePair*> sqp;
  sqp.reserve(senders.size());
  for (auto* e : senders) sqp.push_back(simb->sim_qp(*e->qp));
  std::vector<std::uint32_t> done_by(senders.size(), 0);
  std::vector<sim::Time> last_by(senders.size(), 0);
  bool all_ok = true;
  std::array<ibv_wc, 16> wcs{};
  std::size_t done = 0;
  const std::size_t want = std::size_t{N + 2} * o.messages;
  r.lowest_rate_bps = static_cast<std::uint64_t>(d.rate_bps);
  sim::Time next_sample = t0;
  const auto poll = [&] {
    for (std::size_t s = 0; s < senders.size(); ++s) {
      const int k = senders[s]->cq->poll(wcs);
      for (int j = 0; j < k; ++j) {
        const ibv_wc& wc = wcs[static_cast<std::size_t>(j)];
        if (wc.status != IBV_WC_SUCCESS) {
          all_ok = false;
          continue;
        }
        ++done_by[s];
        last_by[s] = f->now();
        ++done;
      }
    }
  };
  if (!storm) {
    f->run_until(
        [&] {
          poll();
          if (r.first_pause_ns < 0 && f->switch_port_stats(right, isl_right).tx_pause[kRoceTc] > 0)
            r.first_pause_ns = f->now() - t0;
          if (f->now() >= next_sample) {
            next_sample = f->now() + kSampleNs;
            for (std::uint32_t i = 0; i < N; ++i)
              if (const sim::DcqcnRp* rp = sqp[i]->dcqcn(); rp != nullptr) {
                r.rp_present = true;
                r.lowest_rate_bps = std::min(r.lowest_rate_bps, rp->rate_bps());
              }
          }
          return done == want;
        },
        t0 + kRunLimit);
  } else {
    // The storm begins at t0 + kStormAfterNs (the receiver's HostConfig);
    // the victims post when it has spread; the run ends kStormRunNs after
    // it began, whatever has completed.
    const sim::Time storm_at = kSetupEndNs + kStormAfterNs;
    victims_at = storm_at + kVictimAfterNs;
    f->run_until(
        [&] {
          poll();
          return false;
        },
        victims_at);
    post_victims();
    f->run_until(
        [&] {
          poll();
          return false;
        },
        storm_at + kStormRunNs);
  }
  f->stop_capture();
  f->on_queue({});

  // The counters.
  for (const sim::SwitchId sw : topo.switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p) {
      const sim::SwitchPortStats st = f->switch_port_stats(sw, p);
      for (const auto& q : st.tc) {
        r.drops += q.dropped;
        (sw.index == left.index ? r.marked_left : r.marked_right) += q.ecn_marked;
      }
      r.roce_drops += st.tc[kRoceTc].dropped;
      r.pause_frames += st.tx_pause[kRoceTc];
      r.xon_frames += st.tx_xon[kRoceTc];
      r.paused_ns += st.rx_pause_duration[kRoceTc];
    }
  r.marked_bottleneck = f->switch_port_stats(right, bottleneck).tc[kRoceTc].ecn_marked;
  r.max_queue_bytes = f->switch_port_stats(right, bottleneck).tc[kRoceTc].max_queue_bytes;
  // The NICs' DCQCN counters over every flow, the victims' too (a victim's
  // frames can be marked where they share a queue with the incast).
  std::vector<lab::Endpoint*> receivers;
  receivers.reserve(N + 2);
  for (auto& e : rx) receivers.push_back(&e);
  receivers.push_back(&vrx);
  receivers.push_back(&wrx);
  for (std::size_t s = 0; s < senders.size(); ++s) {
    const auto& st = sqp[s]->stats();
    r.rp_cnp_handled += st.rp_cnp_handled;
    r.rp_cnp_ignored += st.rp_cnp_ignored;
    const auto& rs = simb->sim_qp(*receivers[s]->qp)->stats();
    r.np_cnp_sent += rs.np_cnp_sent;
    r.np_ecn_marked += rs.np_ecn_marked_roce_packets;
  }
  for (std::uint32_t i = 0; i < N; ++i) {
    r.timeouts += sqp[i]->stats().timeouts;
    r.sender_messages += done_by[i];
  }
  r.victim_messages = done_by[N];
  r.other_messages = done_by[N + 1];
  if (r.victim_messages == o.messages)
    r.victim_gbps = static_cast<double>(std::uint64_t{o.messages} * o.size * 8) /
                    static_cast<double>(last_by[N] - victims_at);
  for (const sim::SwitchId sw : topo.switches)
    for (std::size_t p = 0; p < f->switch_ports(sw); ++p)
      for (const std::int64_t w : f->switch_port_stats(sw, p).xmit_wait_ns) r.xmit_wait_ns += w;
  for (std::uint32_t i = 0; i < 2 * (N + 2); ++i)
    if (const sim::Device* h = simb->device(device(i)))
      for (const std::int64_t w : f->host_port_stats(*h).xmit_wait_ns) r.xmit_wait_ns += w;
  if (r.other_messages == o.messages)
    r.other_gbps = static_cast<double>(std::uint64_t{o.messages} * o.size * 8) /
                   static_cast<double>(last_by[N + 1] - victims_at);
  if (const sim::Device* v = simb->device(device(N)))
    r.victim_rx_pause = f->host_port_stats(*v).rx_pause[kRoceTc];
  if (storm) {
    if (const sim::Device* h = simb->device(device(N + 2)))
      r.storm_xoff = f->host_port_stats(*h).tx_pause[kRoceTc];
    r.storm_paused_ns = f->switch_port_stats(right, bottleneck).rx_pause_duration[kRoceTc];
    r.isl_paused_ns = f->switch_port_stats(left, isl_left).rx_pause_duration[kRoceTc];
    for (std::uint32_t i = 0; i < N; ++i)
      if (const sim::Device* h = simb->device(device(i)))
        r.senders_paused += f->host_port_stats(*h).rx_pause[kRoceTc] > 0 ? 1U : 0U;
  } else {
    r.complete = all_ok && done == want;
    for (std::uint32_t i = 0; i < N && r.complete; ++i)
      r.complete = std::memcmp(rx[0].buf() + std::size_t{i} * o.size, tx[i].buf(), o.size) == 0;
    if (r.complete) {
      for (std::uint32_t i = 0; i < N; ++i) r.completion_ns = std::max(r.completion_ns, last_by[i]);
      r.completion_ns -= t0;
    }
  }
  const sim::HostConfig& rcfg = simb->device(device(N + 2))->config();
  r.wire = read_capture(co.capture, rcfg.mac);
  return r;
}

std::string rate_text(const CaseResult& r, double line_gbps) {
  if (!r.rp_present) return tr(M("val.no_rp"));
  return tr(M("val.lowest_rate"), static_cast<double>(r.lowest_rate_bps) / 1e9, line_gbps);
}

// What the capture shows, before any counter.
void show_capture(lab::Narrator& n, const CaseResult& r) {
  n.say(tr(M("why.capture")));
  std::string t;
  const auto row = [&](const std::string& name, const std::string& value) {
    t += fmt::format(" {:<46} {}\n", name, value);
  };
  row(tr(M("row.cap_ce")), fmt::format("{}", r.wire.ce));
  row(tr(M("row.cap_cnp")), fmt::format("{}", r.wire.cnps));
  row(tr(M("row.cap_pause")), fmt::format("{}", r.wire.pauses));
  row(tr(M("row.findings")),
      tr(M("val.findings"), r.wire.ce_without_cnp, r.wire.cnp_no_slowdown, r.wire.pfc_storm));
  if (r.kind == Case::OneVl)
    row(tr(M("row.vl_not_sl")), r.wire.vl_not_sl == 0 ? std::string("0")
                                                      : tr(M("val.vl_not_sl"), r.wire.vl_not_sl,
                                                           r.wire.example_sl, r.wire.example_vl));
  t.pop_back();
  n.block(t);
  for (const std::string& s : r.wire.said) n.say(s);
  n.block(fmt::format("rdmapcap summary {}", r.capture));
}

std::string table(const CaseResult& r, const Derived& d, const Options& o) {
  std::string t;
  const auto row = [&](const std::string& name, const std::string& value) {
    t += fmt::format(" {:<46} {}\n", name, value);
  };
  if (r.kind == Case::OneVl) {
    row(tr(M("row.completion")),
        tr(M("val.completion"), lab::to_us(r.completion_ns), lab::to_us(d.ideal_ns)));
    row(tr(M("row.drops")), fmt::format("{}", r.drops));
    row(tr(M("row.xmit_wait")), fmt::format("{:.1f} µs", lab::to_us(r.xmit_wait_ns)));
    row(tr(M("row.victim_sl3")), fmt::format("{:.2f} Gb/s", r.victim_gbps));
    row(tr(M("row.victim_sl0")), fmt::format("{:.2f} Gb/s", r.other_gbps));
  } else if (r.kind != Case::PfcStorm) {
    row(tr(M("row.completion")),
        tr(M("val.completion"), lab::to_us(r.completion_ns), lab::to_us(d.ideal_ns)));
    row(tr(M("row.drops")), tr(M("val.drops"), r.drops, r.roce_drops));
    row(tr(M("row.pauses")), fmt::format("{} / {}", r.pause_frames, r.xon_frames));
    row(tr(M("row.paused")), fmt::format("{:.1f} µs", lab::to_us(r.paused_ns)));
    row(tr(M("row.ecn")), tr(M("val.ecn"), r.marked_left, r.marked_right, r.marked_bottleneck));
    row(tr(M("row.np_marked")), fmt::format("{}", r.np_ecn_marked));
    row(tr(M("row.cnp")),
        fmt::format("{} / {} / {}", r.np_cnp_sent, r.rp_cnp_handled, r.rp_cnp_ignored));
    row(tr(M("row.queue")), tr(M("val.bytes"), r.max_queue_bytes));
    row(tr(M("row.rates")), rate_text(r, o.rate_gbps));
    if (r.kind == Case::PfcFirst)
      row(tr(M("row.first")),
          r.first_mark_ns < 0
              ? tr(M("val.first_nomark"), lab::to_us(r.first_pause_ns))
              : tr(M("val.first"), lab::to_us(r.first_pause_ns), lab::to_us(r.first_mark_ns)));
  } else {
    row(tr(M("row.storm_xoff")), fmt::format("{}", r.storm_xoff));
    row(tr(M("row.storm_paused")),
        fmt::format("{:.1f} ms", lab::to_us(r.storm_paused_ns) / 1000.0));
    row(tr(M("row.isl_paused")), fmt::format("{:.1f} ms", lab::to_us(r.isl_paused_ns) / 1000.0));
    row(tr(M("row.senders_paused")), fmt::format("{} / {}", r.senders_paused, o.senders));
    row(tr(M("row.pauses")), fmt::format("{} / {}", r.pause_frames, r.xon_frames));
    row(tr(M("row.drops")), tr(M("val.drops"), r.drops, r.roce_drops));
    row(tr(M("row.sender_msgs")),
        tr(M("val.messages"), r.sender_messages, std::uint64_t{o.senders} * o.messages));
    row(tr(M("row.victim")), tr(M("val.messages"), r.victim_messages, o.messages));
    row(tr(M("row.other")), tr(M("val.other"), r.other_messages, o.messages, r.other_gbps));
    row(tr(M("row.timeouts")), fmt::format("{}", r.timeouts));
  }
  t.pop_back();
  return t;
}

nlohmann::json case_json(const CaseResult& r) {
  nlohmann::json j{{"case", case_id(r.kind)},
                   {"capture", r.capture},
                   {"drops", r.drops},
                   {"roce_drops", r.roce_drops},
                   {"pause_frames", r.pause_frames},
                   {"xon_frames", r.xon_frames},
                   {"paused_ns", r.paused_ns},
                   {"ecn_marked_left", r.marked_left},
                   {"ecn_marked_right", r.marked_right},
                   {"ecn_marked_bottleneck", r.marked_bottleneck},
                   {"np_ecn_marked_roce_packets", r.np_ecn_marked},
                   {"np_cnp_sent", r.np_cnp_sent},
                   {"rp_cnp_handled", r.rp_cnp_handled},
                   {"rp_cnp_ignored", r.rp_cnp_ignored},
                   {"max_queue_bytes", r.max_queue_bytes},
                   {"timeouts", r.timeouts},
                   {"wire",
                    {{"ecn_ce", r.wire.ce},
                     {"cnps", r.wire.cnps},
                     {"pause_frames", r.wire.pauses},
                     {"ce_without_cnp", r.wire.ce_without_cnp},
                     {"cnp_no_slowdown", r.wire.cnp_no_slowdown},
                     {"pfc_storm", r.wire.pfc_storm},
                     {"storm_from_receiver", r.wire.storm_from_receiver},
                     {"longest_storm_ns", r.wire.longest_storm_ns}}}};
  if (r.kind == Case::OneVl) {
    j["wire"]["vl_not_sl"] = r.wire.vl_not_sl;
    j["victim_gbps"] = r.victim_gbps;
    j["other_gbps"] = r.other_gbps;
    j["xmit_wait_ns"] = r.xmit_wait_ns;
  }
  if (r.kind == Case::PfcStorm) {
    j["storm_xoff_frames"] = r.storm_xoff;
    j["storm_paused_ns"] = r.storm_paused_ns;
    j["isl_paused_ns"] = r.isl_paused_ns;
    j["senders_paused"] = r.senders_paused;
    j["sender_messages"] = r.sender_messages;
    j["victim_messages"] = r.victim_messages;
    j["victim_rx_pause"] = r.victim_rx_pause;
    j["other_messages"] = r.other_messages;
    j["other_gbps"] = r.other_gbps;
  } else {
    j["complete"] = r.complete;
    j["completion_ns"] = r.completion_ns;
    j["rp_present"] = r.rp_present;
    j["lowest_rate_bps"] = r.lowest_rate_bps;
    j["first_pause_ns"] = r.first_pause_ns;
    j["first_mark_ns"] = r.first_mark_ns;
  }
  return j;
}

void check_case(lab::Narrator& n, const Options& o, const Derived& d, const CaseResult& r) {
  // Check ids are snake_case words (the result schema's rule).
  std::string id = case_id(r.kind);
  std::replace(id.begin(), id.end(), '-', '_');
  if (r.kind == Case::OneVl) {
    // InfiniBand: credits, so nothing is dropped in any VL, and the
    // bottleneck never idles (lab 18's credits run).
    n.check("one_vl.no_drops", no_drops_credits_text(), r.drops == 0, fmt::format("{}", r.drops));
    n.check("one_vl.complete", tr(M("check.complete")), r.complete);
    if (!r.complete) return;
    n.check("one_vl.line_rate", line_rate_credits_text(lab::to_us(d.ideal_ns + 3 * kJitterNs)),
            r.completion_ns >= d.ideal_ns && r.completion_ns <= d.ideal_ns + 3 * kJitterNs,
            fmt::format("{} ns", r.completion_ns));
    // The hosts send SL n on VL n: a packet reaching a host in VL 0 with SL
    // 3 was moved by a switch's table.
    n.check("one_vl.in_capture", tr(M("check.vl_in_capture")), r.wire.vl_not_sl > 0,
            fmt::format("{}", r.wire.vl_not_sl));
    // Both victims take one turn in N + 2 in the left switch's VL 0 queue:
    // each sends what one sender sends, in the incast's time.
    const double share = d.shared_vl_gbps;
    n.check("one_vl.victims_held", tr(M("check.victims_held"), share),
            r.victim_gbps >= 0.9 * share && r.victim_gbps <= 1.1 * share &&
                r.other_gbps >= 0.9 * share && r.other_gbps <= 1.1 * share,
            fmt::format("{:.2f} / {:.2f}", r.victim_gbps, r.other_gbps));
    return;
  }
  // Every case: priority 3 is lossless (PFC with lab 18's headroom), so
  // nothing of it is dropped: exactly 0.
  n.check(id + ".no_drops", tr(M("check.no_drops")), r.roce_drops == 0,
          fmt::format("{}", r.roce_drops));
  if (r.kind == Case::PfcStorm) {
    n.check("pfc_storm.source", tr(M("check.storm_source")), r.storm_xoff > 0,
            fmt::format("{}", r.storm_xoff));
    n.check("pfc_storm.spread", tr(M("check.storm_spread"), o.senders),
            r.isl_paused_ns > 0 && r.senders_paused == o.senders,
            fmt::format("{} / {}", r.senders_paused, o.senders));
    n.check("pfc_storm.victim", tr(M("check.storm_victim")),
            r.victim_messages == 0 && r.victim_rx_pause > 0,
            fmt::format("{} / {}", r.victim_messages, r.victim_rx_pause));
    const double floor = 0.95 * d.victim_ideal_gbps;
    n.check("pfc_storm.other_class", tr(M("check.other_class"), floor),
            r.other_messages == o.messages && r.other_gbps >= floor,
            fmt::format("{:.2f}", r.other_gbps));
    n.check("pfc_storm.finding", tr(M("check.storm_finding")),
            r.wire.storm_from_receiver && r.wire.longest_storm_ns > kStormFindingNs,
            fmt::format("{} ns", r.wire.longest_storm_ns));
    return;
  }
  n.check(id + ".complete", tr(M("check.complete")), r.complete);
  if (!r.complete) return;
  n.check(id + ".ideal", tr(M("check.ideal"), lab::to_us(d.ideal_ns)),
          r.completion_ns >= d.ideal_ns,
          fmt::format("{} ns >= {} ns", r.completion_ns, d.ideal_ns));
  // Every CE-marked frame reaches a host's port (nothing of priority 3 is
  // dropped), where this capture sits; a frame is marked once at most.
  n.check(
      id + ".ce_on_wire", tr(M("check.ce_on_wire")),
      r.wire.ce == r.marked_left + r.marked_right && r.wire.ce == r.np_ecn_marked,
      fmt::format("{} = {} + {} = {}", r.wire.ce, r.marked_left, r.marked_right, r.np_ecn_marked));
  if (r.kind == Case::NoCnp || r.kind == Case::CnpIgnored) {
    // Nothing slows the senders, so the queue grows as without ECN: past
    // Kmax, where every ECT frame is marked, and on to XOFF = 2 Kmax.
    const bool due = d.excess_bytes > d.ecn_xoff_bytes;
    if (due) {
      n.check(id + ".marks", tr(M("check.marks")), r.np_ecn_marked > 0,
              fmt::format("{}", r.np_ecn_marked));
      n.check(id + ".pauses", tr(M("check.pauses")), r.pause_frames > 0,
              fmt::format("{}", r.pause_frames));
    }
    n.check(id + ".handled", tr(M("check.none_handled")), r.rp_cnp_handled == 0,
            fmt::format("{}", r.rp_cnp_handled));
    n.check(id + ".line_rate", tr(M("check.line_rate"), lab::to_us(d.ideal_ns + 3 * kJitterNs)),
            r.completion_ns <= d.ideal_ns + 3 * kJitterNs, fmt::format("{} ns", r.completion_ns));
    n.check(id + ".queue_cap",
            tr(M("check.queue_cap"), (d.ecn_xoff_bytes + d.headroom_bytes) / 1000),
            r.max_queue_bytes <= d.ecn_xoff_bytes + d.headroom_bytes,
            fmt::format("{}", r.max_queue_bytes));
  }
  if (r.kind == Case::NoCnp) {
    n.check("no_cnp.no_cnp", tr(M("check.no_cnp")), r.np_cnp_sent == 0 && r.wire.cnps == 0,
            fmt::format("{} / {}", r.np_cnp_sent, r.wire.cnps));
    n.check("no_cnp.rate", tr(M("check.rate_line"), o.rate_gbps),
            r.rp_present && r.lowest_rate_bps == static_cast<std::uint64_t>(d.rate_bps),
            fmt::format("{}", r.lowest_rate_bps));
    if (d.excess_bytes > d.ecn_xoff_bytes)
      n.check("no_cnp.finding", tr(M("check.finding_ce")), r.wire.ce_without_cnp > 0,
              fmt::format("{}", r.wire.ce_without_cnp));
  } else if (r.kind == Case::CnpIgnored) {
    if (d.excess_bytes > d.ecn_xoff_bytes)
      n.check("cnp_ignored.cnps", tr(M("check.cnps_sent")), r.np_cnp_sent > 0,
              fmt::format("{}", r.np_cnp_sent));
    // Every CNP arrives (nothing dropped in any class) and is ignored.
    n.check("cnp_ignored.ignored", tr(M("check.ignored")),
            r.drops == 0 && r.rp_cnp_ignored == r.np_cnp_sent && r.wire.cnps == r.np_cnp_sent,
            fmt::format("{} = {} = {}", r.rp_cnp_ignored, r.np_cnp_sent, r.wire.cnps));
    n.check("cnp_ignored.no_rp", tr(M("check.no_rp")), !r.rp_present);
  } else {
    // The bottleneck's queue cannot reach Kmin: no mark there.
    if (d.pfc_first_queue_bound < d.dcqcn.ecn.kmin_bytes)
      n.check("pfc_first.no_bottleneck_mark",
              tr(M("check.no_bottleneck_mark"), d.pfc_first_queue_bound, d.dcqcn.ecn.kmin_bytes),
              r.marked_bottleneck == 0 && r.max_queue_bytes <= d.pfc_first_queue_bound,
              fmt::format("{} / {}", r.marked_bottleneck, r.max_queue_bytes));
    n.check("pfc_first.pause_first", tr(M("check.pause_first")),
            r.first_pause_ns >= 0 && (r.first_mark_ns < 0 || r.first_pause_ns < r.first_mark_ns),
            fmt::format("{} < {}", r.first_pause_ns, r.first_mark_ns));
  }
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  // InfiniBand has one case, one-vl; RoCE the other four.
  const bool ib = o.common.link_layer == "ib";
  if (ib && o.which != "all" && o.which != "one-vl")
    throw verbs::UsageError(tr(M("ib_cases"), o.which));
  if (!ib && o.which == "one-vl") throw verbs::UsageError(tr(M("one_vl_ib")));
  if (o.common.backend == "verbs") throw verbs::UsageError(tr(M("needs_sim")));
  if (o.size < 2 || o.size > 4u * 1024 * 1024) throw verbs::UsageError(tr(M("bad_size"), o.size));
  Options so = o;
  so.common.backend = "sim";
  const Derived d = derive(so);
  lab::CommonOptions qo = so.common;
  qo.quiet = true;
  qo.step = false;
  qo.json = false;
  lab::Narrator quiet(qo, "lab19");

  n.step(tr(M("step.backend")));
  n.result()["backend"] = "sim";
  n.say(tr(M("why.fabric"), o.senders, o.senders + 2, o.rate_gbps, o.rate_gbps * (o.senders + 2)));
  n.step(tr(M("step.derive")));
  if (ib)
    n.say(tr(M("why.derive_ib"), o.senders, o.messages, o.size, lab::to_us(d.ideal_ns),
             d.shared_vl_gbps, 0.95 * d.victim_ideal_gbps));
  else
    n.say(tr(M("why.derive"), o.senders, o.messages, o.size, lab::to_us(d.ideal_ns),
             d.dcqcn.ecn.kmin_bytes / 1000, d.dcqcn.ecn.kmax_bytes / 1000, d.ecn_xoff_bytes / 1000,
             kLowXoffBytes / 1024, d.pfc_first_queue_bound, lab::to_us(d.pause_ns),
             lab::to_us(d.refresh_ns)));
  n.result()["config"] = {{"senders", o.senders},
                          {"size", o.size},
                          {"messages", o.messages},
                          {"rate_gbps", o.rate_gbps},
                          {"isl_gbps", o.rate_gbps * (o.senders + 2)},
                          {"mtu", kMtu},
                          {"buffer_bytes", kBufferBytes},
                          {"dcqcn_preset", "hpcc-dcqcn"},
                          {"kmin_bytes", d.dcqcn.ecn.kmin_bytes},
                          {"kmax_bytes", d.dcqcn.ecn.kmax_bytes},
                          {"pmax", d.dcqcn.ecn.pmax},
                          {"ecn_xoff_bytes", d.ecn_xoff_bytes},
                          {"low_xoff_bytes", kLowXoffBytes},
                          {"resume_offset_bytes", kResumeBytes},
                          {"headroom_bytes", d.headroom_bytes},
                          {"storm_after_ns", kStormAfterNs},
                          {"victims_after_storm_ns", kVictimAfterNs},
                          {"storm_run_ns", kStormRunNs}};
  n.result()["derived"] = {{"ideal_ns", d.ideal_ns},
                           {"victim_ideal_ns", d.victim_ideal_ns},
                           {"victim_ideal_gbps", d.victim_ideal_gbps},
                           {"excess_bytes", d.excess_bytes},
                           {"pfc_first_queue_bound", d.pfc_first_queue_bound},
                           {"pause_ns", d.pause_ns},
                           {"refresh_ns", d.refresh_ns}};
  if (ib) {
    n.result()["config"]["link_layer"] = "ib";
    n.result()["derived"]["shared_vl_gbps"] = d.shared_vl_gbps;
  }

  std::vector<Case> cases;
  if (ib) cases.push_back(Case::OneVl);
  for (const Case c : {Case::NoCnp, Case::CnpIgnored, Case::PfcFirst, Case::PfcStorm})
    if (!ib && (o.which == "all" || o.which == case_id(c))) cases.push_back(c);
  nlohmann::json out = nlohmann::json::array();
  bool first = true;
  for (const Case c : cases) {
    const CaseResult r = run_case(n, quiet, so, d, c, first);
    first = false;
    n.step(tr(M("step.evidence"), case_number(c)));
    show_capture(n, r);
    if (r.kind == Case::PfcStorm || r.complete) n.block(table(r, d, so));
    check_case(n, so, d, r);
    n.step(tr(M("step.reveal"), case_number(c), case_id(c)));
    n.say(tr(c == Case::NoCnp        ? M("reveal.no_cnp")
             : c == Case::CnpIgnored ? M("reveal.cnp_ignored")
             : c == Case::PfcFirst   ? M("reveal.pfc_first")
             : c == Case::OneVl      ? M("reveal.one_vl")
                                     : M("reveal.pfc_storm"),
             kLowXoffBytes / 1024, d.dcqcn.ecn.kmin_bytes / 1000));
    out.push_back(case_json(r));
  }
  n.result()["cases"] = out;
  if (ib)
    lab::suggest(n, {tr(M("try.ib")), tr(M("try.4"))});
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
        ->check(lab::Range(1u, 64u))
        ->capture_default_str();
    app.add_option("--rate", o.rate_gbps, tr(M("opt.rate")))
        ->check(lab::Range(1.0, 400.0))
        ->capture_default_str();
    app.add_option("--case", o.which, tr(M("opt.case")))
        ->check(lab::IsMember({"no-cnp", "cnp-ignored", "pfc-first", "pfc-storm", "one-vl", "all"}))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab19", "lab19-ecn-misconfig", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
