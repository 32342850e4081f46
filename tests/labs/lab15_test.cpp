// Lab 15 (UD) on the simulator: the five datagrams' completions, the GRH in
// the receive buffer, and the packets on the wire with their DETHs.
#include "lab_test.hpp"

using namespace rdmalab_lab_test;

namespace {

constexpr int kUdSendOnly = 0x64;  // IBTA 9.2, table 38
constexpr std::uint32_t kFirstPsn = 0x100;

std::vector<json> side(const json& j, const std::string& who) {
  std::vector<json> out;
  for (const auto& c : j.at("completions"))
    if (c.at("side") == who) out.push_back(c);
  return out;
}

}  // namespace

TEST_CASE("lab15 golden: transcripts in English and Chinese") {
  compare_golden(LAB_lab15_ud, "lab15", {}, "en");
  compare_golden(LAB_lab15_ud, "lab15", {}, "zh");
}

TEST_CASE("lab15 default: five datagrams, two received, four on the wire, nothing back") {
  const auto j = run_lab_json(LAB_lab15_ud, "lab15_default");
  CHECK(j.at("ok") == true);
  for (const char* id : {"sends", "good", "grh", "payload", "dropped", "again", "wire_deth",
                         "wire_qkey", "wire_mtu", "wire_lost", "wire_no_ack", "icrc"})
    CHECK(check_ok(j, id));
  // The simulator's port MTU is 4096: datagram 3 is 4097 bytes.
  CHECK(j.at("port_mtu") == 4096);
  CHECK(j.at("datagrams").at(2).at("length") == 4097);

  // Every send succeeds, even the ones nobody receives.
  const auto tx = side(j, "sender");
  REQUIRE(tx.size() == 5);
  for (const auto& c : tx) CHECK(c.at("status") == "IBV_WC_SUCCESS");
  // Two receives: 40 bytes of GRH + 64 of payload each, in receives 1000 and 1001.
  const auto rx = side(j, "receiver");
  REQUIRE(rx.size() == 2);
  CHECK(rx.at(0).at("wr_id") == 1000);
  CHECK(rx.at(1).at("wr_id") == 1001);
  for (const auto& c : rx) {
    CHECK(c.at("byte_len") == 104);
    CHECK(c.at("grh") == true);
  }
  // The GRH over IPv4: 20 zero bytes, then the IPv4 header from 10.99.0.2
  // (sim1) to 10.99.0.1 (sim0).
  const std::string grh = j.at("grh");
  std::string zeros;
  for (int i = 0; i < 20; ++i) zeros += "00 ";
  constexpr std::size_t kPerByte = 3;  // "xx "
  CHECK(grh.substr(0, 20 * kPerByte) == zeros);
  CHECK(grh.substr(20 * kPerByte, kPerByte) == "45 ");
  CHECK(grh.substr(32 * kPerByte) == "0a 63 00 02 0a 63 00 01");

  // The wire: PSNs 0x100, 0x101, 0x103, 0x104 (0x102 was datagram 3, never
  // sent); the second with Q_Key 0x22222222; nothing but UD SEND Only.
  const auto& frames = j.at("wire").at("frames");
  REQUIRE(frames.size() == 4);
  const std::uint32_t psns[] = {kFirstPsn, kFirstPsn + 1, kFirstPsn + 3, kFirstPsn + 4};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(frames.at(i).at("opcode") == kUdSendOnly);
    CHECK(frames.at(i).at("psn") == psns[i]);
    CHECK(frames.at(i).at("deth").at("qkey") == (i == 1 ? 0x22222222 : 0x11111111));
    CHECK(frames.at(i).at("payload_len") == 64);
  }
}

TEST_CASE("lab15 at port MTU 1024: the largest datagram fits, one byte more is never sent") {
  const auto j = run_lab_json(LAB_lab15_ud, "lab15_mtu", {"-s", "1024", "--port-mtu", "1024"});
  CHECK(j.at("ok") == true);
  CHECK(j.at("port_mtu") == 1024);
  CHECK(j.at("datagrams").at(2).at("length") == 1025);
  for (const auto& f : j.at("wire").at("frames")) CHECK(f.at("payload_len") == 1024);
}

TEST_CASE("lab15 bad options: a size above the MTU, equal or controlled Q_Keys") {
  for (const char* lang : {"en", "zh"})
    for (const std::vector<std::string>& bad :
         std::vector<std::vector<std::string>>{{"-s", "2048", "--port-mtu", "1024"},
                                               {"--wrong-qkey", "0x11111111"},
                                               {"--qkey", "0x80000001"},
                                               {"--wrong-qkey", "0x80000000"}}) {
      std::vector<std::string> argv{LAB_lab15_ud, "--lang", lang, "--backend", "sim"};
      argv.insert(argv.end(), bad.begin(), bad.end());
      const auto r = run(argv);
      CAPTURE(lang);
      CAPTURE(bad[0]);
      CHECK(r.status == 2);
    }
}
