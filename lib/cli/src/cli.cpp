#include "rdmalab/cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>

namespace rdmalab::cli {
namespace {

using i18n::Message;
constexpr std::array kCatalog{
    Message{"help", "Print this help message and exit", "显示本帮助并退出"},
    Message{"lang", "Language of all output: en or zh (default: from LANGUAGE/LC_ALL/LANG)",
            "所有输出使用的语言：en 或 zh（默认取自 LANGUAGE/LC_ALL/LANG）"},
    Message{"label.usage", "Usage", "用法"},
    Message{"label.options", "OPTIONS", "选项"},
    Message{"label.options_title", "Options", "选项"},
    Message{"label.positionals", "Positionals", "位置参数"},
    Message{"label.subcommands", "Subcommands", "子命令"},
    Message{"label.subcommand", "SUBCOMMAND", "子命令"},
    Message{"label.required", "REQUIRED", "必填"},
    Message{"label.needs", "Needs", "依赖"},
    Message{"label.excludes", "Excludes", "互斥"},
    Message{"label.colon", ":", "："},
    Message{"label.usage_line", "{}: ", "{}："},
    Message{"type.text", "TEXT", "文本"},
    Message{"type.uint", "UINT", "非负整数"},
    Message{"type.int", "INT", "整数"},
    Message{"type.float", "FLOAT", "数值"},
    Message{"type.positive", "POSITIVE", "正数"},
    Message{"type.nonnegative", "NONNEGATIVE", "非负数"},
    Message{"type.file", "FILE", "文件"},
    Message{"type.dir", "DIR", "目录"},
    Message{"type.path", "PATH", "路径"},
    Message{"type.in", "in", "取值"},
    Message{"err.prefix", "error", "错误"},
    Message{"err.required", "a required option or argument is missing", "缺少必需的选项或参数"},
    Message{"err.value", "an option has an invalid value", "某个选项的取值无效"},
    Message{"err.extras", "unexpected extra arguments", "多余的参数"},
    Message{"err.other", "the command line is not valid", "命令行无效"},
    Message{"err.line", "{0}: {1} ({2})", "{0}：{1}（{2}）"},
    Message{"err.see_help", "run with --help for the options", "使用 --help 查看可用选项"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

// The capitalised words CLI11 puts in an option's type name.
struct TypeWord {
  std::string_view cli11;
  const Message* text;
};
constexpr std::array kTypeWords{
    TypeWord{"TEXT", &M("type.text")},         TypeWord{"UINT", &M("type.uint")},
    TypeWord{"INT", &M("type.int")},           TypeWord{"FLOAT", &M("type.float")},
    TypeWord{"POSITIVE", &M("type.positive")}, TypeWord{"NONNEGATIVE", &M("type.nonnegative")},
    TypeWord{"FILE", &M("type.file")},         TypeWord{"DIR", &M("type.dir")},
    TypeWord{"PATH", &M("type.path")},
};

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

std::string HelpFormatter::type_name(std::string_view cli11) {
  // "UINT:POSITIVE", "TEXT:{auto,always,never}": each word CLI11 writes in
  // capitals is translated (kTypeWords); a {...} list of values is kept.
  // CLI::Range describes itself as "INT in [0 - 255]" after the type of the
  // option, giving "INT:INT in [0 - 255]": keep one type word.
  std::string text(cli11);
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    const std::string first = text.substr(0, colon);
    if (text.compare(colon + 1, first.size() + 1, first + " ") == 0) text.erase(0, colon + 1);
  }
  if (const auto at = text.find(" in ["); at != std::string::npos)
    text.replace(at, 4, " " + i18n::tr(M("type.in")) + " ");
  cli11 = text;
  std::string out;
  std::size_t i = 0;
  while (i < cli11.size()) {
    if (cli11[i] == '{') {
      const auto close = cli11.find('}', i);
      const auto end = close == std::string_view::npos ? cli11.size() : close + 1;
      out += cli11.substr(i, end - i);
      i = end;
      continue;
    }
    if (cli11[i] < 'A' || cli11[i] > 'Z') {
      out.push_back(cli11[i++]);
      continue;
    }
    std::size_t j = i;
    while (j < cli11.size() && cli11[j] >= 'A' && cli11[j] <= 'Z') ++j;
    const std::string_view word = cli11.substr(i, j - i);
    const auto* hit = std::find_if(kTypeWords.begin(), kTypeWords.end(),
                                   [word](const TypeWord& t) { return t.cli11 == word; });
    out += hit != kTypeWords.end() ? i18n::tr(*hit->text) : std::string(word);
    i = j;
  }
  return out;
}

std::string HelpFormatter::titled(std::string_view title) {
  return std::string(title) + i18n::tr(M("label.colon"));
}

std::size_t HelpFormatter::display_width(std::string_view s) {
  // UTF-8: a CJK ideograph or full-width form takes two terminal columns,
  // any other character one.
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (std::size_t k = 1; k < len && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
                      (cp >= 0xFFE0 && cp <= 0xFFE6);
    n += wide ? 2 : 1;
    i += len;
  }
  return n;
}

std::string HelpFormatter::two_columns(const std::string& left, const std::string& right) const {
  // CLI11's layout (two spaces, the name padded to the column width, the
  // description; a name too long for the column puts the description on the
  // next line), with the padding counted in terminal columns.
  std::string out = "  " + left;
  const std::size_t w = 2 + display_width(left);
  if (!right.empty()) {
    if (w >= column_width_)
      out += "\n" + std::string(column_width_, ' ');
    else
      out += std::string(column_width_ - w, ' ');
    for (const char c : right) {
      out.push_back(c);
      if (c == '\n') out += std::string(column_width_, ' ');
    }
  }
  return out + "\n";
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return two_columns(make_option_name(opt, is_positional) + make_option_opts(opt),
                     make_option_desc(opt));
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  return two_columns(sub->get_display_name(true), sub->get_description());
}

std::string HelpFormatter::make_group(std::string group, bool is_positional,
                                      std::vector<const CLI::Option*> opts) const {
  std::string out = "\n" + titled(group) + "\n";
  for (const CLI::Option* opt : opts) out += make_option(opt, is_positional);
  return out;
}

std::string HelpFormatter::option_sections(const CLI::App* app, CLI::AppFormatMode mode) const {
  // One section per title: CLI11 files a subcommand's help flag under its
  // default group "Options" before the subcommand inherits the localised
  // group of every other option, which would print two options sections.
  std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> sections;
  for (const std::string& group : app->get_groups()) {
    const std::string title = group == "Options" ? get_label("Options") : group;
    const auto opts = app->get_options([&](const CLI::Option* opt) {
      return opt->get_group() == group && opt->nonpositional() &&
             (mode != CLI::AppFormatMode::Sub ||
              (app->get_help_ptr() != opt && app->get_help_all_ptr() != opt));
    });
    if (group.empty() || opts.empty()) continue;
    auto it = std::find_if(sections.begin(), sections.end(),
                           [&title](const auto& sec) { return sec.first == title; });
    if (it == sections.end()) {
      sections.emplace_back(title, opts);
    } else {
      it->second.insert(it->second.end(), opts.begin(), opts.end());
    }
  }
  std::string out;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) out += "\n";
    out += make_group(sections[i].first, false, sections[i].second);
  }
  return out;
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string name,
                                     CLI::AppFormatMode mode) const {
  // CLI11's order of sections; the options sections from option_sections().
  if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
  return make_description(app) + make_usage(app, std::move(name)) + make_positionals(app) +
         option_sections(app, mode) + make_subcommands(app, mode) + "\n" + make_footer(app);
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  // CLI11 writes "<label>: name"; in Chinese the full-width colon takes no
  // space after it.
  std::string usage = CLI::Formatter::make_usage(app, std::move(name));
  const std::string label = get_label("Usage") + ": ";
  if (usage.starts_with(label))
    usage.replace(0, label.size(), i18n::tr(M("label.usage_line"), get_label("Usage")));
  return usage;
}

std::string HelpFormatter::make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const {
  // Subcommands sit in CLI11's group "Subcommands" unless given another.
  std::string out = CLI::Formatter::make_subcommands(app, mode);
  const std::string plain = "\nSubcommands:\n";
  if (const auto at = out.find(plain); at != std::string::npos)
    out.replace(at, plain.size(), "\n" + titled(get_label("Subcommands")) + "\n");
  return out;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  std::string out;
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_type_size() != 0) {
    if (!opt->get_type_name().empty()) out += " " + type_name(opt->get_type_name());
    if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    if (opt->get_required()) out += " " + get_label("REQUIRED");
  }
  auto names = [&out](std::string_view label, const std::set<CLI::Option*>& opts) {
    if (opts.empty()) return;
    out += " " + titled(label);
    bool first = true;
    for (const CLI::Option* o : opts) {
      out += (first ? "" : " ") + o->get_name();
      first = false;
    }
  };
  names(get_label("Needs"), opt->get_needs());
  names(get_label("Excludes"), opt->get_excludes());
  return out;
}

void localize(CLI::App& app) {
  auto fmt = std::make_shared<HelpFormatter>();
  fmt->label("Usage", i18n::tr(M("label.usage")));
  fmt->label("Options", i18n::tr(M("label.options_title")));
  fmt->label("OPTIONS", i18n::tr(M("label.options")));
  fmt->label("Positionals", i18n::tr(M("label.positionals")));
  fmt->label("Subcommands", i18n::tr(M("label.subcommands")));
  fmt->label("SUBCOMMAND", i18n::tr(M("label.subcommand")));
  fmt->label("SUBCOMMANDS", i18n::tr(M("label.subcommand")));
  fmt->label("REQUIRED", i18n::tr(M("label.required")));
  fmt->label("Needs", i18n::tr(M("label.needs")));
  fmt->label("Excludes", i18n::tr(M("label.excludes")));
  app.formatter(fmt);
  // The group first, so the help flag lands in the same (one) options group.
  app.option_defaults()->group(i18n::tr(M("label.options_title")));
  app.set_help_flag("-h,--help", i18n::tr(M("help")));
  // The value was applied before parsing; declaring it keeps CLI11 from
  // rejecting it and documents it in --help.
  static std::string lang_value;
  app.add_option("--lang", lang_value, i18n::tr(M("lang")))
      ->check(CLI::IsMember({"en", "zh"}))
      ->group(i18n::tr(M("label.options_title")));
}

int exit_for(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    // --help (or --version): CLI11 formats it with our labels.
    return app.exit(e, std::cout, std::cerr);
  }
  const Message* what = &M("err.other");
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
    what = &M("err.required");
  else if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ||
           dynamic_cast<const CLI::ConversionError*>(&e) != nullptr ||
           dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr)
    what = &M("err.value");
  else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
    what = &M("err.extras");
  // CLI11's own sentence names the option and the value; keep it as detail.
  std::cerr << i18n::tr(M("err.line"), i18n::tr(M("err.prefix")), i18n::tr(*what), e.what()) << "\n"
            << i18n::tr(M("err.see_help")) << "\n";
  return kExitUsage;
}

bool use_colour(int fd) noexcept {
  if (std::getenv("NO_COLOR") != nullptr && *std::getenv("NO_COLOR") != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return ::isatty(fd) == 1;
}

}  // namespace rdmalab::cli
