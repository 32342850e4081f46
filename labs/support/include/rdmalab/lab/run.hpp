// The frame of every lab's main(): language, command line, narration, and
// errors turned into a clear message and an exit status.
#pragma once

#include <functional>

#include "rdmalab/lab/command_line.hpp"
#include "rdmalab/lab/narrator.hpp"

namespace rdmalab::lab {

/// Runs a lab: sets the language from --lang or the environment, builds the
/// CLI11 app (description `desc`, common options, then `add_options` for the
/// lab's own, through lab::CommandLine), parses, and calls `body`. Exit status: the Narrator's
/// verdict (0 all checks passed, 1 not), 2 for a wrong command line, 1 for a verbs or other error
/// (reported in the user's language).
int run(int argc, char** argv, std::string_view lab_id, std::string_view program,
        const i18n::Message& desc, CommonOptions& common,
        const std::function<void(CommandLine&)>& add_options,
        const std::function<void(Narrator&)>& body);

}  // namespace rdmalab::lab
