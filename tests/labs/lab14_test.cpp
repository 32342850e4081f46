// Lab 14 (shared receive queue) on the simulator: three RC QPs on one SRQ,
// the receive completions and which QP each names, the limit event, and with
// --empty-srq the RNR NAKs every sender QP gets.
#include <map>
#include <set>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr int kRcSendOnly = 0x04;
constexpr int kRcAcknowledge = 0x11;

}  // namespace

TEST_CASE("lab14 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab14_srq, "lab14", {}, "en");
  compare_golden(LAB_lab14_srq, "lab14", {}, "zh");
}

TEST_CASE("lab14 default: 3 QPs, 2 SENDs each, one SRQ of 6 WQEs, the limit event at 3") {
  const auto j = run_lab_json(LAB_lab14_srq, "lab14_default");
  CHECK(j.at("ok") == true);
  for (const char* id :
       {"send_ok", "recv_ok", "per_qp", "wqes", "bytes", "limit_event", "wire_send"})
    CHECK(check_ok(j, id));
  CHECK(j.at("srq_limit") == 3);
  CHECK(j.at("limit_events") == 1);
  CHECK(j.at("srq_limit_after") == 0);
  // 6 sender completions, then 6 receive completions: wr_id 100..105 in
  // arrival order; the senders post in turn (QP 0, 1, 2, 0, 1, 2) and each
  // sends at once, so the k-th to arrive comes from receiver QP k % 3.
  std::vector<json> recv;
  std::set<std::uint32_t> sender_qps;
  for (const auto& c : j.at("completions")) {
    if (c.at("side") == "sender")
      sender_qps.insert(c.at("qp_num").get<std::uint32_t>());
    else
      recv.push_back(c);
  }
  CHECK(sender_qps.size() == 3);
  REQUIRE(recv.size() == 6);
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(recv[k].at("wr_id") == 100 + k);
    CHECK(recv[k].at("byte_len") == 64);
    CHECK(recv[k].at("qp_num") == recv[k % 3].at("qp_num"));
  }
  CHECK(recv[0].at("qp_num") != recv[1].at("qp_num"));
  CHECK(recv[1].at("qp_num") != recv[2].at("qp_num"));
  // On the wire: 6 SEND Only, two to each receiver QP; every ACK goes to a sender QP.
  std::map<int, int> sends_to;
  std::set<int> acked;
  for (const auto& f : j.at("wire").at("frames")) {
    if (f.at("opcode") == kRcSendOnly) ++sends_to[f.at("dqpn").get<int>()];
    if (f.at("opcode") == kRcAcknowledge) acked.insert(f.at("dqpn").get<int>());
  }
  CHECK(sends_to.size() == 3);
  for (const auto& [qp, count] : sends_to) CHECK(count == 2);
  CHECK(acked == std::set<int>(sender_qps.begin(), sender_qps.end()));
}

TEST_CASE("lab14 --empty-srq: every sender QP gets RNR NAKs and IBV_WC_RNR_RETRY_EXC_ERR") {
  const auto j = run_lab_json(LAB_lab14_srq, "lab14_empty", {"--empty-srq"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "rnr"));
  CHECK(check_ok(j, "wire_rnr"));
  std::set<int> senders;
  for (const auto& c : j.at("completions")) {
    CHECK(c.at("status") == "IBV_WC_RNR_RETRY_EXC_ERR");
    senders.insert(c.at("qp_num").get<int>());
  }
  CHECK(senders.size() == 3);
  // rnr_retry 1: the first SEND and its one retry are both refused, so two
  // RNR NAKs (AETH syndrome 001xxxxx) to each sender QP.
  std::map<int, int> naks;
  for (const auto& f : j.at("wire").at("frames"))
    if (f.at("opcode") == kRcAcknowledge && (f.at("aeth").at("syndrome").get<int>() >> 5) == 1)
      ++naks[f.at("dqpn").get<int>()];
  CHECK(naks.size() == 3);
  for (const auto& [qp, count] : naks) {
    CHECK(senders.contains(qp));
    CHECK(count == 2);
  }
}

TEST_CASE("lab14: a limit above the receives posted is a usage error, in both languages") {
  // 3 QPs x 2 SENDs = 6 receives posted: a limit of 7 could never fire.
  for (const char* lang : {"en", "zh"}) {
    const auto r = run_pty({LAB_lab14_srq, "--backend", "sim", "--limit", "7", "--lang", lang,
                            "--capture", tmp_capture("lab14_limit")},
                           "\x01", 20);
    CHECK(r.status == 2);
    CHECK(r.out.find("--limit 7") != std::string::npos);
  }
}
