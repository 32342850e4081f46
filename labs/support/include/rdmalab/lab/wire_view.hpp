// "What happened on the wire": a lab's capture, decoded and analysed by the
// same library rdmapcap uses, shown as a ladder with explanations.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/event.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmalab/lab/narrator.hpp"

namespace rdmalab::lab {

/// A capture, decoded and analysed: what the labs verify on the wire.
struct WireFacts {
  std::uint64_t packets = 0;                     // RoCE packets with a BTH
  std::map<std::string, std::uint64_t> opcodes;  // "RC SEND Only" -> count
  std::map<std::string, std::uint64_t> events;   // event name -> count
  bool icrc_all_ok = true;
  bool readable = false;
  /// Every frame of the capture in capture order, decoded and analysed (each
  /// with its own events). Their payload spans point into `bytes`.
  std::vector<dissect::PacketRecord> records;
  /// The analyser's end-of-capture conclusions.
  std::vector<dissect::Event> end_of_capture;
  /// The captured bytes of each record.
  std::vector<std::vector<std::uint8_t>> bytes;
  /// The two ends of each conversation the analyser found (id 1 first).
  std::vector<std::pair<dissect::Endpoint, dissect::Endpoint>> conversations;

  /// The records `packets` counts: RoCE packets whose BTH was decoded.
  [[nodiscard]] std::vector<const dissect::PacketRecord*> roce() const;

  WireFacts() = default;
  WireFacts(WireFacts&&) noexcept = default;
  WireFacts& operator=(WireFacts&&) noexcept = default;
  // A copy's records would point into the original's bytes.
  WireFacts(const WireFacts&) = delete;
  WireFacts& operator=(const WireFacts&) = delete;
};

/// Reads and analyses a capture without narrating. Throws
/// capture::CaptureError when it cannot be read.
[[nodiscard]] WireFacts read_wire(const std::string& pcap_path);

/// Reads the capture, prints the ladder and the analyser's explanations (when
/// narrating), records the facts in the --json result under "wire", and
/// returns them so the lab can verify what went on the wire.
WireFacts show_wire(Narrator& n, const std::string& pcap_path);

/// For real devices: how to capture the lab's traffic, in the user's language.
void explain_capture_on_verbs(Narrator& n);

/// The end of every lab: on the simulator, closes the capture, shows the
/// wire and checks that every ICRC on it is correct, returning the facts
/// (the decoded records too) for the lab's own checks, so that no lab reads
/// its capture again; on real verbs, explains how to capture and returns
/// nothing.
[[nodiscard]] std::optional<WireFacts> finish_wire(Narrator& n, const struct Environment& env,
                                                   const std::string& pcap_path);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> wire_view_catalog() noexcept;

}  // namespace rdmalab::lab
