// Checks on the course companion in docs/en and docs/zh.
//
// The two languages must stay one course: the same chapter files (README.md,
// glossary.md and the numbered chapters), the same heading structure and the
// same code blocks. Commands are identical in both languages; program output
// and diagrams are localised, so those blocks are compared by structure (the
// same commands, the same numbers), not byte for byte. Relative links, images and #anchors must
// resolve the way a code-hosting site resolves them. The timer tables of
// chapter 12 are parsed and compared with rdmalab::wire, so those figures are
// checked by code.
//
// The lab chapters show each lab's transcript between the markers
//   <!-- transcript:labNN -->  ```text ... ```  <!-- /transcript -->
// Those blocks differ by language by design: each must equal the lab's golden
// file tests/labs/golden/labNN.<lang>.txt, which tests/labs in turn checks
// against the program's real output. The command shown just before a
// transcript must be the one the golden file was made with. Both are
// rewritten by scripts/regen-docs.sh.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docs_text.hpp"
#include "rdmalab/wire/timers.hpp"

namespace fs = std::filesystem;
using namespace rdmalab::docs_test;

namespace {

struct Heading {
  int level = 0;
  std::string text;
};

struct CodeBlock {
  std::string info;  // the word after the opening fence, e.g. "sh"
  std::string body;
  std::string transcript;  // "lab01" inside <!-- transcript:lab01 -->, else empty
};

/// One <!-- transcript:NAME --> ... <!-- /transcript --> region.
struct Transcript {
  std::string name;                    // "lab01"
  std::vector<std::size_t> blocks;     // indices into Doc::code
  std::optional<std::size_t> command;  // the last code block before the marker
};

/// A Markdown file split into what the checks need: headings and prose lines
/// outside fenced code blocks, and the code blocks themselves.
struct Doc {
  fs::path path;
  std::vector<Heading> headings;
  std::vector<CodeBlock> code;
  std::vector<std::string> prose;  // lines outside code blocks
  std::vector<Transcript> transcripts;
};

constexpr std::string_view kTranscriptOpen = "<!-- transcript:";
constexpr std::string_view kTranscriptClose = "<!-- /transcript -->";

/// Parses Markdown text; `path` names it in messages and resolves its links.
Doc parse_text(const fs::path& path, const std::string& text) {
  Doc d;
  d.path = path;
  std::optional<std::string> fence;  // the fence that opened the current block
  CodeBlock block;
  bool in_transcript = false;
  for (const auto& line : split_lines(text)) {
    const std::string_view t = trim(line);
    if (fence) {
      if (starts_with(t, *fence) && trim(t.substr(fence->size())).empty()) {
        d.code.push_back(block);
        fence.reset();
      } else {
        block.body += line;
        block.body += '\n';
      }
      continue;
    }
    if (starts_with(t, "```") || starts_with(t, "~~~")) {
      const std::size_t n = std::min(t.find_first_not_of(t[0]), t.size());
      fence = std::string(t.substr(0, n));
      block = CodeBlock{std::string(trim(t.substr(n))), {}, {}};
      if (in_transcript) {
        block.transcript = d.transcripts.back().name;
        d.transcripts.back().blocks.push_back(d.code.size());
      }
      continue;
    }
    if (starts_with(t, kTranscriptOpen)) {
      REQUIRE_MESSAGE(!in_transcript, path.string() << ": transcript markers nest");
      const std::size_t end = t.find(" -->");
      REQUIRE_MESSAGE(end != std::string_view::npos, path.string() << ": bad marker " << t);
      Transcript tr;
      tr.name = std::string(t.substr(kTranscriptOpen.size(), end - kTranscriptOpen.size()));
      if (!d.code.empty()) tr.command = d.code.size() - 1;
      d.transcripts.push_back(tr);
      in_transcript = true;
    } else if (t == kTranscriptClose) {
      REQUIRE_MESSAGE(in_transcript, path.string()
                                         << ": " << kTranscriptClose << " without opening");
      in_transcript = false;
    }
    d.prose.push_back(line);
    if (starts_with(line, "#")) {
      const std::size_t n = line.find_first_not_of('#');
      if (n <= 6 && line[n] == ' ')  // npos is > 6
        d.headings.push_back({static_cast<int>(n), std::string(trim(line.substr(n + 1)))});
    }
  }
  REQUIRE_MESSAGE(!fence, path.string() << ": a code block is not closed");
  REQUIRE_MESSAGE(!in_transcript, path.string() << ": a transcript marker is not closed");
  return d;
}

Doc parse(const fs::path& path) {
  return parse_text(path, read_text(path));
}

/// The chapter files of one language: README.md, glossary.md and every NN-*.md.
std::set<std::string> chapter_files(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const bool numbered = name.size() > 6 && std::isdigit(static_cast<unsigned char>(name[0])) &&
                          std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '-';
    if (e.path().extension() == ".md" && (numbered || name == "README.md" || name == "glossary.md"))
      names.insert(name);
  }
  return names;
}

/// Decodes one UTF-8 code point at s[i], advancing i. Invalid bytes decode as
/// themselves so the caller never loops forever.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int extra = 0;
  char32_t cp = b;
  if (b >= 0xF0) {
    extra = 3;
    cp = b & 0x07u;
  } else if (b >= 0xE0) {
    extra = 2;
    cp = b & 0x0Fu;
  } else if (b >= 0xC0) {
    extra = 1;
    cp = b & 0x1Fu;
  }
  ++i;
  for (int k = 0; k < extra && i < s.size(); ++k, ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3Fu);
  return cp;
}

bool is_cjk(char32_t cp) {
  return cp >= 0x4E00 && cp <= 0x9FFF;
}

/// A Chinese character or full-width punctuation mark: text between two of
/// them must not be broken by a line break (it renders as a space).
bool is_cjk_or_punct(char32_t cp) {
  return is_cjk(cp) || (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFFEF) ||
         cp == 0x201C || cp == 0x201D;
}

/// The first and the last code point of a line (0 for an empty line).
std::pair<char32_t, char32_t> ends_of(std::string_view line) {
  char32_t first = 0, last = 0;
  for (std::size_t i = 0; i < line.size();) {
    const char32_t cp = next_code_point(line, i);
    if (first == 0) first = cp;
    last = cp;
  }
  return {first, last};
}

/// A localised code block: program output (```text) or a plain block (a
/// diagram, or a command's output). Commands (```sh and the like) are not.
bool localised(const std::string& info) {
  return info == "text" || info.empty();
}

/// The numbers of a block, sorted: decimal and hexadecimal literals. A
/// translation keeps every number of the output or diagram it translates.
std::vector<std::string> numbers_of(const std::string& body) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && cur.back() == '.') cur.pop_back();
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    const bool hex_prefix = c == '0' && i + 1 < body.size() && body[i + 1] == 'x' && cur.empty();
    if (hex_prefix) {
      cur = "0x";
      ++i;
      while (i + 1 < body.size() && std::isxdigit(static_cast<unsigned char>(body[i + 1])))
        cur += body[++i];
      flush();
    } else if (digit || (c == '.' && !cur.empty())) {
      // A digit glued to a word (lab01, IPv4, S64) is a name, not a number.
      if (cur.empty() && i > 0 && std::isalpha(static_cast<unsigned char>(body[i - 1]))) {
        while (i + 1 < body.size() && std::isalnum(static_cast<unsigned char>(body[i + 1]))) ++i;
        continue;
      }
      cur += c;
    } else {
      flush();
    }
  }
  flush();
  std::sort(out.begin(), out.end());
  return out;
}

/// The lines of a block that show a command ("$ rdmapcap ..."), in order.
std::vector<std::string> command_lines(const std::string& body) {
  std::vector<std::string> out;
  for (const auto& line : split_lines(body))
    if (starts_with(trim(line), "$ ")) out.emplace_back(trim(line));
  return out;
}

/// Non-ASCII punctuation and symbols that a code-hosting site drops from
/// heading anchors: general punctuation, arrows, CJK symbols and full-width
/// forms, and a few Latin-1 signs. (The full rule keeps only letters, marks,
/// digits and connector punctuation; this covers what our headings use.)
bool is_unicode_punct(char32_t cp) {
  return (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F) ||
         (cp >= 0xFF00 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
         (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65) || cp == 0xB7 ||
         cp == 0xD7 || cp == 0x2192 || cp == 0x2190;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The anchor a code-hosting site gives a heading: lower case, spaces become
/// '-', punctuation other than '-' and '_' is dropped, letters of any script
/// stay.
std::string slug(std::string_view heading) {
  std::string out;
  for (std::size_t i = 0; i < heading.size();) {
    const char32_t cp = next_code_point(heading, i);
    if (cp < 0x80) {
      const char c = static_cast<char>(cp);
      if (std::isalnum(static_cast<unsigned char>(c)))
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else if (c == ' ' || c == '-')
        out += '-';
      else if (c == '_')
        out += '_';
    } else if (!is_unicode_punct(cp)) {
      append_utf8(out, cp);
    }
  }
  return out;
}

/// Every anchor of a document, with "-1", "-2" ... for repeated headings.
std::set<std::string> anchors(const Doc& d) {
  std::set<std::string> out;
  std::map<std::string, int> seen;
  for (const auto& h : d.headings) {
    const std::string s = slug(h.text);
    const int n = seen[s]++;
    out.insert(n == 0 ? s : s + "-" + std::to_string(n));
  }
  return out;
}

/// Link targets of the form [text](target) in prose, outside inline code.
std::vector<std::string> link_targets(const Doc& d) {
  std::vector<std::string> out;
  for (const auto& raw : d.prose) {
    // Drop inline code spans first: `a](b)` in code is not a link.
    std::string line;
    bool in_code = false;
    for (char c : raw) {
      if (c == '`')
        in_code = !in_code;
      else if (!in_code)
        line += c;
    }
    for (std::size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
      const std::size_t end = line.find(')', at + 2);
      if (end == std::string::npos) break;
      std::string target = line.substr(at + 2, end - at - 2);
      if (const auto sp = target.find(' '); sp != std::string::npos) target.resize(sp);  // "title"
      out.push_back(target);
    }
  }
  return out;
}

/// Image sources of the form ![alt](src), in order of appearance.
std::vector<std::string> images(const Doc& d) {
  std::vector<std::string> out;
  for (const auto& line : d.prose) {
    for (std::size_t at = line.find("!["); at != std::string::npos; at = line.find("![", at + 2)) {
      const std::size_t mid = line.find("](", at + 2);
      if (mid == std::string::npos) break;
      const std::size_t end = line.find(')', mid + 2);
      if (end == std::string::npos) break;
      std::string src = line.substr(mid + 2, end - mid - 2);
      if (const auto sp = src.find(' '); sp != std::string::npos) src.resize(sp);  // "title"
      out.push_back(src);
    }
  }
  return out;
}

bool is_external(std::string_view t) {
  return starts_with(t, "http://") || starts_with(t, "https://") || starts_with(t, "mailto:");
}

std::vector<std::string> lines_of(const fs::path& p) {
  return split_lines(read_text(p));
}

/// The (n, text) cells of the Markdown table that follows a marker comment.
/// Rows hold one or more pairs: | n | value | n | value |.
std::map<unsigned, std::string> marked_table(const std::vector<std::string>& lines,
                                             std::string_view marker) {
  std::map<unsigned, std::string> cells;
  auto it = std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(marker) != std::string::npos; });
  REQUIRE_MESSAGE(it != lines.end(), "marker " << marker << " not found");
  ++it;
  while (it != lines.end() && trim(*it).empty()) ++it;
  for (; it != lines.end() && starts_with(trim(*it), "|"); ++it) {
    std::vector<std::string> row;
    std::string_view rest = trim(*it);
    rest.remove_prefix(1);
    while (!rest.empty()) {
      const std::size_t bar = rest.find('|');
      row.emplace_back(trim(rest.substr(0, bar)));
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
    if (!row.empty() && trim(row.back()).empty()) row.pop_back();
    for (std::size_t k = 0; k + 1 < row.size(); k += 2) {
      const std::string& key = row[k];
      if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          }))
        continue;  // header or separator row
      const auto n = static_cast<unsigned>(std::stoul(key));
      CHECK_MESSAGE(cells.count(n) == 0, "row " << n << " appears twice after " << marker);
      cells[n] = row[k + 1];
    }
  }
  return cells;
}

/// "67.109 ms" -> 0.067109 (seconds). Accepts µs, us, ms, s, min, h.
std::optional<double> seconds_of(std::string_view text) {
  std::istringstream in{std::string(text)};
  double v = 0;
  std::string unit;
  if (!(in >> v >> unit)) return std::nullopt;
  if (unit == "µs" || unit == "us") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  if (unit == "s") return v;
  if (unit == "min") return v * 60;
  if (unit == "h") return v * 3600;
  return std::nullopt;
}

const std::string kLangs[] = {"en", "zh"};

}  // namespace

TEST_CASE("docs/en and docs/zh hold the same chapters, each with a README index") {
  const auto en = chapter_files(kDocs / "en");
  const auto zh = chapter_files(kDocs / "zh");
  for (const auto& name : en) CHECK_MESSAGE(zh.count(name) == 1, "docs/zh lacks " << name);
  for (const auto& name : zh) CHECK_MESSAGE(en.count(name) == 1, "docs/en lacks " << name);
  REQUIRE(en.count("README.md") == 1);
  for (const char* chapter : {"00-why-rdma.md", "01-concepts.md", "02-setup.md",
                              "12-transport-reference.md", "13-nccl.md"})
    CHECK_MESSAGE(en.count(chapter) == 1, chapter);
  for (const std::string& lang : kLangs) {
    const std::string index = read_text(kDocs / lang / "README.md");
    for (const auto& name : chapter_files(kDocs / lang)) {
      if (name == "README.md") continue;
      CHECK_MESSAGE(index.find("(" + name + ")") != std::string::npos,
                    lang << "/README.md does not link " << name);
    }
  }
}

TEST_CASE("each chapter has the same headings and code blocks in both languages") {
  for (const auto& name : chapter_files(kDocs / "en")) {
    if (!fs::exists(kDocs / "zh" / name)) continue;  // reported by the case above
    CAPTURE(name);
    const Doc en = parse(kDocs / "en" / name);
    const Doc zh = parse(kDocs / "zh" / name);
    std::vector<int> en_levels, zh_levels;
    for (const auto& h : en.headings) en_levels.push_back(h.level);
    for (const auto& h : zh.headings) zh_levels.push_back(h.level);
    CHECK(en_levels == zh_levels);
    REQUIRE(en.code.size() == zh.code.size());
    for (std::size_t i = 0; i < en.code.size(); ++i) {
      CAPTURE(i);
      CHECK(en.code[i].info == zh.code[i].info);
      CHECK(en.code[i].transcript == zh.code[i].transcript);
      // A transcript is the program's output in the chapter's language; it
      // is compared with its golden file instead (see below). Other output
      // and diagrams are localised: the same commands and the same numbers
      // (docs_commands_test checks the output itself, in each language).
      if (!en.code[i].transcript.empty()) continue;
      if (localised(en.code[i].info)) {
        CHECK(command_lines(en.code[i].body) == command_lines(zh.code[i].body));
        CHECK(numbers_of(en.code[i].body) == numbers_of(zh.code[i].body));
      } else {
        CHECK(en.code[i].body == zh.code[i].body);
      }
    }
    std::vector<std::string> en_marks, zh_marks;
    for (const auto& t : en.transcripts) en_marks.push_back(t.name);
    for (const auto& t : zh.transcripts) zh_marks.push_back(t.name);
    CHECK(en_marks == zh_marks);
    // The same figures, each drawn in its chapter's language (NAME.svg in
    // docs/en, NAME.zh.svg in docs/zh; the figures case checks which).
    std::vector<std::string> zh_images = images(zh);
    for (std::string& src : zh_images)
      if (src.ends_with(".zh.svg")) src.replace(src.size() - 7, 7, ".svg");
    CHECK(images(en) == zh_images);
  }
}

TEST_CASE("parse: transcript markers mark their code block and remember the command before") {
  const Doc d = parse_text("example.md",
                           "# T\n\n```sh\nlab01-send-recv --backend sim\n```\n\n"
                           "<!-- transcript:lab01 -->\n```text\nStep 1\n```\n<!-- /transcript -->\n"
                           "![ladder](../figures/lab01.svg)\n");
  REQUIRE(d.code.size() == 2);
  CHECK(d.code[0].transcript.empty());
  CHECK(d.code[1].transcript == "lab01");
  CHECK(d.code[1].body == "Step 1\n");
  REQUIRE(d.transcripts.size() == 1);
  CHECK(d.transcripts[0].name == "lab01");
  CHECK(d.transcripts[0].blocks == std::vector<std::size_t>{1});
  CHECK(d.transcripts[0].command == std::optional<std::size_t>{0});
  CHECK(images(d) == std::vector<std::string>{"../figures/lab01.svg"});
}

TEST_CASE("each lab transcript in a chapter equals the lab's golden transcript") {
  std::size_t checked = 0;
  std::set<std::string> seen;
  for (const std::string& lang : kLangs) {
    for (const auto& name : chapter_files(kDocs / lang)) {
      const Doc doc = parse(kDocs / lang / name);
      for (const auto& t : doc.transcripts) {
        CAPTURE(doc.path.string());
        CAPTURE(t.name);
        seen.insert(t.name);
        // Exactly one ```text block between the markers: the transcript.
        REQUIRE(t.blocks.size() == 1);
        const CodeBlock& block = doc.code[t.blocks[0]];
        CHECK(block.info == "text");
        // The command shown before it is the one the golden file was made
        // with (tests/labs runs it with --lang and a temporary --capture,
        // and shows the capture as the default captures/labNN.pcap).
        REQUIRE_MESSAGE(t.command, "no command shown before the transcript");
        const std::string& cmd = doc.code[*t.command].body;
        const std::string program = "/" + t.name + "-";
        const std::string args = " --backend sim --seed 1\n";
        const bool runs_lab =
            cmd.find(program) != std::string::npos && cmd.find(args) != std::string::npos;
        CHECK_MESSAGE(runs_lab, "the command before the transcript must run .../"
                                    << t.name << "-... --backend sim --seed 1");
        const fs::path golden = kGolden / (t.name + "." + lang + ".txt");
        if (!fs::exists(golden)) {
          MESSAGE("skipped: "
                  << golden.filename().string()
                  << " does not exist yet; the chapter's transcript is checked once it lands");
          continue;
        }
        CHECK_MESSAGE(block.body == read_text(golden), "the transcript differs from "
                                                           << golden.filename().string()
                                                           << ": run scripts/regen-docs.sh");
        ++checked;
      }
    }
  }
  // Every lab with a golden transcript has its chapter in both languages.
  for (const auto& e : fs::directory_iterator(kGolden)) {
    const std::string file = e.path().filename().string();  // lab01.en.txt
    const std::string lab = file.substr(0, file.find('.'));
    CHECK_MESSAGE(seen.count(lab) == 1, "no chapter shows the transcript of " << lab);
  }
  CHECK(checked >= 14);  // labs 01-07 in two languages
}

// Each ladder exists twice, drawn from the same capture by
// scripts/regen-docs.sh: NAME.svg with English labels for docs/en and
// NAME.zh.svg with Chinese ones (rdmapcap --lang zh) for docs/zh.
TEST_CASE(
    "figures: every image a chapter shows exists, in its language, and every figure is shown") {
  const fs::path figures = kDocs / "figures";
  auto is_zh_figure = [](const std::string& file) { return file.ends_with(".zh.svg"); };
  std::set<std::string> shown;
  for (const std::string& lang : kLangs) {
    for (const auto& name : chapter_files(kDocs / lang)) {
      const Doc doc = parse(kDocs / lang / name);
      for (const auto& src : images(doc)) {
        CAPTURE(doc.path.string());
        CAPTURE(src);
        if (is_external(src)) continue;
        const fs::path file = doc.path.parent_path() / src;
        CHECK_MESSAGE(fs::exists(file), "missing image");
        if (fs::exists(file) && fs::equivalent(file.parent_path(), figures)) {
          const std::string f = file.filename().string();
          shown.insert(f);
          // A chapter shows the figure drawn in its own language.
          CHECK_MESSAGE(is_zh_figure(f) == (lang == "zh"), "a figure in the other language");
        }
      }
      // A lab chapter whose transcript draws a ladder shows it as a figure.
      // The ladder draws conversations (RC and UC QP pairs); a lab whose
      // capture holds datagrams alone (UD) has none to draw.
      for (const auto& t : doc.transcripts) {
        const bool draws_ladder = std::any_of(t.blocks.begin(), t.blocks.end(), [&](std::size_t b) {
          return doc.code[b].body.find("▶│") != std::string::npos;
        });
        if (!draws_ladder) continue;
        const auto imgs = images(doc);
        CHECK_MESSAGE(std::any_of(imgs.begin(), imgs.end(),
                                  [&](const std::string& i) {
                                    return i.find("figures/" + t.name) != std::string::npos;
                                  }),
                      doc.path.string() << " shows no figure of " << t.name);
      }
    }
  }
  REQUIRE(fs::is_directory(figures));
  std::size_t zh_figures = 0;
  for (const auto& e : fs::directory_iterator(figures)) {
    const std::string file = e.path().filename().string();
    CAPTURE(file);
    CHECK_MESSAGE(shown.count(file) == 1, "a figure no chapter shows");
    // Generated by rdmapcap (scripts/regen-docs.sh), not drawn by hand.
    CHECK(e.path().extension() == ".svg");
    const std::string svg = read_text(e.path());
    CHECK(starts_with(svg, "<svg"));
    // Both languages of every figure; the Chinese one says 时间 (lad.time)
    // where the English one says "time", and names a CJK font family. An
    // overview plot (rdmapcap plot, the fabric labs) has no time label: its
    // title is in the language instead (rep.overview_title).
    const std::string base = file.substr(0, file.find('.'));
    const std::string other = is_zh_figure(file) ? base + ".svg" : base + ".zh.svg";
    CHECK_MESSAGE(fs::exists(figures / other), "the figure lacks its other language");
    const bool plot = svg.find("id=\"overview-plot\"") != std::string::npos;
    if (is_zh_figure(file)) {
      ++zh_figures;
      CHECK(svg.find(plot ? ">各请求端 QP 的请求速率" : ">时间</text>") != std::string::npos);
      CHECK(svg.find("CJK") != std::string::npos);
    } else {
      CHECK(svg.find(plot ? ">Request rate of each requester QP" : ">time</text>") !=
            std::string::npos);
    }
  }
  CHECK(zh_figures >= 15);  // one per ladder of labs 01-13 (lab 08: two, lab 11: two)
}

TEST_CASE("relative links and anchors resolve") {
  std::size_t checked = 0;
  for (const std::string& lang : kLangs) {
    for (const auto& name : chapter_files(kDocs / lang)) {
      const fs::path path = kDocs / lang / name;
      const Doc doc = parse(path);
      for (const auto& target : link_targets(doc)) {
        if (is_external(target) || target.empty()) continue;
        CAPTURE(path.string());
        CAPTURE(target);
        const std::size_t hash = target.find('#');
        const std::string file = target.substr(0, hash);
        const fs::path dest = file.empty() ? path : path.parent_path() / file;
        CHECK_MESSAGE(fs::exists(dest), "link to a missing file");
        ++checked;
        if (hash == std::string::npos || !fs::exists(dest) || dest.extension() != ".md") continue;
        const auto names = anchors(parse(dest));
        CHECK_MESSAGE(names.count(target.substr(hash + 1)) == 1, "no heading has this anchor");
      }
    }
  }
  CHECK(checked > 20);  // the chapters do link to each other
}

TEST_CASE("slug follows the code-hosting rules for headings") {
  CHECK(slug("Local ACK timeout: 4.096 µs × 2^n") == "local-ack-timeout-4096-µs--2n");
  CHECK(slug("The `timeout` table") == "the-timeout-table");
  CHECK(slug("RNR 定时器（表 45）") == "rnr-定时器表-45");
}

TEST_CASE("every Chinese chapter is written in Chinese") {
  for (const auto& name : chapter_files(kDocs / "zh")) {
    CAPTURE(name);
    const Doc zh = parse(kDocs / "zh" / name);
    std::size_t cjk = 0, prose_lines = 0, chinese_lines = 0;
    for (const auto& line : zh.prose) {
      const std::string_view t = trim(line);
      if (t.empty() || starts_with(t, "|") || starts_with(t, "<")) continue;
      ++prose_lines;
      std::size_t here = 0;
      for (std::size_t i = 0; i < t.size();)
        if (is_cjk(next_code_point(t, i))) ++here;
      cjk += here;
      if (here > 0) ++chinese_lines;
    }
    CHECK(cjk >= (name == "README.md" ? 40u : 300u));
    // An English copy with a few translated headings would fail here.
    CHECK(chinese_lines * 10 >= prose_lines * 6);
    if (fs::exists(kDocs / "en" / name))
      CHECK(read_text(kDocs / "zh" / name) != read_text(kDocs / "en" / name));
  }
}

TEST_CASE("chapter 12: the local ACK timeout table matches wire::ack_timeout_seconds") {
  for (const std::string& lang : kLangs) {
    CAPTURE(lang);
    const auto cells = marked_table(lines_of(kDocs / lang / "12-transport-reference.md"),
                                    "<!-- table:ack-timeout -->");
    REQUIRE(cells.size() == 32);
    for (unsigned n = 0; n < 32; ++n) {
      CAPTURE(n);
      REQUIRE(cells.count(n) == 1);
      const auto expected = rdmalab::wire::ack_timeout_seconds(n);
      if (!expected) {
        CHECK(cells.at(n).find("∞") != std::string::npos);
        continue;
      }
      const auto shown = seconds_of(cells.at(n));
      REQUIRE_MESSAGE(shown, "cannot read '" << cells.at(n) << "'");
      // The table shows four significant digits.
      CHECK(std::fabs(*shown - *expected) <= *expected * 5.01e-4);
    }
  }
}

TEST_CASE("chapter 12: the RNR timer table matches wire::rnr_timer_ms") {
  for (const std::string& lang : kLangs) {
    CAPTURE(lang);
    const auto cells = marked_table(lines_of(kDocs / lang / "12-transport-reference.md"),
                                    "<!-- table:rnr-timer -->");
    REQUIRE(cells.size() == 32);
    for (unsigned code = 0; code < 32; ++code) {
      CAPTURE(code);
      REQUIRE(cells.count(code) == 1);
      const auto shown = seconds_of(cells.at(code));
      REQUIRE_MESSAGE(shown, "cannot read '" << cells.at(code) << "'");
      // Table 45 values are exact to 0.01 ms.
      CHECK(std::fabs(*shown * 1e3 - *rdmalab::wire::rnr_timer_ms(code)) < 1e-9);
    }
  }
}

TEST_CASE("numbers_of: the numbers of a block, not the digits in names") {
  CHECK(numbers_of("Frame 7: PSN 0x00010a, 4.0 µs (lab01, IPv4)\n第 7 帧") ==
        std::vector<std::string>{"0x00010a", "4.0", "7", "7"});
  CHECK(numbers_of("see 3.") == std::vector<std::string>{"3"});
  CHECK(command_lines("$ rdmapcap decode x.pcap\nFrame 1\n") ==
        std::vector<std::string>{"$ rdmapcap decode x.pcap"});
}

namespace {

/// One row of docs/glossary.tsv.
struct GlossaryRow {
  std::string en, zh;
  std::vector<std::string> avoid, except;
};

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<GlossaryRow> glossary() {
  std::vector<GlossaryRow> rows;
  bool header = true;
  for (const auto& line : split_lines(read_text(kDocs / "glossary.tsv"))) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // en zh avoid except
      header = false;
      continue;
    }
    auto cols = split_on(line, '\t');
    cols.resize(4);
    GlossaryRow r{cols[0], cols[1], {}, {}};
    for (const auto& a : split_on(cols[2], '|'))
      if (!a.empty()) r.avoid.push_back(a);
    for (const auto& e : split_on(cols[3], '|'))
      if (!e.empty()) r.except.push_back(e);
    rows.push_back(r);
  }
  return rows;
}

/// `line` with every `except` phrase of the row blanked out.
std::string without_exceptions(std::string line, const GlossaryRow& row) {
  for (const auto& e : row.except)
    for (std::size_t at = line.find(e); at != std::string::npos; at = line.find(e, at))
      line.replace(at, e.size(), std::string(1, ' '));
  return line;
}

/// The Chinese text a reader sees: docs/zh/*.md and README.zh.md.
std::vector<fs::path> chinese_files() {
  std::vector<fs::path> out{kDocs / ".." / "README.zh.md"};
  for (const auto& e : fs::directory_iterator(kDocs / "zh"))
    if (e.path().extension() == ".md") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("glossary: the Chinese text uses the one rendering of each term") {
  const auto rows = glossary();
  REQUIRE(rows.size() >= 30);
  std::size_t avoided = 0;
  for (const auto& r : rows) avoided += r.avoid.size();
  REQUIRE(avoided >= 20);
  // without_exceptions lets "负载均衡" (load balancing) through, not "负载".
  const GlossaryRow payload{"payload", "载荷", {"负载"}, {"负载均衡"}};
  CHECK(without_exceptions("负载均衡", payload).find("负载") == std::string::npos);
  CHECK(without_exceptions("负载均衡与负载", payload).find("负载") != std::string::npos);

  for (const auto& path : chinese_files()) {
    // The glossary chapter names the variants on purpose.
    if (path.filename() == "glossary.md") continue;
    CAPTURE(path.string());
    const Doc doc = parse(path);
    std::vector<std::string> lines = doc.prose;
    // Diagrams are checked. Program output (```text, a plain block right
    // after a command block, or "$ command" and its output) is the message
    // catalogs' text, which the catalog test checks against the same
    // glossary; commands are English.
    for (std::size_t b = 0; b < doc.code.size(); ++b) {
      const CodeBlock& block = doc.code[b];
      const bool output = block.info == "text" || starts_with(trim(block.body), "$ ") ||
                          (b > 0 && doc.code[b - 1].info == "sh");
      if (block.info.empty() && !output)
        for (const auto& l : split_lines(block.body)) lines.push_back(l);
    }
    for (const auto& line : lines) {
      for (const auto& r : rows) {
        const std::string text = without_exceptions(line, r);
        for (const auto& a : r.avoid)
          CHECK_MESSAGE(text.find(a) == std::string::npos, "\"" << a << "\" for " << r.en
                                                                << ": write \"" << r.zh
                                                                << "\" in: " << line);
      }
    }
  }
}

TEST_CASE("glossary: every row of glossary.tsv is in both glossary chapters") {
  for (const std::string& lang : kLangs) {
    CAPTURE(lang);
    const auto lines = lines_of(kDocs / lang / "glossary.md");
    for (const auto& r : glossary()) {
      CAPTURE(r.en);
      const bool found = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
        return starts_with(l, "| " + r.en + " | " + r.zh + " |");
      });
      CHECK_MESSAGE(found, "no table row | " << r.en << " | " << r.zh << " | ...");
    }
  }
}

TEST_CASE("Chinese paragraphs have no line break between two Chinese characters") {
  std::size_t checked = 0;
  for (const auto& path : chinese_files()) {
    CAPTURE(path.string());
    // Prose lines only: parse() leaves code blocks out, but joins nothing, so
    // two consecutive prose lines of the file are adjacent here too unless a
    // code block stood between them; compare line numbers to be sure.
    const auto all = lines_of(path);
    bool in_code = false;
    std::string_view prev;
    bool prev_prose = false;
    for (const auto& raw : all) {
      const std::string_view t = trim(raw);
      if (starts_with(t, "```") || starts_with(t, "~~~")) {
        in_code = !in_code;
        prev_prose = false;
        continue;
      }
      if (in_code || t.empty()) {
        prev_prose = false;
        continue;
      }
      if (prev_prose) {
        const char32_t before = ends_of(prev).second;
        const char32_t after = ends_of(t).first;
        CHECK_MESSAGE(!(is_cjk_or_punct(before) && is_cjk_or_punct(after)),
                      "a line break inside a Chinese paragraph, before: " << t);
        ++checked;
      }
      prev = t;
      prev_prose = true;
    }
  }
  CHECK(checked > 0);  // README index rows follow each other
}
