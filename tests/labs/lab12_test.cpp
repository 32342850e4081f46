// Lab 12 (one-sided put/signal/wait/flush) on the simulator: the correct
// sequence, both ways of signalling, and the two broken rules with the wire
// as evidence.
#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

std::vector<std::string> packet_kinds(const json& j, std::size_t round) {
  std::vector<std::string> out;
  for (const auto& k : j.at("wire_rounds").at(round).at("packets")) out.push_back(k);
  return out;
}

bool has_check(const json& j, const std::string& id) {
  for (const auto& c : j.at("checks"))
    if (c.at("id") == id) return true;
  return false;
}

}  // namespace

TEST_CASE("lab12 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab12_one_sided, "lab12", {}, "en");
  compare_golden(LAB_lab12_one_sided, "lab12", {}, "zh");
}

TEST_CASE("lab12 default: put, FetchAdd signal after the put's last packet, wait, read, flush") {
  const auto j = run_lab_json(LAB_lab12_one_sided, "lab12_default");
  CHECK(j.at("ok") == true);
  for (const char* id : {"flush", "semaphore", "fetch", "bytes", "icrc", "order", "atomic_ack",
                         "wire_payload", "wire_original"})
    CHECK(check_ok(j, id));
  const auto& rounds = j.at("rounds");
  REQUIRE(rounds.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(rounds[r].at("fetched") == r);
    CHECK(rounds[r].at("sem_seen") == r + 1);
    CHECK(rounds[r].at("read_wrong") == 0);
    CHECK(packet_kinds(j, r) == std::vector<std::string>(8, "original"));
  }
  // 8192 bytes at MTU 1024: First, 6 Middles, Last, then the FetchAdd with
  // the next PSN; its Atomic Acknowledge carries the old value.
  std::vector<std::string> ops;
  std::vector<std::uint64_t> orig;
  for (const auto& f : j.at("wire").at("frames")) {
    ops.push_back(f.at("opname"));
    if (f.contains("atomicack")) orig.push_back(f.at("atomicack").at("orig"));
  }
  REQUIRE(ops.size() >= 11);
  CHECK(ops[0] == "RC RDMA WRITE First");
  CHECK(ops[7] == "RC RDMA WRITE Last");
  CHECK(ops[8] == "RC FetchAdd");
  CHECK(orig == std::vector<std::uint64_t>{0, 1});
}

TEST_CASE("lab12 --signal write: the epoch as an 8-byte RDMA WRITE, no atomic") {
  const auto j = run_lab_json(LAB_lab12_one_sided, "lab12_write", {"--signal", "write"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "order"));
  CHECK(check_ok(j, "bytes"));
  CHECK_FALSE(has_check(j, "atomic_ack"));
  std::size_t eight = 0;
  for (const auto& f : j.at("wire").at("frames")) {
    CHECK(f.at("opname") != "RC FetchAdd");
    if (f.at("opname") == "RC RDMA WRITE Only" && f.at("payload_len") == 8) ++eight;
  }
  CHECK(eight == 2);
}

TEST_CASE("lab12 --break reuse: the later packets carry the overwritten bytes, and arrive") {
  const auto j = run_lab_json(LAB_lab12_one_sided, "lab12_reuse", {"--break", "reuse"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "reuse_wire"));
  CHECK(check_ok(j, "wire_payload"));
  CHECK(check_ok(j, "semaphore"));
  // No claim that the data is right: it is not.
  CHECK_FALSE(has_check(j, "bytes"));
  CHECK(j.at("modified_packets").get<int>() > 0);
  std::size_t modified = 0;
  for (const auto& r : j.at("rounds")) {
    CHECK(r.at("read_modified").get<int>() > 0);
    CHECK(r.at("read_modified") == r.at("read_wrong"));
    modified += r.at("read_modified").get<std::size_t>();
  }
  CHECK(j.at("modified_bytes") == modified);
  // The first packets were built before the overwrite, the last ones after.
  const auto kinds = packet_kinds(j, 0);
  CHECK(kinds.front() == "original");
  CHECK(kinds.back() == "overwritten");
}

TEST_CASE("lab12 --break reuse -s 512: the NIC had read it all, and the lab says so") {
  const auto j =
      run_lab_json(LAB_lab12_one_sided, "lab12_reuse_small", {"--break", "reuse", "-s", "512"});
  CHECK(j.at("ok") == true);
  CHECK(j.at("modified_packets") == 0);
  CHECK(j.at("modified_bytes") == 0);
}

TEST_CASE("lab12 --break early-read: stale bytes before wait, correct bytes after") {
  const auto j = run_lab_json(LAB_lab12_one_sided, "lab12_early", {"--break", "early-read"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "early_stale"));
  CHECK(check_ok(j, "early_wire"));
  CHECK(check_ok(j, "bytes"));
  CHECK(j.at("packets_after_read").get<int>() > 0);
  for (const auto& r : j.at("rounds")) {
    CHECK(r.at("early_stale").get<int>() > 0);
    CHECK(r.at("early_sem").get<std::uint64_t>() < r.at("round").get<std::uint64_t>() + 1);
    CHECK(r.at("read_wrong") == 0);
  }
}

TEST_CASE("lab12: wrong option values are usage errors (exit 2), in both languages") {
  for (const char* lang : {"en", "zh"})
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--break", "late"},
                                                {"--signal", "cas"},
                                                {"-s", "4"},
                                                {"-n", "0"},
                                                {"-m", "1500"}}) {
      std::vector<std::string> argv{LAB_lab12_one_sided, "--lang", lang, "--backend", "sim"};
      argv.insert(argv.end(), bad.begin(), bad.end());
      const auto r = run(argv);
      CAPTURE(lang);
      CAPTURE(bad[0]);
      CHECK(r.status == 2);
    }
}
