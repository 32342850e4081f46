// The native InfiniBand capture in tests/data, written here frame by frame
// and compared byte for byte with the committed file (RDMALAB_WRITE_TEST_DATA=1
// rewrites it): link type 197, ERF records of type 21, as ibdump writes.
// Every other test that reads tests/data (tshark's field-by-field agreement,
// the Wireshark plugin, the schemas, the fuzz seeds) reads it too. The same
// packets as link type 247 (a bare packet, LRH through VCRC, as libpcap
// writes on an IB port) are written to a temporary file only: Wireshark 4.0
// cannot read that link type, and the tests over tests/data run tshark.
//
// Each packet is built by the wire library's encode_frame for an InfiniBand
// link: an LRH, a GRH for the globally routed conversation, the transport
// exactly as RoCEv2 carries it, and the ICRC and VCRC the IBTA defines. (The
// committed file predates that encoder: it was made by putting RoCEv2's
// transport bytes behind a hand-written LRH, so the byte-for-byte test also
// holds the encoder to those bytes.)
//
// The story, captured at the responder's port (host B, LID 12):
//   A (LID 7), QP 0x11, WRITEs 4 KiB to B's QP 0x22 at path MTU 1024:
//     frames 1-3  WRITE First 0x100, Middle 0x101, Last 0x103: 0x102 was
//                 lost before the capture point;
//     frame 4     B NAKs, PSN sequence error, expecting 0x102;
//     frames 5-6  A goes back: 0x102, 0x103 again; a switch set FECN on the
//                 resent Last (congestion on the way);
//     frame 7     B ACKs 0x103, MSN 1, with BECN: the congestion reported back;
//   A READs 2 KiB (request 0x104, responses 0x104 First, 0x105 Last);
//   A SENDs 64 bytes, PSN 0x106, damaged on the last link (a VL bit flipped:
//     the VCRC covers it, the ICRC does not), so B's port drops it; A resends
//     after its ACK timeout (timeout 14: 67.1 ms) and B ACKs;
//   C (LID 13, GID fe80::c), QP 0x33, globally routed (GRH), SENDs 128 bytes
//     to B's QP 0x44, and B ACKs.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/frame.hpp"

using namespace rdmalab;
using namespace rdmalab::dissect;

namespace {

constexpr std::uint16_t kLidA = 7, kLidB = 12, kLidC = 13;
constexpr std::int64_t kT0 = 1'790'000'000'000'000'000;  // 2026-09-21, ns since the epoch
constexpr std::int64_t kUs = 1000;

std::array<std::uint8_t, 16> gid(std::uint8_t last) {
  return {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
}

struct Packet {
  std::int64_t time_ns;
  std::vector<std::uint8_t> bytes;  // LRH through VCRC
};

/// One transport packet from `slid` to `dlid` on an InfiniBand link, LRH
/// through VCRC.
struct Builder {
  std::vector<Packet> packets;

  wire::IbPacket& next(std::uint8_t opcode, std::uint32_t dest_qp, std::uint32_t psn) {
    spec = wire::FrameSpec{};
    spec.link_layer = wire::LinkLayer::Infiniband;
    spec.packet.bth.opcode = opcode;
    spec.packet.bth.dest_qp = dest_qp;
    spec.packet.bth.psn = psn;
    return spec.packet;
  }

  /// Frames the packet last prepared with next(): LRH (and a GRH with the
  /// GIDs and hop limit of `grh` when given), the transport, ICRC and VCRC.
  void emit(std::int64_t t_us, std::uint16_t slid, std::uint16_t dlid,
            const std::vector<std::uint8_t>& payload = {}, const wire::Grh* grh = nullptr) {
    spec.packet.payload = payload;
    spec.slid = slid;
    spec.dlid = dlid;
    spec.ib_global = grh != nullptr;
    if (grh != nullptr) {
      spec.src_ip = wire::IpAddress::from_v6(grh->sgid);
      spec.dst_ip = wire::IpAddress::from_v6(grh->dgid);
      spec.traffic_class = grh->traffic_class;
      spec.flow_label = grh->flow_label;
      spec.hop_limit = grh->hop_limit;
    }
    std::vector<std::uint8_t> p(wire::frame_size(spec));
    REQUIRE(!p.empty());
    REQUIRE(wire::encode_frame(spec, p) == p.size());
    packets.push_back(Packet{kT0 + t_us * kUs, std::move(p)});
  }

  wire::FrameSpec spec;
};

std::vector<Packet> story() {
  namespace op = wire::opcode;
  Builder b;
  const std::vector<std::uint8_t> kb(1024, 0x5A);
  const auto ack = [&](std::int64_t t, std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn,
                       bool becn = false) {
    b.next(op::kRcAcknowledge, 0x11, psn).aeth = wire::Aeth{syndrome, msn};
    b.spec.packet.bth.becn = becn;
    b.emit(t, kLidB, kLidA);
  };
  // The WRITE, with 0x102 lost before the capture point.
  b.next(op::kRcWriteFirst, 0x22, 0x100).reth = wire::Reth{0x20000000, 0x1234, 4096};
  b.emit(0, kLidA, kLidB, kb);
  b.next(op::kRcWriteMiddle, 0x22, 0x101);
  b.emit(1, kLidA, kLidB, kb);
  b.next(op::kRcWriteLast, 0x22, 0x103).bth.ack_req = true;
  b.emit(3, kLidA, kLidB, kb);
  ack(4, 0x102, 0x60, 0);  // NAK, PSN sequence error
  b.next(op::kRcWriteMiddle, 0x22, 0x102);
  b.emit(10, kLidA, kLidB, kb);
  b.next(op::kRcWriteLast, 0x22, 0x103).bth.ack_req = true;
  b.spec.packet.bth.fecn = true;
  b.emit(11, kLidA, kLidB, kb);
  ack(12, 0x103, 0x1F, 1, true);
  // The READ: one request, two responses carrying the data.
  {
    wire::IbPacket& p = b.next(op::kRcReadRequest, 0x22, 0x104);
    p.reth = wire::Reth{0x20001000, 0x1234, 2048};
    p.bth.ack_req = true;
    b.emit(20, kLidA, kLidB);
    b.next(op::kRcReadResponseFirst, 0x11, 0x104).aeth = wire::Aeth{0x1F, 1};
    b.emit(22, kLidB, kLidA, kb);
    b.next(op::kRcReadResponseLast, 0x11, 0x105).aeth = wire::Aeth{0x1F, 2};
    b.emit(23, kLidB, kLidA, kb);
  }
  // The SEND damaged on the last link: one VL bit flipped after sealing.
  const std::vector<std::uint8_t> small(64, 0xC3);
  b.next(op::kRcSendOnly, 0x22, 0x106).bth.ack_req = true;
  b.emit(30, kLidA, kLidB, small);
  b.packets.back().bytes[0] ^= 0x10;  // VL 0 -> 1: the VCRC no longer matches
  b.next(op::kRcSendOnly, 0x22, 0x106).bth.ack_req = true;
  b.emit(30 + 67'109, kLidA, kLidB, small);  // after 4.096 us x 2^14
  ack(30 + 67'110, 0x106, 0x1F, 3);
  // The globally routed conversation, C -> B.
  wire::Grh g;
  g.hop_limit = 64;
  g.sgid = gid(0x0c);
  g.dgid = gid(0x0b);
  b.next(op::kRcSendOnly, 0x44, 0x500).bth.ack_req = true;
  b.emit(40, kLidC, kLidB, std::vector<std::uint8_t>(128, 0x77), &g);
  std::swap(g.sgid, g.dgid);
  b.next(op::kRcAcknowledge, 0x33, 0x500).aeth = wire::Aeth{0x1F, 1};
  b.emit(41, kLidB, kLidC, {}, &g);
  std::stable_sort(b.packets.begin(), b.packets.end(),
                   [](const Packet& x, const Packet& y) { return x.time_ns < y.time_ns; });
  return b.packets;
}

/// An ERF record of type 21 around `p`: the 16-byte header ibdump writes
/// (little-endian timestamp, seconds and a binary fraction; big-endian
/// lengths; flags: varying-length record, interface 0). PcapWriter's own
/// ERF records differ (flags 0, the fraction rounded to the nearest): this
/// file keeps ibdump's, written as they are with write_record.
std::vector<std::uint8_t> erf_record(const Packet& p) {
  std::vector<std::uint8_t> r(wire::erf::kHeaderSize + p.bytes.size());
  const auto secs = static_cast<std::uint64_t>(p.time_ns / 1'000'000'000);
  const auto ns = static_cast<std::uint64_t>(p.time_ns % 1'000'000'000);
  // Rounded up, so that reading it back to nanoseconds gives ns again.
  const std::uint64_t frac = ((ns << 32) + 999'999'999) / 1'000'000'000;
  const std::uint64_t ts = (secs << 32) | frac;
  for (int i = 0; i < 8; ++i)
    r[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(ts >> (8 * i));
  r[8] = wire::erf::kTypeInfiniband;
  r[9] = 0x04;
  const auto rlen = static_cast<std::uint16_t>(r.size());
  const auto wlen = static_cast<std::uint16_t>(p.bytes.size());
  r[10] = static_cast<std::uint8_t>(rlen >> 8);
  r[11] = static_cast<std::uint8_t>(rlen);
  r[14] = static_cast<std::uint8_t>(wlen >> 8);
  r[15] = static_cast<std::uint8_t>(wlen);
  std::copy(p.bytes.begin(), p.bytes.end(), r.begin() + wire::erf::kHeaderSize);
  return r;
}

std::vector<char> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("rdmalab_ib_" + std::to_string(::getpid()) + "_" + name);
}

/// Writes `packets` as `link` to `path` (ERF: the records above, as they are).
void write(const std::vector<Packet>& packets, wire::LinkType link,
           const std::filesystem::path& path) {
  capture::PcapWriter w(path.string(), link);
  for (const Packet& p : packets) {
    if (link == wire::LinkType::Erf) {
      const std::vector<std::uint8_t> r = erf_record(p);
      w.write_record(p.time_ns, r, r.size());
    } else {
      w.write(p.time_ns, p.bytes);
    }
  }
}

constexpr const char* kCommitted = "ib_erf_rc.pcap";

/// Writes `packets` as ERF to a temporary file and compares it with
/// tests/data/`name` (or replaces that file when RDMALAB_WRITE_TEST_DATA is set).
void write_and_compare(const std::vector<Packet>& packets, const std::string& name) {
  const auto tmp = temp_file(name);
  write(packets, wire::LinkType::Erf, tmp);
  const std::filesystem::path committed = std::filesystem::path(RDMALAB_TEST_DATA) / name;
  if (std::getenv("RDMALAB_WRITE_TEST_DATA") != nullptr)
    std::filesystem::copy_file(tmp, committed, std::filesystem::copy_options::overwrite_existing);
  CHECK_MESSAGE(
      read_file(tmp) == read_file(committed),
      name << " differs from what this test writes (RDMALAB_WRITE_TEST_DATA=1 rewrites it)");
  std::filesystem::remove(tmp);
}

/// A capture file, read as rdmapcap reads it.
Analyzer analyse(const std::filesystem::path& path, std::vector<PacketRecord>& records) {
  Analyzer a;
  capture::PcapReader reader(path.string());
  capture::Packet pk;
  while (reader.next(pk)) {
    PacketRecord rec;
    decode_record(pk.data, pk.original_length, *reader.link_type(), pk.frame, pk.time_ns, rec);
    a.feed(rec);
    rec.decoded = wire::Frame{};  // its spans point into the reader's buffer
    records.push_back(std::move(rec));
  }
  return a;
}

}  // namespace

TEST_CASE("the native InfiniBand captures in tests/data are written byte for byte") {
  const std::vector<Packet> packets = story();
  REQUIRE(packets.size() == 15);
  write_and_compare(packets, kCommitted);
}

TEST_CASE("the native InfiniBand captures read as the story they were written to tell") {
  const auto bare = temp_file("bare.pcap");
  write(story(), wire::LinkType::Infiniband, bare);
  for (const std::filesystem::path& path :
       {std::filesystem::path(RDMALAB_TEST_DATA) / kCommitted, bare}) {
    CAPTURE(path.string());
    std::vector<PacketRecord> records;
    Analyzer a = analyse(path, records);
    const std::vector<Event> end = a.finish();
    REQUIRE(records.size() == 15);
    // Every packet decodes as native IB; the one flipped VL bit breaks only
    // the VCRC of frame 11 (the first SEND 0x106).
    for (const PacketRecord& r : records) {
      CAPTURE(r.frame);
      REQUIRE(r.icrc.has_value());
      CHECK(r.icrc->ok());
      REQUIRE(r.vcrc.has_value());
      CHECK(r.vcrc->ok() == (r.frame != 11));
    }
    const CaptureStats& st = a.stats();
    CHECK(st.native_ib == 15);
    CHECK(st.vcrc_errors == 1);
    CHECK(st.icrc_errors == 0);
    const auto convs = a.summaries();
    REQUIRE(convs.size() == 2);
    // LID 7 -> LID 12: requests 3 + 2 resent + the READ + the SEND twice
    // = 8; responses: the NAK, two ACKs and the two READ responses = 5.
    const ChannelSummary& ab = convs[0].channels.at(0);
    CHECK(ab.requester.addr.to_string() == "LID 7");
    CHECK(ab.responder.addr.to_string() == "LID 12");
    CHECK(ab.request_packets == 8);
    CHECK(ab.response_packets == 5);
    CHECK(ab.naks[0] == 1);  // PSN sequence error
    CHECK(ab.go_back_n == 1);
    CHECK(ab.psn_gaps == 1);  // 0x101 -> 0x103
    CHECK(ab.timeouts == 1);  // 0x106 again after 67.1 ms, no NAK before it
    CHECK(ab.fecn == 1);
    CHECK(ab.becn == 1);
    CHECK(ab.writes == 1);
    CHECK(ab.reads == 1);
    CHECK(ab.sends == 1);
    // The globally routed conversation is keyed by its GIDs.
    const ChannelSummary& cb = convs[1].channels.at(0);
    CHECK(cb.requester.addr.to_string() == "fe80::c");
    CHECK(cb.responder.addr.to_string() == "fe80::b");
    CHECK(cb.request_packets == 1);
    CHECK(cb.response_packets == 1);
    CHECK(end.empty());
  }
  std::filesystem::remove(bare);
}
