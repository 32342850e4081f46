// Running a command from a test and reading tshark's field output: shared
// by the test programs that compare what they wrote with what tshark reads.
#pragma once

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace testsupport {

/// What a shell command prints on its standard output (for running tshark).
inline std::string run_command(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

/// tshark -T fields output: one row per line, one cell per tab-separated field.
inline std::vector<std::vector<std::string>> split_lines(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::size_t at = 0;
    for (std::size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1)
      cells.push_back(line.substr(at, tab - at));
    cells.push_back(line.substr(at));
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace testsupport
