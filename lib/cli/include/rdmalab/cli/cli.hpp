// Command-line conventions shared by every rdmalab program (CLI11 based):
// --help and its section titles in the user's language, a --lang option, and
// usage errors reported in the user's language with exit status 2.
//
//   int main(int argc, char** argv) {
//     rdmalab::i18n::init_from_args(argc, argv);   // before building the app
//     CLI::App app{...};
//     rdmalab::cli::localize(app);
//     ... options ...
//     try { app.parse(argc, argv); } catch (const CLI::ParseError& e) {
//       return rdmalab::cli::exit_for(app, e);
//     }
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::cli {

/// Exit statuses common to all tools.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the operation ran and failed (or found errors)
inline constexpr int kExitUsage = 2;    // wrong command line
inline constexpr int kExitInput = 3;    // an input file could not be read

/// The help formatter of every rdmalab program: CLI11's layout with every
/// word it adds (section titles, value types such as TEXT or UINT, REQUIRED,
/// Needs/Excludes) and the colons after titles in the user's language.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override;
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;

  /// CLI11's type name of an option ("UINT:POSITIVE", "TEXT:{en,zh}") in
  /// the current language; value lists in braces are kept.
  [[nodiscard]] static std::string type_name(std::string_view cli11);

 private:
  /// The options sections, one per title (CLI11's make_groups is not
  /// virtual, so make_help calls this instead).
  [[nodiscard]] std::string option_sections(const CLI::App* app, CLI::AppFormatMode mode) const;
  /// "title:" with the colon of the current language.
  [[nodiscard]] static std::string titled(std::string_view title);
  /// Columns a UTF-8 text takes in a terminal (CJK characters: two).
  [[nodiscard]] static std::size_t display_width(std::string_view s);
  /// "  left<padding>right", aligned in terminal columns.
  [[nodiscard]] std::string two_columns(const std::string& left, const std::string& right) const;
};

/// Installs HelpFormatter, translates the help flag and the section labels,
/// puts every option in one localised group, and adds `--lang en|zh`
/// (its value was already applied by i18n::init_from_args). Applies to
/// subcommands created afterwards too.
void localize(CLI::App& app);

/// Prints a parse error (or the help text for --help) in the user's language
/// and returns the exit status: 0 for --help, kExitUsage otherwise.
[[nodiscard]] int exit_for(const CLI::App& app, const CLI::ParseError& e);

/// True when colour may be used on this stream (a terminal, NO_COLOR unset,
/// TERM not "dumb").
[[nodiscard]] bool use_colour(int fd) noexcept;

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::cli
