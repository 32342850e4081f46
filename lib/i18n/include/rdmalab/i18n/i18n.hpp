// The bilingual message catalog.
//
// Every user-facing string in rdmalab is a Message with an English and a
// Chinese text. Each module keeps its messages in one constexpr array (its
// catalog) and looks them up by key at compile time, so a misspelt key does
// not build and a message cannot exist in one language only: the parity test
// walks every catalog and fails on an empty text, a missing translation or
// placeholders that differ between the two languages.
//
// The language comes from --lang en|zh, else from LANGUAGE, LC_ALL,
// LC_MESSAGES, LANG (a value starting with "zh" means Chinese). No locale
// needs to be installed: the texts are UTF-8 in the binary.
#pragma once

#include <fmt/format.h>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::i18n {

enum class Lang : unsigned char { En, Zh };

struct Message {
  std::string_view key;
  std::string_view en;
  std::string_view zh;
};

/// The language used by tr() and text(); English until set.
[[nodiscard]] Lang current() noexcept;
void set_current(Lang lang) noexcept;

/// "en", "zh", "zh_CN.UTF-8", "en_US:zh" ... -> the language; nullopt for
/// anything else ("C", "POSIX", "fr_FR", empty).
[[nodiscard]] std::optional<Lang> parse_lang(std::string_view value) noexcept;

/// The language the environment asks for (LANGUAGE, LC_ALL, LC_MESSAGES,
/// LANG, first non-empty recognised value wins); English otherwise.
[[nodiscard]] Lang lang_from_env() noexcept;

/// The language for a command line: the value of --lang (or --lang=X) if
/// present and valid, else lang_from_env(). Used before the CLI parser runs,
/// so that --help is already in the right language. Sets current().
Lang init_from_args(int argc, const char* const* argv) noexcept;

/// The text of a message in a language (default: the current one).
[[nodiscard]] std::string_view text(const Message& m, Lang lang) noexcept;
[[nodiscard]] inline std::string_view text(const Message& m) noexcept {
  return text(m, current());
}

/// The message formatted with fmt-style arguments in the current language.
template <class... Args>
[[nodiscard]] std::string tr(const Message& m, Args&&... args) {
  return fmt::format(fmt::runtime(text(m)), std::forward<Args>(args)...);
}
template <class... Args>
[[nodiscard]] std::string tr_in(Lang lang, const Message& m, Args&&... args) {
  return fmt::format(fmt::runtime(text(m, lang)), std::forward<Args>(args)...);
}

/// Compile-time lookup of a key in a catalog: an unknown key is a compile
/// error ("not a constant expression").
template <std::size_t N>
consteval const Message& find(const std::array<Message, N>& catalog, std::string_view key) {
  for (const Message& m : catalog)
    if (m.key == key) return m;
  throw "unknown message key";  // not a constant expression: compile error
}

/// Problems in a catalog: empty texts, duplicate keys, a Chinese text that is
/// a copy of the English one, placeholders ({}, {:x}, {name}) that differ.
/// Empty when the catalog is complete.
[[nodiscard]] std::vector<std::string> check_catalog(std::string_view module,
                                                     std::span<const Message> messages);

}  // namespace rdmalab::i18n
