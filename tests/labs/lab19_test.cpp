// Lab 19 (ECN and PFC misconfigured) on the simulator: the lab's --json
// against what each case must show, derived first
// (docs/en/27-lab19-ecn-misconfig.md, "What the cases must show"), and
// rdmapcap's reading of each case's capture.
//
// The fabric is lab 18's dumbbell (see lab18_test.cpp for the frame sizes
// and the ideal incast T*): 8 senders, 2 x 1 MiB each, host links 100 Gb/s
// with 1 us of propagation, the link between the switches 1 Tb/s. ECN with
// hpcc-dcqcn at 100 Gb/s: Kmin 400 KB, Kmax 1600 KB.
//   - no-cnp and cnp-ignored: PFC XOFF = 2 Kmax = 3.2 MB. Whatever the NICs
//     do, a sender that is never slowed makes the bottleneck hold (N - 1) /
//     N of the 16 MiB (14 MiB): past Kmax, where every ECT frame is marked,
//     and past XOFF: marks > 0 and pauses > 0. Nothing of priority 3 is
//     dropped (PFC with lab 18's headroom), so every mark reaches a
//     receiver: CE in the capture (taken at the receiving ports) = the
//     switches' marks = np_ecn_marked_roce_packets, exactly. No CNP is
//     handled (rp_cnp_handled = 0): the bottleneck never idles, as in lab
//     18's pfc run, so the last completion is within T* + 300 ns.
//       no-cnp: the NP is off: np_cnp_sent = 0, no CNP in the capture, the
//       reaction points never leave the line rate (lowest = 100 Gb/s), and
//       the analyser finds "CE without CNP".
//       cnp-ignored: the NP sends (np_cnp_sent > 0), no drop in any class,
//       so every CNP reaches its sender and is ignored: rp_cnp_ignored =
//       np_cnp_sent = CNPs in the capture.
//   - pfc-first: XOFF = 128 KiB < Kmin. The bottleneck's queue holds at most
//     XOFF + a frame (4170) + two link delays and two frames (4190 on the
//     wire) at 1 Tb/s: 131072 + 4170 + 2 x (125000 + 4190) = 393622 bytes <
//     400000 = Kmin: no mark at the bottleneck. The left switch's queues stay
//     a few frames long until the link between the switches is paused (it is
//     as fast as all the left hosts): the first pause comes before any mark.
//   - pfc-storm: PFC only, XOFF 128 KiB. The receiver's NIC pauses from F =
//     50 us; the run ends at F + 150 ms. A pause of 0xFFFF quanta at 100 Gb/s
//     is 335539 ns, renewed every 167769 ns: floor(150e6 / 167769) + 1 = 895
//     XOFF frames. The bytes stuck for the receiver hold the right switch's
//     port from the other switch above XOFF for good (they never leave), so
//     that link stays paused; the left switch's queue to it fills and every
//     sender's port crosses XOFF: all 8 senders are paused. The victim (prio
//     3, posted at F + 1 ms, to another receiver) shares the paused link:
//     none of its messages completes, and its NIC is paused. The prio-0
//     victim is never paused: at least 95% of its rate alone (lab 18's
//     victim floor, 89.80 Gb/s). The capture (at the hosts' sending ports)
//     holds the receiver's own pauses: a storm from its MAC longer than
//     rdmapcap's default 100 ms.
#include <cstdint>
#include <filesystem>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr std::int64_t kJitter = 100;

const json& find_case(const json& j, const std::string& name) {
  for (const auto& c : j.at("cases"))
    if (c.at("case") == name) return c;
  FAIL("no case " << name);
  return j;
}

std::string stem_of(const std::string& cap) {
  return cap.substr(0, cap.rfind(".pcap"));
}

}  // namespace

TEST_CASE("lab19 golden: transcripts in English and Chinese") {
  // One capture per run, next to --capture: compare_golden masks their stem.
  for (const std::string lang : {"en", "zh"}) {
    compare_golden(LAB_lab19_ecn_misconfig, "lab19", {}, lang);
    const std::string stem = stem_of(tmp_capture("lab19_" + lang));
    for (int k = 1; k <= 4; ++k) fs::remove(stem + "-case" + std::to_string(k) + ".pcap");
  }
}

TEST_CASE("lab19 the four cases against the derivations, and rdmapcap on their captures") {
  const std::string cap = tmp_capture("lab19_cases");
  const auto j = run_json(
      {LAB_lab19_ecn_misconfig, "--backend", "sim", "--json", "--seed", "1", "--capture", cap});
  const std::int64_t ideal = j.at("derived").at("ideal_ns").get<std::int64_t>();
  CHECK(ideal == 1'370'380);  // lab 18's T* at the same knobs (lab18_test.cpp)
  CHECK(j.at("config").at("kmin_bytes").get<std::uint64_t>() == 400'000);
  CHECK(j.at("config").at("kmax_bytes").get<std::uint64_t>() == 1'600'000);
  CHECK(j.at("config").at("ecn_xoff_bytes").get<std::uint64_t>() == 3'200'000);

  for (const std::string name : {"no-cnp", "cnp-ignored"}) {
    CAPTURE(name);
    const json& c = find_case(j, name);
    CHECK(c.at("complete").get<bool>());
    CHECK(c.at("roce_drops").get<std::uint64_t>() == 0);
    CHECK(c.at("np_ecn_marked_roce_packets").get<std::uint64_t>() > 0);
    CHECK(c.at("pause_frames").get<std::uint64_t>() > 0);
    CHECK(c.at("rp_cnp_handled").get<std::uint64_t>() == 0);
    const std::uint64_t marks = c.at("ecn_marked_left").get<std::uint64_t>() +
                                c.at("ecn_marked_right").get<std::uint64_t>();
    CHECK(c.at("wire").at("ecn_ce").get<std::uint64_t>() == marks);
    CHECK(c.at("np_ecn_marked_roce_packets").get<std::uint64_t>() == marks);
    CHECK(c.at("completion_ns").get<std::int64_t>() >= ideal);
    CHECK(c.at("completion_ns").get<std::int64_t>() <= ideal + 3 * kJitter);
  }
  const json& no_cnp = find_case(j, "no-cnp");
  CHECK(no_cnp.at("np_cnp_sent").get<std::uint64_t>() == 0);
  CHECK(no_cnp.at("wire").at("cnps").get<std::uint64_t>() == 0);
  CHECK(no_cnp.at("rp_present").get<bool>());
  CHECK(no_cnp.at("lowest_rate_bps").get<std::uint64_t>() == 100'000'000'000ULL);
  CHECK(no_cnp.at("wire").at("ce_without_cnp").get<std::uint64_t>() > 0);

  const json& ignored = find_case(j, "cnp-ignored");
  const std::uint64_t sent = ignored.at("np_cnp_sent").get<std::uint64_t>();
  CHECK(sent > 0);
  CHECK(ignored.at("drops").get<std::uint64_t>() == 0);
  CHECK(ignored.at("rp_cnp_ignored").get<std::uint64_t>() == sent);
  CHECK(ignored.at("wire").at("cnps").get<std::uint64_t>() == sent);
  CHECK_FALSE(ignored.at("rp_present").get<bool>());

  const json& first = find_case(j, "pfc-first");
  const std::uint64_t bound = 131'072 + 4'170 + 2 * (125'000 + 4'190);
  CHECK(j.at("derived").at("pfc_first_queue_bound").get<std::uint64_t>() == bound);
  CHECK(first.at("complete").get<bool>());
  CHECK(first.at("roce_drops").get<std::uint64_t>() == 0);
  CHECK(first.at("ecn_marked_bottleneck").get<std::uint64_t>() == 0);
  CHECK(first.at("ecn_marked_right").get<std::uint64_t>() == 0);
  CHECK(first.at("max_queue_bytes").get<std::uint64_t>() <= bound);
  CHECK(first.at("pause_frames").get<std::uint64_t>() > 0);
  const std::int64_t first_pause = first.at("first_pause_ns").get<std::int64_t>();
  const std::int64_t first_mark = first.at("first_mark_ns").get<std::int64_t>();
  CHECK(first_pause >= 0);
  CHECK((first_mark < 0 || first_pause < first_mark));
  CHECK(first.at("wire").at("ecn_ce").get<std::uint64_t>() ==
        first.at("ecn_marked_left").get<std::uint64_t>());

  const json& storm = find_case(j, "pfc-storm");
  CHECK(j.at("derived").at("refresh_ns").get<std::int64_t>() == 167'769);
  CHECK(storm.at("storm_xoff_frames").get<std::uint64_t>() == 150'000'000 / 167'769 + 1);
  CHECK(storm.at("roce_drops").get<std::uint64_t>() == 0);
  CHECK(storm.at("senders_paused").get<std::uint64_t>() == 8);
  CHECK(storm.at("isl_paused_ns").get<std::int64_t>() > 100'000'000);
  CHECK(storm.at("storm_paused_ns").get<std::int64_t>() > 100'000'000);
  CHECK(storm.at("victim_messages").get<std::uint64_t>() == 0);
  CHECK(storm.at("victim_rx_pause").get<std::uint64_t>() > 0);
  CHECK(storm.at("other_messages").get<std::uint64_t>() == 2);
  CHECK(storm.at("other_gbps").get<double>() >=
        0.95 * j.at("derived").at("victim_ideal_gbps").get<double>());
  CHECK(storm.at("wire").at("storm_from_receiver").get<bool>());
  CHECK(storm.at("wire").at("longest_storm_ns").get<std::int64_t>() > 100'000'000);

  for (const auto& c : j.at("checks")) {
    CAPTURE(c.at("id").get<std::string>());
    CHECK(c.at("ok").get<bool>());
  }

  // The command the lab prints, `rdmapcap summary CAPTURE`, on each capture.
  const std::string stem = stem_of(cap);
  const auto summary = [&](int k) {
    const std::string pcap = stem + "-case" + std::to_string(k) + ".pcap";
    REQUIRE(fs::exists(pcap));
    const auto text = run({RDMAPCAP, "summary", pcap});
    CHECK(text.status >= 0);  // 1: the capture holds errors (the storm's)
    CHECK(text.status <= 1);
    CHECK_FALSE(text.out.empty());
    const auto r = run({RDMAPCAP, "summary", "--json", pcap});
    CHECK(r.status >= 0);
    CHECK(r.status <= 1);
    return json::parse(r.out);
  };
  // no-cnp: conversations with CE marks and no CNP.
  {
    const json s = summary(1);
    std::uint64_t ce = 0, cnps = 0, silent = 0;
    for (const auto& conv : s.at("conversations"))
      for (const auto& ch : conv.at("channels")) {
        ce += ch.at("ecn_ce").get<std::uint64_t>();
        cnps += ch.at("cnps").get<std::uint64_t>();
        if (ch.at("ecn_ce").get<std::uint64_t>() > 0 && ch.at("cnps").get<std::uint64_t>() == 0)
          ++silent;
      }
    CHECK(ce == no_cnp.at("wire").at("ecn_ce").get<std::uint64_t>());
    CHECK(cnps == 0);
    CHECK(silent > 0);
  }
  // cnp-ignored: CNPs in the conversations. The analyser ties a CNP to a
  // channel once it has seen that channel's responses: a WRITE is ACKed at
  // its end only, so the CNPs before each sender's first ACK (about half of
  // them, the first message takes half the incast) are on the wire (the
  // lab's count, checked above) but in no channel's count.
  {
    const json s = summary(2);
    std::uint64_t cnps = 0;
    for (const auto& conv : s.at("conversations"))
      for (const auto& ch : conv.at("channels")) cnps += ch.at("cnps").get<std::uint64_t>();
    CHECK(cnps > 0);
    CHECK(cnps <= sent);
  }
  // pfc-first: pause frames, no storm.
  {
    const json s = summary(3);
    CHECK(s.at("capture").at("pause_frames").get<std::uint64_t>() > 0);
    for (const auto& p : s.at("pfc")) CHECK(p.at("storms").get<std::uint64_t>() == 0);
  }
  // pfc-storm: a storm from the receiver (sim10: 02:00:00:00:00:0b), still
  // paused at the end of the capture.
  {
    const json s = summary(4);
    bool found = false;
    for (const auto& p : s.at("pfc"))
      if (p.at("src") == "02:00:00:00:00:0b") {
        found = true;
        CHECK(p.at("storms").get<std::uint64_t>() >= 1);
        CHECK(p.at("paused_at_end").get<bool>());
        CHECK(p.at("frames").get<std::uint64_t>() == 895);
      }
    CHECK(found);
  }
  for (int k = 1; k <= 4; ++k) fs::remove(stem + "-case" + std::to_string(k) + ".pcap");
}

// InfiniBand (--link-layer ib): the one case, one-vl. The same dumbbell
// with credits instead of PFC and no ECN; the senders and the victim on SL
// 3, the second victim on SL 0; the switches map every SL to VL 0. Derived:
// T* with IB packet sizes (lab18_test.cpp derives it: 1,353,984 ns), the
// last completion within the host links' jitter of it (credits keep the
// bottleneck busy, lab 18's credits run); nothing dropped; both victims
// take one turn in N + 2 in the left switch's VL 0 queue, so each sends
// M S bytes in T*, 12.39 Gb/s, within 10% (with the tables right the SL 0
// victim runs near its line rate: lab 18); and the capture at the hosts'
// ports holds packets sent on SL 3 that arrive in VL 0.
TEST_CASE("lab19 --link-layer ib: every SL on one VL, and the SL 0 victim held up") {
  const std::string cap = tmp_capture("lab19_ib");
  const auto j = run_json({LAB_lab19_ecn_misconfig, "--backend", "sim", "--json", "--link-layer",
                           "ib", "--seed", "1", "--capture", cap});
  CHECK(j.at("ok").get<bool>());
  const std::int64_t ideal = j.at("derived").at("ideal_ns").get<std::int64_t>();
  CHECK(ideal == 1'353'984);
  REQUIRE(j.at("cases").size() == 1);
  const json& c = find_case(j, "one-vl");
  CHECK(c.at("complete").get<bool>());
  CHECK(c.at("drops").get<std::uint64_t>() == 0);
  CHECK(c.at("pause_frames").get<std::uint64_t>() == 0);
  CHECK(c.at("completion_ns").get<std::int64_t>() >= ideal);
  CHECK(c.at("completion_ns").get<std::int64_t>() <= ideal + 3 * kJitter);
  const double share = 2.0 * (1 << 20) * 8 / static_cast<double>(ideal);
  for (const char* who : {"victim_gbps", "other_gbps"}) {
    CAPTURE(who);
    CHECK(c.at(who).get<double>() >= 0.9 * share);
    CHECK(c.at(who).get<double>() <= 1.1 * share);
  }
  CHECK(c.at("wire").at("vl_not_sl").get<std::uint64_t>() > 0);
  for (const auto& k : j.at("checks")) {
    CAPTURE(k.at("id").get<std::string>());
    CHECK(k.at("ok").get<bool>());
  }
  fs::remove(stem_of(cap) + "-case5.pcap");
  // The RoCE cases are refused on InfiniBand, one-vl on RoCE.
  CHECK(run({LAB_lab19_ecn_misconfig, "--backend", "sim", "--link-layer", "ib", "--case", "no-cnp"})
            .status == 2);
  CHECK(run({LAB_lab19_ecn_misconfig, "--backend", "sim", "--case", "one-vl"}).status == 2);
}

TEST_CASE("lab19 bad input: a real device, too few senders, an unknown case") {
  CHECK(run({LAB_lab19_ecn_misconfig, "--backend", "sim", "--senders", "1"}).status == 2);
  CHECK(run({LAB_lab19_ecn_misconfig, "--backend", "sim", "--case", "ecn"}).status == 2);
  CHECK(run({LAB_lab19_ecn_misconfig, "--backend", "sim", "-s", "1"}).status == 2);
  const auto en =
      run_pty({LAB_lab19_ecn_misconfig, "--lang", "en", "--backend", "verbs"}, "\x01never\x01", 20);
  CHECK(en.status == 2);
  CHECK(en.out.find("simulator only") != std::string::npos);
  const auto zh =
      run_pty({LAB_lab19_ecn_misconfig, "--lang", "zh", "--backend", "verbs"}, "\x01never\x01", 20);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("只能在模拟器上运行") != std::string::npos);
}
