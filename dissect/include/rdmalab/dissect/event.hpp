// Analysis events: what the analyser concluded about a packet.
//
// An Event is a small value (no strings, no allocation): a type, the frame it
// is attached to, the frames it relates to, PSNs and a measured time. Its
// one-line explanation is produced on demand by describe(), in the current
// language, so analysing a million packets formats nothing that is not shown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::dissect {

/// What kind of thing happened. Everything else about a type (its JSON name,
/// severity, Wireshark expert item and texts) is its row of event_table().
enum class EventType : std::uint8_t {
  // Matching: a response paired with what it answers.
  AckMatched,     // an ACK acknowledges PSNs psn_begin..psn (coalesced: count messages)
  ReadMatched,    // the last READ response packet of the READ request in related_frame
  AtomicMatched,  // an ATOMIC ACK for the CmpSwap/FetchAdd in related_frame (value = original)
  // Loss and recovery.
  PsnGap,          // requests skipped PSNs psn_begin..psn-1 on the wire
  OutOfOrder,      // first arrival of a PSN older than the newest seen (reordering)
  NakSequence,     // NAK PSN sequence error: the responder expected PSN psn
  RnrNak,          // RNR NAK: receiver not ready, timer code in `code`
  NakFatal,        // NAK invalid request / remote access / remote operational (code)
  GoBackN,         // first resend after a NAK (related_frame), `delta_ns` after it
  RnrRetry,        // first resend after an RNR NAK, `delta_ns` after it (timer in `code`)
  Timeout,         // resend with no NAK after `delta_ns` of silence: timeout `code`, retry `count`
  Retransmission,  // this packet resends PSN psn first sent in related_frame; code 1: a resend
                   // of the go-back-N round of the NAK in frame `value`, overtaken on the way
  DuplicateRequest,   // a resent PSN the responder had already acknowledged
  DuplicateAck,       // an ACK repeating the previous ACK (same PSN and MSN)
  UnmatchedResponse,  // a response to requests the capture does not hold
  RetryExhausted,     // end of capture: still unacknowledged after `count` timeout retries
  StillRetrying,      // end of capture: `count` timeout retries so far, the next one not yet due
  Unacknowledged,     // end of capture: requests from psn_begin never acknowledged
  Cnp,                // RoCEv2 congestion notification packet
  EcnMarked,          // the IP ECN field says Congestion Experienced
  // Connection set-up (rdma_cm): CM MADs on QP 1.
  CmHandshake,  // a CM REQ/REP/RTU/... (code = attribute ID's low byte)
  CmLinked,     // first request of a connection a CM handshake announced
  // Congestion and flow control. End-of-capture findings name the channel's
  // first CE-marked request or first CNP.
  CeWithoutCnp,   // `count` CE-marked requests and no CNP to QP `value`
  CnpPaced,       // CNPs to QP psn every `delta_ns` (median; smallest `value` ns), `count` CE marks
  CnpNoSlowdown,  // after `count` CNPs the rate did not fall: value = before Mb/s << 32 | after
  PfcPause,       // a pause frame from MAC `value`: vector `code`, largest time `count` quanta
                  // = `delta_ns` at `psn` Mb/s; psn_begin = MAC Control opcode
  PfcStorm,       // priority `code` (8: the link) from MAC `value` paused `delta_ns` > `psn` µs;
                  // count = 1: still paused at the end of the capture
  // Packet-level problems.
  LengthMismatch,  // a message's payload differs from its RETH DMA length (value = bytes)
  IcrcMismatch,    // the ICRC does not match the packet
  VcrcMismatch,    // native InfiniBand: the VCRC (one link's CRC) does not match
  Malformed,       // the packet could not be decoded (see the record's error)
  UnknownOpcode,   // BTH opcode not in the table (keep it last: kEventTypes)
};
inline constexpr std::size_t kEventTypes = static_cast<std::size_t>(EventType::UnknownOpcode) + 1;

/// How much an event deserves a look. Shown as rdmapcap's "[warning]", in
/// JSON as "severity", and in Wireshark as the expert item's severity
/// (Notice = PI_NOTE, Warning = PI_WARN, Error = PI_ERROR).
enum class Severity : std::uint8_t { Info, Notice, Warning, Error };

/// The Wireshark expert-info group an event is filed under (PI_SEQUENCE ...);
/// None: the event is shown in the packet tree only, not as an expert item
/// (matched ACKs and READ responses are the normal case and would drown the
/// Expert Information dialog).
enum class ExpertGroup : std::uint8_t {
  None,
  Sequence,
  ResponseCode,
  Protocol,
  Checksum,
  Malformed
};

/// Every fact about one event type, in one row.
struct EventInfo {
  EventType type;
  /// Stable snake_case name: JSON "type", and the Wireshark expert filter
  /// "rdmalab.expert.<name>".
  std::string_view name;
  Severity severity;
  ExpertGroup expert;
  /// The expert item's short summary (Wireshark's Expert Information dialog);
  /// null when `expert` is None.
  const i18n::Message* summary;
  /// The sentence describe() explains the event with (the variants it picks
  /// for some events are listed in event.cpp beside it).
  const i18n::Message* text;
};

/// One row per EventType, in enumerator order (checked at compile time).
[[nodiscard]] std::span<const EventInfo> event_table() noexcept;
[[nodiscard]] const EventInfo& event_info(EventType t) noexcept;

/// Why a retransmission happened. Unknown: the capture holds neither the NAK
/// nor the silence that caused it (e.g. a capture that starts mid-recovery).
enum class Cause : std::uint8_t { Unknown, Nak, Rnr, Timeout };
inline constexpr std::size_t kCauses = 4;
/// Stable name of a cause: "unknown", "nak", "rnr", "timeout" (JSON "cause",
/// Wireshark's rdmalab.retrans_cause values).
[[nodiscard]] std::string_view cause_name(Cause c) noexcept;

struct Event {
  EventType type = EventType::AckMatched;
  std::uint64_t frame = 0;          // the frame this event is attached to
  std::uint64_t related_frame = 0;  // 0 when none: original, request, NAK ...
  std::uint32_t psn = 0;
  std::uint32_t psn_begin = 0;   // first PSN of a range (ranges end at psn)
  std::int64_t delta_ns = -1;    // measured interval (RTT, gap, wait); -1 unknown
  std::uint32_t count = 0;       // messages, packets or retries
  std::uint8_t code = 0;         // timeout exponent, NAK code, RNR timer code
  Cause cause = Cause::Unknown;  // for Retransmission
  std::uint64_t value = 0;       // atomic original value, bytes ...
  /// The conversation an end-of-capture event concerns (Analyzer::finish);
  /// 0 on per-packet events, whose record carries the conversation.
  std::uint32_t conversation = 0;
};

[[nodiscard]] Severity severity(EventType t) noexcept;
/// Stable snake_case name used in JSON ("go_back_n", "timeout", ...).
[[nodiscard]] std::string_view event_name(EventType t) noexcept;
/// Stable name of a severity ("info", "notice", "warning", "error").
[[nodiscard]] std::string_view severity_name(Severity s) noexcept;
/// The severity as shown to people ("warning", "警告"), in the current language.
[[nodiscard]] std::string severity_label(Severity s);
/// One-line explanation in the current language.
[[nodiscard]] std::string describe(const Event& e);

/// The dissect module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::dissect
