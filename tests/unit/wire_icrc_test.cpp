// The ICRC we compute equals the one rxe put on every packet of the real
// Soft-RoCE captures in tests/data, and a corrupted byte is detected. Every
// implementation of the CRC this CPU supports gives what zlib and the
// reference (the definition computed bit by bit) give, at every length,
// alignment and header layout; one it lacks is reported as skipped.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/wire/crc32_impl.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab;
using wire::detail::CrcImpl;

namespace {
std::vector<std::filesystem::path> captures() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(RDMALAB_TEST_DATA))
    if (e.path().extension() == ".pcap") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string impl_needs(CrcImpl impl) {
  switch (impl) {
    case CrcImpl::Vpclmul: return "AVX-512F and VPCLMULQDQ";
    case CrcImpl::Vpclmul256: return "AVX2 and VPCLMULQDQ";
    default: return "PCLMULQDQ and SSE4.1";
  }
}

/// Runs `check` with each implementation forced in turn; says which ones
/// this CPU lacks, and that the fastest it has is the default.
template <class Check>
void for_each_impl(Check check) {
  CHECK(wire::detail::crc_impl() == wire::detail::best_crc_impl());
  for (const CrcImpl impl : wire::detail::kCrcImpls) {
    CAPTURE(wire::detail::crc_impl_name(impl));
    const wire::detail::ScopedCrcImpl use(impl);
    if (!use.active()) {
      CHECK_FALSE(wire::detail::crc_impl_supported(impl));
      MESSAGE(wire::detail::crc_impl_name(impl) << " skipped: CPU lacks " << impl_needs(impl));
      continue;
    }
    REQUIRE(wire::detail::crc_impl() == impl);
    check();
  }
  CHECK(wire::detail::crc_impl() == wire::detail::best_crc_impl());
}
}  // namespace

TEST_CASE("CRC-32 check value") {
  const std::string s = "123456789";
  const wire::Bytes b(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  for_each_impl([&] { CHECK(wire::crc32(0, b) == 0xCBF43926u); });
}

TEST_CASE("ICRC verifies on every RoCEv2 packet of the real Soft-RoCE captures") {
  const auto files = captures();
  REQUIRE(files.size() >= 10);
  std::size_t total = 0;
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    capture::PcapReader reader(path.string());
    // Native InfiniBand (ib_erf_rc.pcap): its ICRCs and VCRCs are checked
    // by tests/dissect/dissect_ib_capture_test.cpp.
    if (reader.link_type() == wire::LinkType::Erf) continue;
    REQUIRE(reader.link_type() == wire::LinkType::Ethernet);
    capture::Packet pkt;
    std::size_t in_file = 0;
    while (reader.next(pkt)) {
      CAPTURE(pkt.frame);
      const auto f = wire::decode_frame(pkt.data, wire::LinkType::Ethernet, pkt.original_length);
      if (!f.is_roce()) continue;
      REQUIRE_FALSE(f.error.has_value());
      const auto c = wire::check_icrc(f, pkt.data);
      REQUIRE(c.has_value());
      CHECK(c->expected == c->actual);
      CHECK(wire::icrc_reference(pkt.data, f.roce, f.ip_offset, f.bth_offset,
                                 f.ib_end - wire::kIcrcSize) == c->actual);
      ++in_file;

      // Flip one bit in the payload or a header: the check must fail.
      std::vector<std::uint8_t> bad(pkt.data.begin(), pkt.data.end());
      bad[f.bth_offset + 9] ^= 0x01;  // PSN
      const auto fb = wire::decode_frame(bad, wire::LinkType::Ethernet, pkt.original_length);
      CHECK_FALSE(wire::check_icrc(fb, bad)->ok());
    }
    CHECK(in_file > 0);
    total += in_file;
  }
  MESSAGE("ICRC verified on " << total << " packets");
  CHECK(total > 200);
}

// The CRC and the ICRC take different paths by length (zlib for short
// pieces, carry-less multiplication with one constant per block for a packet
// of a few hundred bytes, four or sixteen blocks at a time beyond): every
// length and alignment must give what zlib gives over the same bytes.
namespace {
std::vector<std::uint8_t> noise(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) {
    seed = seed * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(seed >> 24);
  }
  return v;
}

std::uint32_t zlib_crc(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
  return static_cast<std::uint32_t>(::crc32(crc, p, static_cast<uInt>(n)));
}
}  // namespace

TEST_CASE("CRC-32 equals zlib for every length and alignment") {
  const auto data = noise(5000 + 16, 7);
  for_each_impl([&] {
    for (std::size_t n = 0; n <= 5000; ++n)
      for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{13}}) {
        const std::uint32_t start = n % 3 == 0 ? 0u : static_cast<std::uint32_t>(n * 2654435761u);
        const auto ours = wire::crc32(start, wire::Bytes(data.data() + at, n));
        if (ours != zlib_crc(start, data.data() + at, n)) {
          FAIL("length " << n << " at offset " << at);
        }
      }
  });
}

TEST_CASE("the reference ICRC is zlib's CRC over the LRH stand-in and the masked packet") {
  // RoCEv2/IPv4: 20-byte IP header, 8-byte UDP header, BTH, 5 payload bytes.
  auto frame = noise(14 + 20 + 8 + 12 + 5 + 4, 3);
  const std::size_t net = 14, bth = net + 28, icrc = frame.size() - 4;
  frame[net] = 0x45;
  auto masked = frame;
  for (const std::size_t at : {net + 1, net + 8, net + 10, net + 11, bth - 2, bth - 1, bth + 4})
    masked[at] = 0xFF;
  const std::uint8_t lrh[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const std::uint32_t expected = zlib_crc(zlib_crc(0, lrh, 8), masked.data() + net, icrc - net);
  CHECK(wire::icrc_reference(frame, wire::RoceVersion::V2, net, bth, icrc) == expected);
  CHECK(wire::icrc_reference(masked, wire::RoceVersion::V2, net, bth, icrc) == expected);
  frame[bth + 3] ^= 1;  // the destination QP is not variant
  CHECK(wire::icrc_reference(frame, wire::RoceVersion::V2, net, bth, icrc) != expected);
}

TEST_CASE("ICRC equals the reference for every length and header") {
  struct Layout {
    const char* name;
    wire::RoceVersion version;
    std::uint8_t first;   // the IP version nibble and IHL
    std::size_t net_len;  // IP header or GRH, and UDP
  };
  const Layout layouts[] = {
      {"IPv4", wire::RoceVersion::V2, 0x45, 20 + 8},
      {"IPv4 with options", wire::RoceVersion::V2, 0x4F, 60 + 8},
      {"IPv6", wire::RoceVersion::V2, 0x60, 40 + 8},
      {"IPv6 with extension headers", wire::RoceVersion::V2, 0x60, 40 + 192 + 8},
      {"RoCEv1", wire::RoceVersion::V1, 0x60, 40},
  };
  for_each_impl([&] {
    std::size_t checked = 0;
    for (const auto& l : layouts) {
      CAPTURE(l.name);
      for (std::size_t payload = 0; payload <= 4200; payload += payload < 600 ? 1 : 37) {
        const std::size_t net = 14, bth = net + l.net_len, icrc = bth + 12 + payload;
        auto frame = noise(icrc + 4, static_cast<std::uint32_t>(payload + l.net_len));
        frame[net] = l.first;
        const auto ours = wire::icrc_of(frame, l.version, net, bth, icrc);
        REQUIRE(ours.has_value());
        if (ours != wire::icrc_reference(frame, l.version, net, bth, icrc)) {
          FAIL("payload " << payload);
        }
        ++checked;
      }
    }
    CHECK(checked > 3000);
  });
}

TEST_CASE("the ICRC cannot be computed where the offsets or the IP version do not fit") {
  auto frame = noise(400, 5);
  frame[0] = 0x60;
  frame[14] = 0x45;
  struct Case {
    wire::RoceVersion version;
    std::size_t net, bth, icrc;
  };
  const Case cases[] = {
      {wire::RoceVersion::None, 14, 42, 100},  // not RoCE
      {wire::RoceVersion::V2, 42, 42, 100},    // no IP header
      {wire::RoceVersion::V2, 14, 42, 50},     // no room for the BTH
      {wire::RoceVersion::V2, 14, 42, 401},    // beyond the bytes
      {wire::RoceVersion::V2, 0, 260, 300},    // more than 256 header bytes
  };
  for (const Case& c : cases) {
    CHECK_FALSE(wire::icrc_of(frame, c.version, c.net, c.bth, c.icrc).has_value());
    CHECK_FALSE(wire::icrc_reference(frame, c.version, c.net, c.bth, c.icrc).has_value());
  }
  frame[14] = 0x55;  // neither IPv4 nor IPv6
  CHECK_FALSE(wire::icrc_of(frame, wire::RoceVersion::V2, 14, 42, 100).has_value());
  CHECK_FALSE(wire::icrc_reference(frame, wire::RoceVersion::V2, 14, 42, 100).has_value());
  frame[14] = 0x45;
  CHECK(wire::icrc_of(frame, wire::RoceVersion::V2, 14, 42, 100).has_value());
}
