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

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::cli {

/// Exit statuses common to all tools.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the operation ran and failed (or found errors)
inline constexpr int kExitUsage = 2;    // wrong command line
inline constexpr int kExitInput = 3;    // an input file could not be read

/// Translates the help flag, the section labels, and adds `--lang en|zh`
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
