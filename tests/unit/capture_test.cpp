#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"

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
