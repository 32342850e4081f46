// Running a program from a test: captured output and exit status, plain or
// under a pseudo-terminal that answers prompts.
#pragma once

#include <string>
#include <vector>

struct RunResult {
  int status = -1;  // exit status, or -1 when it did not exit normally
  std::string out;  // standard output (and standard error, merged, under a pty)
};

/// Runs argv[0] with argv, environment LANG/LC_ALL/LANGUAGE cleared and
/// NO_COLOR set; standard output captured, standard error discarded.
RunResult run(const std::vector<std::string>& argv);

/// Runs under a pseudo-terminal, sending "\n" whenever the output since the
/// last answer contains `prompt`; gives up after `timeout_s` seconds.
RunResult run_pty(const std::vector<std::string>& argv, const std::string& prompt, int timeout_s);

/// Replaces what differs between runs (heap addresses) with fixed text.
std::string mask_addresses(const std::string& s);
