#include "rdmalab/lab/run.hpp"

#include <iostream>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/cli/cli.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/oob.hpp"

namespace rdmalab::lab {

int run(int argc, char** argv, std::string_view lab_id, std::string_view program,
        const i18n::Message& desc, CommonOptions& common,
        const std::function<void(CommandLine&)>& add_options,
        const std::function<void(Narrator&)>& body) {
  i18n::init_from_args(argc, argv);
  CLI::App app{i18n::tr(desc), std::string(program)};
  cli::localize(app);
  add_common_options(app, common, lab_id);
  CommandLine own(app);
  add_options(own);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::exit_for(app, e);
  }
  Narrator n(common, std::string(lab_id));
  try {
    body(n);
    return n.finish();
  } catch (const verbs::VerbsError& e) {
    std::cerr << e.report() << "\n";
  } catch (const verbs::UsageError& e) {
    std::cerr << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const capture::CaptureError& e) {
    std::cerr << e.what() << "\n";
  } catch (const verbs::OobError& e) {
    std::cerr << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
  }
  return cli::kExitFailure;
}

}  // namespace rdmalab::lab
