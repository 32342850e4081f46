// What every lab shares: the common options (perftest/rc_pingpong style),
// the narration of each step in the user's language, --step pauses, --quiet
// and --json output, and the verified result that decides the exit status.
//
// A lab's main.cpp stays linear: it calls the verbs itself, and tells the
// Narrator what it did and why.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/verbs/backend.hpp"

// CLI11's App, forward-declared: CLI/CLI.hpp defines its validators as
// constants in every file that includes it, five seconds of code generation
// each at -O2, so only the files that add options include it.
namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's name
class App;
}  // namespace CLI

namespace rdmalab::lab {

class CommandLine;

/// Options every lab has, with the names users know from perftest and
/// ibv_rc_pingpong. Each lab adds its own in its own struct.
struct CommonOptions {
  std::string backend = "auto";         // --backend auto|verbs|sim
  std::string device;                   // -d, --dev (sim: sim0/sim1 are the two hosts)
  std::string peer_device;              // --peer-dev: one process, the responder on this device
  int ib_port = 1;                      // -i, --ib-port
  std::optional<int> gid_index;         // -x, -g, --gid-index
  bool step = false;                    // --step
  bool quiet = false;                   // --quiet
  bool json = false;                    // --json
  bool ascii = false;                   // --ascii: the wire view's ladder in ASCII only
  std::string capture;                  // --capture (simulator), default ./captures/labNN.pcap
  std::uint64_t seed = 1;               // --seed (simulator)
  std::optional<int> port_mtu;          // --port-mtu (simulator): every host's port MTU
  std::string link_layer = "roce";      // --link-layer roce|ib (simulator)
  std::optional<std::uint16_t> listen;  // --listen PORT: the passive side of two processes
  std::string connect;                  // --connect HOST:PORT: the active side
};

/// Adds the common options to a lab's CLI11 app (after cli::localize).
void add_common_options(CLI::App& app, CommonOptions& o, std::string_view lab_id);

/// Adds -m/--mtu (256, 512, 1024, 2048 or 4096), as perftest spells it.
void add_mtu_option(CommandLine& app, int& mtu);

class Narrator {
 public:
  Narrator(const CommonOptions& o, std::string lab_id);

  /// A numbered step: a heading; with --step, waits for Enter first.
  void step(std::string_view title);
  /// A verbs call and what came back: "ibv_reg_mr(...) -> lkey 0x1234".
  void call(std::string_view verb_and_args, std::string_view result);
  /// The same, made by one side of the lab: "server: ibv_alloc_pd(ctx)".
  void call(std::string_view who, std::string_view verb_and_args, std::string_view result);
  /// A field of a structure being shown (WR, WC, attribute), aligned.
  void field(std::string_view name, std::string_view value, std::string_view why = {});
  /// A sentence of explanation.
  void say(std::string_view text);
  /// Free text block (e.g. a transition printout), indented.
  void block(std::string_view text);
  /// A warning line (always shown, except with --json).
  void warn(std::string_view text);

  /// Records a verified fact under a stable id (for --json and tests) with
  /// its description in the user's language; the lab's exit status is 0 only
  /// when all hold.
  void check(std::string_view id, std::string_view what, bool ok, std::string_view detail = {});
  /// A value in the --json result.
  nlohmann::json& result() noexcept { return result_; }
  [[nodiscard]] bool all_ok() const noexcept { return ok_; }
  [[nodiscard]] bool narrating() const noexcept { return !quiet_ && !json_; }
  /// Draw the ladder with ASCII characters only (--ascii).
  [[nodiscard]] bool ascii() const noexcept { return ascii_; }

  /// Prints the verdict (text or JSON) and returns the exit status.
  [[nodiscard]] int finish();

 private:
  bool quiet_, json_, pause_, ascii_;
  int step_no_ = 0;
  bool ok_ = true;
  std::string lab_id_;
  nlohmann::json result_;
  nlohmann::json checks_ = nlohmann::json::array();
};

/// Formats common values the way the narration shows them.
[[nodiscard]] std::string hex(std::uint64_t v, int width = 0);
[[nodiscard]] std::string gid_string(const ibv_gid& g);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::lab
