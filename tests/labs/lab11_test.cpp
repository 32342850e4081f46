// Lab 11, TensorFlow GDR: the control messages decode back, one READ per
// tensor with its responses in PSN order, the release names the tensor key,
// the owner's CQ stays empty while its buffer is lent; and the numbers the
// chapter compares with lab 10 hold.
#include <doctest/doctest.h>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

TEST_CASE("lab11 golden: the transcript matches in English and Chinese") {
  compare_golden(LAB_lab11_gdr_read, "lab11", {}, "en");
  compare_golden(LAB_lab11_gdr_read, "lab11", {}, "zh");
}

TEST_CASE("lab11: SEND, SEND, one READ, the fenced release; PSNs and immediates as expected") {
  const auto j = run_lab_json(LAB_lab11_gdr_read, "lab11_default");
  CHECK(j.at("ok") == true);
  for (const char* id : {"completions", "tensor", "owner_idle", "control", "read", "psn", "release",
                         "window", "icrc"})
    CHECK(check_ok(j, id));
  std::vector<std::pair<std::string, int>> seq;
  for (const auto& f : j.at("wire").at("frames")) seq.emplace_back(f.at("opname"), f.at("psn"));
  CHECK(seq ==
        std::vector<std::pair<std::string, int>>{{"RC SEND Only", 0x100},
                                                 {"RC Acknowledge", 0x100},
                                                 {"RC SEND Only", 0x200},
                                                 {"RC Acknowledge", 0x200},
                                                 {"RC RDMA READ Request", 0x101},
                                                 {"RC RDMA READ response First", 0x101},
                                                 {"RC RDMA READ response Middle", 0x102},
                                                 {"RC RDMA READ response Middle", 0x103},
                                                 {"RC RDMA READ response Last", 0x104},
                                                 {"RC RDMA WRITE Only with Immediate", 0x105},
                                                 {"RC Acknowledge", 0x105}});
  const auto& f = j.at("wire").at("frames");
  CHECK(f[4].at("reth").at("len") == 4096);
  CHECK(f[9].at("immdt") == 0);
  CHECK(f[9].at("payload_len") == 0);
  CHECK(j.at("release_imms") == json::array({0}));
  CHECK(j.at("cpu_actions").at("owner") == 2);
  CHECK(j.at("copies") == 0);
}

TEST_CASE("lab11 -n 3 -s 65536 -m 4096: three tensor keys, each READ 16 packets") {
  const auto j =
      run_lab_json(LAB_lab11_gdr_read, "lab11_three", {"-n", "3", "-s", "65536", "-m", "4096"});
  CHECK(j.at("ok") == true);
  CHECK(j.at("release_imms") == json::array({0, 1, 2}));
  CHECK(j.at("measure").at("read_requests") == 3);
  CHECK(j.at("measure").at("read_responses") == 48);
  // Request and release per tensor on the owner: nothing for the READ itself.
  CHECK(j.at("cpu_actions").at("owner") == 6);
}

TEST_CASE(
    "lab11 against lab10: its lab 10 run measures what lab10 measures; GDR spares the owner") {
  for (const auto& c :
       std::vector<std::pair<std::string, std::string>>{{"4096", "1"}, {"65536", "3"}}) {
    const std::string& size = c.first;
    const std::string& n = c.second;
    CAPTURE(size);
    const auto gdr = run_lab_json(LAB_lab11_gdr_read, "lab11_cmp", {"-s", size, "-n", n});
    const auto verbs = run_lab_json(LAB_lab10_tf_rendezvous, "lab10_cmp",
                                    {"--scenario", "unchanged", "-n", n, "-s", size});
    CHECK(gdr.at("ok") == true);
    CHECK(check_ok(gdr, "verbs_run"));
    CHECK(check_ok(gdr, "owner_cpu"));
    const auto& mine = gdr.at("compare").at("lab10");
    // Lab 11's rerun of lab 10's exchange is lab 10's exchange.
    CHECK(mine.at("packets") == verbs.at("measure").at("packets"));
    CHECK(mine.at("wire_bytes") == verbs.at("measure").at("wire_bytes"));
    CHECK(mine.at("messages") == verbs.at("measure").at("messages"));
    CHECK(mine.at("owner_cpu") == verbs.at("cpu_actions").at("responder"));
    CHECK(mine.at("receiver_cpu") == verbs.at("cpu_actions").at("requester"));
    CHECK(mine.at("latency_us").get<double>() ==
          doctest::Approx(verbs.at("requests").back().at("latency_us").get<double>()));
    // GDR: two completions per tensor on the owner, none for the data.
    const auto& g = gdr.at("compare").at("lab11");
    CHECK(g.at("owner_cpu") == 2 * std::stoi(n));
    CHECK(g.at("copies") == 0);
    CHECK(g.at("round_trips") == 3);
    CHECK(mine.at("round_trips") == 1);
    CHECK(g.at("latency_us").get<double>() > mine.at("latency_us").get<double>());
  }
  // The verbs design copies when the meta-data change; GDR never does.
  const auto changed = run_lab_json(LAB_lab10_tf_rendezvous, "lab10_cmp_changed",
                                    {"--scenario", "changed", "-n", "1", "-s", "4096"});
  CHECK(changed.at("copies") == 1);
}

TEST_CASE("lab11: bad option values are usage errors (exit 2) in both languages") {
  for (const char* lang : {"en", "zh"}) {
    CHECK(run({LAB_lab11_gdr_read, "--lang", lang, "--backend", "sim", "-s", "6", "--capture",
               tmp_capture("lab11_bad")})
              .status == 2);
    CHECK(run({LAB_lab11_gdr_read, "--lang", lang, "-m", "1000"}).status == 2);
  }
}
