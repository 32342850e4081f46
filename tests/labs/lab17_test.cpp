// Lab 17 (performance) on the simulator: the times the lab measures against
// the times the NIC cost model gives, derived from its equations first
// (docs/en/24-lab17-perf.md, "The model's numbers").
//
// The model (HostConfig's doorbell_ns D, wqe_fetch_ns W, payload_fetch_ns P,
// cqe_write_ns C, as the lab sets them) and the link (100 Gb/s, delay d):
//   - a QP's send engine is serial: a doorbell costs D (once per
//     ibv_post_send), each WQE W, each send CQE C, in the order they come;
//   - a WQE's first packet leaves when its fetch is done, plus P unless it
//     is inline; a frame of b bytes takes floor((b + 20) * 8 / 100) ns on
//     the wire (20: preamble, delimiter and gap), then d;
//   - the responder ACKs the last packet of each message at once.
// Latency (a ping-pong of WRITEs, one packet each way): half a round trip is
//   D + W + P' + ser(WRITE Only) + d,        P' = 0 inline, P otherwise.
// (The CQE of the side's own WRITE, C after its ACK arrives, is written
// before the other side's answer arrives: C + ser(ACK) < D + W + ser.)
// Bandwidth, engine-bound (the engine never idles: checked per case below),
// one QP, n messages in chains of L, one in every N signalled:
//   T = n W + ceil(n / L) D + k C + P' + ser(msg) + d + ser(ACK) + d
// where k is the number of CQEs written before the last post (the lab
// posts right after each completion: counted by replaying its posting rule).
// With Q QPs their engines run in step and their packets meet on the link:
// the last completes (Q - 1) ser(msg) later.
// Bandwidth, link-bound (the link never idles):
//   T = D + W + P + n ser(msg) + d + ser(ACK) + d.
// Shallow queue, depth = N: every cycle of N messages is one completion's
// CQE, N doorbells and fetches, then one message's full round trip:
//   T = (n / N) (C + N (D + W) + P' + ser(msg) + 2 d + ser(ACK)) - C
// (no CQE before the first cycle).
#include <algorithm>
#include <cstdint>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr std::int64_t kD = 100, kW = 50, kP = 250, kC = 100, kDelay = 1000;
constexpr std::int64_t kMtu = 1024;

// ns a frame takes on a 100 Gb/s link: Ethernet 14, IPv4 20, UDP 8, BTH 12,
// `ext` extension bytes, the payload padded to 4, ICRC 4, and 20 on the wire.
std::int64_t ser(std::int64_t ext, std::int64_t payload) {
  const std::int64_t bytes = 14 + 20 + 8 + 12 + ext + (payload + 3) / 4 * 4 + 4 + 20;
  return bytes * 8 / 100;
}
constexpr std::int64_t kReth = 16;
constexpr std::int64_t kAeth = 4;

// A WRITE of `size` bytes at path MTU 1024: First/Only with a RETH, then
// Middle and Last without.
std::int64_t ser_write(std::int64_t size) {
  if (size <= kMtu) return ser(kReth, size);
  std::int64_t t = ser(kReth, kMtu);
  for (std::int64_t left = size - kMtu; left > 0; left -= kMtu) t += ser(0, std::min(left, kMtu));
  return t;
}

// The CQEs written before the lab's last post, replaying its rule: post
// chains of min(L, left) while in flight + chain <= depth; a completion of
// WR s (every N-th and the last) means s done.
std::int64_t cqes_before_last_post(std::int64_t n, std::int64_t l, std::int64_t depth,
                                   std::int64_t every) {
  std::int64_t posted = 0, done = 0, k = 0;
  const auto post = [&] {
    for (;;) {
      const std::int64_t chain = std::min(l, n - posted);
      if (chain == 0 || posted + chain - done > depth) return;
      posted += chain;
    }
  };
  post();
  for (std::int64_t s = every; posted < n; s += every) {
    done = std::min(s, n);
    ++k;
    post();
  }
  return k;
}

std::int64_t engine_bound_ns(std::int64_t n, std::int64_t size, bool inl, std::int64_t l,
                             std::int64_t depth, std::int64_t every, std::int64_t qps) {
  return n * kW + (n + l - 1) / l * kD + cqes_before_last_post(n, l, depth, every) * kC +
         (inl ? 0 : kP) + ser_write(size) + 2 * kDelay + ser(kAeth, 0) +
         (qps - 1) * ser_write(size);
}

std::int64_t link_bound_ns(std::int64_t n, std::int64_t size) {
  return kD + kW + kP + n * ser_write(size) + 2 * kDelay + ser(kAeth, 0);
}

const json& row(const json& rows, const std::string& key, const json& value) {
  for (const auto& r : rows)
    if (r.at(key) == value) return r;
  FAIL("no row " << key << " = " << value);
  return rows.at(0);
}

}  // namespace

TEST_CASE("lab17 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab17_perf, "lab17", {"-n", "200"}, "en");
  compare_golden(LAB_lab17_perf, "lab17", {"-n", "200"}, "zh");
}

TEST_CASE("lab17 bandwidth and latency over the sizes: the model's times, to the ns") {
  const auto j = run_json({LAB_lab17_perf, "--backend", "sim", "--json", "-n", "2000"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "completions"));
  CHECK(j.at("max_inline_data") == 256);  // the simulated device's limit
  const std::int64_t n = 2000;
  // 64 B (ser 12) and 1024 B (ser 89): a message every W + D + C / 100 =
  // 151 ns of engine, more than the wire's time: engine-bound. At the
  // completion of WR k, k + 28 are posted and the engine has not reached
  // k + 15 (k's round trip, P + 2018 ns, is under 15 * 151): it never idles.
  for (const std::int64_t size : {64, 1024}) {
    const auto& r = row(j.at("bw"), "size", size);
    CHECK(r.at("messages") == n);
    CHECK(r.at("ns").get<std::int64_t>() == engine_bound_ns(n, size, false, 1, 128, 100, 1));
  }
  // 4096 B (4 packets, 353 ns) and 64 KiB (64 packets, 5633 ns): more than
  // 151 ns of wire per message: link-bound, 28 messages queued behind each
  // completion keep the link busy.
  CHECK(ser_write(4096) == 353);
  CHECK(ser_write(65536) == 5633);
  for (const std::int64_t size : {4096, 65536}) {
    const auto& r = row(j.at("bw"), "size", size);
    CHECK(r.at("ns").get<std::int64_t>() == link_bound_ns(n, size));
  }
  // 64 KiB: 65536 * 2000 B in 11,268,406 ns, 11092.96 MB/sec: 93.1% of the
  // wire's 100 Gb/s, the rest is headers, ICRC and the Ethernet gap.
  CHECK(row(j.at("bw"), "size", 65536).at("bw_mb_per_sec").get<double>() ==
        doctest::Approx(65536.0 * 2000 / (11268406e-9) / 1048576).epsilon(1e-9));

  // Latency: every sample the same on the simulator.
  for (const auto& r : j.at("lat")) {
    const std::int64_t size = r.at("size");
    if (size > kMtu) continue;  // one packet each way only
    const bool inl = r.at("inline");
    const double half = static_cast<double>(kD + kW + (inl ? 0 : kP) + ser_write(size) + kDelay);
    CHECK(r.at("t_min").get<double>() == doctest::Approx(half / 1000).epsilon(1e-12));
    CHECK(r.at("t_max").get<double>() == doctest::Approx(half / 1000).epsilon(1e-12));
    CHECK(r.at("t_typical").get<double>() == doctest::Approx(half / 1000).epsilon(1e-12));
    CHECK(r.at("t_stdev").get<double>() == doctest::Approx(0.0));
  }
  // 64 B: 1.412 usec fetching the payload, 1.162 inline.
  bool saw_inline = false;
  for (const auto& r : j.at("lat"))
    if (r.at("size") == 64 && r.at("inline") == true) {
      saw_inline = true;
      CHECK(r.at("t_typical").get<double>() == doctest::Approx(1.162));
    }
  CHECK(saw_inline);
}

TEST_CASE("lab17 knobs at 64 B: each one's time from the model") {
  const auto j = run_json({LAB_lab17_perf, "--backend", "sim", "--json", "-n", "4000"});
  const std::int64_t n = 4000;
  const auto& knobs = j.at("knobs");
  const auto ns = [&](const char* id) {
    return row(knobs, "knob", id).at("ns").get<std::int64_t>();
  };
  // Engine-bound rows (see the first case for why the engine never idles;
  // with --cq-mod 1, 127 WRs are posted ahead of each completion; with four
  // QPs each engine is as busy as one alone, the link carries 4 * 12 ns of
  // 151).
  CHECK(ns("base") == engine_bound_ns(n, 64, false, 1, 128, 100, 1));
  CHECK(ns("inline") == engine_bound_ns(n, 64, true, 1, 128, 100, 1));
  CHECK(ns("signal_all") == engine_bound_ns(n, 64, false, 1, 128, 1, 1));
  CHECK(ns("qps") == engine_bound_ns(n, 64, false, 1, 128, 100, 4));
  CHECK(row(knobs, "knob", "qps").at("messages") == 4 * n);
  // Depth 4, one in 4 signalled: the queue empties every cycle.
  CHECK(ns("shallow") ==
        n / 4 * (kC + 4 * (kD + kW) + kP + ser_write(64) + 2 * kDelay + ser(kAeth, 0)) - kC);
  // A post list of 16 at depth 128 waits for completions (28 WRs ahead of
  // each, fewer than a round trip's worth at 57 ns each): not engine-bound,
  // but faster than one doorbell per WR; all the knobs together fastest.
  CHECK(ns("post_list") < ns("base"));
  const double base_rate = row(knobs, "knob", "base").at("msg_rate_mpps").get<double>();
  CHECK(row(knobs, "knob", "all").at("msg_rate_mpps").get<double>() > 4 * base_rate);
}

TEST_CASE("lab17 post list 16 with a deep queue: one doorbell per 16 WRs, engine-bound") {
  // --tx-depth 512: 412 WRs are posted ahead of each completion, far more
  // than a round trip (2268 ns) of 57.25 ns messages (W + D / 16 + C / 100).
  const auto j = run_json({LAB_lab17_perf, "--backend", "sim", "--json", "--test", "bw", "-s", "64",
                           "-n", "4096", "-l", "16", "-t", "512"});
  const auto& r = row(j.at("bw"), "size", 64);
  CHECK(r.at("ns").get<std::int64_t>() == engine_bound_ns(4096, 64, false, 16, 512, 100, 1));
}

TEST_CASE("lab17 SEND bandwidth: the WRITE equations without the RETH, every SEND received") {
  const auto j = run_json({LAB_lab17_perf, "--backend", "sim", "--json", "--test", "bw", "--op",
                           "send", "-s", "64,4096", "-n", "500"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "completions"));
  CHECK(row(j.at("bw"), "size", 4096).at("op") == "send");
  // 64 B: SEND Only is 11 ns of wire, engine-bound as the WRITE (k = 4 for
  // n = 500): 75000 + 400 + 250 + 11 + 2006 = 77667 ns.
  CHECK(ser(0, 64) == 11);
  CHECK(row(j.at("bw"), "size", 64).at("ns").get<std::int64_t>() ==
        500 * (kW + kD) + cqes_before_last_post(500, 1, 128, 100) * kC + kP + ser(0, 64) +
            2 * kDelay + ser(kAeth, 0));
  // 4096 B: four packets of 88 ns, link-bound: 400 + 500 * 352 + 2006.
  CHECK(row(j.at("bw"), "size", 4096).at("ns").get<std::int64_t>() ==
        kD + kW + kP + 500 * 4 * ser(0, kMtu) + 2 * kDelay + ser(kAeth, 0));
}

TEST_CASE("lab17 bad input: unknown test, a queue shallower than the batch") {
  CHECK(run({LAB_lab17_perf, "--backend", "sim", "--test", "fast"}).status == 2);
  CHECK(run({LAB_lab17_perf, "--backend", "sim", "--op", "read"}).status == 2);
  CHECK(run({LAB_lab17_perf, "--backend", "sim", "-t", "16", "-Q", "100"}).status == 2);
  CHECK(run({LAB_lab17_perf, "--backend", "sim", "-s", "1"}).status == 2);
  const auto en = run_pty({LAB_lab17_perf, "--lang", "en", "--backend", "sim", "-t", "16"},
                          "\x01never\x01", 20);
  CHECK(en.status == 2);
  CHECK(en.out.find("--tx-depth 16 must be at least --cq-mod 100") != std::string::npos);
  const auto zh = run_pty({LAB_lab17_perf, "--lang", "zh", "--backend", "sim", "-t", "16"},
                          "\x01never\x01", 20);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("--tx-depth 16 必须不小于 --cq-mod 100") != std::string::npos);
}
