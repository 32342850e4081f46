// A lab's own command-line options, added through this interface instead of
// CLI11's.
//
// CLI11 is a header-only library: every file that adds options with it
// compiles CLI11's option, validator and conversion functions again, most of
// a lab's compile time (lab 02's main.cpp: 114 KB of CLI11's code against
// 12 KB of its own). The labs add options in a handful of ways only (a
// value with a range or a set of allowed words, a flag, a list), so they
// say that here, with the same names as in CLI11, and command_line.cpp, compiled
// once, says it to CLI11: the help text, the checks and their messages are
// CLI11's own.
//
//   app.add_option("-s,--size", o.size, tr(M("opt.size")))
//       ->check(lab::Range(1u, 1u << 24))
//       ->capture_default_str();
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's name
class App;
class Option;
}  // namespace CLI

namespace rdmalab::lab {

/// CLI::Range(lo, hi) of the same type: the help says "UINT in [1 - 64]"
/// for unsigned bounds, "INT in ..." for int, "FLOAT in ..." for double.
class Range {
 public:
  Range(int lo, int hi) noexcept : kind_(Kind::Int), lo_(lo), hi_(hi) {}
  Range(unsigned lo, unsigned hi) noexcept : kind_(Kind::Unsigned), lo_(lo), hi_(hi) {}
  Range(std::int64_t lo, std::int64_t hi) noexcept : kind_(Kind::Int64), lo_(lo), hi_(hi) {}
  Range(double lo, double hi) noexcept : kind_(Kind::Double), lo_real_(lo), hi_real_(hi) {}

 private:
  friend class Option;
  enum class Kind : std::uint8_t { Int, Unsigned, Int64, Double };
  Kind kind_;
  std::int64_t lo_ = 0, hi_ = 0;
  double lo_real_ = 0, hi_real_ = 0;
};

/// CLI::IsMember({...}): the value must be one of these words.
class IsMember {
 public:
  IsMember(std::initializer_list<const char*> words) : words_(words.begin(), words.end()) {}

 private:
  friend class Option;
  std::vector<std::string> words_;
};

/// One option just added, for the calls CLI11's Option has of the same name.
class Option {
 public:
  explicit Option(CLI::Option* o) noexcept : o_(o) {}
  Option* check(const Range& r);
  Option* check(const IsMember& m);
  /// The help shows the variable's value before parsing as the default.
  Option* capture_default_str();
  /// A list option's values may be given as one argument, separated by `c`.
  Option* delimiter(char c);

 private:
  CLI::Option* o_;
};

/// A lab's CLI11 app, for its own options (lab::run makes it).
class CommandLine {
 public:
  explicit CommandLine(CLI::App& app) noexcept : app_(&app) {}

  /// An option with a value, stored in `variable` (the types the labs use
  /// are instantiated in command_line.cpp).
  template <class T>
  Option* add_option(const std::string& names, T& variable, const std::string& description);
  /// A flag: `variable` becomes true when it is given.
  Option* add_flag(const std::string& names, bool& variable, const std::string& description);

  /// The CLI11 app itself, for the support library's options (compiled
  /// with CLI11 once, in its own files).
  [[nodiscard]] CLI::App& cli() const noexcept { return *app_; }

 private:
  Option* keep(CLI::Option* o);
  CLI::App* app_;
  std::deque<Option> made_;  // the handles returned, at stable addresses
};

}  // namespace rdmalab::lab
