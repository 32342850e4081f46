// What the end-to-end tests of the labs share: running a lab on the
// simulator with a fixed seed, reading its --json result, and comparing its
// transcript with the golden file. labs_e2e_test.cpp covers labs 01-08; each
// case-study lab has its own labNN_test.cpp in this folder, built into the
// same executable. LAB_<name> (e.g. LAB_lab09_nccl_net) is the path of each
// lab's binary.
//
// Regenerate the golden transcripts after an intended change of a lab's
// output with: scripts/regen-golden.sh
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

namespace rdmalab_lab_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline std::string tmp_capture(const std::string& name) {
  return (fs::temp_directory_path() / ("rdmalab_e2e_" + name + ".pcap")).string();
}

inline json run_json(const std::vector<std::string>& argv) {
  auto r = run(argv);
  INFO(r.out);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

inline bool check_ok(const json& j, const std::string& id) {
  for (const auto& c : j.at("checks"))
    if (c.at("id") == id) return c.at("ok").get<bool>();
  FAIL("no check " << id);
  return false;
}

/// Every event of a lab's "wire" section: those in each frame's record, then
/// the end-of-capture conclusions.
inline json wire_events(const json& j) {
  json out = json::array();
  for (const auto& f : j.at("wire").at("frames"))
    for (const auto& e : f.at("events")) out.push_back(e);
  for (const auto& e : j.at("wire").at("end_of_capture")) out.push_back(e);
  return out;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The transcript in one language, masked, compared with its golden file.
// With RDMALAB_REGEN_GOLDEN=1 the golden file is written instead.
inline void compare_golden(const std::string& bin, const std::string& name,
                           std::vector<std::string> args, const std::string& lang) {
  std::vector<std::string> argv{bin,         "--lang",    lang,
                                "--backend", "sim",       "--seed",
                                "1",         "--capture", tmp_capture(name + "_" + lang)};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run(argv);
  REQUIRE(r.status == 0);
  // The capture path is a temporary file: show it as the default would be.
  // Its stem is masked, not the whole path: a lab that writes one capture
  // per run names them after it (captures/lab18-pfc.pcap).
  std::string text = mask_addresses(r.out);
  const std::string cap = tmp_capture(name + "_" + lang);
  const std::string stem = cap.substr(0, cap.rfind(".pcap"));
  for (std::size_t at; (at = text.find(stem)) != std::string::npos;)
    text.replace(at, stem.size(), "captures/" + name.substr(0, 5));
  const fs::path golden = fs::path(RDMALAB_GOLDEN_DIR) / (name + "." + lang + ".txt");
  if (const char* regen = std::getenv("RDMALAB_REGEN_GOLDEN"); regen != nullptr && *regen == '1') {
    std::ofstream(golden) << text;
    return;
  }
  REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden << ": run scripts/regen-golden.sh");
  CHECK(text == read_file(golden));
}

/// Runs a lab with --json on the simulator (seed 1), capturing to a
/// temporary file named after `name`; requires exit status 0.
inline json run_lab_json(const char* bin, const std::string& name,
                         std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{bin,      "--json", "--backend", "sim",
                                "--seed", "1",      "--capture", tmp_capture(name)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_json(argv);
}

}  // namespace rdmalab_lab_test
