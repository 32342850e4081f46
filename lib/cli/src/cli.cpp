#include "rdmalab/cli/cli.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <iostream>

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
    Message{"err.prefix", "error", "错误"},
    Message{"err.required", "a required option or argument is missing", "缺少必需的选项或参数"},
    Message{"err.value", "an option has an invalid value", "某个选项的取值无效"},
    Message{"err.extras", "unexpected extra arguments", "多余的参数"},
    Message{"err.other", "the command line is not valid", "命令行无效"},
    Message{"err.see_help", "run with --help for the options", "使用 --help 查看可用选项"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

void localize(CLI::App& app) {
  app.set_help_flag("-h,--help", i18n::tr(M("help")));
  auto fmt = app.get_formatter();
  fmt->label("Usage", i18n::tr(M("label.usage")));
  fmt->label("OPTIONS", i18n::tr(M("label.options")));
  fmt->label("Options", i18n::tr(M("label.options_title")));
  fmt->label("Positionals", i18n::tr(M("label.positionals")));
  fmt->label("Subcommands", i18n::tr(M("label.subcommands")));
  fmt->label("SUBCOMMAND", i18n::tr(M("label.subcommand")));
  fmt->label("REQUIRED", i18n::tr(M("label.required")));
  fmt->label("Needs", i18n::tr(M("label.needs")));
  fmt->label("Excludes", i18n::tr(M("label.excludes")));
  app.option_defaults()->group(i18n::tr(M("label.options_title")));
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
  std::cerr << i18n::tr(M("err.prefix")) << ": " << i18n::tr(*what) << " (" << e.what() << ")\n"
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
