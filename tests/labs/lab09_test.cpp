// Lab 09 (NCCL's IB data path) on the simulator: the FIFO slots, the split
// over the QPs, the immediates, the opcodes per QP, adaptive routing and the
// timer attributes.
#include <cmath>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

const json& qp_ops(const json& j, std::size_t q) {
  return j.at("wire_qps").at(q).at("opcodes");
}

}  // namespace

TEST_CASE("lab09 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab09_nccl_net, "lab09", {}, "en");
  compare_golden(LAB_lab09_nccl_net, "lab09", {}, "zh");
}

TEST_CASE("lab09 default: FIFO slots in order, data split over 2 QPs, WRITE with immediate") {
  const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_default");
  CHECK(j.at("ok") == true);
  for (const char* id : {"timers", "done", "fifo_order", "bytes", "imm", "complete_at_wc", "icrc",
                         "fifo_wire", "opcodes"})
    CHECK(check_ok(j, id));
  const auto& m = j.at("messages");
  REQUIRE(m.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(m[i].at("slot") == i);
    CHECK(m[i].at("idx") == i + 1);
    CHECK(m[i].at("split") == false);
    const std::uint32_t size = i % 2 == 0 ? 4096 : 32768;
    CHECK(m[i].at("size") == size);
    CHECK(m[i].at("chunks") == json::array({size / 2, size / 2}));
    CHECK(m[i].at("imm") == json::array({size, size}));
    CHECK(m[i].at("byte_len") == json::array({size / 2, size / 2}));
  }
  // Per QP: 4096 -> one WRITE Only with Immediate of 2048 bytes; 32768 ->
  // 16384 bytes at MTU 4096 = First, Middle, Middle, Last with Immediate.
  const std::vector<std::string> per_qp = {"RDMA WRITE Only with Immediate",
                                           "RDMA WRITE First",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Last with Immediate",
                                           "RDMA WRITE Only with Immediate",
                                           "RDMA WRITE First",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Last with Immediate"};
  REQUIRE(j.at("wire_qps").size() == 2);
  CHECK(strings(qp_ops(j, 0)) == per_qp);
  CHECK(strings(qp_ops(j, 1)) == per_qp);
  // The FIFO writes: 32-byte WRITE Only packets; the immediates = sizes.
  std::size_t fifo_writes = 0;
  std::vector<std::uint32_t> imms;
  for (const auto& f : j.at("wire").at("frames")) {
    if (f.at("opname") == "RC RDMA WRITE Only" && f.at("payload_len") == 32) ++fifo_writes;
    if (f.contains("immdt")) imms.push_back(f.at("immdt"));
  }
  CHECK(fifo_writes == 4);
  CHECK(imms.size() == 8);
  for (auto v : imms) CHECK((v == 4096 || v == 32768));
}

TEST_CASE("lab09 --ar: above the threshold a plain WRITE, then a 0-byte WRITE with immediate") {
  const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_ar", {"--ar"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "opcodes"));
  CHECK(check_ok(j, "ar_clean"));
  CHECK(check_ok(j, "complete_at_wc"));
  const auto& m = j.at("messages");
  CHECK(m[0].at("split") == false);  // 4096 <= 8192
  CHECK(m[1].at("split") == true);   // 32768 > 8192
  CHECK(m[1].at("byte_len") == json::array({0, 0}));
  CHECK(m[1].at("imm") == json::array({32768, 32768}));
  // Messages stay whole under the AR model: per QP, 4096 -> one WRITE Only
  // with Immediate of 2048 bytes; 32768 split -> a 16384-byte WRITE (First,
  // Middle, Middle, Last at MTU 4096), then the 0-byte WRITE Only with
  // Immediate.
  const std::vector<std::string> per_qp = {"RDMA WRITE Only with Immediate",
                                           "RDMA WRITE First",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Middle",
                                           "RDMA WRITE Last",
                                           "RDMA WRITE Only with Immediate"};
  std::vector<std::string> both = per_qp;
  both.insert(both.end(), per_qp.begin(), per_qp.end());
  CHECK(strings(qp_ops(j, 0)) == both);
  // The 0-byte notifications carry the size.
  std::size_t zero_imm = 0;
  for (const auto& f : j.at("wire").at("frames"))
    if (f.at("opname") == "RC RDMA WRITE Only with Immediate" && f.at("payload_len") == 0) {
      ++zero_imm;
      CHECK(f.at("immdt") == 32768);
    }
  CHECK(zero_imm == 4);  // 2 split messages x 2 QPs
  // The fabric did reorder: data overtaken by the notification, yet no
  // retransmission.
  CHECK(j.at("ar").at("out_of_order").get<int>() > 0);
  CHECK(j.at("ar").at("overtaken").get<int>() > 0);
  CHECK(j.at("ar").at("retransmitted") == 0);
  CHECK(j.at("ar").at("naks") == 0);
}

TEST_CASE("lab09 --ar --ar-threshold 65536: no split, the immediate rides on the data") {
  const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_thr", {"--ar", "--ar-threshold", "65536"});
  CHECK(j.at("ok") == true);
  for (const auto& m : j.at("messages")) CHECK(m.at("split") == false);
  // The 16384-byte part of each QP (4 packets at MTU 4096, reordered by the
  // fabric) completes as one message: byte_len 16384.
  CHECK(j.at("messages")[1].at("byte_len") == json::array({16384, 16384}));
  CHECK(j.at("messages")[1].at("imm") == json::array({32768, 32768}));
  for (const auto& f : j.at("wire").at("frames"))
    if (f.contains("immdt")) CHECK(f.at("payload_len").get<int>() > 0);
}

TEST_CASE("lab09 --qps-per-conn: 128-byte aligned chunks, empty QPs still notify") {
  SUBCASE("one QP carries everything") {
    const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_q1", {"--qps-per-conn", "1"});
    CHECK(j.at("ok") == true);
    CHECK(j.at("messages")[1].at("chunks") == json::array({32768}));
    CHECK(j.at("wire_qps").size() == 1);
  }
  SUBCASE("three QPs: 100 bytes -> 100, 0, 0; 1000 bytes -> 384, 384, 232") {
    const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_q3",
                                {"--qps-per-conn", "3", "-n", "2", "-s", "100,1000"});
    CHECK(j.at("ok") == true);
    CHECK(check_ok(j, "opcodes"));
    const auto& m = j.at("messages");
    CHECK(m[0].at("chunks") == json::array({100, 0, 0}));
    CHECK(m[0].at("byte_len") == json::array({100, 0, 0}));
    CHECK(m[0].at("imm") == json::array({100, 100, 100}));
    CHECK(m[1].at("chunks") == json::array({384, 384, 232}));
    CHECK(strings(qp_ops(j, 2)) == std::vector<std::string>{"RDMA WRITE Only with Immediate",
                                                            "RDMA WRITE Only with Immediate"});
  }
}

TEST_CASE("lab09 -n 10: the ring of 8 FIFO slots wraps, idx keeps counting") {
  const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_wrap", {"-n", "10", "-s", "512"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "fifo_order"));
  CHECK(check_ok(j, "fifo_wire"));
  const auto& m = j.at("messages");
  REQUIRE(m.size() == 10);
  CHECK(m[8].at("slot") == 0);
  CHECK(m[8].at("idx") == 9);
  CHECK(m[9].at("slot") == 1);
  CHECK(m[9].at("idx") == 10);
}

TEST_CASE("lab09 --ib-timeout/--ib-retry-cnt: applied to every QP, 4.096 us x 2^n") {
  const auto j = run_lab_json(LAB_lab09_nccl_net, "lab09_timer",
                              {"--ib-timeout", "20", "--ib-retry-cnt", "3", "-n", "1"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "timers"));
  CHECK(j.at("timers").at("timeout") == 20);
  CHECK(j.at("timers").at("retry_cnt") == 3);
  CHECK(std::fabs(j.at("timers").at("ack_timeout_s").get<double>() - 4.096e-6 * 1048576) < 1e-9);
  const auto d = run_lab_json(LAB_lab09_nccl_net, "lab09_timer18", {"-n", "1"});
  CHECK(std::fabs(d.at("timers").at("ack_timeout_s").get<double>() - 1.073741824) < 1e-9);
}

TEST_CASE("lab09: wrong option values are usage errors (exit 2), in both languages") {
  for (const char* lang : {"en", "zh"})
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--qps-per-conn", "0"},
                                                {"--ib-timeout", "32"},
                                                {"--ib-retry-cnt", "8"},
                                                {"-s", "2000000"},
                                                {"-n", "0"},
                                                {"-s", "abc"}}) {
      std::vector<std::string> argv{LAB_lab09_nccl_net, "--lang", lang, "--backend", "sim"};
      argv.insert(argv.end(), bad.begin(), bad.end());
      const auto r = run(argv);
      CAPTURE(lang);
      CAPTURE(bad[0]);
      CHECK(r.status == 2);
    }
}
