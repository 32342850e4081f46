// Lab 10, TensorFlow's verbs rendezvous: each scenario's messages, read back
// from the capture, follow the protocol; the tensor lands where the
// (re-)request said; errors travel as ERROR_STATUS.
#include <doctest/doctest.h>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

std::vector<std::string> sequence(const json& j) {
  std::vector<std::string> out;
  for (const auto& s : j.at("wire_sequence")) out.push_back(s.get<std::string>());
  return out;
}

std::vector<std::string> kinds(const json& j) {
  std::vector<std::string> out;
  for (const auto& w : j.at("wire_writes")) out.push_back(w.at("kind").get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("lab10 golden: the transcript matches in English and Chinese") {
  compare_golden(LAB_lab10_tf_rendezvous, "lab10", {}, "en");
  compare_golden(LAB_lab10_tf_rendezvous, "lab10", {}, "zh");
}

TEST_CASE(
    "lab10 unchanged: one request message, its ACK, one tensor write with the request index") {
  const auto j = run_lab_json(LAB_lab10_tf_rendezvous, "lab10_unchanged",
                              {"--scenario", "unchanged", "-n", "1", "-s", "4096"});
  CHECK(j.at("ok") == true);
  for (const char* id :
       {"completions", "tensor", "sequence", "immediates", "acks", "fields", "icrc"})
    CHECK(check_ok(j, id));
  CHECK(sequence(j) == std::vector<std::string>{"TENSOR_REQUEST #0", "tensor #0"});
  CHECK(kinds(j) == std::vector<std::string>{"message", "ack", "tensor"});
  const auto& w = j.at("wire_writes");
  CHECK(w[0].at("imm") == 0xFFFFFFFFu);
  CHECK(w[0].at("length") == 583);
  CHECK(w[0].at("from") == "requester");
  CHECK(w[0].at("message").at("type") == "TENSOR_REQUEST");
  CHECK(w[0].at("message").at("tensor_bytes") == 4096);
  CHECK(w[1].at("imm") == 0xFFFFFFFEu);
  CHECK(w[1].at("length") == 0);
  CHECK(w[2].at("imm") == 0);
  CHECK(w[2].at("length") == 4096);
  CHECK(w[2].at("opcodes") ==
        "RDMA WRITE First, RDMA WRITE Middle, RDMA WRITE Middle, RDMA WRITE Last with Immediate");
  CHECK_FALSE(w[2].contains("message"));
  // The tensor went where the request said.
  CHECK(j.at("copies") == 0);
  CHECK(j.at("requests").at(0).at("round_trips") == 1);
  CHECK(j.at("measure").at("messages") == 1);
  CHECK(j.at("measure").at("ack_writes") == 1);
  // Request (1) + ACK, ACK write (1) + ACK, tensor (4 at MTU 1024) + ACK.
  CHECK(j.at("measure").at("packets") == 9);
}

TEST_CASE("lab10 changed: META_DATA_UPDATE, re-allocation and TENSOR_RE_REQUEST, once") {
  const auto j = run_lab_json(LAB_lab10_tf_rendezvous, "lab10_changed",
                              {"--scenario", "changed", "-n", "3", "-s", "8192"});
  CHECK(j.at("ok") == true);
  for (const char* id : {"completions", "tensor", "clone", "sequence", "acks", "fields"})
    CHECK(check_ok(j, id));
  CHECK(sequence(j) == std::vector<std::string>{"TENSOR_REQUEST #0", "META_DATA_UPDATE #0",
                                                "TENSOR_RE_REQUEST #0", "tensor #0",
                                                "TENSOR_REQUEST #1", "tensor #1",
                                                "TENSOR_REQUEST #2", "tensor #2"});
  CHECK(j.at("copies") == 1);
  CHECK(j.at("copied_bytes") == 8192);
  std::vector<int> trips;
  for (const auto& r : j.at("requests")) trips.push_back(r.at("round_trips"));
  CHECK(trips == std::vector<int>{2, 1, 1});
  // The request named the small cached tensor, the re-request the new one.
  const json* request = nullptr;
  const json* rerequest = nullptr;
  for (const auto& w : j.at("wire_writes")) {
    if (w.at("kind") != "message") continue;
    if (w.at("message").at("type") == "TENSOR_REQUEST" && request == nullptr) request = &w;
    if (w.at("message").at("type") == "TENSOR_RE_REQUEST") rerequest = &w;
  }
  REQUIRE(request != nullptr);
  REQUIRE(rerequest != nullptr);
  CHECK(request->at("message").at("tensor_bytes") == 4096);
  CHECK(request->at("message").at("shape") == json::array({1024}));
  CHECK(rerequest->at("message").at("tensor_bytes") == 8192);
  CHECK(rerequest->at("message").at("shape") == json::array({2048}));
  CHECK(rerequest->at("message").at("rkey") == request->at("message").at("rkey"));
  // The later steps are served from the updated cache: slower first step.
  CHECK(j.at("requests").at(0).at("latency_us") > j.at("requests").at(1).at("latency_us"));
}

TEST_CASE("lab10 error: ERROR_STATUS with ABORTED, no tensor on the wire") {
  const auto j =
      run_lab_json(LAB_lab10_tf_rendezvous, "lab10_error", {"--scenario", "error", "-n", "2"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "error_status"));
  CHECK(sequence(j) == std::vector<std::string>{"TENSOR_REQUEST #0", "ERROR_STATUS #0",
                                                "TENSOR_REQUEST #1", "ERROR_STATUS #1"});
  for (const auto& w : j.at("wire_writes")) {
    CHECK(w.at("kind") != "tensor");
    if (w.at("kind") == "message" && w.at("message").at("type") == "ERROR_STATUS") {
      CHECK(w.at("message").at("error_code") == 10);
      CHECK(w.at("length").get<int>() > 583 + 4);
      CHECK(w.at("from") == "responder");
    }
  }
  for (const auto& r : j.at("requests")) {
    CHECK(r.at("error") == true);
    CHECK(r.at("tensor") == false);
  }
}

TEST_CASE("lab10 -m 256: a 583-byte message needs three packets, the immediate rides on the last") {
  const auto j = run_lab_json(LAB_lab10_tf_rendezvous, "lab10_mtu",
                              {"--scenario", "unchanged", "-n", "1", "-m", "256", "-s", "8"});
  CHECK(j.at("ok") == true);
  const auto& w = j.at("wire_writes");
  REQUIRE(w.size() == 3);
  CHECK(w[0].at("opcodes") ==
        "RDMA WRITE First, RDMA WRITE Middle, RDMA WRITE Last with Immediate");
  CHECK(w[2].at("opcodes") == "RDMA WRITE Only with Immediate");
  CHECK(w[2].at("length") == 8);
}

TEST_CASE("lab10: bad sizes and scenarios are usage errors (exit 2) in both languages") {
  for (const char* lang : {"en", "zh"}) {
    CHECK(run({LAB_lab10_tf_rendezvous, "--lang", lang, "--backend", "sim", "-s", "10", "--capture",
               tmp_capture("lab10_bad")})
              .status == 2);
    CHECK(run({LAB_lab10_tf_rendezvous, "--lang", lang, "--scenario", "lost"}).status == 2);
    CHECK(run({LAB_lab10_tf_rendezvous, "--lang", lang, "-n", "0"}).status == 2);
  }
}
