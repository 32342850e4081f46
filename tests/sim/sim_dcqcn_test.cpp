// DCQCN: the reaction point on its own (rates and alpha followed by hand),
// the notification point's CNP pacing, and both in the simulated NIC on the
// wire. Every number checked is derived in the comments first.
//
// Units: rates in bit/s, times in ns, alpha in units of 2^-20 (1048576 = 1).
// The model's arithmetic (dcqcn.hpp): alpha' = floor(alpha * (2^20 - g) /
// 2^20) + g [CNP]; a cut Rc' = Rc - floor(Rc * alpha / 2^21); an increase
// step Rc' = ceil((Rt + Rc) / 2).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "rdmalab/sim/dcqcn.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;
using simtest::Pair;
using simtest::PairConfig;
using simtest::Pkt;

namespace {

constexpr std::uint32_t kOne = sim::DcqcnParams::kAlphaOne;  // 1048576

}  // namespace

TEST_CASE("DCQCN RP, the paper's reaction: a scripted CNP and byte sequence") {
  // The paper's RP (cut and alpha on every CNP, timer and byte counter,
  // i * HAI) with small numbers so that every stage shows within 200 us.
  sim::DcqcnParams p;
  p.reaction = sim::DcqcnParams::Reaction::PerCnp;
  p.increase = sim::DcqcnParams::Increase::Paper;
  p.g = kOne / 256;  // 4096
  p.initial_alpha = kOne;
  p.alpha_period = 55'000;          // K
  p.rate_increase_period = 55'000;  // T
  p.byte_counter = 1'000'000;       // B
  p.fast_recovery_stages = 1;       // F
  p.ai_rate_bps = 40'000'000;
  p.hai_rate_bps = 100'000'000;
  p.min_rate_bps = 1'000'000'000;
  p.clamp_target_rate = true;
  sim::DcqcnRp rp(p, 100'000'000'000);
  std::vector<sim::DcqcnSample> log;
  rp.set_observer([&](const sim::DcqcnSample& s) { log.push_back(s); });

  CHECK_FALSE(rp.active());
  CHECK(rp.rate_bps() == 100'000'000'000);
  CHECK(rp.next_timer() == INT64_MAX);

  // t = 0, first CNP: alpha = 1. Rt = Rc = 100 G; cut = floor(100e9 * 2^20 /
  // 2^21) = 50e9, Rc = 50 G. alpha = floor(2^20 * (2^20 - 4096) / 2^20) +
  // 4096 = 1044480 + 4096 = 2^20. Timers: alpha and increase at 55 us.
  rp.on_cnp(0);
  CHECK(rp.rate_bps() == 50'000'000'000);
  CHECK(rp.target_bps() == 100'000'000'000);
  CHECK(rp.alpha() == kOne);
  CHECK(rp.next_timer() == 55'000);

  // t = 10 us, CNP: Rt = 50 G, Rc = 50 G - 25 G = 25 G, alpha stays 2^20;
  // both timers restart: 65 us.
  rp.on_cnp(10'000);
  CHECK(rp.rate_bps() == 25'000'000'000);
  CHECK(rp.target_bps() == 50'000'000'000);
  CHECK(rp.next_timer() == 65'000);

  // t = 65 us: the alpha timer first, no CNP: alpha = 2^20 - 4096 = 1044480.
  // Then the increase timer, T = BC = 0 < F: fast recovery, Rc =
  // ceil((50 G + 25 G) / 2) = 37.5 G; T = 1. Next timers at 120 us.
  rp.advance_to(65'000);
  CHECK(rp.alpha() == 1'044'480);
  CHECK(rp.rate_bps() == 37'500'000'000);
  CHECK(rp.target_bps() == 50'000'000'000);
  CHECK(rp.timer_stage() == 1);
  CHECK(rp.next_timer() == 120'000);

  // t = 100 us, 1 MB sent: a byte-counter event with T = 1, BC = 0:
  // max = 1 is not < F, min = 0 is not > F: additive. Rt = 50.04 G, Rc =
  // ceil((50.04 G + 37.5 G) / 2) = 43.77 G; BC = 1.
  rp.on_bytes_sent(1'000'000, 100'000);
  CHECK(rp.target_bps() == 50'040'000'000);
  CHECK(rp.rate_bps() == 43'770'000'000);
  CHECK(rp.byte_stage() == 1);

  // t = 120 us: alpha = floor(1044480 * 1044480 / 2^20) = 1044480 - 4080 =
  // 1040400 (1044480 * 4096 / 2^20 = 4080 exactly). Timer event, T = BC = 1:
  // min = 1 is not > F: additive. Rt = 50.08 G, Rc = ceil((50.08 G +
  // 43.77 G) / 2) = 46.925 G; T = 2.
  rp.advance_to(120'000);
  CHECK(rp.alpha() == 1'040'400);
  CHECK(rp.target_bps() == 50'080'000'000);
  CHECK(rp.rate_bps() == 46'925'000'000);

  // t = 130 us, 1 MB: T = 2, BC = 1, min = 1: additive. Rt = 50.12 G, Rc =
  // ceil((50.12 G + 46.925 G) / 2) = 48.5225 G; BC = 2.
  rp.on_bytes_sent(1'000'000, 130'000);
  CHECK(rp.target_bps() == 50'120'000'000);
  CHECK(rp.rate_bps() == 48'522'500'000);

  // t = 175 us: alpha = floor(1040400 - 1040400 / 256) = floor(1040400 -
  // 4064.0625) = 1036335. Timer event, T = BC = 2: min = 2 > F, hyper with
  // i = 2 - 1 = 1: Rt = 50.12 G + 100 M = 50.22 G, Rc = ceil((50.22 G +
  // 48.5225 G) / 2) = 49.37125 G; T = 3.
  rp.advance_to(175'000);
  CHECK(rp.alpha() == 1'036'335);
  CHECK(rp.target_bps() == 50'220'000'000);
  CHECK(rp.rate_bps() == 49'371'250'000);
  CHECK(rp.timer_stage() == 3);
  CHECK(rp.byte_stage() == 2);

  // t = 200 us, CNP: Rt = Rc = 49371250000 (clamp); cut = floor(49371250000
  // * 1036335 / 2^21) = floor(24397446808.22) = 24397446808, Rc =
  // 24973803192. alpha = floor(1036335 - 1036335 / 256) + 4096 =
  // floor(1036335 - 4048.18) + 4096 = 1032286 + 4096 = 1036382. Stages reset.
  rp.on_cnp(200'000);
  CHECK(rp.target_bps() == 49'371'250'000);
  CHECK(rp.rate_bps() == 24'973'803'192);
  CHECK(rp.alpha() == 1'036'382);
  CHECK(rp.timer_stage() == 0);
  CHECK(rp.byte_stage() == 0);
  CHECK(rp.next_timer() == 255'000);

  // The time series saw every step, in order.
  using E = sim::DcqcnSample::Event;
  const std::vector<E> want = {E::Cnp,      E::Decrease, E::Alpha,        E::Cnp,      E::Decrease,
                               E::Alpha,    E::Alpha,    E::FastRecovery, E::Additive, E::Alpha,
                               E::Additive, E::Additive, E::Alpha,        E::Hyper,    E::Cnp,
                               E::Decrease, E::Alpha};
  REQUIRE(log.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(log[i].event == want[i]);
  CHECK(log.back().time == 200'000);
  CHECK(log.back().rate_bps == 24'973'803'192);
}

TEST_CASE("DCQCN RP, the rate never falls below the minimum") {
  // alpha = 1: every CNP halves the rate. 100 G, 50 G, ..., 1.5625 G after
  // 6 cuts; the 7th would give 781.25 M < 1 G: Rc = 1 G, and stays there.
  sim::DcqcnParams p = sim::dcqcn_paper();
  p.min_rate_bps = 1'000'000'000;
  p.g = 0;  // alpha stays at 1
  sim::DcqcnRp rp(p, 100'000'000'000);
  for (int i = 0; i < 6; ++i) rp.on_cnp(i);
  CHECK(rp.rate_bps() == 1'562'500'000);
  rp.on_cnp(6);
  CHECK(rp.rate_bps() == 1'000'000'000);
  rp.on_cnp(7);
  CHECK(rp.rate_bps() == 1'000'000'000);
}

TEST_CASE("DCQCN RP, the reference code's periodic reaction (hpcc_dcqcn at 25 Gb/s)") {
  // hpcc_dcqcn(25 G): g = 1/256, alpha timer 1 us, cut every 4 us at most,
  // increase timer 300 us, F = 1, AI = 25e9 / 5000 = 5 M, HAI = 25e9 / 500 =
  // 50 M, min 1 G, no clamp, no byte counter.
  const sim::DcqcnParams p = sim::hpcc_dcqcn(25'000'000'000);
  CHECK(p.ai_rate_bps == 5'000'000);
  CHECK(p.hai_rate_bps == 50'000'000);
  CHECK(p.ecn.kmin_bytes == 100'000);
  CHECK(p.ecn.kmax_bytes == 400'000);
  sim::DcqcnRp rp(p, 25'000'000'000);

  // First CNP at 0: alpha = 1, no cut yet; alpha ticks at 1, 2, 3, 4 us
  // (no CNP in them): 1048576 -> 1044480 -> 1040400 -> 1036335 -> 1032286
  // (each floor(a - a / 256)). At 4 us, after that tick, the cut: stage 0,
  // no clamp: Rt stays 25 G; cut = floor(25e9 * 1032286 / 2^21) =
  // floor(12305808067.32) = 12305808067, Rc = 12694191933.
  rp.on_cnp(0);
  CHECK(rp.rate_bps() == 25'000'000'000);
  CHECK(rp.next_timer() == 1'000);
  rp.advance_to(3'999);
  CHECK(rp.alpha() == 1'036'335);
  CHECK(rp.rate_bps() == 25'000'000'000);
  rp.advance_to(4'000);
  CHECK(rp.alpha() == 1'032'286);
  CHECK(rp.rate_bps() == 12'694'191'933);
  CHECK(rp.target_bps() == 25'000'000'000);
  CHECK(rp.next_timer() == 5'000);

  // 304 us: the increase timer, stage 0 < F: Rc = ceil((25e9 +
  // 12694191933) / 2) = 18847095967.
  rp.advance_to(304'000);
  CHECK(rp.rate_bps() == 18'847'095'967);

  // A CNP at 310 us: the tick at 311 us adds g, the cut at 312 us clamps
  // (stage 1 != 0): Rt = 18847095967. alpha at 310 us is 311564 (306 more
  // decays from 1032286, by the same recurrence); 311 us: floor(311564 *
  // 255 / 256) + 4096 = 310346 + 4096 = 314442; 312 us: floor(314442 * 255 /
  // 256) = 313213. cut = floor(18847095967 * 313213 / 2^21) = 2814843878,
  // Rc = 16032252089.
  rp.on_cnp(310'000);
  rp.advance_to(310'999);
  CHECK(rp.alpha() == 311'564);
  rp.advance_to(312'000);
  CHECK(rp.alpha() == 313'213);
  CHECK(rp.target_bps() == 18'847'095'967);
  CHECK(rp.rate_bps() == 16'032'252'089);

  // Increase events every 300 us from the cut: 612 us stage 0, fast
  // recovery: Rc = ceil((18847095967 + 16032252089) / 2) = 17439674028;
  // 912 us stage 1 = F, additive once: Rt = 18852095967, Rc = 18145884998;
  // 1212 us and 1512 us, hyper, + 50 M each: Rt = 18902095967, Rc =
  // 18523990483; Rt = 18952095967, Rc = 18738043225.
  rp.advance_to(612'000);
  CHECK(rp.rate_bps() == 17'439'674'028);
  rp.advance_to(912'000);
  CHECK(rp.target_bps() == 18'852'095'967);
  CHECK(rp.rate_bps() == 18'145'884'998);
  rp.advance_to(1'212'000);
  CHECK(rp.target_bps() == 18'902'095'967);
  CHECK(rp.rate_bps() == 18'523'990'483);
  rp.advance_to(1'512'000);
  CHECK(rp.target_bps() == 18'952'095'967);
  CHECK(rp.rate_bps() == 18'738'043'225);
}

TEST_CASE("DCQCN RP: fast recovery gives back all but 1 / 2^m of a cut that two senders share") {
  // Chapter 26's fairness argument, on two reaction points alone: the same
  // parameters (hpcc_dcqcn at 25 G, so the same AI and HAI), one at a line
  // rate of 25 G and one at 20 G, and the same CNPs as the test above (a
  // first CNP at 0, one at 310 us). Their alpha trajectories are the same
  // (alpha does not depend on the rate), so is every cut's fraction; the
  // rates differ. At 304 us, after the first cut and its fast recovery,
  // Rc = 18847095967 and 15077676774: d0 = 3769419193. The cut at 312 us
  // clamps each Rt to its Rc and takes alpha / 2 = 313213 / 2^21 off both:
  // the difference becomes d0 (1 - alpha / 2), as in AIMD. But every
  // increase event halves each Rc's distance to its own Rt (the AI and HAI
  // steps are the same for both), so after m events the difference is
  // d0 (1 - alpha / 2^(m + 1)): 85.06%, 92.53%, 96.27%, 98.13%, 99.07% of
  // d0. Every operation rounds to the bit/s: within 1 bit/s of the formula.
  const sim::DcqcnParams p = sim::hpcc_dcqcn(25'000'000'000);
  sim::DcqcnRp a(p, 25'000'000'000);
  sim::DcqcnRp b(p, 20'000'000'000);
  for (sim::DcqcnRp* rp : {&a, &b}) rp->on_cnp(0);
  for (sim::DcqcnRp* rp : {&a, &b}) rp->advance_to(304'000);
  const auto diff = [&] {
    return static_cast<double>(a.rate_bps()) - static_cast<double>(b.rate_bps());
  };
  const double d0 = diff();
  CHECK(d0 == 3'769'419'193.0);
  for (sim::DcqcnRp* rp : {&a, &b}) rp->on_cnp(310'000);
  for (sim::DcqcnRp* rp : {&a, &b}) rp->advance_to(312'000);
  REQUIRE(a.alpha() == 313'213);
  REQUIRE(b.alpha() == 313'213);
  CHECK(a.target_bps() == 18'847'095'967);
  CHECK(b.target_bps() == 15'077'676'774);
  const double alpha = 313'213.0 / kOne;
  CHECK(std::abs(diff() - d0 * (1 - alpha / 2)) <= 1.0);
  for (int m = 1; m <= 4; ++m) {
    CAPTURE(m);
    const sim::Time t = 312'000 + m * 300'000;  // the increase timer
    for (sim::DcqcnRp* rp : {&a, &b}) rp->advance_to(t);
    CHECK(std::abs(diff() - d0 * (1 - alpha / std::pow(2.0, m + 1))) <= 1.0);
  }
  // After fast recovery, additive and two hyper steps: 99.07% of d0 left.
  CHECK(diff() / d0 > 0.99);
}

TEST_CASE("DCQCN RP recovers to the line rate and stops its timers") {
  // After one cut the hyper increases bring Rt back to the line rate and
  // fast recovery halves the gap to it each step; alpha decays by at least
  // 1 per tick, so both reach their limits in finite time and the timers
  // stop (next_timer() = never). A later CNP is a first CNP again.
  sim::DcqcnRp rp(sim::hpcc_dcqcn(25'000'000'000), 25'000'000'000);
  rp.on_cnp(0);
  rp.advance_to(1'000'000'000);  // 1 s
  CHECK_FALSE(rp.active());
  CHECK(rp.rate_bps() == 25'000'000'000);
  CHECK(rp.alpha() == 0);
  CHECK(rp.next_timer() == INT64_MAX);
  rp.on_cnp(1'000'000'000);
  CHECK(rp.alpha() == kOne);
  CHECK(rp.next_timer() == 1'000'001'000);
}

TEST_CASE("DCQCN NP pacing: one CNP per interval") {
  sim::DcqcnNp np(4'000);
  CHECK(np.on_marked(100));
  CHECK_FALSE(np.on_marked(100));
  CHECK_FALSE(np.on_marked(4'099));
  CHECK(np.on_marked(4'100));
  CHECK_FALSE(np.on_marked(8'000));
  CHECK(np.on_marked(9'000));
}

namespace {

// A 100 Gb/s link, 1 us, IPv4 frames of a WRITE at path MTU 1024 (sizes:
// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload 1024 + ICRC 4 = 1082
// bytes; the first packet's RETH adds 16). On the wire each also takes 20
// bytes of preamble and gap: 1102 * 8 bits / 100 Gb/s = 88.16 ns, 88 ns by
// the link's rounding (the first 1118 bytes: 89 ns).
PairConfig dcqcn_pair(const sim::DcqcnParams& params, sim::CapturePoint point) {
  PairConfig c;
  c.fabric.dcqcn = params;
  c.fabric.capture_point = point;
  c.fixed_iova = true;
  c.buffer = 2 << 20;
  return c;
}

std::vector<Pkt> requests_in(const std::vector<Pkt>& all) {
  std::vector<Pkt> out;
  for (const Pkt& k : all)
    if (k.opcode >= 0x06 && k.opcode <= 0x0B) out.push_back(k);  // RC WRITE
  return out;
}

}  // namespace

TEST_CASE("DCQCN NP: every packet CE-marked, CNPs no closer than the interval") {
  // The RP's rate is pinned at the line rate (min rate = 100 G) so that the
  // requester sends back to back and the arrival times are known: packet k
  // arrives at a_0 + 88 k. The NP sends a CNP at packet 0, then at the first
  // packet 4 us after the last CNP: 88 * 45 = 3960 < 4000 <= 88 * 46 =
  // 4048, so at k = 0, 46, 92, ..., 1012 of the 1024 packets of 1 MiB:
  // 1012 / 46 + 1 = 23 CNPs, 4048 ns apart.
  sim::DcqcnParams params = sim::mlx5();
  params.min_rate_bps = 100'000'000'000;
  Pair p(dcqcn_pair(params, sim::CapturePoint::SenderPort));
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::after(0));
  const std::string path = simtest::temp_pcap("dcqcn_np");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 1 << 20, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();

  CHECK(p.fabric.stats().packets_ce_marked == 1024);
  CHECK(p.qb->stats().np_ecn_marked_roce_packets == 1024);
  CHECK(p.qb->stats().np_cnp_sent == 23);
  CHECK(p.qa->stats().rp_cnp_handled == 23);
  // The NICs' port counters say the same (one QP each).
  CHECK(p.b.counters().np_ecn_marked_roce_packets == 1024);
  CHECK(p.b.counters().np_cnp_sent == 23);
  CHECK(p.a.counters().rp_cnp_handled == 23);
  CHECK(p.a.counters().np_cnp_sent == 0);

  const auto all = simtest::read_capture(path);
  std::vector<Pkt> cnps;
  for (const Pkt& k : all) {
    CHECK(k.icrc_ok);
    CHECK(k.ip_checksum_ok);
    CHECK_FALSE(k.malformed);
    if (k.opcode == wire::opcode::kCnp) cnps.push_back(k);
  }
  REQUIRE(cnps.size() == 23);
  const auto reqs = requests_in(all);
  REQUIRE(reqs.size() == 1024);
  for (std::size_t i = 1; i < reqs.size(); ++i)
    CHECK(reqs[i].time_ns - reqs[i - 1].time_ns == (i == 1 ? 89 : 88));
  for (std::size_t i = 1; i < cnps.size(); ++i)
    CHECK(cnps[i].time_ns - cnps[i - 1].time_ns >= 4'000);
  for (const Pkt& c : cnps) {
    CHECK(c.dest_qp == p.qa->qp_num());
    CHECK(c.becn);
    CHECK(c.dscp == 48);
    CHECK(c.ecn == 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN NP off at the receiver: the marks are counted, no CNP leaves, the rate stays") {
  // mlx5 parameters, every packet CE-marked, as in the test above, but B's
  // notification point off (HostConfig::dcqcn_np, as with
  // ecn/roce_np/enable/<prio> = 0). B still counts the 1024 marked requests
  // (np_ecn_marked_roce_packets) and sends no CNP: np_cnp_sent = 0, so A
  // handles none and its reaction point never leaves the line rate: at B's
  // port packet k arrives at s + 1089 + 88 k (the first takes 89 ns to
  // send, each later one 88), every request 88 ns after the one before, as
  // without DCQCN.
  PairConfig c = dcqcn_pair(sim::mlx5(), sim::CapturePoint::ReceiverPort);
  c.dcqcn_np = false;
  Pair p(c);
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::after(0));
  const std::string path = simtest::temp_pcap("dcqcn_np_off");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 1 << 20, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();

  CHECK(p.fabric.stats().packets_ce_marked == 1024);
  CHECK(p.b.counters().np_ecn_marked_roce_packets == 1024);
  CHECK(p.b.counters().np_cnp_sent == 0);
  CHECK(p.a.counters().rp_cnp_handled == 0);
  CHECK(p.a.counters().rp_cnp_ignored == 0);
  const sim::DcqcnRp* rp = p.qa->dcqcn();
  REQUIRE(rp != nullptr);  // A's reaction point is on; nothing reached it
  CHECK_FALSE(rp->active());
  const auto all = simtest::read_capture(path);
  std::size_t cnps = 0;
  for (const Pkt& k : all) cnps += k.opcode == wire::opcode::kCnp ? 1 : 0;
  CHECK(cnps == 0);
  // At B's port: every request arrives CE-marked, 88 ns apart.
  const auto reqs = requests_in(all);
  REQUIRE(reqs.size() == 1024);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].ecn == 3);
    if (i > 0) CHECK(reqs[i].time_ns - reqs[i - 1].time_ns == 88);
  }
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN RP off at the sender: CNPs arrive and are ignored, the rate stays") {
  // Every packet CE-marked, B's notification point on (mlx5: one CNP per
  // 4 us), A's reaction point off (HostConfig::dcqcn_rp, as with
  // ecn/roce_rp/enable/<prio> = 0). A has no reaction point, so its
  // requests leave back to back at the line rate, exactly as in the NP
  // pacing test above with the rate pinned: the same 23 CNPs (packets 0,
  // 46, ..., 1012), each counted by A as rp_cnp_ignored, none handled.
  PairConfig c = dcqcn_pair(sim::mlx5(), sim::CapturePoint::SenderPort);
  c.dcqcn_rp = false;
  Pair p(c);
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::after(0));
  const std::string path = simtest::temp_pcap("dcqcn_rp_off");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 1 << 20, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();

  CHECK(p.qa->dcqcn() == nullptr);
  CHECK(p.b.counters().np_ecn_marked_roce_packets == 1024);
  CHECK(p.b.counters().np_cnp_sent == 23);
  CHECK(p.a.counters().rp_cnp_handled == 0);
  CHECK(p.a.counters().rp_cnp_ignored == 23);
  CHECK(p.qa->stats().rp_cnp_ignored == 23);
  const auto all = simtest::read_capture(path);
  const auto reqs = requests_in(all);
  REQUIRE(reqs.size() == 1024);
  // As A sent them: ECN-capable (ECT(0)), back to back at the line rate.
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    CHECK(reqs[i].ecn == 2);
    CHECK(reqs[i].time_ns - reqs[i - 1].time_ns == (i == 1 ? 89 : 88));
  }
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN end to end: one CE mark halves the sender's rate (dcqcn_paper)") {
  // dcqcn_paper: alpha = 1 on the first CNP, so the cut halves the rate:
  // 100 G -> 50 G, Rt = 100 G. Only PSN 10 is marked. After the CNP reaches
  // A, request packets leave every floor(1102 * 8 / 50 G) = floor(176.32) =
  // 176 ns instead of 88. The increase timer (55 us) and byte counter
  // (10 MB) do not fire within the transfer (256 KiB: ~41 us).
  Pair p(dcqcn_pair(sim::dcqcn_paper(), sim::CapturePoint::ReceiverPort));
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::psn(10));
  sim::DcqcnRp* rp = p.qa->dcqcn();
  REQUIRE(rp != nullptr);
  std::vector<sim::DcqcnSample> log;
  rp->set_observer([&](const sim::DcqcnSample& s) { log.push_back(s); });
  const std::string path = simtest::temp_pcap("dcqcn_e2e");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 256 << 10, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();

  CHECK(p.fabric.stats().packets_ce_marked == 1);
  CHECK(p.qb->stats().np_ecn_marked_roce_packets == 1);
  CHECK(p.qb->stats().np_cnp_sent == 1);
  CHECK(p.qa->stats().rp_cnp_handled == 1);
  CHECK(rp->rate_bps() == 50'000'000'000);
  CHECK(rp->target_bps() == 100'000'000'000);

  const auto all = simtest::read_capture(path);
  std::vector<Pkt> cnps;
  for (const Pkt& k : all) {
    CHECK(k.icrc_ok);
    CHECK(k.ip_checksum_ok);
    CHECK_FALSE(k.malformed);
    if (k.opcode == wire::opcode::kCnp) cnps.push_back(k);
  }
  REQUIRE(cnps.size() == 1);
  const Pkt& cnp = cnps[0];
  CHECK(cnp.becn);
  CHECK(cnp.dscp == 48);
  CHECK(cnp.dest_qp == p.qa->qp_num());
  // At the receiving port the CNP is stamped when it reaches A: that is when
  // the RP cut the rate (the observer's Cnp and Decrease samples).
  REQUIRE(log.size() >= 3);
  CHECK(log[0].event == sim::DcqcnSample::Event::Cnp);
  CHECK(log[1].event == sim::DcqcnSample::Event::Decrease);
  CHECK(log[1].time == cnp.time_ns);
  CHECK(log[1].rate_bps == 50'000'000'000);

  // Requests: ECT(0) (10b) as sent, CE (11b) for PSN 10 only.
  const auto reqs = requests_in(all);
  REQUIRE(reqs.size() == 256);
  for (const Pkt& k : reqs) CHECK(k.ecn == (k.psn == 10 ? 3 : 2));
  for (const Pkt& k : all)
    if (k.opcode == wire::opcode::kRcAcknowledge) CHECK(k.ecn == 0);
  // Arrivals before the CNP reaches A: 88 ns apart (packet k arrives at its
  // start + its serialisation + 1 us: the first starts at s, takes 89 ns,
  // arrives at s + 1089; packet k >= 1 starts at s + 89 + 88 (k - 1), takes
  // 88 ns, arrives at s + 1089 + 88 k).
  // From the CNP's arrival at A plus one packet built at the old rate, the
  // link's 1 us and the NIC's 400 ns lookahead: 176 ns apart, to the end.
  std::size_t slow = 0;
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    const std::int64_t gap = reqs[i].time_ns - reqs[i - 1].time_ns;
    if (reqs[i].time_ns <= cnp.time_ns) CHECK(gap == 88);
    if (reqs[i - 1].time_ns > cnp.time_ns + 1'000 + 400 + 352) {  // 352: two packets at 176
      CHECK(gap == 176);
      ++slow;
    }
  }
  CHECK(slow > 200);
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN on READ responses: the requester's NIC notifies, the responder's QP slows down") {
  // A READs 256 KiB from B. The data flows B -> A, so B's QP is the one to
  // pace: its READ responses are ECT(0) and leave at its reaction point's
  // rate; a CE mark on one reaches A's NIC, whose notification point sends
  // the CNP to B's QP (the requester's destination QP). dcqcn_paper: alpha
  // = 1 on the first CNP, so B's rate halves, 100 G -> 50 G, Rt = 100 G.
  // Only response PSN 10 is marked (a PSN rule marks requests only: the
  // 11th packet on B -> A). Response sizes at path MTU 1024: a
  // Middle 1082 bytes (1102 on the wire: 88 ns at 100 G, floor(176.32) =
  // 176 at 50 G), a First or Last 1086 with its AETH (88 and floor(176.96)
  // = 176). The READ request and ACKs: none to pace.
  Pair p(dcqcn_pair(sim::dcqcn_paper(), sim::CapturePoint::ReceiverPort));
  // B sends nothing but the 256 responses, PSNs 0 .. 255: the 11th is PSN 10.
  p.fabric.link(p.b, p.a).ce_marks.push_back(sim::DropRule::nth(11));
  p.fill_a(0);
  for (std::size_t i = 0; i < p.buf_b.size(); ++i)
    p.buf_b[i] = static_cast<std::uint8_t>(i * 7 + (i >> 10));
  const std::string path = simtest::temp_pcap("dcqcn_read");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_READ, 0, 256 << 10, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();
  CHECK(std::memcmp(p.buf_a.data(), p.buf_b.data(), 256 << 10) == 0);

  CHECK(p.fabric.stats().packets_ce_marked == 1);
  CHECK(p.qa->stats().np_ecn_marked_roce_packets == 1);
  CHECK(p.qa->stats().np_cnp_sent == 1);
  CHECK(p.qb->stats().rp_cnp_handled == 1);
  CHECK(p.qb->stats().np_cnp_sent == 0);
  sim::DcqcnRp* rp = p.qb->dcqcn();
  REQUIRE(rp != nullptr);
  CHECK(rp->rate_bps() == 50'000'000'000);
  CHECK(rp->target_bps() == 100'000'000'000);

  const auto all = simtest::read_capture(path);
  std::vector<Pkt> cnps, responses;
  for (const Pkt& k : all) {
    CHECK(k.icrc_ok);
    CHECK(k.ip_checksum_ok);
    if (k.opcode == wire::opcode::kCnp) cnps.push_back(k);
    if (k.opcode >= 0x0D && k.opcode <= 0x0F) responses.push_back(k);  // READ responses
    if (k.opcode == wire::opcode::kRcReadRequest) CHECK(k.ecn == 2);
  }
  REQUIRE(cnps.size() == 1);
  CHECK(cnps[0].becn);
  CHECK(cnps[0].dscp == 48);
  CHECK(cnps[0].dest_qp == p.qb->qp_num());
  CHECK(cnps[0].src == p.a.config().ip);  // from the requester's NIC
  REQUIRE(responses.size() == 256);
  for (const Pkt& k : responses) CHECK(k.ecn == (k.psn == 10 ? 3 : 2));
  // Arrivals at A: 88 ns apart until B has cut its rate (the CNP is stamped
  // when it reaches B); from then on, after one response built at the old
  // rate, the link's 1 us and the NIC's 400 ns lookahead, 176 ns apart.
  const std::int64_t cut = cnps[0].time_ns;
  std::size_t slow = 0;
  for (std::size_t i = 1; i < responses.size(); ++i) {
    const std::int64_t gap = responses[i].time_ns - responses[i - 1].time_ns;
    if (responses[i].time_ns <= cut) CHECK(gap == 88);
    if (responses[i - 1].time_ns > cut + 1'000 + 400 + 352) {
      CHECK(gap == 176);
      ++slow;
    }
  }
  CHECK(slow > 200);
  if (std::getenv("RDMALAB_KEEP_CAPTURE") == nullptr) std::filesystem::remove(path);
}

TEST_CASE("DCQCN off (the default): no ECT, no CE marks, no CNPs, the same capture") {
  // The same WRITE twice, DCQCN off: once as is, once with a CE rule that
  // would mark every packet. No packet is ECN-capable, so the rule marks
  // none, and the two captures are the same bytes.
  auto run = [](bool rule, const std::string& path) {
    PairConfig c;
    c.fixed_iova = true;
    Pair p(c);
    if (rule) p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::after(0));
    p.fabric.start_capture(path);
    REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64 << 10, 0, 1) == 0);
    CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
    p.fabric.stop_capture();
    CHECK(p.fabric.stats().packets_ce_marked == 0);
    CHECK(p.qb->stats().np_cnp_sent == 0);
    CHECK(p.qa->dcqcn() == nullptr);
  };
  const std::string plain = simtest::temp_pcap("dcqcn_off");
  const std::string ruled = simtest::temp_pcap("dcqcn_off_rule");
  run(false, plain);
  run(true, ruled);
  const auto all = simtest::read_capture(plain);
  REQUIRE(all.size() > 64);
  for (const Pkt& k : all) {
    CHECK(k.ecn == 0);
    CHECK(k.dscp == 0);
    CHECK(k.opcode != wire::opcode::kCnp);
  }
  std::ifstream a(plain, std::ios::binary);
  std::ifstream b(ruled, std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  const std::string bytes_b((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  CHECK(bytes_a == bytes_b);
  std::filesystem::remove(plain);
  std::filesystem::remove(ruled);
}

TEST_CASE("DCQCN capture in tests/data: the simulator writes it byte for byte") {
  // tests/data/sim_dcqcn_cnp.pcap, which the tshark check reads (CNP opcode
  // 129 with BECN, ip.dsfield.ecn 2 and 3), is this run: dcqcn_paper, a
  // 32 KiB WRITE (32 packets), PSN 3 marked CE, the receiving ports' capture.
  // The same seed gives the same bytes; RDMALAB_WRITE_TEST_DATA=1 rewrites it.
  Pair p(dcqcn_pair(sim::dcqcn_paper(), sim::CapturePoint::ReceiverPort));
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::psn(3));
  const std::string path = simtest::temp_pcap("dcqcn_data");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 32 << 10, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();
  CHECK(p.qb->stats().np_cnp_sent == 1);
  const std::string data = std::string(RDMALAB_TEST_DATA) + "/sim_dcqcn_cnp.pcap";
  auto slurp = [](const std::string& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  if (const char* w = std::getenv("RDMALAB_WRITE_TEST_DATA"); w != nullptr && w[0] == '1')
    std::filesystem::copy_file(path, data, std::filesystem::copy_options::overwrite_existing);
  const std::string made = slurp(path);
  CHECK(made.size() > 32 * 1082);
  CHECK(made == slurp(data));
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN over IPv6: the CE mark sits in the traffic class, the ICRC still verifies") {
  // IPv6 keeps ECN in the traffic class's low two bits (the first word's
  // bits 21:20); no header checksum. PSN 2 of an 8-packet WRITE is marked:
  // one CNP, and every frame's ICRC, which masks the traffic class, is good.
  PairConfig c = dcqcn_pair(sim::dcqcn_paper(), sim::CapturePoint::ReceiverPort);
  c.ipv6 = true;
  Pair p(c);
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::psn(2));
  const std::string path = simtest::temp_pcap("dcqcn_v6");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 8 << 10, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();
  CHECK(p.qb->stats().np_cnp_sent == 1);
  CHECK(p.qa->stats().rp_cnp_handled == 1);
  const auto all = simtest::read_capture(path);
  std::size_t cnps = 0;
  for (const Pkt& k : all) {
    CHECK(k.icrc_ok);
    CHECK_FALSE(k.malformed);
    if (k.opcode == wire::opcode::kCnp) {
      ++cnps;
      CHECK(k.dscp == 48);
      CHECK(k.becn);
    }
  }
  CHECK(cnps == 1);
  const auto reqs = requests_in(all);
  REQUIRE(reqs.size() == 8);
  for (const Pkt& k : reqs) CHECK(k.ecn == (k.psn == 2 ? 3 : 2));
  std::filesystem::remove(path);
}

TEST_CASE("DCQCN re-times a packet that waits for the rate when the rate changes") {
  // The reference code re-times a QP's next packet on every change of rate
  // (rdma-hw.cc, ChangeRate): a QP cut to a low rate does not sit out the
  // old gap once its rate has risen. Here the rate steps are spelled out:
  // Periodic reaction, alpha fixed at 1 (g = 0), rate_on_first_cnp 1 G, a
  // cut 2 us after the CNP, an increase event every 10 us after it, AI =
  // HAI = 0, F = 1. With the CNP reaching A at t_c:
  //   t_c           1 G        (the first CNP sets Rc = Rt = 1 G)
  //   t_c + 2 us    0.5 G      (cut: Rc - Rc * 1 / 2; Rt stays, no clamp)
  //   t_c + 12 us   0.75 G     (fast recovery: ceil((1 G + 0.5 G) / 2))
  //   t_c + 22 us   0.875 G    (s = F: additive, + 0)
  //   t_c + 32 us   0.9375 G   (hyper, + 0)
  //   t_c + 42 us   0.96875 G
  // A middle packet is 1082 bytes, 1102 with preamble and gap: 8816 bits,
  // a gap of 8816 ns at 1 G, 17632 at 0.5 G, 11754 at 0.75 G (rounded down),
  // 10075 at 0.875 G, 9403 at 0.9375 G, 9100 at 0.96875 G. A packet leaves
  // at the first time its gap, at the rate then, has passed since its
  // predecessor started.
  sim::DcqcnParams pr;
  pr.reaction = sim::DcqcnParams::Reaction::Periodic;
  pr.increase = sim::DcqcnParams::Increase::Reference;
  pr.g = 0;
  pr.initial_alpha = kOne;
  pr.alpha_period = 1'000'000'000;  // no alpha tick within the test
  pr.rate_decrease_period = 2'000;
  pr.rate_increase_period = 10'000;
  pr.byte_counter = 0;
  pr.fast_recovery_stages = 1;
  pr.ai_rate_bps = 0;
  pr.hai_rate_bps = 0;
  pr.min_rate_bps = 1'000'000;
  pr.rate_on_first_cnp_bps = 1'000'000'000;
  Pair p(dcqcn_pair(pr, sim::CapturePoint::SenderPort));
  p.fabric.link(p.a, p.b).ce_marks.push_back(sim::DropRule::psn(4));
  sim::DcqcnRp* rp = p.qa->dcqcn();
  REQUIRE(rp != nullptr);
  std::vector<sim::DcqcnSample> log;
  rp->set_observer([&](const sim::DcqcnSample& s) { log.push_back(s); });
  const std::string path = simtest::temp_pcap("dcqcn_retime");
  p.fabric.start_capture(path);
  REQUIRE(p.post(IBV_WR_RDMA_WRITE, 0, 64 << 10, 0, 1) == 0);
  CHECK(Pair::poll_one(*p.cq_a).status == IBV_WC_SUCCESS);
  p.fabric.stop_capture();

  using Ev = sim::DcqcnSample::Event;
  REQUIRE(log.size() >= 6);
  const sim::Time tc = log[0].time;
  CHECK(log[0].event == Ev::Cnp);
  CHECK(log[0].rate_bps == 1'000'000'000);
  const std::vector<std::pair<sim::Time, std::uint64_t>> steps = {{2'000, 500'000'000},
                                                                  {12'000, 750'000'000},
                                                                  {22'000, 875'000'000},
                                                                  {32'000, 937'500'000},
                                                                  {42'000, 968'750'000}};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CHECK(log[i + 1].time == tc + steps[i].first);
    CHECK(log[i + 1].rate_bps == steps[i].second);
  }

  // Requests at the sender's port (stamped when they start). Up to PSN 28
  // they leave 88 ns apart; 28 was built before the CNP came (the NIC's
  // 400 ns lookahead) and starts at s28, 17 ns after t_c.
  const auto reqs = requests_in(simtest::read_capture(path));
  REQUIRE(reqs.size() == 64);
  const auto start = [&](std::size_t psn) { return reqs.at(psn).time_ns; };
  REQUIRE(start(28) - start(27) == 88);
  REQUIRE(start(28) > tc);
  REQUIRE(start(28) - tc < 12'000 - 11'754);
  // PSN 29: 8816 ns at 1 G, then 17632 at 0.5 G, then at t_c + 12 us
  // 11754 at 0.75 G, already past (s28 - t_c < 246): it leaves at once.
  CHECK(start(29) == tc + 12'000);
  // PSN 30: 11754 after it would be t_c + 23754; at t_c + 22 us the gap
  // becomes 10075, t_c + 22075, still ahead: it waits for that.
  // (Without the re-timing it would leave 1679 ns later.)
  CHECK(start(30) == start(29) + 10'075);
  // PSN 31: 10075 after 30 is t_c + 32150; at t_c + 32 us 9403, already
  // past (t_c + 31478): it leaves at t_c + 32 us.
  CHECK(start(31) == tc + 32'000);
  // PSN 32: 9403 after 31, t_c + 41403, before the next change.
  CHECK(start(32) == start(31) + 9'403);
  // PSN 33: at 0.96875 G since t_c + 42 us: 9100 after 32.
  CHECK(start(33) == start(32) + 9'100);
  std::filesystem::remove(path);
}
