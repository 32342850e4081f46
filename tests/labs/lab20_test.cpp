// Lab 20 (ECMP and adaptive routing) on the simulator: the lab's --json
// against what the runs must show, derived first (docs/en/28-lab20-ecmp-ar.md,
// "What the runs must show") from the link rate R, the sizes and the hash
// outcomes the lab prints, never from a printed result.
//
// The fabric: leaf-spine 2 x 2, two hosts per leaf, every link R = 100 Gb/s
// with d = 1 us of propagation, path MTU 4096. A frame of b bytes takes
// floor((b + 20) x 8 / R) ns on a link. A WRITE with immediate of 1 MiB is
// 256 frames: First 4170 bytes (headers 58, RETH 16, 4096), 254 Middle 4154,
// Last 4158 (ImmDt 4): 335 + 254 x 333 + 334 = 85,251 ns on one link; the
// default 4 messages, 341,004 ns. An ACK is 62 bytes, 6 ns.
//   - One flow alone (the floor of every run): the first frame to leaf0
//     (335 + d), every frame through the uplink back to back (341,004), the
//     last over the spine and leaf1 (d + 2 x (334 + d)), the ACK back over
//     four links (4 x (6 + d)): T1 = 350,031 ns, 33,554,432 bits / T1 =
//     95.86 Gb/s.
//   - ECMP collision: both flows through one uplink, twice its time:
//     T2 = 691,035 ns, 48.56 Gb/s each. Their frames alternate in the shared
//     queue, so the first flow to finish is at most one largest frame (335
//     ns) earlier: each flow at most 33,554,432 / 690,700 = 48.58 Gb/s. The
//     queue grows to about one flow's frames (4.25 MB), under the dynamic
//     threshold (16 MiB + 4174) / 2 = 8,390,695 bytes: no drops. Every
//     packet leaves leaf0 on the uplink Fabric::ecmp_port names: packets and
//     bytes per spine exactly as predicted (1,024 packets, 4,253,720 bytes per
//     flow).
//   - AR: both spines carry packets; completion >= T1 and < T2; with the
//     NIC's AR mode, no NAK and no retransmission. Without it, out-of-order
//     packets are sequence errors: NAKs and retransmissions. The captures
//     (at the receiving ports) agree with the NICs' counters.
//   - qps Q: 2Q QPs, m on the busiest spine; each QP carries 1/Q of its
//     connection's bytes, tau = 4 x (335 + (256/Q - 2) x 333 + 334) ns on a
//     link. Bound (a NIC sending its QPs side by side): the busiest spine
//     sends m tau, T(m tau). Derived (this simulated NIC, which serves one QP
//     until its queue is empty, then the next): QP i of A and of B send in
//     [i tau, (i + 1) tau), and an uplink, a queue that never idles while it
//     holds a frame, finishes at max over i of (i tau + the work of QPs
//     i' >= i on it): completion >= T(that). Exact (within the 400 ns of
//     jitter) for Q = 1; for Q > 1, leaf1's port to a receiver can congest
//     when both spines drain towards it, which the derivation leaves out.
//     Per-spine packet counts exact again.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr std::int64_t kDelay = 1000;

std::int64_t ser(std::uint64_t bytes) {
  return static_cast<std::int64_t>((bytes + 20) * 8 / 100);
}

// The completion when the busiest link sends for `busy` ns (1 MiB messages'
// frames: first 4170 bytes, last 4158).
std::int64_t completion(std::int64_t busy) {
  return ser(4170) + kDelay + busy + kDelay + 2 * (ser(4158) + kDelay) + 4 * (ser(62) + kDelay);
}

const json& find_run(const json& j, const std::string& name) {
  for (const auto& r : j.at("runs"))
    if (r.at("run") == name) return r;
  FAIL("no run " << name);
  return j;
}

}  // namespace

TEST_CASE("lab20 golden: transcripts in English and Chinese") {
  // One capture per run, next to --capture: compare_golden masks their stem.
  for (const std::string lang : {"en", "zh"}) {
    compare_golden(LAB_lab20_ecmp_ar, "lab20", {}, lang);
  }
}

TEST_CASE("lab20 the runs against the derivations (2 x 4 x 1 MiB, 100 Gb/s)") {
  const std::string cap = tmp_capture("lab20_runs");
  const auto j =
      run_json({LAB_lab20_ecmp_ar, "--backend", "sim", "--json", "--seed", "1", "--capture", cap});
  const std::int64_t flow = 4 * (ser(4170) + 254 * ser(4154) + ser(4158));
  REQUIRE(flow == 341004);
  const std::int64_t t1 = completion(flow);
  const std::int64_t t2 = completion(2 * flow);
  CHECK(t1 == 350031);
  CHECK(t2 == 691035);
  const double bits = 4.0 * 1024 * 1024 * 8;
  const json& dv = j.at("derived");
  CHECK(dv.at("alone_ns").get<std::int64_t>() == t1);
  CHECK(dv.at("collision_ns").get<std::int64_t>() == t2);
  CHECK(dv.at("queue_cap_bytes").get<std::uint64_t>() == (16ULL * 1024 * 1024 + 4174) / 2);
  const std::uint64_t flow_packets = 4 * 256;
  const std::uint64_t flow_bytes = 4 * (4170 + 254 * 4154 + 4158);
  CHECK(dv.at("flow_packets").get<std::uint64_t>() == flow_packets);
  CHECK(dv.at("flow_frame_bytes").get<std::uint64_t>() == flow_bytes);

  for (const auto& r : j.at("runs")) {
    CAPTURE(r.at("run").get<std::string>());
    CHECK(r.at("complete").get<bool>());
    CHECK(r.at("completion_ns").get<std::int64_t>() >= t1);
  }

  // ECMP collision: one spine carries both flows, exactly, the other none.
  const json& ecmp = find_run(j, "ecmp");
  const json& qa = ecmp.at("qps").at(0);
  const json& qb = ecmp.at("qps").at(1);
  CHECK(qa.at("ecmp_spine") == qb.at("ecmp_spine"));
  CHECK(qa.at("udp_source_port") != qb.at("udp_source_port"));
  const auto hot = qa.at("ecmp_spine").get<std::size_t>();
  CHECK(ecmp.at("spines").at(hot).at("packets").get<std::uint64_t>() == 2 * flow_packets);
  CHECK(ecmp.at("spines").at(hot).at("bytes").get<std::uint64_t>() == 2 * flow_bytes);
  CHECK(ecmp.at("spines").at(1 - hot).at("packets").get<std::uint64_t>() == 0);
  CHECK(ecmp.at("completion_ns").get<std::int64_t>() >= t2);
  for (const auto& g : ecmp.at("connection_gbps"))
    CHECK(g.get<double>() <= bits / static_cast<double>(t2 - 335));
  CHECK(ecmp.at("drops").get<std::uint64_t>() == 0);
  CHECK(ecmp.at("spines").at(hot).at("max_queue_bytes").get<std::uint64_t>() <=
        (16ULL * 1024 * 1024 + 4174) / 2);

  // Adaptive routing with the NIC's AR mode: both spines, placed in order.
  const json& ar = find_run(j, "ar");
  CHECK(ar.at("qps").at(0).at("udp_source_port") == qa.at("udp_source_port"));
  CHECK(ar.at("qps").at(1).at("udp_source_port") == qb.at("udp_source_port"));
  CHECK(ar.at("spines").at(0).at("packets").get<std::uint64_t>() > 0);
  CHECK(ar.at("spines").at(1).at("packets").get<std::uint64_t>() > 0);
  CHECK(ar.at("spines").at(0).at("packets").get<std::uint64_t>() +
            ar.at("spines").at(1).at("packets").get<std::uint64_t>() ==
        2 * flow_packets);
  CHECK(ar.at("completion_ns").get<std::int64_t>() < t2);
  CHECK(ar.at("naks").get<std::uint64_t>() == 0);
  CHECK(ar.at("retransmitted_packets").get<std::uint64_t>() == 0);
  CHECK(ar.at("out_of_sequence").get<std::uint64_t>() == 0);

  // Without the NIC's AR mode: whatever arrives early is a sequence error.
  const json& off = find_run(j, "ar-nic-off");
  CHECK(off.at("out_of_order_held").get<std::uint64_t>() == 0);
  if (off.at("out_of_sequence").get<std::uint64_t>() > 0) {
    CHECK(off.at("naks").get<std::uint64_t>() > 0);
    CHECK(off.at("retransmitted_packets").get<std::uint64_t>() > 0);
  }

  // QPs per connection: the hash outcome sets the bound, and the order in
  // which each sender's NIC serves its QPs (one after another, in the order
  // created) the derivation.
  for (const std::size_t q : {1U, 2U, 4U, 8U}) {
    CAPTURE(q);
    const json& r = find_run(j, "qps-" + std::to_string(q));
    REQUIRE(r.at("qps").size() == 2 * q);
    std::array<std::uint64_t, 2> on{};
    std::vector<std::size_t> spine;  // A's QPs, then B's
    for (const auto& p : r.at("qps")) {
      CHECK(p.at("chunk_bytes").get<std::uint64_t>() == (1ULL << 20) / q);
      spine.push_back(p.at("ecmp_spine").get<std::size_t>());
      ++on.at(spine.back());
    }
    const std::uint64_t m = std::max(on[0], on[1]);
    CHECK(r.at("max_qps_per_spine").get<std::uint64_t>() == m);
    // Each QP: 4 messages of 1 MiB / Q, 256 / Q frames each, tau ns.
    const std::uint64_t per_qp = flow_packets / q;
    for (std::size_t s = 0; s < 2; ++s)
      CHECK(r.at("spines").at(s).at("packets").get<std::uint64_t>() == on.at(s) * per_qp);
    const std::int64_t tau =
        4 * (ser(4170) + static_cast<std::int64_t>(256 / q - 2) * ser(4154) + ser(4158));
    // Side by side: the busiest spine sends m QPs' frames back to back.
    const std::int64_t bound = completion(static_cast<std::int64_t>(m) * tau);
    CHECK(r.at("bound_ns").get<std::int64_t>() == bound);
    // One after another: QP i of A and of B send in [i tau, (i + 1) tau);
    // an uplink finishes at the latest i tau + the work of the QPs i' >= i
    // on it.
    std::int64_t serial = 0;
    for (std::size_t i = 0; i < q; ++i)
      for (std::size_t s = 0; s < 2; ++s) {
        std::int64_t work = 0;
        for (std::size_t k = i; k < q; ++k)
          work += (spine[k] == s ? tau : 0) + (spine[q + k] == s ? tau : 0);
        if (work > 0) serial = std::max(serial, static_cast<std::int64_t>(i) * tau + work);
      }
    const std::int64_t derived = completion(serial);
    CHECK(r.at("derived_ns").get<std::int64_t>() == derived);
    CHECK(derived >= bound);
    CHECK(r.at("completion_ns").get<std::int64_t>() >= derived);
    // One QP per connection: exact but for the jitter of four host-link
    // crossings (100 ns each).
    if (q == 1) CHECK(r.at("completion_ns").get<std::int64_t>() <= derived + 400);
    CHECK(r.at("total_gbps").get<double>() <= 2 * bits / static_cast<double>(derived));
    CHECK(r.at("drops").get<std::uint64_t>() == 0);
  }
  CHECK(ecmp.at("completion_ns").get<std::int64_t>() <= t2 + 400);

  // Every check the lab made holds, and rdmapcap reads the captures.
  for (const auto& c : j.at("checks")) {
    CAPTURE(c.at("id").get<std::string>());
    CHECK(c.at("ok").get<bool>());
  }
  const std::string stem = cap.substr(0, cap.rfind(".pcap"));
  // The captures are taken at the receiving ports, in arrival order: what
  // rdmapcap reads from the wire must agree with the NICs' counters (the
  // packets the AR mode held arrived out of order; without it, every
  // retransmission and NAK is on the wire).
  const auto wire_totals = [&](const std::string& run_name) {
    const auto sum = run({RDMAPCAP, "summary", "--json", stem + "-" + run_name + ".pcap"});
    INFO(sum.out);
    REQUIRE(sum.status >= 0);
    REQUIRE(sum.status <= 1);
    // Parsed into a variable: a range-for over a member of a temporary
    // would read it after its end.
    const json parsed = json::parse(sum.out);
    std::array<std::uint64_t, 3> t{};  // out of order, retransmitted, sequence-error NAKs
    for (const auto& c : parsed.at("conversations"))
      for (const auto& ch : c.at("channels")) {
        t[0] += ch.at("out_of_order").get<std::uint64_t>();
        t[1] += ch.at("retransmitted_packets").get<std::uint64_t>();
        t[2] += ch.at("naks").at("psn_sequence").get<std::uint64_t>();
      }
    return t;
  };
  const auto ar_wire = wire_totals("ar");
  CHECK(ar_wire[0] == ar.at("out_of_order_held").get<std::uint64_t>());
  CHECK(ar_wire[1] == 0);
  const auto off_wire = wire_totals("ar-nic-off");
  CHECK(off_wire[1] == off.at("retransmitted_packets").get<std::uint64_t>());
  CHECK(off_wire[2] == off.at("naks").get<std::uint64_t>());
  const auto ecmp_wire = wire_totals("ecmp");
  CHECK(ecmp_wire[0] == 0);  // one path: in order
  for (const std::string run_name : {"ecmp", "ar"}) {
    const std::string pcap = stem + "-" + run_name + ".pcap";
    const std::string html = stem + "-" + run_name + ".html";
    REQUIRE(fs::exists(pcap));
    const auto rep = run({RDMAPCAP, "report", pcap, "-o", html});
    INFO(rep.out);
    CHECK(rep.status >= 0);
    CHECK(rep.status <= 1);
    CHECK(fs::file_size(html) > 0);
    const auto sum = run({RDMAPCAP, "summary", pcap});
    INFO(sum.out);
    CHECK(sum.status >= 0);
    CHECK(sum.status <= 1);
    CHECK(!sum.out.empty());
    fs::remove(html);
  }
  for (const auto& c : j.at("captures")) fs::remove(c.get<std::string>());
}

TEST_CASE("lab20 bad input: a real device, too many bytes, an unknown run, a bad Q") {
  CHECK(run({LAB_lab20_ecmp_ar, "--backend", "sim", "--run", "tcp"}).status == 2);
  CHECK(run({LAB_lab20_ecmp_ar, "--backend", "sim", "--messages", "5"}).status == 2);
  CHECK(run({LAB_lab20_ecmp_ar, "--backend", "sim", "-s", "0"}).status == 2);
  CHECK(run({LAB_lab20_ecmp_ar, "--backend", "sim", "--qps-per-conn", "0"}).status == 2);
  const auto en =
      run_pty({LAB_lab20_ecmp_ar, "--lang", "en", "--backend", "verbs"}, "\x01never\x01", 20);
  CHECK(en.status == 2);
  CHECK(en.out.find("simulator only") != std::string::npos);
  const auto zh =
      run_pty({LAB_lab20_ecmp_ar, "--lang", "zh", "--backend", "verbs"}, "\x01never\x01", 20);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("只能在模拟器上运行") != std::string::npos);
}
