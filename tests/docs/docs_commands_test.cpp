// Runs the commands the lab chapters show, and checks what they show of the
// output.
//
// In docs/en/NN-labMM-*.md, every ```sh block is a list of commands: a lab
// binary (build/<preset>/labs/NN-topic/labNN-topic ARGS) or rdmapcap. They
// run in order, as a reader would type them, on the binaries of this build;
// captures/labNN.pcap becomes a file in a temporary directory. Each must
// succeed. When a ```text block follows an rdmapcap command, it is an excerpt
// of that command's output: every line of it must appear in the output, in
// the same order (the excerpts leave lines out). Heap addresses (the VA of a
// RETH) and the ICRCs computed over them change from run to run and are
// masked. The transcripts themselves are checked by docs_test against the
// golden files; the zh chapters hold the same command blocks (docs_test), and
// their excerpts are the same rdmapcap commands' output with --lang zh, which
// scripts/regen-zh-excerpts.py writes from the English excerpts.
//
// This is a separate executable so that docs_test builds without the labs
// and tools.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "docs_text.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using namespace rdmalab::docs_test;

namespace {

struct Block {
  std::string info;  // "sh", "text"
  std::vector<std::string> lines;
  bool transcript = false;  // inside <!-- transcript:... --> markers
};

/// The fenced code blocks of a Markdown file, in order.
std::vector<Block> code_blocks(const fs::path& path) {
  std::vector<Block> out;
  std::optional<std::string> fence;
  bool in_transcript = false;
  for (const auto& line : split_lines(read_text(path))) {
    const std::string_view t = trim(line);
    if (fence) {
      if (starts_with(t, *fence) && trim(t.substr(fence->size())).empty())
        fence.reset();
      else
        out.back().lines.push_back(line);
      continue;
    }
    if (starts_with(t, "```") || starts_with(t, "~~~")) {
      const std::size_t n = std::min(t.find_first_not_of(t[0]), t.size());
      fence = std::string(t.substr(0, n));
      out.push_back({std::string(trim(t.substr(n))), {}, in_transcript});
    } else if (starts_with(t, "<!-- transcript:")) {
      in_transcript = true;
    } else if (t == "<!-- /transcript -->") {
      in_transcript = false;
    }
  }
  return out;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// What changes from run to run: heap addresses, and the ICRCs over them.
std::string mask(const std::string& s) {
  static const std::regex va("0x[0-9a-f]{16}");
  static const std::regex icrc("ICRC  0x[0-9a-f]{8}");
  return std::regex_replace(std::regex_replace(s, va, "0xADDRESS"), icrc, "ICRC  0xICRC");
}

/// Index of the first excerpt line not found, in order, among the output's
/// lines; nullopt when every line is found.
std::optional<std::size_t> first_missing(const std::vector<std::string>& excerpt,
                                         const std::vector<std::string>& output) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < excerpt.size(); ++i) {
    if (trim(excerpt[i]).empty()) continue;
    const std::string want = mask(excerpt[i]);
    while (at < output.size() && mask(output[at]) != want) ++at;
    if (at == output.size()) return i;
    ++at;
  }
  return std::nullopt;
}

/// The lab chapters: NN-labMM-topic.md.
std::vector<fs::path> lab_chapters() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kDocs / "en")) {
    const std::string name = e.path().filename().string();
    if (name.size() > 8 && name.substr(2, 4) == "-lab" && e.path().extension() == ".md")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("first_missing finds excerpt lines in order, masking addresses and ICRCs") {
  const std::vector<std::string> out = {"Frame 1", "  VA 0x000055aeee785610", "  x",
                                        "  ICRC  0x23ab2afa  correct", "Frame 2"};
  CHECK_FALSE(first_missing({"Frame 1", "  VA 0x0000561111111111", "Frame 2"}, out));
  CHECK_FALSE(first_missing({"  ICRC  0x00000000  correct", "", "Frame 2"}, out));
  CHECK(first_missing({"Frame 2", "Frame 1"}, out) == std::optional<std::size_t>{1});
  CHECK(first_missing({"Frame 3"}, out) == std::optional<std::size_t>{0});
}

TEST_CASE("every command of the lab chapters runs, and every excerpt is in its output") {
  const auto chapters = lab_chapters();
  // One chapter per lab folder (labs/NN-topic).
  std::size_t labs = 0;
  for (const auto& e : fs::directory_iterator(kDocs / ".." / "labs"))
    if (e.is_directory() &&
        std::isdigit(static_cast<unsigned char>(e.path().filename().string()[0])))
      ++labs;
  REQUIRE(labs >= 8);
  REQUIRE(chapters.size() == labs);
  std::size_t commands = 0, excerpts = 0;
  for (const auto& chapter : chapters) {
    CAPTURE(chapter.filename().string());
    const fs::path tmp =
        fs::temp_directory_path() / ("rdmalab_docs_" + chapter.stem().string() + "_" +
                                     std::to_string(static_cast<long>(::getpid())));
    fs::create_directories(tmp);
    const auto blocks = code_blocks(chapter);
    const auto zh_blocks = code_blocks(kDocs / "zh" / chapter.filename());
    REQUIRE(zh_blocks.size() == blocks.size());
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].info != "sh" || blocks[b].transcript) continue;
      RunResult last;
      bool last_is_rdmapcap = false;
      std::vector<std::string> last_argv;
      for (const auto& line : blocks[b].lines) {
        CAPTURE(line);
        const auto w = words(line);
        if (w.empty()) continue;
        std::vector<std::string> argv;
        std::string lab;  // "lab01" when the command runs a lab
        if (const auto at = w[0].find("/labs/"); at != std::string::npos) {
          // build/<preset>/labs/01-send-recv/lab01-send-recv -> this build's binary.
          argv.push_back((fs::path(RDMALAB_LABS_DIR) / w[0].substr(at + 6)).string());
          lab = fs::path(w[0]).filename().string().substr(0, 5);
          argv.insert(argv.end(), w.begin() + 1, w.end());
          argv.insert(argv.end(), {"--capture", (tmp / (lab + ".pcap")).string()});
        } else if (w[0] == "rdmapcap") {
          argv = {RDMAPCAP, "--lang", "en"};
          for (std::size_t k = 1; k < w.size(); ++k)
            argv.push_back(starts_with(w[k], "captures/") ? (tmp / w[k].substr(9)).string() : w[k]);
        } else {
          FAIL_CHECK("a lab chapter shows a command this test does not know how to run");
          continue;
        }
        last = run(argv);
        last_is_rdmapcap = lab.empty();
        last_argv = argv;
        ++commands;
        if (!lab.empty() && !fs::exists(kGolden / (lab + ".en.txt"))) {
          // A lab whose golden transcript has not landed yet may still fail
          // its own checks (exit 1); its captures are written all the same.
          if (last.status != 0)
            MESSAGE(lab << " exits " << last.status << ": tolerated until its golden file lands");
          CHECK(last.status >= 0);
          CHECK(last.status <= 1);
          continue;
        }
        // rdmapcap exits 1 when the capture holds protocol errors, which
        // some labs provoke on purpose (NAKs, exhausted retries).
        if (last_is_rdmapcap) {
          CHECK(last.status >= 0);
          CHECK(last.status <= 1);
          // `report` and `plot` write their file (-o) and print nothing.
          const auto o = std::find(argv.begin(), argv.end(), "-o");
          if (o != argv.end() && o + 1 != argv.end()) {
            std::error_code ec;
            CHECK_MESSAGE(fs::file_size(*(o + 1), ec) > 0, *(o + 1) << " was not written");
          } else {
            CHECK_FALSE(last.out.empty());
          }
        } else {
          CHECK(last.status == 0);
        }
      }
      // An excerpt right after the block shows part of the last command's output.
      if (b + 1 < blocks.size() && blocks[b + 1].info == "text" && !blocks[b + 1].transcript) {
        REQUIRE_MESSAGE(last_is_rdmapcap,
                        "an excerpt follows a block that does not end with rdmapcap");
        const auto& excerpt = blocks[b + 1].lines;
        const auto missing = first_missing(excerpt, split_lines(last.out));
        CHECK_MESSAGE(!missing, "not in the output of the command above it, in this order: "
                                    << (missing ? excerpt[*missing] : std::string()));
        ++excerpts;
        // The Chinese chapter's excerpt: the same command's --lang zh output.
        std::vector<std::string> zh_argv = last_argv;
        zh_argv[2] = "zh";  // {RDMAPCAP, "--lang", "en", ...}
        const RunResult zh = run(zh_argv);
        const auto& zh_excerpt = zh_blocks[b + 1].lines;
        const auto zh_missing = first_missing(zh_excerpt, split_lines(zh.out));
        CHECK_MESSAGE(!zh_missing, "docs/zh: not in the --lang zh output, in this order: "
                                       << (zh_missing ? zh_excerpt[*zh_missing] : std::string())
                                       << " (scripts/regen-zh-excerpts.py rewrites it)");
      }
    }
    fs::remove_all(tmp);
  }
  CHECK(commands >= 19);
  CHECK(excerpts >= 7);
}

namespace {

/// A command of a concept chapter: the text as a shell would read it
/// (continuation lines joined, a trailing "  # comment" dropped) and the
/// excerpt of its output the chapter shows right after it, if any.
struct ShownCommand {
  std::string chapter;
  std::string line;
  std::vector<std::string> excerpt;
  std::vector<std::string> excerpt_zh;  // the Chinese chapter's excerpt, at the same place
};

std::string strip_comment(const std::string& line) {
  static const std::regex comment(R"(\s{2,}#.*$)");
  return std::string(trim(std::regex_replace(line, comment, "")));
}

std::vector<ShownCommand> concept_commands() {
  std::vector<ShownCommand> out;
  for (const auto& e : fs::directory_iterator(kDocs / "en")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".md" || name.size() < 3 || !std::isdigit(name[0]) ||
        name.substr(2, 4) == "-lab")
      continue;
    const auto blocks = code_blocks(e.path());
    const auto zh_blocks = code_blocks(kDocs / "zh" / name);
    REQUIRE_MESSAGE(zh_blocks.size() == blocks.size(), name);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const auto& blk = blocks[b];
      if (blk.info == "sh") {
        std::string pending;
        for (const auto& raw : blk.lines) {
          std::string l(trim(raw));
          if (!l.empty() && l.back() == '\\') {
            pending += l.substr(0, l.size() - 1) + " ";
            continue;
          }
          pending += l;
          l = strip_comment(pending);
          pending.clear();
          if (!l.empty()) out.push_back({name, l, {}, {}});
        }
        // A plain block right after shows the output of the block's last command.
        if (b + 1 < blocks.size() && blocks[b + 1].info.empty() && !out.empty() &&
            out.back().chapter == name) {
          out.back().excerpt = blocks[b + 1].lines;
          out.back().excerpt_zh = zh_blocks[b + 1].lines;
        }
      } else if (blk.info.empty() && !blk.lines.empty() && starts_with(trim(blk.lines[0]), "$ ")) {
        // "$ command" then its output, in one block.
        const auto& zh_lines = zh_blocks[b].lines;
        out.push_back({name, std::string(trim(blk.lines[0]).substr(2)),
                       std::vector<std::string>(blk.lines.begin() + 1, blk.lines.end()),
                       zh_lines.empty()
                           ? std::vector<std::string>{}
                           : std::vector<std::string>(zh_lines.begin() + 1, zh_lines.end())});
      }
    }
  }
  return out;
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::vector<std::string> rtrimmed(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (auto l : lines) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r')) l.pop_back();
    out.push_back(l);
  }
  return out;
}

}  // namespace

TEST_CASE("the concept chapters' commands that need no RDMA device run, and show true output") {
  // What these chapters show but this test does not run, and why: root, a
  // kernel module or a device (the Soft-RoCE job runs chapter 2's device
  // commands and its two-device block literally, in the VM), or the whole
  // build (tests/e2e/first-commands.sh runs quickstart.sh, the plugin's
  // installation and the VM examples literally, after the release build).
  const std::vector<std::string> elsewhere = {"sudo",
                                              "modprobe",
                                              "ip",
                                              "rdma",
                                              "ibv_devices",
                                              "ibv_devinfo",
                                              "cat",
                                              "ulimit",
                                              "for",
                                              "sysctl",
                                              "done",
                                              "ctest",
                                              "cmake",
                                              "tcpdump",
                                              "scripts/quickstart.sh",
                                              "scripts/test.sh",
                                              "scripts/install-deps.sh",
                                              "scripts/install-wireshark-plugin.sh",
                                              "tools/softroce-vm/softroce-vm",
                                              "'build/release/labs/01-send-recv/lab01-send-recv"};
  const fs::path source = fs::canonical(kDocs / "..");
  std::string env = "cd " + quote(source.string()) + " && PATH=" +
                    quote(fs::path(RDMAPCAP).parent_path().string() + ":" +
                          fs::path(RDMALAB_TOOL).parent_path().string()) +
                    ":\"$PATH\" WIRESHARK_PLUGIN_DIR=" + quote(RDMALAB_WIRESHARK_PLUGINS);
  // tshark's alone: rdmapcap and the labs carry their own (clang links the
  // runtime into them, and a second one preloaded would clash with it).
  std::string tshark_env;
  if (std::string(RDMALAB_TSHARK_PRELOAD).size() > 0)
    tshark_env = " LD_PRELOAD=" + quote(RDMALAB_TSHARK_PRELOAD) + " ASAN_OPTIONS=detect_leaks=0";
  // A fresh HOME: no personal plugins or preferences. tshark ignores
  // WIRESHARK_PLUGIN_DIR when it runs as root; in a user namespace it does not.
  const fs::path home = fs::temp_directory_path() /
                        ("rdmalab_docs_home_" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(home);
  env += " HOME=" + quote(home.string()) + " XDG_CONFIG_HOME=" + quote((home / ".config").string());
  // No extcap helpers either: tshark starts every one it finds (androiddump,
  // sshdump, ...) to list interfaces, and under a sanitizer preload they hang.
  fs::create_directories(home / "extcap");
  env += " WIRESHARK_EXTCAP_DIR=" + quote((home / "extcap").string());
  const bool as_root = ::geteuid() == 0 && ::system("unshare --user true >/dev/null 2>&1") == 0;
  const bool have_tshark = ::system("command -v tshark >/dev/null 2>&1") == 0;
  const bool have_plugin = fs::exists(RDMALAB_WIRESHARK_PLUGINS);

  std::size_t ran = 0, excerpts = 0;
  for (const auto& c : concept_commands()) {
    CAPTURE(c.chapter);
    CAPTURE(c.line);
    const auto w = words(c.line);
    const std::string& tool = w[0];
    // A lab on the simulator (the troubleshooting chapter shows how to
    // provoke each error): this build's binary, its messages included.
    const bool lab = starts_with(tool, "build/") && tool.find("/labs/") != std::string::npos;
    if (tool != "rdmapcap" && tool != "rdmalab" && tool != "tshark" && !lab) {
      CHECK_MESSAGE(std::find(elsewhere.begin(), elsewhere.end(), tool) != elsewhere.end(),
                    "a command the docs test does not know: run it here or say why not");
      continue;
    }
    if (tool == "tshark" &&
        (!have_tshark || (c.line.find("rdmalab") != std::string::npos && !have_plugin))) {
      MESSAGE("tshark or the rdmalab plugin is missing here: not run");
      continue;
    }
    std::string line = c.line;
    if (lab) {
      CHECK_MESSAGE(line.find("--backend sim") != std::string::npos,
                    "a lab shown in a concept chapter runs on the simulator here");
      line = quote((fs::path(RDMALAB_LABS_DIR) / tool.substr(tool.find("/labs/") + 6)).string()) +
             line.substr(tool.size()) + " 2>&1";
    }
    // Bounded: a command that hangs fails here instead of stalling the suite.
    std::string shell = env;
    if (tool == "tshark") shell += tshark_env;
    shell += " timeout 120 ";
    shell += line;
    std::vector<std::string> argv{"/bin/sh", "-c", shell};
    if (tool == "tshark" && as_root) argv.insert(argv.begin(), {"/usr/bin/unshare", "--user"});
    const RunResult r = run(argv);
    ++ran;
    if (tool == "rdmapcap") {
      // 1: the capture holds protocol errors (those chapters show such captures).
      CHECK(r.status >= 0);
      CHECK(r.status <= 1);
    } else if (lab) {
      // 0: the lab provoked the error and checked it; 1: a check failed; 2:
      // it stopped on the error (a verbs call failed, or bad usage).
      CHECK(r.status >= 0);
      CHECK(r.status <= 2);
    } else if (tool == "rdmalab") {
      // doctor's verdict depends on the machine: with no device it says the
      // simulator will be used, or (--backend verbs) fails with the fix.
      CHECK(r.status >= 0);
      CHECK(r.status <= 3);
    } else {
      CHECK(r.status == 0);
    }
    // Chapter 15 shows that a single-pass tshark prints nothing for an
    // end-of-capture conclusion: check that too.
    const bool prints_nothing =
        c.line ==
        "tshark -r tests/data/dead_peer_retry_exceeded.pcap -Y rdmalab.expert.still_retrying";
    CHECK(r.out.empty() == prints_nothing);
    if (!c.excerpt.empty() && tool != "rdmalab") {
      const auto excerpt = rtrimmed(c.excerpt);
      const auto missing = first_missing(excerpt, rtrimmed(split_lines(r.out)));
      CHECK_MESSAGE(!missing, "not in the output, in this order: " << (missing ? excerpt[*missing]
                                                                               : std::string()));
      ++excerpts;
      // rdmapcap's and the labs' excerpts are localised: the Chinese chapter
      // shows the same command's output in Chinese (tshark's are the same).
      if (tool == "rdmapcap" || lab) {
        std::string zh_shell = env;
        zh_shell += " LANGUAGE=zh timeout 120 ";
        zh_shell += line;
        const RunResult zh = run({"/bin/sh", "-c", zh_shell});
        const auto zh_excerpt = rtrimmed(c.excerpt_zh);
        const auto zh_missing = first_missing(zh_excerpt, rtrimmed(split_lines(zh.out)));
        CHECK_MESSAGE(!zh_missing, "docs/zh: not in the LANGUAGE=zh output, in this order: "
                                       << (zh_missing ? zh_excerpt[*zh_missing] : std::string())
                                       << " (scripts/regen-zh-excerpts.py rewrites it)");
      }
    }
  }
  fs::remove_all(home);
  CHECK(ran >= 8);
  CHECK(excerpts >= 3);
}
