// rdmalab: the project's front door. `rdmalab doctor` checks this machine for
// RDMA and explains what it finds.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "messages.hpp"
#include "rdmalab/cli/cli.hpp"
#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/doctor.hpp"

using namespace rdmalab;

namespace {

std::string_view status_mark(verbs::CheckStatus s, bool colour) {
  switch (s) {
    case verbs::CheckStatus::Ok: return colour ? "\033[32m✓\033[0m" : "✓";
    case verbs::CheckStatus::Info: return colour ? "\033[36mi\033[0m" : "i";
    case verbs::CheckStatus::Warn: return colour ? "\033[33m!\033[0m" : "!";
    case verbs::CheckStatus::Fail: return colour ? "\033[31m✗\033[0m" : "✗";
  }
  return "?";
}

std::string_view status_name(verbs::CheckStatus s) {
  switch (s) {
    case verbs::CheckStatus::Ok: return "ok";
    case verbs::CheckStatus::Info: return "info";
    case verbs::CheckStatus::Warn: return "warn";
    case verbs::CheckStatus::Fail: return "fail";
  }
  return "?";
}

int doctor(const std::string& backend_name, std::optional<int> gid_index, bool json) {
  verbs::DoctorOptions opt;
  opt.backend = verbs::parse_backend_choice(backend_name).value_or(verbs::BackendChoice::Auto);
  opt.gid_index = gid_index;
  auto backend = verbs::make_verbs_backend();
  const auto inputs = verbs::probe_system(*backend, gid_index);
  const auto checks = verbs::run_doctor(inputs, opt);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : checks)
      out.push_back({{"id", c.id},
                     {"status", status_name(c.status)},
                     {"title", c.title},
                     {"details", c.details},
                     {"fix", c.fix}});
    std::cout << nlohmann::json{{"checks", out}, {"exit", verbs::doctor_exit_code(checks)}}.dump(2)
              << "\n";
  } else {
    const bool colour = cli::use_colour(1);
    for (const auto& c : checks) {
      std::cout << status_mark(c.status, colour) << " " << c.title << "\n";
      for (const auto& d : c.details) std::cout << "    " << d << "\n";
      if (!c.fix.empty()) std::cout << "    → " << c.fix << "\n";
    }
  }
  return verbs::doctor_exit_code(checks);
}

}  // namespace

int main(int argc, char** argv) {
  i18n::init_from_args(argc, argv);
  CLI::App app{i18n::tr(tool::M("rdmalab.desc")), "rdmalab"};
  cli::localize(app);
  app.require_subcommand(1);

  auto* doc = app.add_subcommand("doctor", i18n::tr(tool::M("doctor.desc")));
  cli::localize(*doc);
  std::string backend = "auto";
  std::optional<int> gid_index;
  bool json = false;
  doc->add_option("--backend", backend, i18n::tr(tool::M("opt.backend")))
      ->check(CLI::IsMember({"auto", "verbs", "sim"}));
  doc->add_option("-x,--gid-index", gid_index, i18n::tr(tool::M("opt.gid")))
      ->check(CLI::Range(0, 255));
  doc->add_flag("--json", json, i18n::tr(tool::M("opt.json")));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::exit_for(app, e);
  }
  if (*doc) return doctor(backend, gid_index, json);
  return cli::kExitUsage;
}
