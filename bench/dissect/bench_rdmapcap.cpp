// Benchmark of rdmapcap (run by hand, not by ctest).
//
// In one run it writes three synthetic RoCEv2 captures with the wire library:
//   1k    N packets (1,000,000 by default) of one QP pair: RDMA WRITEs of four
//         full-MTU packets of 1 KiB, one ACK per message, one packet in
//         10,000 lost before the tap (NAK and go-back-N);
//   100k  2N packets of 100,000 requester QPs on 400 hosts sending SEND Onlys
//         to one responder, congestion-heavy: CE marks, CNPs, PFC and 802.3x
//         pause frames (see generate_congestion);
//   4     the same traffic from 4 QPs: the few-QP capture whose time per
//         packet the 100k one is compared with.
// and times on each, the commands taking turns, --runs times (3 by default):
//   a bare libpcap read loop (pcap_next_ex, in this process): the reference
//   the target names;
//   the same loop over rdmalab::capture::PcapReader, which reads a classic
//   pcap file in place from a memory mapping (nothing copied, so faster than
//   libpcap's: a stricter reference);
//   every byte of the file read once and nothing more, through a mapping
//   whose pages are given back behind, and with read() into a buffer: what
//   either way of reading costs, the floor under the ICRC checks;
//   `rdmapcap summary FILE` (decode, ICRC check and analysis of every packet),
//   optionally a second rdmapcap (--baseline PATH, e.g. a build of main),
//   `tshark -r FILE -T fields -e infiniband.bth.psn`, in a user namespace
//   (`unshare --user`: tshark runs unprivileged, as its documentation asks),
//   on the 1 KiB capture (the one the tshark target is about; about
//   40 µs of CPU a packet, it would take minutes on the 2M-packet ones), on
//   all three with --tshark-all.
// Before each command the capture is read through once, so that every command
// finds it in the page cache: a machine whose page cache cannot hold all
// three captures would otherwise give whichever command comes first in a turn
// a read from disk.
// It prints per capture and command the median wall time with the fastest and
// slowest run, packets per second, time per packet, CPU time and peak RSS,
// then the ratios the issue sets targets for, as ratios of the medians and,
// for the two that compare commands, also as the median of each run's ratio
// (the two commands a few seconds apart, on one moment of the machine).
//
//   bench_rdmapcap [--packets N] [--payload BYTES] [--qps N] [--dir DIR]
//                  [--runs N] [--rdmapcap PATH] [--baseline PATH]
//                  [--no-tshark | --tshark-all] [--keep]
//                  [--generate-only]          write the captures, time nothing
//                  [--reuse]                  time the captures a --generate-only
//                                             run left in DIR (same N, payload, QPs)
#include <fcntl.h>
#include <pcap/pcap.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
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

/// Reads the file through once (into the page cache), discarding it.
void warm(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buf(std::size_t{4} << 20);
  while (::read(fd, buf.data(), buf.size()) > 0) {
  }
  ::close(fd);
}

/// libpcap's own loop: pcap_next_ex over every record. The frame count, or
/// -1 when libpcap cannot open the file.
long long libpcap_loop(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (p == nullptr) return -1;
  long long n = 0;
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p, &hdr, &data) == 1) ++n;
  pcap_close(p);
  return n;
}

/// Reads every byte of the file once, as the ICRC checks do, and nothing
/// more: through a mapping whose pages are given back every 4 MiB behind
/// (as rdmapcap's reader does), or with read() into a 256 KiB buffer. What
/// either way of reading costs the kernel and the memory. Returns `frames`
/// when every byte was read, -1 otherwise.
long long every_byte(const std::string& path, bool mapped, std::uint64_t frames) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return -1;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  std::uint64_t sum = 0, bytes = 0;
  const auto add = [&](const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, p + i, 8);
      sum ^= w;
    }
    bytes += n;
  };
  if (mapped) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      ::close(fd);
      return -1;
    }
    auto* base = static_cast<unsigned char*>(m);
    (void)::madvise(base, size, MADV_SEQUENTIAL);
    constexpr std::size_t kStep = std::size_t{4} << 20;
    for (std::size_t at = 0; at < size; at += kStep) {
      add(base + at, std::min(kStep, size - at));
      if (at >= kStep) (void)::madvise(base + at - kStep, kStep, MADV_DONTNEED);
    }
    ::munmap(m, size);
  } else {
    std::vector<unsigned char> buf(std::size_t{256} << 10);
    for (ssize_t n = 0; (n = ::read(fd, buf.data(), buf.size())) > 0;)
      add(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  static volatile std::uint64_t sink = 0;
  sink = sink ^ sum;
  return bytes == size ? static_cast<long long>(frames) : -1;
}

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

/// CPU time (user + system) this process has used so far.
double self_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
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

/// What a generator wrote.
struct Written {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;
};

Written generate(const std::string& path, std::uint64_t packets, std::size_t payload) {
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
  return {written, bytes};
}

/// A congestion-heavy capture: `qps` requester QPs, 250 on each host
/// (10.0.1.1 to 10.0.1.250, then 10.0.2.x, ...: 400 hosts for 100,000 QPs),
/// send SEND Onlys of `payload` bytes to one responder (10.0.0.1), 1 µs apart
/// in turn, one ACK per four requests per QP. Each QP starts at a PSN of its
/// own, spread over the 24 bits as NICs and the CM choose them: what tells
/// the QPs between one pair of hosts apart on the wire before their first
/// ACK. In the second 400 µs of every millisecond the switch marks every
/// request CE, the responder answers every 13th marked request with a CNP to
/// its QP, and the switch port pauses priority 3 (PFC, 65535 quanta every
/// 100 µs, XON at the end); each millisecond starts with an 802.3x PAUSE of
/// 100 quanta from the responder's NIC. The CNPs follow the marks, not the
/// QPs, so every number of QPs gets the same mix of packets (with 4 QPs each
/// QP gets one CNP every 52 µs, at least the 50 µs a NIC paces them to; with
/// many, each QP one now and then): the per-packet times of two such
/// captures compare the cost of many QPs, nothing else.
Written generate_congestion(const std::string& path, std::uint64_t packets, std::size_t payload,
                            std::uint32_t qps) {
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
  // The starting PSNs: splitmix64 of the QP's index, 24 bits of it.
  std::vector<std::uint32_t> psn(qps), sent(qps, 0);
  for (std::uint32_t q = 0; q < qps; ++q) {
    std::uint64_t x = (q + 1) * 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    psn[q] = static_cast<std::uint32_t>(x ^ (x >> 31)) & wire::kPsnMask;
  }
  std::uint64_t marked = 0;  // CE-marked requests so far
  const auto rsp_ip = *wire::IpAddress::parse("10.0.0.1");
  constexpr std::uint32_t kQpsPerHost = 250;
  auto req_ip = [](std::uint32_t q) {
    const std::uint32_t host = q / kQpsPerHost;  // 10.0.(1 + host / 250).(1 + host % 250)
    return wire::IpAddress::from_v4({10, 0, static_cast<std::uint8_t>(1 + host / 250),
                                     static_cast<std::uint8_t>(1 + host % 250)});
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
    req.packet.bth.ack_req = sent[q] % 4 == 3;
    req.packet.payload = data;
    put_spec(req);
    if (sent[q] % 4 == 3) {
      wire::FrameSpec ack;
      ack.src_ip = rsp_ip;
      ack.dst_ip = req.src_ip;
      ack.traffic_class = 2;
      ack.packet.bth.opcode = wire::opcode::kRcAcknowledge;
      ack.packet.bth.dest_qp = 0x2000 + q;
      ack.packet.bth.psn = psn[q];
      ack.packet.aeth = wire::Aeth{0x1F, sent[q] / 4 + 1};  // the MSN: messages so far
      put_spec(ack);
    }
    if (congested && ++marked % 13 == 0) {
      wire::FrameSpec cnp;
      cnp.src_ip = rsp_ip;
      cnp.dst_ip = req.src_ip;
      cnp.packet.bth.opcode = wire::opcode::kCnp;
      cnp.packet.bth.dest_qp = 0x2000 + q;
      put_spec(cnp);
    }
    psn[q] = wire::psn_add(psn[q], 1);
    ++sent[q];
  }
  writer.flush();
  return {written, bytes};
}

struct CaptureFile {
  std::string name;  // as the table shows it
  std::string path;
  Written written;
  std::map<std::string, Runs> runs;  // by command
};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t packets = 1'000'000;
  std::size_t payload = 1024;
  std::uint32_t qps = 100'000;
  std::string dir = std::filesystem::temp_directory_path().string();
  std::string rdmapcap = "rdmapcap", baseline;
  bool tshark = true, tshark_all = false, keep = false, generate_only = false, reuse = false;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--packets")
      packets = std::max(1ULL, std::strtoull(next().c_str(), nullptr, 10));
    else if (a == "--payload")
      payload = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--qps")
      qps = static_cast<std::uint32_t>(std::max(1ULL, std::strtoull(next().c_str(), nullptr, 10)));
    else if (a == "--dir")
      dir = next();
    else if (a == "--rdmapcap")
      rdmapcap = next();
    else if (a == "--baseline")
      baseline = next();
    else if (a == "--runs")
      runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--no-tshark")
      tshark = false;
    else if (a == "--tshark-all")
      tshark_all = true;
    else if (a == "--keep")
      keep = true;
    else if (a == "--generate-only")
      generate_only = keep = true;
    else if (a == "--reuse")
      reuse = keep = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--packets N] [--payload BYTES] [--qps N] [--dir DIR] [--runs N] "
                   "[--rdmapcap PATH] [--baseline PATH] [--no-tshark | --tshark-all] [--keep] "
                   "[--generate-only | --reuse]\n",
                   argv[0]);
      return 2;
    }
  }

  // 250 QPs a host, hosts 10.0.1.1 to 10.0.254.250.
  constexpr std::uint32_t kMaxQps = 250U * 250U * 254U;
  if (qps > kMaxQps) {
    std::fprintf(stderr, "--qps: at most %u\n", kMaxQps);
    return 2;
  }

  std::vector<CaptureFile> files;
  const std::string few = std::to_string(std::min<std::uint32_t>(qps, 4));
  files.push_back({std::to_string(payload) + " B payloads, 1 QP pair",
                   dir + "/rdmapcap-bench-1qp.pcap",
                   {},
                   {}});
  files.push_back(
      {std::to_string(qps) + " QPs, congestion", dir + "/rdmapcap-bench-manyqp.pcap", {}, {}});
  files.push_back({few + " QPs, congestion", dir + "/rdmapcap-bench-fewqp.pcap", {}, {}});
  for (std::size_t f = 0; f < files.size() && reuse; ++f) {
    capture::PcapReader reader(files[f].path);
    capture::Packet p;
    while (reader.next(p)) {
      ++files[f].written.frames;
      files[f].written.bytes += p.data.size();
    }
  }
  for (std::size_t f = 0; f < files.size() && !reuse; ++f) {
    std::printf("generating %s -> %s\n", files[f].name.c_str(), files[f].path.c_str());
    std::fflush(stdout);
    files[f].written = f == 0   ? generate(files[f].path, packets, payload)
                       : f == 1 ? generate_congestion(files[f].path, 2 * packets, payload, qps)
                                : generate_congestion(files[f].path, 2 * packets, payload,
                                                      std::min<std::uint32_t>(qps, 4));
  }
  if (generate_only) return 0;

  const char* const kLoop = "libpcap read loop";
  const char* const kMapped = "mapped read loop (PcapReader)";
  const char* const kBytesMapped = "every byte, mapped";
  const char* const kBytesRead = "every byte, read() 256 KiB";
  const char* const kNew = "rdmapcap summary";
  const char* const kOld = "baseline rdmapcap summary";
  const char* const kTshark = "tshark -T fields (unshare --user)";
  std::uint64_t loop_frames = 0;
  for (int r = 0; r < runs; ++r) {
    for (CaptureFile& f : files) {
      const bool with_tshark = tshark && (tshark_all || &f == &files.front());
      std::printf("run %d of %d: %s\n", r + 1, runs, f.name.c_str());
      std::fflush(stdout);
      // One loop in this process, timed like a child.
      const auto in_process = [&](auto&& loop_over) {
        warm(f.path);
        const auto t0 = std::chrono::steady_clock::now();
        const double cpu0 = self_cpu_seconds();
        const long long n = loop_over();
        Child c;
        c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        c.cpu_seconds = self_cpu_seconds() - cpu0;
        c.status = n >= 0 && static_cast<std::uint64_t>(n) == f.written.frames ? 0 : 1;
        if (n > 0) loop_frames += static_cast<std::uint64_t>(n);
        return c;
      };
      f.runs[kLoop].all.push_back(in_process([&] { return libpcap_loop(f.path); }));
      f.runs[kMapped].all.push_back(in_process([&] {
        long long n = 0;
        capture::PcapReader reader(f.path);
        capture::Packet p;
        while (reader.next(p)) ++n;
        return n;
      }));
      f.runs[kBytesMapped].all.push_back(
          in_process([&] { return every_byte(f.path, true, f.written.frames); }));
      f.runs[kBytesRead].all.push_back(
          in_process([&] { return every_byte(f.path, false, f.written.frames); }));
      const auto child = [&](const std::vector<std::string>& args) {
        warm(f.path);
        return run(args);
      };
      f.runs[kNew].all.push_back(child({rdmapcap, "summary", f.path}));
      if (!baseline.empty()) f.runs[kOld].all.push_back(child({baseline, "summary", f.path}));
      if (with_tshark)
        f.runs[kTshark].all.push_back(child({"unshare", "--user", "tshark", "-r", f.path, "-T",
                                             "fields", "-e", "infiniband.bth.psn"}));
    }
  }

  std::printf("\nmedian of %d runs each (the fastest and slowest in brackets)\n", runs);
  int status = 0;
  for (const CaptureFile& f : files) {
    const auto frames = static_cast<double>(f.written.frames);
    std::printf("\n%s: %llu frames, %.3f GB\n", f.name.c_str(),
                static_cast<unsigned long long>(f.written.frames),
                static_cast<double>(f.written.bytes) / 1e9);
    std::printf("  %-34s %8s %17s %10s %9s %8s %10s\n", "", "seconds", "", "packets/s", "ns/packet",
                "CPU s", "peak RSS");
    for (const char* cmd : {kLoop, kMapped, kBytesMapped, kBytesRead, kNew, kOld, kTshark}) {
      const auto it = f.runs.find(cmd);
      if (it == f.runs.end()) continue;
      const Child c = it->second.median();
      const auto [fastest, slowest] = it->second.range();
      std::printf("  %-34s %8.3f  (%6.3f-%7.3f) %10.3g %9.0f", cmd, c.seconds, fastest, slowest,
                  frames / c.seconds, c.seconds * 1e9 / frames);
      if (cmd == kLoop || cmd == kMapped || cmd == kBytesMapped || cmd == kBytesRead)
        std::printf(" %8.2f %10s\n", c.cpu_seconds, "-");
      else
        std::printf(" %8.2f %6.1f MiB%s\n", c.cpu_seconds,
                    static_cast<double>(c.max_rss_kib) / 1024, c.status == 0 ? "" : "  (failed)");
      if (c.status != 0 && cmd != kTshark) status = 1;
    }
  }
  auto median = [&](std::size_t f, const char* cmd) {
    const auto it = files[f].runs.find(cmd);
    return it == files[f].runs.end() ? -1.0 : it->second.median().seconds;
  };
  auto median_cpu = [&](std::size_t f, const char* cmd) {
    const auto it = files[f].runs.find(cmd);
    return it == files[f].runs.end() ? -1.0 : it->second.median().cpu_seconds;
  };
  auto per_packet = [&](std::size_t f, const char* cmd) {
    return median(f, cmd) * 1e9 / static_cast<double>(files[f].written.frames);
  };
  auto per_packet_cpu = [&](std::size_t f, const char* cmd) {
    return median_cpu(f, cmd) * 1e9 / static_cast<double>(files[f].written.frames);
  };
  // The same ratios taken run by run: within a run the two commands ran a
  // few seconds apart, so each run's ratio sees one moment of a machine
  // shared with other work, where a ratio of two medians can pair a quiet
  // minute with a busy one. The median of the runs' ratios, wall (CPU).
  auto paired = [&](std::size_t fa, const char* a, std::size_t fb, const char* b) {
    const auto ia = files[fa].runs.find(a);
    const auto ib = files[fb].runs.find(b);
    if (ia == files[fa].runs.end() || ib == files[fb].runs.end()) return std::pair{-1.0, -1.0};
    std::vector<double> wall, cpu;
    const double scale = static_cast<double>(files[fb].written.frames) /
                         static_cast<double>(files[fa].written.frames);
    for (std::size_t r = 0; r < std::min(ia->second.all.size(), ib->second.all.size()); ++r) {
      wall.push_back(ia->second.all[r].seconds / ib->second.all[r].seconds * scale);
      cpu.push_back(ia->second.all[r].cpu_seconds / ib->second.all[r].cpu_seconds * scale);
    }
    if (wall.empty()) return std::pair{-1.0, -1.0};
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return std::pair{wall[wall.size() / 2], cpu[cpu.size() / 2]};
  };
  // The captures go unless asked to keep them, whatever the outcome.
  const auto finish = [&] {
    if (!keep)
      for (const CaptureFile& f : files) std::filesystem::remove(f.path);
    return status;
  };
  // A command that failed has no time to compare: no targets (their ratios
  // would be of the -1 a failed run records).
  if (status != 0) {
    std::fprintf(stderr,
                 "a command failed (marked \"(failed)\" above; rdmapcap is run as '%s', "
                 "--rdmapcap names another): no targets computed\n",
                 rdmapcap.c_str());
    return finish();
  }
  // Wall time is what a user waits for; on a machine shared with other work
  // it depends on their load, so the CPU time (which does not) is given too.
  std::printf("\ntargets (wall time; CPU time in brackets)\n");
  std::printf(
      "  1 QP pair: rdmapcap / libpcap loop          %.2fx (%.2fx) the time (target <= 1.5x)\n",
      median(0, kNew) / median(0, kLoop), median_cpu(0, kNew) / median_cpu(0, kLoop));
  std::printf("  1 QP pair: rdmapcap / mapped read loop      %.2fx (%.2fx) the time\n",
              median(0, kNew) / median(0, kMapped), median_cpu(0, kNew) / median_cpu(0, kMapped));
  if (tshark) {
    std::printf("  1 QP pair: tshark / rdmapcap                %.1fx (%.1fx) (target >= 100x)\n",
                median(0, kTshark) / median(0, kNew), median_cpu(0, kTshark) / median_cpu(0, kNew));
    const auto [wall, cpu] = paired(0, kTshark, 0, kNew);
    std::printf("    paired by run (the median of the runs' ratios): %.1fx (%.1fx)\n", wall, cpu);
  }
  std::printf("  1 QP pair: rdmapcap peak RSS                %.1f MiB (target < 64 MiB)\n",
              static_cast<double>(files[0].runs[kNew].median().max_rss_kib) / 1024);
  std::printf("  %s: %.3g (%.3g) packets/s (target >= 1e6)\n", files[1].name.c_str(),
              static_cast<double>(files[1].written.frames) / median(1, kNew),
              static_cast<double>(files[1].written.frames) / median_cpu(1, kNew));
  std::printf(
      "  per packet, %s / %s: %.0f / %.0f ns = %.2fx (%.0f / %.0f ns = %.2fx) (target <= 2x)\n",
      files[1].name.c_str(), files[2].name.c_str(), per_packet(1, kNew), per_packet(2, kNew),
      per_packet(1, kNew) / per_packet(2, kNew), per_packet_cpu(1, kNew), per_packet_cpu(2, kNew),
      per_packet_cpu(1, kNew) / per_packet_cpu(2, kNew));
  {
    const auto [wall, cpu] = paired(1, kNew, 2, kNew);
    std::printf("    paired by run (the median of the runs' ratios): %.2fx (%.2fx)\n", wall, cpu);
  }
  if (!baseline.empty()) {
    std::printf("\nbaseline / rdmapcap, time per packet (CPU time in brackets):\n");
    for (std::size_t f = 0; f < files.size(); ++f)
      std::printf("  %-34s %.0f / %.0f ns = %.2fx (%.0f / %.0f ns = %.2fx)\n",
                  files[f].name.c_str(), per_packet(f, kOld), per_packet(f, kNew),
                  per_packet(f, kOld) / per_packet(f, kNew), per_packet_cpu(f, kOld),
                  per_packet_cpu(f, kNew), per_packet_cpu(f, kOld) / per_packet_cpu(f, kNew));
  }
  std::printf("(%llu frames read by the read loops)\n",
              static_cast<unsigned long long>(loop_frames));
  return finish();
}
