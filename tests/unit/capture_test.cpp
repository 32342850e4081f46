// Capture files through libpcap: frames written and read back with their
// times and lengths, damaged files refused with a clear error; a classic
// pcap file read from its mapping gives the frames and errors libpcap gives
// reading it from a pipe; native
// InfiniBand packets written as ERF records (link type 197) read back, decode
// and verify, and tshark reads them as they were built.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/command.hpp"
#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab;

namespace {
std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}
}  // namespace

TEST_CASE("frames are numbered from 1 and keep nanosecond timestamps") {
  const auto path = temp_path("rdmalab_capture_test.pcap");
  {
    capture::PcapWriter w(path, wire::LinkType::Ethernet, 64);
    std::vector<std::uint8_t> a(60, 0xAA), b(100, 0xBB);
    w.write(1'700'000'000'123'456'789, a);
    w.write(1'700'000'001'000'000'001, b);
  }
  capture::PcapReader r(path);
  CHECK(r.datalink() == 1);
  capture::Packet p;
  REQUIRE(r.next(p));
  CHECK(p.frame == 1);
  CHECK(p.time_ns == 1'700'000'000'123'456'789);
  CHECK(p.data.size() == 60);
  REQUIRE(r.next(p));
  CHECK(p.frame == 2);
  CHECK(p.data.size() == 64);  // cut by the snap length
  CHECK(p.original_length == 100);
  CHECK_FALSE(r.next(p));
  std::filesystem::remove(path);
}

TEST_CASE("a missing file, a directory and a non-capture give a clear error") {
  CHECK_THROWS_WITH_AS(capture::PcapReader("/nonexistent/x.pcap"),
                       doctest::Contains("cannot open capture file /nonexistent/x.pcap"),
                       capture::CaptureError);
  CHECK_THROWS_AS(capture::PcapReader(std::filesystem::temp_directory_path().string()),
                  capture::CaptureError);
  const auto junk = temp_path("rdmalab_capture_junk.pcap");
  std::ofstream(junk) << "this is not a capture file at all";
  CHECK_THROWS_AS(capture::PcapReader{junk}, capture::CaptureError);
  std::filesystem::remove(junk);
}

TEST_CASE("a capture cut in the middle of a record fails with the frame number") {
  const auto path = temp_path("rdmalab_capture_cut.pcap");
  {
    capture::PcapWriter w(path, wire::LinkType::Ethernet);
    std::vector<std::uint8_t> a(200, 1);
    w.write(0, a);
    w.write(1, a);
  }
  std::filesystem::resize_file(path, 24 + 16 + 200 + 16 + 50);
  capture::PcapReader r(path);
  capture::Packet p;
  REQUIRE(r.next(p));
  CHECK_THROWS_WITH_AS((void)r.next(p), doctest::Contains("after frame 1"), capture::CaptureError);
  std::filesystem::remove(path);
}

// ------------------------------------------- the mapping and libpcap agree

namespace {

/// What a reader gave: every frame (time, lengths, bytes), then the error
/// that ended it ("" for a clean end).
struct ReadAll {
  std::vector<std::string> frames;
  std::string error;
  bool mapped = false;
};

ReadAll read_all(const std::string& path) {
  ReadAll r;
  try {
    capture::PcapReader reader(path);
    r.mapped = reader.mapped();
    capture::Packet p;
    while (reader.next(p)) {
      std::ostringstream line;
      line << p.frame << ' ' << p.time_ns << ' ' << p.original_length << ' '
           << std::string(p.data.begin(), p.data.end());
      r.frames.push_back(line.str());
    }
  } catch (const capture::CaptureError& e) {
    r.error = e.what();
  }
  return r;
}

/// The same bytes read by libpcap: through a pipe, which cannot be mapped.
ReadAll read_all_piped(const std::string& bytes) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&bytes, fd = fds[1]] {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  ReadAll r = read_all("/dev/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);  // the reader may stop early (an error): the writer then sees EPIPE
  writer.join();
  return r;
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void check_same(const std::string& name, const std::string& bytes, bool expect_mapped = true) {
  CAPTURE(name);
  const auto path = temp_path("rdmalab_capture_mapped.pcap");
  std::ofstream(path, std::ios::binary) << bytes;
  const ReadAll mapped = read_all(path);
  const ReadAll piped = read_all_piped(bytes);
  CHECK(mapped.mapped == expect_mapped);
  CHECK_FALSE(piped.mapped);
  CHECK(mapped.frames.size() == piped.frames.size());
  CHECK(mapped.frames == piped.frames);
  // The messages name the file: compare what follows the name.
  auto tail = [](const std::string& e) { return e.substr(std::min(e.find(':'), e.size())); };
  CHECK(tail(mapped.error) == tail(piped.error));
  CHECK(mapped.error.empty() == piped.error.empty());
  std::filesystem::remove(path);
}

/// A pcap file header and records, written by hand (`swap`: the other byte order).
struct HandPcap {
  std::string bytes;
  bool swap = false;
  void u32(std::uint32_t v) {
    if (swap) v = __builtin_bswap32(v);
    bytes.append(reinterpret_cast<const char*>(&v), 4);
  }
  void u16(std::uint16_t v) {
    if (swap) v = __builtin_bswap16(v);
    bytes.append(reinterpret_cast<const char*>(&v), 2);
  }
  HandPcap(std::uint32_t magic, bool swapped, std::uint32_t snaplen, std::uint16_t minor = 4)
      : swap(swapped) {
    u32(magic);
    u16(2);
    u16(minor);
    u32(0);
    u32(0);
    u32(snaplen);
    u32(1);  // Ethernet
  }
  void record(std::uint32_t sec, std::uint32_t frac, std::uint32_t caplen, std::uint32_t len,
              std::size_t stored) {
    u32(sec);
    u32(frac);
    u32(caplen);
    u32(len);
    for (std::size_t i = 0; i < stored; ++i) bytes.push_back(static_cast<char>(i * 7 + caplen));
  }
};

}  // namespace

TEST_CASE("a classic pcap file read from its mapping gives what libpcap gives") {
  // Every capture of the test data (microsecond and nanosecond ones).
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(RDMALAB_TEST_DATA)) {
    if (entry.path().extension() != ".pcap") continue;
    const std::string bytes = file_bytes(entry.path().string());
    check_same(entry.path().filename().string(), bytes);
    // Cut in a record's header, in its data, and just after its header.
    for (const std::size_t cut : {bytes.size() - 1, bytes.size() * 2 / 3, std::size_t{24 + 8}})
      if (cut > 24 && cut < bytes.size())
        check_same("cut at " + std::to_string(cut), bytes.substr(0, cut));
    ++files;
  }
  CHECK(files >= 10);
  for (const bool swapped : {false, true}) {
    for (const std::uint32_t magic : {0xA1B2C3D4U, 0xA1B23C4DU}) {
      CAPTURE(swapped);
      CAPTURE(magic);
      HandPcap f(magic, swapped, 100);
      f.record(1'700'000'000, 999'999, 60, 60, 60);
      f.record(1'700'000'001, 5, 100, 1500, 100);      // cut to the snap length when written
      f.record(0, 0, 0, 64, 0);                        // nothing kept
      f.record(0x8000'0001, 0xFFFF'FFF0, 10, 10, 10);  // before 1970 / damaged time
      f.record(3, 4, 150, 150, 150);  // longer than the snap length: libpcap cuts it
      f.record(5, 6, 20, 20, 20);
      check_same("hand-written", f.bytes);
      f.record(7, 8, 1'000'000, 1'000'000, 10);  // longer than libpcap accepts
      check_same("hand-written, a damaged length", f.bytes);
    }
  }
  // Version 2.3 and pcapng are libpcap's alone.
  HandPcap old(0xA1B2C3D4U, false, 100, 3);
  old.record(1, 2, 10, 10, 10);
  check_same("version 2.3", old.bytes, false);
}

namespace {

/// Reads every frame of `reader`, touching each byte, and returns the page
/// faults this thread took meanwhile.
long faults_reading(capture::PcapReader& reader, std::size_t& frames, std::uint64_t& sum) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_THREAD, &before);
  capture::Packet p;
  while (reader.next(p)) {
    ++frames;
    for (const std::uint8_t b : p.data) sum += b;
  }
  ::getrusage(RUSAGE_THREAD, &after);
  return (after.ru_minflt - before.ru_minflt) + (after.ru_majflt - before.ru_majflt);
}

/// The bytes of the mapping holding `p` that are in memory (its Rss in
/// /proc/self/smaps); 0 when it is not found.
std::size_t resident_bytes(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_it = false;
  while (std::getline(smaps, line)) {
    unsigned long long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &from, &to) == 2 && line.find(':') > line.find(' '))
      in_it = from <= at && at < to;
    unsigned long long kib = 0;
    if (in_it && std::sscanf(line.c_str(), "Rss: %llu kB", &kib) == 1) return kib * 1024;
  }
  return 0;
}

}  // namespace

TEST_CASE("map_ahead maps a mapped file's pages from another thread, so reading takes no fault") {
  // 3,000 records of 1,500 bytes: about 4.5 MB, some 1,100 pages. From a
  // fresh mapping, reading the first record maps its page and some
  // neighbours (16 pages by default, or the page cache's large folio the
  // page is in: at most 2 MiB, one page table, however the kernel is set),
  // and every later page faults on its first touch: at least one more
  // fault. After map_ahead over the whole file every page is in the mapping
  // before the first read: its resident size is the file's, and reading
  // takes no fault at all (not counted under AddressSanitizer, whose
  // shadow of the bytes read faults in as it is first checked).
  HandPcap f(0xA1B2C3D4U, false, 65535);
  for (std::uint32_t i = 0; i < 3000; ++i) f.record(i, 0, 1500, 1500, 1500);
  const auto path =
      temp_path(("rdmalab_capture_map_ahead_" + std::to_string(::getpid()) + ".pcap").c_str());
  std::ofstream(path, std::ios::binary) << f.bytes;
  const std::size_t whole_pages = f.bytes.size() & ~std::size_t{4095};

  std::size_t frames_plain = 1, frames_ahead = 1;
  std::uint64_t sum_plain = 0, sum_ahead = 0;
  capture::Packet first;
  capture::PcapReader plain(path);
  REQUIRE(plain.mapped());
  REQUIRE(plain.next(first));
  const std::size_t resident_plain = resident_bytes(first.data.data());
  for (const std::uint8_t b : first.data) sum_plain += b;
  const long faults_plain = faults_reading(plain, frames_plain, sum_plain);

  capture::PcapReader ahead(path);
  ahead.done_before(0);  // from here on, another thread may call it and map_ahead
  bool mapped = false;
  std::thread([&] {
    CHECK_FALSE(ahead.map_ahead(100, 100));                               // an empty range
    CHECK_FALSE(ahead.map_ahead(f.bytes.size(), f.bytes.size() + 4096));  // past the end
    mapped = ahead.map_ahead(0, std::uint64_t{1} << 40);  // cut at the end of the file
  }).join();
  REQUIRE(ahead.next(first));
  const std::size_t resident_ahead = resident_bytes(first.data.data());
  for (const std::uint8_t b : first.data) sum_ahead += b;
  const long faults_ahead = faults_reading(ahead, frames_ahead, sum_ahead);

  CHECK(frames_plain == 3000);
  CHECK(frames_ahead == 3000);
  CHECK(sum_ahead == sum_plain);
  CHECK(resident_plain > 0);
  CHECK(resident_plain <= (std::size_t{2} << 20) + 4096);
  CHECK(faults_plain >= 1);
  // A kernel before 5.14 cannot map ahead (map_ahead says so).
  if (mapped) {
    CHECK(resident_ahead >= whole_pages);
#if defined(RDMALAB_ASAN)
    (void)faults_ahead;  // the shadow's faults, not the file's
#else
    CHECK(faults_ahead == 0);
#endif
  }
  std::filesystem::remove(path);

  // A file libpcap reads (a pipe) has no mapping.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&] {
    const std::string head = f.bytes.substr(0, 24);
    CHECK(::write(fds[1], head.data(), head.size()) == 24);
    ::close(fds[1]);
  });
  {
    capture::PcapReader piped("/dev/fd/" + std::to_string(fds[0]));
    CHECK_FALSE(piped.map_ahead(0, 4096));
  }
  writer.join();
  ::close(fds[0]);
}

// ------------------------------------------------------- ERF (link type 197)

namespace {

#ifdef RDMALAB_TSHARK
constexpr const char* kTshark = RDMALAB_TSHARK;
#else
constexpr const char* kTshark = nullptr;  // not found when configured: its test is skipped
#endif

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'790'000'000 * kSecond;  // 2026-09-21, ns since the epoch

/// One native IB packet as encode_frame builds it, and what it was built from.
struct IbCase {
  wire::FrameSpec spec;  // its payload points into `payload`: not to be copied
  std::vector<std::uint8_t> payload;
  std::vector<std::uint8_t> bytes;  // LRH through VCRC
  std::uint16_t pkt_len_words;      // derived by hand
};

/// Builds `c.bytes` from `c.spec` (which points at `c.payload`) and checks
/// its length against the hand-derived PktLen.
void build(IbCase& c) {
  c.spec.link_layer = wire::LinkLayer::Infiniband;
  c.spec.packet.payload = c.payload;
  c.bytes.resize(wire::frame_size(c.spec));
  REQUIRE(wire::encode_frame(c.spec, c.bytes) == c.bytes.size());
  REQUIRE(c.bytes.size() == std::size_t{c.pkt_len_words} * 4 + wire::ib::kVcrcSize);
}

/// A few packets of an RC conversation on an InfiniBand link, A (LID 7)
/// writing 3000 bytes to B (LID 12) at path MTU 1024, SL 3 on VL 1; B's
/// ACK on SL 0, VL 0; a SEND with immediate; then C (LID 13, GID fe80::d)
/// sending to B (GID fe80::c) through a router (GRH), SL 1 on VL 2.
/// PktLen = (LRH 8 [+ GRH 40] + BTH 12 + extension headers + payload + pad
/// + ICRC 4) / 4, by hand in each entry.
std::vector<IbCase> conversation() {
  std::vector<IbCase> cs(6);
  const auto rc = [](IbCase& c, std::uint8_t opcode, std::uint32_t qp, std::uint32_t psn,
                     std::uint16_t slid, std::uint16_t dlid, std::uint8_t sl, std::uint8_t vl) {
    c.spec.packet.bth.opcode = opcode;
    c.spec.packet.bth.dest_qp = qp;
    c.spec.packet.bth.psn = psn;
    c.spec.slid = slid;
    c.spec.dlid = dlid;
    c.spec.sl = sl;
    c.spec.vl = vl;
  };
  // WRITE First with RETH: 8 + 12 + 16 + 1024 + 4 = 1064 bytes, 266 words.
  rc(cs[0], 0x06, 0x22, 0x100, 7, 12, 3, 1);
  cs[0].spec.packet.reth = wire::Reth{0x1000'0000, 0x4321, 3000};
  cs[0].payload.assign(1024, 0x5A);
  cs[0].pkt_len_words = 266;
  // WRITE Middle: 8 + 12 + 1024 + 4 = 1048, 262 words.
  rc(cs[1], 0x07, 0x22, 0x101, 7, 12, 3, 1);
  cs[1].payload.assign(1024, 0x5B);
  cs[1].pkt_len_words = 262;
  // WRITE Last, 3000 - 2048 = 952 bytes: 8 + 12 + 952 + 4 = 976, 244 words.
  rc(cs[2], 0x08, 0x22, 0x102, 7, 12, 3, 1);
  cs[2].spec.packet.bth.ack_req = true;
  cs[2].payload.assign(952, 0x5C);
  cs[2].pkt_len_words = 244;
  // ACK with AETH: 8 + 12 + 4 + 4 = 28, 7 words.
  rc(cs[3], 0x11, 0x11, 0x102, 12, 7, 0, 0);
  cs[3].spec.packet.aeth = wire::Aeth{0x1F, 1};
  cs[3].pkt_len_words = 7;
  // SEND Only with Immediate, 10 bytes and 2 of pad: 8 + 12 + 4 + 12 + 4 =
  // 40, 10 words.
  rc(cs[4], 0x05, 0x22, 0x103, 7, 12, 3, 1);
  cs[4].spec.packet.immdt = 0xDEADBEEF;
  cs[4].payload.assign(10, 0x01);
  cs[4].pkt_len_words = 10;
  // SEND Only, global: 8 + 40 + 12 + 128 + 4 = 192, 48 words.
  rc(cs[5], 0x04, 0x44, 0x500, 13, 12, 1, 2);
  cs[5].spec.ib_global = true;
  cs[5].spec.src_ip = *wire::IpAddress::parse("fe80::d");
  cs[5].spec.dst_ip = *wire::IpAddress::parse("fe80::c");
  cs[5].spec.traffic_class = 0x10;
  cs[5].spec.flow_label = 0xABCDE;
  cs[5].spec.hop_limit = 64;
  cs[5].payload.assign(128, 0x77);
  cs[5].pkt_len_words = 48;
  for (IbCase& c : cs) build(c);
  return cs;
}

std::string erf_path(const char* name) {
  return temp_path(
      (std::string("rdmalab_capture_erf_") + std::to_string(::getpid()) + "_" + name + ".pcap")
          .c_str());
}

/// tshark prints the ICRC and VCRC fields as the bytes on the wire read as
/// a big-endian number (and does not check them), while the CRC values are
/// stored least significant byte first: the value with its bytes swapped.
std::uint32_t swap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00) | ((v << 8) & 0xFF'0000) | (v << 24);
}

using testsupport::run_command;
using testsupport::split_lines;

}  // namespace

TEST_CASE("ERF: each IB packet one type-21 record, read back with its time, decoded and verified") {
  const std::vector<IbCase> cs = conversation();
  // Times on both sides of second boundaries, where a fraction rounded up
  // would carry into the seconds.
  const std::vector<std::int64_t> times = {
      0,   1,       kSecond - 1,       kSecond,           kT0 - 1,
      kT0, kT0 + 1, kT0 + kSecond / 2, kT0 + kSecond - 1, kT0 + kSecond + 123'456'789};
  const auto path = erf_path("readback");
  {
    capture::PcapWriter w(path, wire::LinkType::Erf);
    for (std::size_t i = 0; i < times.size(); ++i) w.write(times[i], cs[i % cs.size()].bytes);
  }
  capture::PcapReader r(path);
  CHECK(r.datalink() == 197);
  REQUIRE(r.link_type() == wire::LinkType::Erf);
  capture::Packet pk;
  for (std::size_t i = 0; i < times.size(); ++i) {
    CAPTURE(i);
    const IbCase& c = cs[i % cs.size()];
    REQUIRE(r.next(pk));
    CHECK(pk.time_ns == times[i]);
    CHECK(pk.data.size() == 16 + c.bytes.size());
    CHECK(pk.original_length == 16 + c.bytes.size());
    wire::erf::Record rec;
    REQUIRE_FALSE(wire::erf::parse(pk.data, rec));
    CHECK(rec.time_ns() == times[i]);
    CHECK(rec.type == wire::erf::kTypeInfiniband);
    CHECK(rec.flags == 0);
    CHECK(rec.lctr == 0);
    CHECK(rec.extension_headers == 0);
    CHECK(rec.rlen == 16 + c.bytes.size());
    CHECK(rec.wlen == c.bytes.size());
    CHECK(std::vector<std::uint8_t>(rec.packet.begin(), rec.packet.end()) == c.bytes);

    const wire::Frame f = wire::decode_frame(pk.data, *r.link_type(), pk.original_length);
    REQUIRE_FALSE(f.error.has_value());
    CHECK(f.roce == wire::RoceVersion::NativeIb);
    CHECK(f.erf_type == wire::erf::kTypeInfiniband);
    REQUIRE(f.lrh.has_value());
    CHECK(f.lrh->slid == c.spec.slid);
    CHECK(f.lrh->dlid == c.spec.dlid);
    CHECK(f.lrh->pkt_len_words == c.pkt_len_words);
    REQUIRE(f.ib.has_value());
    CHECK(f.ib->bth.opcode == c.spec.packet.bth.opcode);
    CHECK(f.ib->bth.psn == c.spec.packet.bth.psn);
    CHECK(f.ib->payload.size() == c.payload.size());
    CHECK(wire::check_icrc(f, pk.data)->ok());
    CHECK(wire::check_vcrc(f, pk.data)->ok());
  }
  CHECK_FALSE(r.next(pk));
  std::filesystem::remove(path);
}

TEST_CASE(
    "ERF with a snap length: the packet is cut, the ERF and pcap lengths say how long it was") {
  const std::vector<IbCase> cs = conversation();
  const auto path = erf_path("snap");
  {
    capture::PcapWriter w(path, wire::LinkType::Erf, 40);
    CHECK(w.snaplen() == 40);       // the packet's bytes, not the ERF header's
    w.write(kT0, cs[0].bytes);      // WRITE First, 1066 bytes: 40 kept
    w.write(kT0 + 1, cs[3].bytes);  // the ACK, 30 bytes: whole
  }
  capture::PcapReader r(path);
  capture::Packet pk;
  REQUIRE(r.next(pk));
  CHECK(pk.data.size() == 16 + 40);
  CHECK(pk.original_length == 16 + 1066);
  wire::erf::Record rec;
  REQUIRE_FALSE(wire::erf::parse(pk.data, rec));
  CHECK(rec.rlen == 16 + 40);
  CHECK(rec.wlen == 1066);
  const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Erf, pk.original_length);
  REQUIRE(f.error.has_value());
  CHECK(f.error->kind == wire::ErrorKind::SnapTruncated);
  REQUIRE(f.ib.has_value());
  CHECK(f.ib->bth.psn == 0x100);
  CHECK(f.ib->payload_length == 1024);
  CHECK_FALSE(wire::check_icrc(f, pk.data).has_value());
  REQUIRE(r.next(pk));
  CHECK(pk.data.size() == 16 + 30);
  CHECK(pk.original_length == 16 + 30);
  const wire::Frame ack = wire::decode_frame(pk.data, wire::LinkType::Erf, pk.original_length);
  CHECK_FALSE(ack.error.has_value());
  CHECK(wire::check_vcrc(ack, pk.data)->ok());
  CHECK_FALSE(r.next(pk));
  std::filesystem::remove(path);
}

TEST_CASE("ERF: the file's snap length covers the largest record") {
  // pcap-savefile(5): the file header's snap length is the 32-bit word at
  // bytes 16-19, in the writer's byte order (the magic number's).
  const auto snaplen_in_header = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char h[24] = {};
    in.read(h, sizeof h);
    std::uint32_t v = 0;
    std::memcpy(&v, h + 16, 4);
    return v;
  };
  const auto path = erf_path("snaplen");
  // A record is 16 bytes of header and up to the snap length of packet, at
  // most 0xFFFF bytes in all (rlen is 16 bits): 40 -> 56, 65518 -> 65534;
  // from 65519 (0xFFFF - 16) on, 65535; the default 262144 and 65535
  // already cover every record and are kept.
  for (const auto& c :
       {std::pair{40u, 56u}, std::pair{65518u, 65534u}, std::pair{65519u, 65535u},
        std::pair{65520u, 65535u}, std::pair{65535u, 65535u}, std::pair{262144u, 262144u}}) {
    const unsigned given = c.first, in_header = c.second;
    CAPTURE(given);
    { capture::PcapWriter w(path, wire::LinkType::Erf, given); }
    CHECK(snaplen_in_header(path) == in_header);
  }
  std::filesystem::remove(path);
}

TEST_CASE("write_record: a record made by the caller is written as it is") {
  // An ERF record as ibdump writes it (flags 0x04: varying length) with one
  // extension header (type byte bit 7; 8 bytes), which write() would not
  // make: 16 + 8 + the 30-byte ACK, rlen 54.
  const std::vector<IbCase> cs = conversation();
  std::vector<std::uint8_t> rec(16 + 8 + 30);
  REQUIRE(wire::erf::write_header(wire::erf::kTypeInfiniband, kT0, 30, rec.data()));
  rec[8] |= 0x80;
  rec[9] = 0x04;
  rec[11] = 54;
  std::copy(cs[3].bytes.begin(), cs[3].bytes.end(), rec.begin() + 24);
  const auto path = erf_path("record");
  {
    capture::PcapWriter w(path, wire::LinkType::Erf);
    w.write_record(kT0, rec, rec.size());
  }
  capture::PcapReader r(path);
  capture::Packet pk;
  REQUIRE(r.next(pk));
  CHECK(pk.time_ns == kT0);
  CHECK(pk.original_length == rec.size());
  CHECK(std::vector<std::uint8_t>(pk.data.begin(), pk.data.end()) == rec);
  const wire::Frame f = wire::decode_frame(pk.data, wire::LinkType::Erf, pk.original_length);
  CHECK_FALSE(f.error.has_value());
  CHECK(f.bth_offset == 24 + 8);
  CHECK(wire::check_vcrc(f, pk.data)->ok());
  CHECK_FALSE(r.next(pk));
  std::filesystem::remove(path);
}

TEST_CASE("ERF: a time or a length a record cannot hold is refused") {
  const auto path = erf_path("refused");
  capture::PcapWriter w(path, wire::LinkType::Erf);
  const std::vector<std::uint8_t> small(30, 0), huge(0x10000, 0);
  CHECK_THROWS_AS(w.write(-1, small), capture::CaptureError);
  CHECK_THROWS_AS(w.write(kT0, huge), capture::CaptureError);
  std::filesystem::remove(path);
}

TEST_CASE("tshark reads the ERF capture as it was built" * doctest::skip(kTshark == nullptr)) {
  const std::vector<IbCase> cs = conversation();
  const auto path = erf_path("tshark");
  std::vector<std::int64_t> times;
  {
    capture::PcapWriter w(path, wire::LinkType::Erf);
    for (std::size_t i = 0; i < cs.size(); ++i) {
      // From 3 ns before a second's end, 1 ns apart: across the boundary.
      times.push_back(kT0 + kSecond - 3 + static_cast<std::int64_t>(i));
      w.write(times.back(), cs[i].bytes);
    }
  }
  const std::string tshark = std::string("'") + (kTshark != nullptr ? kTshark : "tshark") + "'";
  const std::string fields =
      run_command(tshark + " -n -r '" + path +
                  "' -T fields -e frame.time_epoch -e erf.types.type -e erf.flags -e erf.rlen"
                  " -e erf.wlen -e infiniband.lrh.dlid -e infiniband.lrh.slid"
                  " -e infiniband.lrh.sl -e infiniband.lrh.vl -e infiniband.lrh.lnh"
                  " -e infiniband.lrh.pktlen -e infiniband.bth.opcode -e infiniband.bth.destqp"
                  " -e infiniband.bth.psn -e infiniband.invariant.crc -e infiniband.variant.crc"
                  " 2>/dev/null");
  const std::string bad = run_command(tshark + " -n -r '" + path +
                                      "' -Y '_ws.malformed || _ws.expert' -T fields"
                                      " -e frame.number 2>/dev/null");
  std::filesystem::remove(path);
  const auto rows = split_lines(fields);
  REQUIRE(rows.size() == cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    CAPTURE(i);
    const IbCase& c = cs[i];
    const std::vector<std::string>& t = rows[i];
    REQUIRE(t.size() == 16);
    const auto num = [&](std::size_t k) { return std::stoull(t[k], nullptr, 0); };
    char when[32];
    std::snprintf(when, sizeof when, "%lld.%09lld", static_cast<long long>(times[i] / kSecond),
                  static_cast<long long>(times[i] % kSecond));
    CHECK(t[0] == when);
    CHECK(num(1) == wire::erf::kTypeInfiniband);
    CHECK(num(2) == 0);
    CHECK(num(3) == 16 + c.bytes.size());
    CHECK(num(4) == c.bytes.size());
    CHECK(num(5) == c.spec.dlid);
    CHECK(num(6) == c.spec.slid);
    CHECK(num(7) == c.spec.sl);
    CHECK(num(8) == c.spec.vl);
    CHECK(num(9) == (c.spec.ib_global ? 3u : 2u));
    CHECK(num(10) == c.pkt_len_words);
    CHECK(num(11) == c.spec.packet.bth.opcode);
    CHECK(num(12) == c.spec.packet.bth.dest_qp);
    CHECK(num(13) == c.spec.packet.bth.psn);
    const auto crcs = wire::ib::check_crcs(c.bytes);
    REQUIRE(crcs.has_value());
    CHECK(num(14) == swap32(crcs->icrc_expected));
    CHECK(num(15) ==
          static_cast<std::uint16_t>(crcs->vcrc_expected >> 8 | crcs->vcrc_expected << 8));
  }
  CHECK(bad.empty());
}
