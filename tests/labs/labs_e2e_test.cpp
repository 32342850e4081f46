// Each lab on the simulator with a fixed seed: its --json result checked, its
// transcripts in English and Chinese compared with the golden files, --step
// driven through a pseudo-terminal.
//
// Regenerate the golden transcripts after an intended change of a lab's
// output with: scripts/regen-golden.sh
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string tmp_capture(const std::string& name) {
  return (fs::temp_directory_path() / ("rdmalab_e2e_" + name + ".pcap")).string();
}

json run_json(const std::vector<std::string>& argv) {
  auto r = run(argv);
  INFO(r.out);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

bool check_ok(const json& j, const std::string& id) {
  for (const auto& c : j.at("checks"))
    if (c.at("id") == id) return c.at("ok").get<bool>();
  FAIL("no check " << id);
  return false;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The transcript in one language, masked, compared with its golden file.
// With RDMALAB_REGEN_GOLDEN=1 the golden file is written instead.
void compare_golden(const std::string& bin, const std::string& name, std::vector<std::string> args,
                    const std::string& lang) {
  std::vector<std::string> argv{bin, "--lang", lang, "--backend", "sim", "--seed", "1", "--capture",
                                tmp_capture(name + "_" + lang)};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run(argv);
  REQUIRE(r.status == 0);
  // The capture path is a temporary file: show it as the default would be.
  std::string text = mask_addresses(r.out);
  for (std::size_t at; (at = text.find(tmp_capture(name + "_" + lang))) != std::string::npos;)
    text.replace(at, tmp_capture(name + "_" + lang).size(), "captures/" + name.substr(0, 5) + ".pcap");
  const fs::path golden = fs::path(RDMALAB_GOLDEN_DIR) / (name + "." + lang + ".txt");
  if (const char* regen = std::getenv("RDMALAB_REGEN_GOLDEN"); regen != nullptr && *regen == '1') {
    std::ofstream(golden) << text;
    return;
  }
  REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden << ": run scripts/regen-golden.sh");
  CHECK(text == read_file(golden));
}

}  // namespace

TEST_CASE("lab01: SEND/RECV delivers the bytes, both sides complete, SEND Only + ACK on the wire") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "--seed", "1", "--capture",
                           tmp_capture("lab01")});
  CHECK(j.at("lab") == "lab01");
  CHECK(j.at("backend") == "sim");
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "send_ok"));
  CHECK(check_ok(j, "recv_ok"));
  CHECK(check_ok(j, "bytes"));
  CHECK(check_ok(j, "icrc"));
  const auto& wcs = j.at("completions");
  REQUIRE(wcs.size() == 2);
  CHECK(wcs[0].at("status") == "IBV_WC_SUCCESS");
  CHECK(wcs[0].at("opcode") == "IBV_WC_SEND");
  CHECK(wcs[1].at("opcode") == "IBV_WC_RECV");
  CHECK(wcs[1].at("byte_len") == 64);
  const auto& frames = j.at("wire").at("frames");
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].at("opname") == "RC SEND Only");
  CHECK(frames[0].at("psn") == 0x100);
  CHECK(frames[0].at("ackreq") == true);
  CHECK(frames[1].at("opname") == "RC Acknowledge");
}

TEST_CASE("lab01 -s 3000 -m 1024: one SEND becomes First, Middle, Last") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "-s", "3000", "-m", "1024",
                           "--capture", tmp_capture("lab01_mtu")});
  CHECK(j.at("ok") == true);
  std::vector<std::string> ops;
  for (const auto& f : j.at("wire").at("frames")) ops.push_back(f.at("opname"));
  CHECK(ops == std::vector<std::string>{"RC SEND First", "RC SEND Middle", "RC SEND Last", "RC Acknowledge"});
}

TEST_CASE("lab01 --no-recv: RNR NAK on the wire, IBV_WC_RNR_RETRY_EXC_ERR on the sender") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "--no-recv", "--capture",
                           tmp_capture("lab01_rnr")});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "rnr"));
  CHECK(check_ok(j, "wire_rnr"));
  CHECK(j.at("completions").at(0).at("status") == "IBV_WC_RNR_RETRY_EXC_ERR");
}

TEST_CASE("lab01: wrong option values are usage errors (exit 2), in both languages") {
  for (const char* lang : {"en", "zh"}) {
    const auto r = run({LAB_lab01_send_recv, "--lang", lang, "-m", "1500"});
    CHECK(r.status == 2);
  }
}

TEST_CASE("lab01 transcripts match the golden files in English and Chinese") {
  compare_golden(LAB_lab01_send_recv, "lab01", {}, "en");
  compare_golden(LAB_lab01_send_recv, "lab01", {}, "zh");
}

TEST_CASE("lab01 --step pauses before every step and goes on at Enter") {
  const auto r = run_pty({LAB_lab01_send_recv, "--step", "--backend", "sim", "--capture", tmp_capture("lab01_step")},
                         "(press Enter to continue)", 60);
  CHECK(r.status == 0);
  std::size_t prompts = 0;
  for (std::size_t at = 0; (at = r.out.find("(press Enter to continue)", at)) != std::string::npos; ++at) ++prompts;
  std::size_t steps = 0;
  for (std::size_t at = 0; (at = r.out.find("\nStep ", at)) != std::string::npos; ++at) ++steps;
  CHECK(steps >= 5);
  CHECK(prompts == steps);  // one pause before every step
  CHECK(r.out.find("lab01: all checks passed") != std::string::npos);
}
