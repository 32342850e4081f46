// Benchmark of rdmapcap (run by hand, not by ctest).
//
// Generates a synthetic RoCEv2 capture (RDMA WRITEs of four full-MTU packets,
// one ACK per message, one packet in 10,000 lost to exercise NAK and
// go-back-N), then, in the same run, times:
//   1. a bare libpcap read loop over the file (rdmalab::capture::PcapReader),
//   2. `rdmapcap summary FILE` (decode + ICRC + analysis of every packet), and
//      the same with --no-icrc (the CRC-32 over every byte dominates),
//   3. `tshark -r FILE -T fields -e infiniband.bth.psn`,
// and prints the three times, the ratios, the throughput and rdmapcap's peak
// resident memory. Each is run --runs times (3 by default), the four taking
// turns so that a change in the machine's load falls on all of them; the
// median of each is printed, with the fastest and slowest run.
//
//   bench_rdmapcap [--packets N] [--payload BYTES] [--file PATH] [--runs N]
//                  [--rdmapcap PATH] [--no-tshark] [--keep]
//                  [--congestion [--qps N]]   the congestion-heavy capture instead
//                  [--generate-only]          write the capture, time nothing
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/pause.hpp"
#include "rdmalab/wire/psn.hpp"

extern char** environ;

namespace {

using namespace rdmalab;

struct Child {
  double seconds = -1;
  double cpu_seconds = -1;  // user + system, all threads
  long max_rss_kib = 0;
  int status = -1;
};

/// Runs argv with stdout to /dev/null; wall time, CPU time and peak RSS of
/// the child. On a shared machine the wall time depends on the other load;
/// the CPU time much less.
Child run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  Child c;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return c;
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.max_rss_kib = ru.ru_maxrss;
  c.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

/// Several runs of one command: the medians, the range of the wall times,
/// the largest peak RSS, and the first exit status that was not 0.
struct Runs {
  std::vector<Child> all;
  [[nodiscard]] Child median() const {
    Child m;
    m.status = 0;
    std::vector<double> wall, cpu;
    for (const Child& c : all) {
      wall.push_back(c.seconds);
      cpu.push_back(c.cpu_seconds);
      m.max_rss_kib = std::max(m.max_rss_kib, c.max_rss_kib);
      if (m.status == 0) m.status = c.status;  // -1: could not be started
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    m.seconds = wall[wall.size() / 2];
    m.cpu_seconds = cpu[cpu.size() / 2];
    return m;
  }
  /// The fastest and the slowest wall time.
  [[nodiscard]] std::pair<double, double> range() const {
    const auto [lo, hi] =
        std::minmax_element(all.begin(), all.end(),
                            [](const Child& a, const Child& b) { return a.seconds < b.seconds; });
    return {lo->seconds, hi->seconds};
  }
};

std::uint64_t generate(const std::string& path, std::uint64_t packets, std::size_t payload) {
  capture::PcapWriter writer(path, wire::LinkType::Ethernet);
  wire::FrameSpec req, ack;
  req.src_ip = *wire::IpAddress::parse("10.0.0.2");
  req.dst_ip = *wire::IpAddress::parse("10.0.0.1");
  ack.src_ip = req.dst_ip;
  ack.dst_ip = req.src_ip;
  req.packet.bth.dest_qp = 0x11;
  ack.packet.bth.dest_qp = 0x22;
  ack.packet.bth.opcode = wire::opcode::kRcAcknowledge;
  std::vector<std::uint8_t> data(payload, 0x5A), frame(payload + 256);
  std::int64_t t = 1'700'000'000'000'000'000;
  std::uint32_t psn = 0, msn = 0;
  std::uint64_t written = 0, bytes = 0;
  bool nak_pending = false;
  std::uint32_t resend_from = 0;
  auto put = [&](const wire::FrameSpec& s) {
    const std::size_t n = wire::encode_frame(s, frame);
    writer.write(t += 800, std::span<const std::uint8_t>(frame.data(), n));
    bytes += n;
    ++written;
  };
  while (written < packets) {
    const std::uint32_t first = psn;
    for (int i = 0; i < 4 && written < packets; ++i) {
      static constexpr std::uint8_t kOps[] = {
          wire::opcode::kRcWriteFirst, wire::opcode::kRcWriteMiddle, wire::opcode::kRcWriteMiddle,
          wire::opcode::kRcWriteLast};
      req.packet.bth.opcode = kOps[i];
      req.packet.bth.psn = psn;
      req.packet.bth.ack_req = i == 3;
      req.packet.reth =
          i == 0 ? std::optional(wire::Reth{0x10000, 0x42, static_cast<std::uint32_t>(4 * payload)})
                 : std::nullopt;
      req.packet.payload = data;
      psn = wire::psn_add(psn, 1);
      if (written % 10000 == 9999 && !nak_pending) {  // lost before the tap
        nak_pending = true;
        resend_from = req.packet.bth.psn;
        continue;
      }
      put(req);
    }
    if (written >= packets) break;
    ack.packet.bth.psn = nak_pending ? resend_from : wire::psn_add(first, 3);
    ack.packet.aeth = wire::Aeth{nak_pending ? std::uint8_t{0x60} : std::uint8_t{0x1F}, ++msn};
    put(ack);
    if (nak_pending) {  // go-back-N: resend the message from the lost PSN
      nak_pending = false;
      psn = first;
      --msn;
    }
  }
  writer.flush();
  return bytes;
}

/// A congestion-heavy capture: `qps` requesters (10.0.1.x, one QP each) send
/// SEND Onlys of `payload` bytes to one responder, 1 µs apart in turn, one ACK per four
/// requests per QP. In the second 400 µs of every millisecond the switch
/// marks every request CE, the responder sends each QP at most one CNP per
/// 50 µs, and the switch port pauses priority 3 (PFC, 65535 quanta every
/// 100 µs, XON at the end); each millisecond starts with an 802.3x PAUSE of
/// 100 quanta from the responder's NIC.
std::uint64_t generate_congestion(const std::string& path, std::uint64_t packets,
                                  std::size_t payload, std::uint32_t qps) {
  capture::PcapWriter writer(path, wire::LinkType::Ethernet);
  std::vector<std::uint8_t> data(payload, 0x5A), frame(payload + 256);
  std::int64_t t = 1'700'000'000'000'000'000;
  const std::int64_t t0 = t;
  std::uint64_t written = 0, bytes = 0;
  auto put = [&](std::span<const std::uint8_t> f) {
    writer.write(t, f);
    bytes += f.size();
    ++written;
  };
  auto put_spec = [&](const wire::FrameSpec& s) {
    const std::size_t n = wire::encode_frame(s, frame);
    put(std::span<const std::uint8_t>(frame.data(), n));
  };
  std::vector<std::uint32_t> psn(qps, 0);
  std::vector<std::int64_t> last_cnp(qps, -1'000'000);
  const auto rsp_ip = *wire::IpAddress::parse("10.0.0.1");
  auto req_ip = [](std::uint32_t q) {
    return wire::IpAddress::from_v4(
        {10, 0, static_cast<std::uint8_t>(1 + q / 250), static_cast<std::uint8_t>(1 + q % 250)});
  };
  std::int64_t last_pfc = -1'000'000;
  bool pfc_on = false;
  std::int64_t ms_seen = -1;
  // `put` counts the frames written; one request (and maybe an ACK, a CNP,
  // pause frames) per turn.
  for (std::uint64_t i = 0;; ++i) {
    if (written >= packets) break;
    t += 1000;
    const std::int64_t rel = t - t0;
    const std::int64_t in_ms = rel % 1'000'000;
    const bool congested = in_ms >= 400'000 && in_ms < 800'000;
    wire::PauseFrame pf;
    if (rel / 1'000'000 != ms_seen) {
      ms_seen = rel / 1'000'000;
      pf.src = {0x02, 0, 0, 0, 0, 0x01};
      pf.opcode = wire::kPauseOpcode;
      pf.quanta[0] = 100;
      put(std::span<const std::uint8_t>(frame.data(), wire::encode_pause(pf, frame)));
    }
    if (congested && rel - last_pfc >= 100'000) {
      pf = {};
      pf.src = {0x02, 0, 0, 0, 0, 0xFE};
      pf.class_enable = 0x08;
      pf.quanta[3] = 65535;
      put(std::span<const std::uint8_t>(frame.data(), wire::encode_pause(pf, frame)));
      last_pfc = rel;
      pfc_on = true;
    } else if (!congested && pfc_on) {
      pf = {};
      pf.src = {0x02, 0, 0, 0, 0, 0xFE};
      pf.class_enable = 0x08;
      put(std::span<const std::uint8_t>(frame.data(), wire::encode_pause(pf, frame)));
      pfc_on = false;
    }
    const auto q = static_cast<std::uint32_t>(i % qps);
    wire::FrameSpec req;
    req.src_ip = req_ip(q);
    req.dst_ip = rsp_ip;
    req.traffic_class = congested ? 3 : 2;
    req.packet.bth.opcode = wire::opcode::kRcSendOnly;
    req.packet.bth.dest_qp = 0x1000 + q;
    req.packet.bth.psn = psn[q];
    req.packet.bth.ack_req = psn[q] % 4 == 3;
    req.packet.payload = data;
    put_spec(req);
    if (psn[q] % 4 == 3) {
      wire::FrameSpec ack;
      ack.src_ip = rsp_ip;
      ack.dst_ip = req.src_ip;
      ack.traffic_class = 2;
      ack.packet.bth.opcode = wire::opcode::kRcAcknowledge;
      ack.packet.bth.dest_qp = 0x2000 + q;
      ack.packet.bth.psn = psn[q];
      ack.packet.aeth = wire::Aeth{0x1F, psn[q] / 4 + 1};
      put_spec(ack);
    }
    if (congested && rel - last_cnp[q] >= 50'000) {
      wire::FrameSpec cnp;
      cnp.src_ip = rsp_ip;
      cnp.dst_ip = req.src_ip;
      cnp.packet.bth.opcode = wire::opcode::kCnp;
      cnp.packet.bth.dest_qp = 0x2000 + q;
      put_spec(cnp);
      last_cnp[q] = rel;
    }
    psn[q] = wire::psn_add(psn[q], 1);
  }
  writer.flush();
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t packets = 1'000'000;
  std::size_t payload = 1024;
  std::string file = (std::filesystem::temp_directory_path() / "rdmapcap-bench.pcap").string();
  std::string rdmapcap = "rdmapcap";
  bool tshark = true, keep = false, congestion = false, generate_only = false;
  std::uint32_t qps = 4;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--packets")
      packets = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--payload")
      payload = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--file")
      file = next();
    else if (a == "--rdmapcap")
      rdmapcap = next();
    else if (a == "--runs")
      runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--no-tshark")
      tshark = false;
    else if (a == "--keep")
      keep = true;
    else if (a == "--congestion")
      congestion = true;
    else if (a == "--qps")
      qps = static_cast<std::uint32_t>(std::max(1ULL, std::strtoull(next().c_str(), nullptr, 10)));
    else if (a == "--generate-only")
      generate_only = keep = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--packets N] [--payload BYTES] [--file PATH] [--runs N] "
                   "[--rdmapcap PATH] [--no-tshark] [--keep] [--congestion] [--qps N] "
                   "[--generate-only]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("generating %llu packets, %zu-byte payloads -> %s\n",
              static_cast<unsigned long long>(packets), payload, file.c_str());
  const std::uint64_t bytes = congestion ? generate_congestion(file, packets, payload, qps)
                                         : generate(file, packets, payload);
  if (generate_only) return 0;
  const double gb = static_cast<double>(std::filesystem::file_size(file)) / 1e9;
  std::printf("capture: %.3f GB on disk, %.3f GB of frames\n", gb,
              static_cast<double>(bytes) / 1e9);

  // 1. bare libpcap read loop, 2. rdmapcap summary, 3. tshark: in turns.
  Runs pcap, rp, rn, ts;
  std::uint64_t n = 0, sum = 0;
  for (int r = 0; r < runs; ++r) {
    std::printf("run %d of %d\n", r + 1, runs);
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    n = sum = 0;
    {
      capture::PcapReader reader(file);
      capture::Packet p;
      while (reader.next(p)) {
        ++n;
        sum += p.data.size();
      }
    }
    Child loop;
    loop.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    loop.status = 0;
    pcap.all.push_back(loop);
    rp.all.push_back(run({rdmapcap, "summary", file}));
    rn.all.push_back(run({rdmapcap, "summary", "--no-icrc", file}));
    if (tshark)
      ts.all.push_back(run({"tshark", "-r", file, "-T", "fields", "-e", "infiniband.bth.psn"}));
  }

  std::printf("\nmedian of %d runs, each:\n", runs);
  std::printf("%-40s %9s %15s %8s %8s %10s\n", "", "seconds", "(fastest-slowest)", "GB/s", "CPU s",
              "peak RSS");
  auto row = [gb](const char* name, const Runs& r, bool child) {
    const Child c = r.median();
    const auto [fastest, slowest] = r.range();
    std::printf("%-40s %9.3f  (%6.3f-%6.3f) %8.2f", name, c.seconds, fastest, slowest,
                gb / c.seconds);
    if (child)
      std::printf(" %8.3f %6.1f MiB  (exit %d)\n", c.cpu_seconds,
                  static_cast<double>(c.max_rss_kib) / 1024, c.status);
    else
      std::printf(" %8s %10s\n", "-", "-");
  };
  row("libpcap read loop (PcapReader)", pcap, false);
  row("rdmapcap summary", rp, true);
  row("rdmapcap summary --no-icrc", rn, true);
  if (tshark) row("tshark -T fields -e infiniband.bth.psn", ts, true);
  const double t_rp = rp.median().seconds;
  std::printf("\nrdmapcap / libpcap loop: %.2fx the time\n", t_rp / pcap.median().seconds);
  if (tshark) {
    const double t_ts = ts.median().seconds;
    std::printf("tshark / rdmapcap: %.1fx faster (%.1fx without ICRC checks)\n", t_ts / t_rp,
                t_ts / rn.median().seconds);
    std::printf("tshark / rdmapcap run by run:");
    for (std::size_t i = 0; i < rp.all.size(); ++i)
      std::printf(" %.1fx", ts.all[i].seconds / rp.all[i].seconds);
    std::printf("\n");
  }
  std::printf("(%llu packets read, %llu bytes)\n", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(sum));
  if (!keep) std::filesystem::remove(file);
  return rp.median().status == 0 ? 0 : 1;
}
