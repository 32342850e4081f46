// Lab 16 (completions) on the simulator: sq_sig_all and one WRITE in every
// n signalled, the send queue that fills at exactly max_send_wr when nothing
// is signalled, completion events (one per arm, the re-arm race, solicited
// only), CQ moderation refused as rxe refuses it, and the SE bit on the wire.
#include <set>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr int kRcSendOnly = 0x04;
constexpr int kRcAcknowledge = 0x11;

// The numbers each run must show, derived from the options (see the
// chapter): `every` completions for sq_sig_all = 1, writes / every for one
// in every `every`, and `depth` posts before ENOMEM (depth = 2^k - 1, which
// rxe keeps and the simulator keeps as asked).
void check_run(const json& j, int depth, int every, int writes) {
  CHECK(j.at("ok") == true);
  for (const char* id : {"sig_all", "every", "overflow", "release", "event", "race", "solicited",
                         "moderation", "acked", "wire_se", "wire_rnr"})
    CHECK_MESSAGE(check_ok(j, id), id);
  CHECK(j.at("depth") == depth);
  CHECK(j.at("signalled_completions") == writes / every);
  CHECK(j.at("posted_before_enomem") == depth);
  CHECK(j.at("post_errno") == ENOMEM);
  CHECK(j.at("unsignalled_completions") == 0);
  // The sender's channel: the event of the first arm, and the one the re-arm
  // of the race leaves for the next completion; the receiver's: the
  // solicited SEND's only.
  const auto& ev = j.at("events");
  CHECK(ev.at("sender_read") == 2);
  CHECK(ev.at("sender_acked") == 2);
  CHECK(ev.at("receiver_read") == 1);
  CHECK(ev.at("receiver_acked") == 1);
  CHECK(j.at("moderation").at("max_cq_count") == 0);
  CHECK(j.at("moderation").at("errno") == EOPNOTSUPP);
}

}  // namespace

TEST_CASE("lab16 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab16_completions, "lab16", {}, "en");
  compare_golden(LAB_lab16_completions, "lab16", {}, "zh");
}

TEST_CASE("lab16 default: depth 15, 12 WRITEs with one in 4 signalled, events and the SE bit") {
  const auto j = run_lab_json(LAB_lab16_completions, "lab16_default");
  check_run(j, 15, 4, 12);
  // The sender's completions of the second QP (sq_sig_all = 0): wr_id 4, 8,
  // 12, then the signalled SEND 199 after the 15 unsignalled ones.
  std::vector<std::uint64_t> sel;
  std::set<std::uint32_t> qps;
  for (const auto& c : j.at("completions"))
    if (c.at("side") == "sender") qps.insert(c.at("qp_num").get<std::uint32_t>());
  REQUIRE(qps.size() == 2);
  const std::uint32_t second = *qps.rbegin();  // created second: the higher QP number
  for (const auto& c : j.at("completions"))
    if (c.at("side") == "sender" && c.at("qp_num") == second)
      sel.push_back(c.at("wr_id").get<std::uint64_t>());
  CHECK(sel == std::vector<std::uint64_t>{4, 8, 12, 199});
  // On the wire: exactly one SEND Only with SE set, the last one.
  int se = 0;
  int last_send_se = -1;
  bool rnr = false;
  for (const auto& f : j.at("wire").at("frames")) {
    if (f.at("opcode") == kRcSendOnly) {
      last_send_se = f.at("se") == true ? 1 : 0;
      se += last_send_se;
    }
    if (f.at("opcode") == kRcAcknowledge && (f.at("aeth").at("syndrome").get<int>() >> 5) == 1)
      rnr = true;
  }
  CHECK(se == 1);
  CHECK(last_send_se == 1);
  CHECK(rnr);
}

TEST_CASE("lab16 --depth 63 --writes 60 --every 10: 63 posts, 6 completions") {
  const auto j = run_lab_json(LAB_lab16_completions, "lab16_deep",
                              {"--depth", "63", "--writes", "60", "--every", "10"});
  check_run(j, 63, 10, 60);
}

TEST_CASE("lab16 bad input: a depth rxe would round, more WRITEs than the queue holds") {
  CHECK(run({LAB_lab16_completions, "--backend", "sim", "--depth", "16"}).status == 2);
  CHECK(run({LAB_lab16_completions, "--backend", "sim", "--writes", "20"}).status == 2);
  CHECK(run({LAB_lab16_completions, "--backend", "sim", "--writes", "2"}).status == 2);
  const auto en =
      run_pty({LAB_lab16_completions, "--lang", "en", "--backend", "sim", "--depth", "16"},
              "\x01never\x01", 20);
  CHECK(en.status == 2);
  CHECK(en.out.find("--depth 16: use 2^k - 1") != std::string::npos);
  const auto zh =
      run_pty({LAB_lab16_completions, "--lang", "zh", "--backend", "sim", "--depth", "16"},
              "\x01never\x01", 20);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("--depth 16：请使用 2^k - 1") != std::string::npos);
}
