// The ICRC we compute equals the one rxe put on every packet of the real
// Soft-RoCE captures in tests/data, and a corrupted byte is detected.
#include <doctest/doctest.h>

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
