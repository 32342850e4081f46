// The ICRC we compute equals the one rxe put on every packet of the real
// Soft-RoCE captures in tests/data, and a corrupted byte is detected.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab;

namespace {
std::vector<std::filesystem::path> captures() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(RDMALAB_TEST_DATA))
    if (e.path().extension() == ".pcap") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("CRC-32 check value") {
  const std::string s = "123456789";
  CHECK(wire::crc32(0, wire::Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())) ==
        0xCBF43926u);
}

TEST_CASE("ICRC verifies on every RoCEv2 packet of the real Soft-RoCE captures") {
  const auto files = captures();
  REQUIRE(files.size() >= 10);
  std::size_t total = 0;
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    capture::PcapReader reader(path.string());
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

// The CRC and the ICRC take different paths by length (a table for short
// pieces, carry-less multiplication folded block by block for a packet of a
// few hundred bytes, four or sixteen blocks at a time beyond): every length
// and alignment must give what zlib gives over the same bytes.
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
  for (std::size_t n = 0; n <= 5000; ++n)
    for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{13}}) {
      const std::uint32_t start = n % 3 == 0 ? 0u : static_cast<std::uint32_t>(n * 2654435761u);
      const auto ours = wire::crc32(start, wire::Bytes(data.data() + at, n));
      if (ours != zlib_crc(start, data.data() + at, n)) {
        FAIL("length " << n << " at offset " << at);
      }
    }
}

TEST_CASE("ICRC equals zlib over the masked packet for every length and header") {
  // The reference: the IBTA definition read literally, with zlib's CRC.
  const auto reference = [](std::vector<std::uint8_t> frame, wire::RoceVersion v, std::size_t net,
                            std::size_t bth, std::size_t icrc) {
    std::uint8_t* h = frame.data() + net;
    if (v == wire::RoceVersion::V1 || (h[0] >> 4) == 6) {
      h[0] |= 0x0F;
      h[1] = h[2] = h[3] = 0xFF;
      h[7] = 0xFF;
    } else {
      h[1] = h[8] = h[10] = h[11] = 0xFF;
    }
    if (v == wire::RoceVersion::V2) frame[bth - 2] = frame[bth - 1] = 0xFF;
    frame[bth + 4] = 0xFF;
    const std::uint8_t lrh[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    const std::uint32_t c = zlib_crc(0, lrh, 8);
    return zlib_crc(c, frame.data() + net, icrc - net);
  };
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
  std::size_t checked = 0;
  for (const auto& l : layouts) {
    CAPTURE(l.name);
    for (std::size_t payload = 0; payload <= 4200; payload += payload < 600 ? 1 : 37) {
      const std::size_t net = 14, bth = net + l.net_len, icrc = bth + 12 + payload;
      auto frame = noise(icrc + 4, static_cast<std::uint32_t>(payload + l.net_len));
      frame[net] = l.first;
      const auto ours = wire::icrc_of(frame, l.version, net, bth, icrc);
      REQUIRE(ours.has_value());
      if (*ours != reference(frame, l.version, net, bth, icrc)) {
        FAIL("payload " << payload);
      }
      ++checked;
    }
  }
  CHECK(checked > 3000);
}
