// Every catalog of every module: both languages present, placeholders equal.
#include "rdmalab/i18n/i18n.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "all_catalogs.inc"

using namespace rdmalab::i18n;

TEST_CASE("every message of every catalog exists in English and Chinese") {
  const auto catalogs = all_catalogs();
  REQUIRE_FALSE(catalogs.empty());
  std::size_t n = 0;
  for (const auto& c : catalogs) {
    CAPTURE(c.module);
    CHECK_FALSE(c.messages.empty());
    for (const auto& problem : check_catalog(c.module, c.messages)) FAIL_CHECK(problem);
    n += c.messages.size();
  }
  MESSAGE(n << " messages in " << catalogs.size() << " catalogs");
}

TEST_CASE("the parity check catches a missing or copied translation") {
  const std::array<Message, 4> bad{{
      {"a", "hello", ""},
      {"b", "retry after {} ms", "重传"},
      {"c", "PSN sequence error", "PSN sequence error"},
      {"a", "dup", "重复"},
  }};
  const auto problems = check_catalog("t", bad);
  CHECK(problems.size() == 4);
}

TEST_CASE("language from --lang, then LANGUAGE, LC_ALL, LC_MESSAGES, LANG") {
  CHECK(parse_lang("zh_CN.UTF-8") == Lang::Zh);
  CHECK(parse_lang("zh_TW") == Lang::Zh);
  CHECK(parse_lang("zh_CN:en_US") == Lang::Zh);
  CHECK(parse_lang("en_US.UTF-8") == Lang::En);
  CHECK_FALSE(parse_lang("C").has_value());
  CHECK_FALSE(parse_lang("fr_FR").has_value());

  ::unsetenv("LANGUAGE");
  ::unsetenv("LC_ALL");
  ::unsetenv("LC_MESSAGES");
  ::setenv("LANG", "zh_CN.UTF-8", 1);
  CHECK(lang_from_env() == Lang::Zh);
  ::setenv("LC_ALL", "en_US.UTF-8", 1);
  CHECK(lang_from_env() == Lang::En);
  ::setenv("LANGUAGE", "zh_CN", 1);
  CHECK(lang_from_env() == Lang::Zh);
  ::setenv("LANGUAGE", "C", 1);  // unrecognised: fall through to LC_ALL
  CHECK(lang_from_env() == Lang::En);

  const char* argv1[] = {"prog", "--lang", "zh", "file"};
  CHECK(init_from_args(4, argv1) == Lang::Zh);
  const char* argv2[] = {"prog", "--lang=en"};
  CHECK(init_from_args(2, argv2) == Lang::En);
  ::unsetenv("LANGUAGE");
  ::unsetenv("LC_ALL");
  ::unsetenv("LANG");
  const char* argv3[] = {"prog"};
  CHECK(init_from_args(1, argv3) == Lang::En);
  set_current(Lang::En);
}

TEST_CASE("tr formats in the current language") {
  static constexpr std::array cat{Message{"k", "{} packets", "{} 个报文"}};
  set_current(Lang::Zh);
  CHECK(tr(find(cat, "k"), 3) == "3 个报文");
  set_current(Lang::En);
  CHECK(tr(find(cat, "k"), 3) == "3 packets");
  CHECK(tr_in(Lang::Zh, find(cat, "k"), 1) == "1 个报文");
}

namespace {

// One row of docs/glossary.tsv: the variants a Chinese text must not use,
// and the longer phrases in which a variant is correct.
struct GlossaryRow {
  std::string en;
  std::vector<std::string> avoid;
  std::vector<std::string> except;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<GlossaryRow> read_glossary() {
  std::ifstream in(std::string(RDMALAB_TEST_DATA) + "/../../docs/glossary.tsv");
  REQUIRE(in.good());
  std::vector<GlossaryRow> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // en zh avoid except
      header = false;
      continue;
    }
    const auto cols = split(line, '\t');
    REQUIRE(cols.size() >= 2);
    GlossaryRow row{cols[0], {}, {}};
    if (cols.size() > 2 && !cols[2].empty()) row.avoid = split(cols[2], '|');
    if (cols.size() > 3 && !cols[3].empty()) row.except = split(cols[3], '|');
    rows.push_back(std::move(row));
  }
  return rows;
}

// The avoided strings of the glossary that occur in a text outside every
// one of their row's `except` phrases.
std::vector<std::string> glossary_violations(std::string_view text,
                                             const std::vector<GlossaryRow>& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) {
    for (const auto& bad : row.avoid) {
      for (auto at = text.find(bad); at != std::string_view::npos; at = text.find(bad, at + 1)) {
        const bool excused = std::any_of(row.except.begin(), row.except.end(), [&](const auto& ok) {
          // The phrase covers [at, at + bad.size()) if it starts at most
          // ok.size() - bad.size() bytes before it and matches there.
          for (std::size_t back = 0; back + bad.size() <= ok.size() && back <= at; ++back)
            if (text.substr(at - back, ok.size()) == ok) return true;
          return false;
        });
        if (!excused) out.push_back(bad + " (" + row.en + ")");
      }
    }
  }
  return out;
}

// Code points of UTF-8 text (the catalogs are valid UTF-8; a stray byte is
// taken as itself).
std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (std::size_t k = 1; k < n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

// A CJK ideograph (the unified blocks and extension A).
bool is_han(char32_t c) {
  return c >= 0x3400 && c <= 0x9FFF;
}

}  // namespace

// The rule for punctuation: in a Chinese text, an ASCII , : ; ( ) ! ? or "
// written right next to a Chinese character is half-width punctuation in
// Chinese prose: it must be the full-width form (，：；（）！？ and “…”).
// ASCII punctuation between ASCII words or code ("en, zh", "htonl()，",
// "IBV_WC_SUCCESS (0)") is left alone.
TEST_CASE(
    "Chinese texts of every catalog follow docs/glossary.tsv and use full-width punctuation") {
  const auto rows = read_glossary();
  REQUIRE(rows.size() > 10);
  // The checker itself, on texts whose answer is known.
  CHECK(glossary_violations("负载均衡与载荷", rows).empty());
  CHECK(glossary_violations("消息负载 4 字节", rows).size() == 1);
  CHECK(glossary_violations("远程直接内存访问的远程地址", rows).size() == 1);
  for (const auto& c : all_catalogs()) {
    for (const Message& m : c.messages) {
      CAPTURE(c.module);
      CAPTURE(m.key);
      for (const auto& v : glossary_violations(m.zh, rows))
        FAIL_CHECK("avoid " << v << ": " << m.zh);
      const auto cps = code_points(m.zh);
      for (std::size_t i = 0; i < cps.size(); ++i) {
        const char32_t p = cps[i];
        if (p >= 0x80 ||
            std::string_view(",:;()!?\"").find(static_cast<char>(p)) == std::string_view::npos)
          continue;
        const bool by_han =
            (i > 0 && is_han(cps[i - 1])) || (i + 1 < cps.size() && is_han(cps[i + 1]));
        if (by_han)
          FAIL_CHECK("half-width '" << static_cast<char>(p) << "' beside Chinese: " << m.zh);
      }
    }
  }
}
