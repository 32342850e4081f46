// "What happened on the wire": a lab's capture, decoded and analysed by the
// same library rdmapcap uses, shown as a ladder with explanations.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/lab/narrator.hpp"

namespace rdmalab::lab {

struct WireFacts {
  std::uint64_t packets = 0;
  std::map<std::string, std::uint64_t> opcodes;  // "RC SEND Only" -> count
  std::map<std::string, std::uint64_t> events;   // event name -> count
  bool icrc_all_ok = true;
  bool readable = false;
};

/// Reads the capture, prints the ladder and the analyser's explanations (when
/// narrating), records the facts in the --json result under "wire", and
/// returns them so the lab can verify what went on the wire.
WireFacts show_wire(Narrator& n, const std::string& pcap_path);

/// For real devices: how to capture the lab's traffic, in the user's language.
void explain_capture_on_verbs(Narrator& n);

/// The end of every lab: on the simulator, closes the capture, shows the
/// wire and checks that every ICRC on it is correct, returning the facts for
/// the lab's own checks; on real verbs, explains how to capture and returns
/// nothing.
[[nodiscard]] std::optional<WireFacts> finish_wire(Narrator& n, const struct Environment& env,
                                                   const std::string& pcap_path);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> wire_view_catalog() noexcept;

}  // namespace rdmalab::lab
