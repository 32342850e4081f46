// Lab 13 (memory registration scope) on the simulator: the rkeys each peer
// gets in the three scenarios, the refusals of a key on the wrong QP, the
// window's bind and invalidation, and the frames that carry them.
#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr int kAckSyndrome = 0x1F;  // ACK, credits field 0x1F (no end-to-end credits)
constexpr int kNakRemoteAccess = 0x62;

// The frames of the --json result with this opcode.
std::vector<json> frames_with(const json& j, int opcode) {
  std::vector<json> out;
  for (const auto& f : j.at("wire").at("frames"))
    if (f.at("opcode") == opcode) out.push_back(f);
  return out;
}

std::size_t naks(const json& j) {
  std::size_t k = 0;
  for (const auto& f : frames_with(j, 0x11))
    if (f.at("aeth").at("syndrome") == kNakRemoteAccess) ++k;
  return k;
}

}  // namespace

TEST_CASE("lab13 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab13_mr_scope, "lab13", {}, "en");
  compare_golden(LAB_lab13_mr_scope, "lab13", {}, "zh");
}

TEST_CASE("lab13 default: the three scenarios, their keys, refusals and frames") {
  const auto j = run_lab_json(LAB_lab13_mr_scope, "lab13_default");
  CHECK(j.at("ok") == true);
  for (const char* id : {"shared.both", "per_ep.distinct", "per_ep.own", "per_ep.wrong",
                         "window.bind", "window.data", "window.ctrl", "window.invalidated",
                         "window.revoked", "icrc", "wire.shared", "wire.per_ep", "wire.window"})
    CHECK(check_ok(j, id));

  const auto& sc = j.at("scenarios");
  // shared: one key for both QPs; per-endpoint: one key each.
  CHECK(sc.at("shared").at("rkey_ctrl") == sc.at("shared").at("rkey_data"));
  CHECK(sc.at("per-endpoint").at("rkey_ctrl") != sc.at("per-endpoint").at("rkey_data"));
  CHECK(sc.at("per-endpoint").at("writes").at(1).at("status") == "IBV_WC_REM_ACCESS_ERR");
  // window: same index, next key byte; a key of neither MR.
  const auto& w = sc.at("window");
  const auto before = w.at("rkey_before_bind").get<std::uint32_t>();
  const auto key = w.at("rkey_window").get<std::uint32_t>();
  CHECK((key >> 8) == (before >> 8));
  CHECK((key & 0xFF) == ((before + 1) & 0xFF));
  CHECK(key != w.at("rkey_mr").get<std::uint32_t>());
  CHECK(w.at("invalidation").at("invalidated_rkey") == key);
  const auto& ww = w.at("writes");
  REQUIRE(ww.size() == 3);
  CHECK(ww.at(0).at("status") == "IBV_WC_SUCCESS");
  CHECK(ww.at(1).at("status") == "IBV_WC_REM_ACCESS_ERR");
  CHECK(ww.at(2).at("status") == "IBV_WC_REM_ACCESS_ERR");

  // On the wire: 8 requests; the shared key in both RETHs; three NAKs
  // (remote access error); one SEND Only with Invalidate whose IETH is the
  // window's key.
  const auto& wc = j.at("wire_checks");
  REQUIRE(wc.at("shared").size() == 2);
  CHECK(wc.at("shared").at(0).at("key") == wc.at("shared").at(1).at("key"));
  CHECK(wc.at("shared").at(0).at("dest_qp") != wc.at("shared").at(1).at("dest_qp"));
  for (const auto& r : wc.at("shared")) CHECK(r.at("answer_syndrome") == kAckSyndrome);
  REQUIRE(wc.at("per-endpoint").size() == 2);
  CHECK(wc.at("per-endpoint").at(1).at("answer_syndrome") == kNakRemoteAccess);
  REQUIRE(wc.at("window").size() == 4);
  CHECK(wc.at("window").at(2).at("opcode") == 0x17);
  CHECK(naks(j) == 3);
  const auto inv = frames_with(j, 0x17);
  REQUIRE(inv.size() == 1);
  CHECK(inv.at(0).at("payload_len") == 16);
  std::size_t writes = 0;
  for (const auto& f : frames_with(j, 0x0A)) {
    ++writes;
    CHECK(f.contains("reth"));
  }
  CHECK(writes == 7);
}

TEST_CASE("lab13 --invalidate local: no SEND with Invalidate on the wire, LOCAL_INV completes") {
  const auto j = run_lab_json(LAB_lab13_mr_scope, "lab13_local",
                              {"--scenario", "window", "--invalidate", "local"});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "window.invalidated"));
  CHECK(check_ok(j, "window.revoked"));
  CHECK(j.at("scenarios").size() == 1);
  CHECK(j.at("scenarios").at("window").at("invalidation").at("opcode") == "IBV_WC_LOCAL_INV");
  CHECK(frames_with(j, 0x17).empty());
  CHECK(naks(j) == 2);
  CHECK(j.at("wire_checks").at("window").size() == 3);
}

TEST_CASE("lab13 --no-misuse: only the window's revoked WRITE is refused") {
  const auto j = run_lab_json(LAB_lab13_mr_scope, "lab13_nomisuse", {"--no-misuse"});
  CHECK(j.at("ok") == true);
  CHECK(naks(j) == 1);
  for (const auto& c : j.at("checks")) {
    CHECK(c.at("id") != "per_ep.wrong");
    CHECK(c.at("id") != "window.ctrl");
  }
  CHECK(j.at("scenarios").at("per-endpoint").at("writes").size() == 1);
}

TEST_CASE("lab13 one scenario at a time, other sizes") {
  for (const char* s : {"shared", "per-endpoint"}) {
    CAPTURE(s);
    const auto j =
        run_lab_json(LAB_lab13_mr_scope, std::string("lab13_") + s, {"--scenario", s, "-s", "100"});
    CHECK(j.at("ok") == true);
    CHECK(j.at("scenarios").size() == 1);
    CHECK(j.at("scenarios").contains(s));
    for (const auto& f : frames_with(j, 0x0A)) CHECK(f.at("payload_len") == 100);
  }
}

TEST_CASE("lab13 bad input: a clear usage error (exit 2) in both languages") {
  CHECK(run({LAB_lab13_mr_scope, "--backend", "sim", "--scenario", "bogus"}).status == 2);
  CHECK(run({LAB_lab13_mr_scope, "--backend", "sim", "--invalidate", "remote"}).status == 2);
  CHECK(run({LAB_lab13_mr_scope, "--backend", "sim", "-s", "0"}).status == 2);
  CHECK(run({LAB_lab13_mr_scope, "--backend", "sim", "-s", "129"}).status == 2);
  const auto en =
      run_pty({LAB_lab13_mr_scope, "--lang", "en", "--backend", "sim", "--scenario", "bogus"},
              "\x01never\x01", 20);
  CHECK(en.status == 2);
  CHECK(en.out.find("--scenario must be shared, per-endpoint, window or all") != std::string::npos);
  const auto zh =
      run_pty({LAB_lab13_mr_scope, "--lang", "zh", "--backend", "sim", "--scenario", "bogus"},
              "\x01never\x01", 20);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("--scenario 只能是") != std::string::npos);
}
