// Every catalog of every module: both languages present, placeholders equal.
#include "rdmalab/i18n/i18n.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <span>
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
