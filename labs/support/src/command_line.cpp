#include "rdmalab/lab/command_line.hpp"

#include <CLI/CLI.hpp>

namespace rdmalab::lab {

Option* Option::check(const Range& r) {
  switch (r.kind_) {
    case Range::Kind::Int:
      o_->check(CLI::Range(static_cast<int>(r.lo_), static_cast<int>(r.hi_)));
      break;
    case Range::Kind::Unsigned:
      o_->check(CLI::Range(static_cast<unsigned>(r.lo_), static_cast<unsigned>(r.hi_)));
      break;
    case Range::Kind::Int64: o_->check(CLI::Range(r.lo_, r.hi_)); break;
    case Range::Kind::Double: o_->check(CLI::Range(r.lo_real_, r.hi_real_)); break;
  }
  return this;
}

Option* Option::check(const IsMember& m) {
  o_->check(CLI::IsMember(m.words_));
  return this;
}

Option* Option::capture_default_str() {
  o_->capture_default_str();
  return this;
}

Option* Option::delimiter(char c) {
  o_->delimiter(c);
  return this;
}

Option* CommandLine::keep(CLI::Option* o) {
  return &made_.emplace_back(o);
}

template <class T>
Option* CommandLine::add_option(const std::string& names, T& variable,
                                const std::string& description) {
  return keep(app_->add_option(names, variable, description));
}

Option* CommandLine::add_flag(const std::string& names, bool& variable,
                              const std::string& description) {
  return keep(app_->add_flag(names, variable, description));
}

// The types of the labs' own options.
template Option* CommandLine::add_option(const std::string&, int&, const std::string&);
template Option* CommandLine::add_option(const std::string&, std::uint32_t&, const std::string&);
template Option* CommandLine::add_option(const std::string&, std::int64_t&, const std::string&);
template Option* CommandLine::add_option(const std::string&, std::uint64_t&, const std::string&);
template Option* CommandLine::add_option(const std::string&, double&, const std::string&);
template Option* CommandLine::add_option(const std::string&, std::string&, const std::string&);
template Option* CommandLine::add_option(const std::string&, std::vector<std::uint32_t>&,
                                         const std::string&);

}  // namespace rdmalab::lab
