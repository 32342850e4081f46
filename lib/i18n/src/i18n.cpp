#include "rdmalab/i18n/i18n.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>

namespace rdmalab::i18n {
namespace {
std::atomic<Lang> g_lang{Lang::En};

// The placeholders of a format string with automatic numbering made
// explicit: "{} of {:x}" gives {"{0}", "{1:x}"}, so that a translation may
// reorder arguments with "{1} ... {0}" and still compare equal.
std::vector<std::string> placeholders(std::string_view s) {
  std::vector<std::string> out;
  int next = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '{') continue;
    if (i + 1 < s.size() && s[i + 1] == '{') {
      ++i;
      continue;
    }
    const auto close = s.find('}', i);
    if (close == std::string_view::npos) {
      out.emplace_back("<unclosed {>");
      break;
    }
    const std::string_view inner = s.substr(i + 1, close - i - 1);
    const auto colon = inner.find(':');
    const std::string_view id = inner.substr(0, colon);
    const std::string_view spec = colon == std::string_view::npos ? "" : inner.substr(colon);
    out.push_back("{" + (id.empty() ? std::to_string(next++) : std::string(id)) +
                  std::string(spec) + "}");
    i = close;
  }
  return out;
}

bool has_non_ascii(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}
bool has_ascii_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
}
}  // namespace

Lang current() noexcept {
  return g_lang.load(std::memory_order_relaxed);
}
void set_current(Lang lang) noexcept {
  g_lang.store(lang, std::memory_order_relaxed);
}

std::optional<Lang> parse_lang(std::string_view v) noexcept {
  // LANGUAGE may be a list: "zh_CN:en". The first entry decides.
  v = v.substr(0, v.find(':'));
  if (v.size() >= 2 && (v[0] == 'z' || v[0] == 'Z') && (v[1] == 'h' || v[1] == 'H'))
    return Lang::Zh;
  if (v.size() >= 2 && (v[0] == 'e' || v[0] == 'E') && (v[1] == 'n' || v[1] == 'N'))
    return Lang::En;
  return std::nullopt;
}

Lang lang_from_env() noexcept {
  for (const char* name : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    if (auto l = parse_lang(v)) return *l;
  }
  return Lang::En;
}

Lang init_from_args(int argc, const char* const* argv) noexcept {
  Lang lang = lang_from_env();
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    std::optional<Lang> l;
    if (a == "--lang" && i + 1 < argc)
      l = parse_lang(argv[i + 1]);
    else if (a.starts_with("--lang="))
      l = parse_lang(a.substr(7));
    if (l) lang = *l;
  }
  set_current(lang);
  return lang;
}

std::string_view text(const Message& m, Lang lang) noexcept {
  return lang == Lang::Zh ? m.zh : m.en;
}

std::vector<std::string> check_catalog(std::string_view module, std::span<const Message> messages) {
  std::vector<std::string> problems;
  std::set<std::string_view> keys;
  auto say = [&](std::string_view key, std::string_view what) {
    problems.push_back(fmt::format("{}: {}: {}", module, key, what));
  };
  for (const Message& m : messages) {
    if (m.key.empty()) say("<empty key>", "message without a key");
    if (!keys.insert(m.key).second) say(m.key, "duplicate key");
    if (m.en.empty()) say(m.key, "English text missing");
    if (m.zh.empty()) say(m.key, "Chinese text missing");
    // A Chinese text must be written in Chinese, unless the English text has
    // no words at all (a pure format such as "{}: {}").
    if (!m.zh.empty() && has_ascii_letter(m.en) && !has_non_ascii(m.zh))
      say(m.key, "Chinese text is not in Chinese");
    auto pe = placeholders(m.en), pz = placeholders(m.zh);
    // The same arguments with the same format specs, in any order.
    std::sort(pe.begin(), pe.end());
    std::sort(pz.begin(), pz.end());
    if (pe != pz) say(m.key, "placeholders differ between English and Chinese");
  }
  return problems;
}

}  // namespace rdmalab::i18n
