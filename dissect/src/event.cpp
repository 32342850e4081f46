#include "rdmalab/dissect/event.hpp"

#include <array>

#include "catalog.hpp"
#include "format.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/describe.hpp"
#include "rdmalab/wire/pause.hpp"
#include "rdmalab/wire/timers.hpp"

namespace rdmalab::dissect {

using detail::M;

std::span<const i18n::Message> catalog() noexcept {
  return detail::kCatalog;
}

namespace {

using G = ExpertGroup;

// retry_cnt and rnr_retry are 3-bit fields (IBTA 9.7.6.1.3, 9.7.5.2.8; the
// CM REQ carries them in 3 bits): no requester is limited to more than 7.
constexpr std::uint32_t kMaxRetryCount = 7;

std::string mac_string(std::uint64_t v) {
  wire::MacAddress m{};
  for (std::size_t i = 0; i < m.size(); ++i)
    m[m.size() - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  return wire::mac_to_string(m);
}

/// "3" or "3, 4" for a priority-enable vector.
std::string priority_list(std::uint8_t vector) {
  std::string s;
  for (unsigned p = 0; p < 8; ++p) {
    if (((static_cast<unsigned>(vector) >> p) & 1U) == 0) continue;
    if (!s.empty()) s += ", ";
    s += static_cast<char>('0' + p);
  }
  return s;
}
using S = Severity;
using T = EventType;

// One row per event type, in enumerator order. Severities, on purpose:
// - Error: the operation failed or the bytes are wrong (fatal NAK, retries
//   exhausted, bad ICRC, undecodable packet).
// - Warning: something cost time or was lost and recovered: a resend and
//   what caused it, a PSN gap, an RNR NAK and the resend after it. An RNR NAK
//   is flow control, as TCP's zero window is (which Wireshark also files as
//   a warning): the requester sits out the whole RNR timer, and when
//   rnr_retry runs out the QP fails with IBV_WC_RNR_RETRY_EXC_ERR. Programs
//   that pre-post their receives never see one, so it points at a bug.
// - Notice: unusual but harmless here (reordering tolerated or not,
//   duplicates, CNPs and ECN marks, a response whose request is not in the
//   capture).
// - Info: the normal case (matched responses, CM handshakes).
constexpr std::array<EventInfo, kEventTypes> kEvents{{
    {T::AckMatched, "ack", S::Info, G::None, nullptr, &M("ev.ack")},
    {T::ReadMatched, "read_response", S::Info, G::None, nullptr, &M("ev.read")},
    {T::AtomicMatched, "atomic_ack", S::Info, G::None, nullptr, &M("ev.atomic")},
    {T::PsnGap, "psn_gap", S::Warning, G::Sequence, &M("ex.psn_gap"), &M("ev.gap")},
    {T::OutOfOrder, "out_of_order", S::Notice, G::Sequence, &M("ex.out_of_order"), &M("ev.late")},
    {T::NakSequence, "nak_psn_sequence", S::Warning, G::Sequence, &M("ex.nak_psn_sequence"),
     &M("ev.nak_seq")},
    {T::RnrNak, "rnr_nak", S::Warning, G::Sequence, &M("ex.rnr_nak"), &M("ev.rnr")},
    {T::NakFatal, "nak_fatal", S::Error, G::ResponseCode, &M("ex.nak_fatal"), &M("ev.nak_fatal")},
    {T::GoBackN, "go_back_n", S::Warning, G::Sequence, &M("ex.go_back_n"), &M("ev.go_back_n")},
    {T::RnrRetry, "rnr_retry", S::Warning, G::Sequence, &M("ex.rnr_retry"), &M("ev.rnr_retry")},
    {T::Timeout, "timeout", S::Warning, G::Sequence, &M("ex.timeout"), &M("ev.timeout")},
    {T::Retransmission, "retransmission", S::Warning, G::Sequence, &M("ex.retransmission"),
     &M("ev.retx")},
    {T::DuplicateRequest, "duplicate_request", S::Notice, G::Sequence, &M("ex.duplicate_request"),
     &M("ev.dup_req")},
    {T::DuplicateAck, "duplicate_ack", S::Notice, G::Sequence, &M("ex.duplicate_ack"),
     &M("ev.dup_ack")},
    {T::UnmatchedResponse, "unmatched_response", S::Notice, G::Sequence,
     &M("ex.unmatched_response"), &M("ev.unmatched")},
    {T::RetryExhausted, "retry_exhausted", S::Error, G::Sequence, &M("ex.retry_exhausted"),
     &M("ev.retry_exhausted")},
    {T::StillRetrying, "still_retrying", S::Warning, G::Sequence, &M("ex.still_retrying"),
     &M("ev.still_retrying")},
    {T::Unacknowledged, "unacknowledged", S::Warning, G::Sequence, &M("ex.unacknowledged"),
     &M("ev.unacked")},
    {T::Cnp, "cnp", S::Notice, G::Protocol, &M("ex.cnp"), &M("ev.cnp")},
    {T::EcnMarked, "ecn_ce", S::Notice, G::Protocol, &M("ex.ecn_ce"), &M("ev.ecn")},
    {T::CmHandshake, "cm", S::Info, G::None, nullptr, &M("cm.other")},
    {T::CmLinked, "cm_linked", S::Info, G::None, nullptr, &M("cm.linked")},
    {T::CeWithoutCnp, "ce_without_cnp", S::Warning, G::Protocol, &M("ex.ce_without_cnp"),
     &M("ev.ce_without_cnp")},
    {T::CnpPaced, "cnp_paced", S::Notice, G::Protocol, &M("ex.cnp_paced"), &M("ev.cnp_paced")},
    {T::CnpNoSlowdown, "cnp_no_slowdown", S::Warning, G::Protocol, &M("ex.cnp_no_slowdown"),
     &M("ev.cnp_no_slowdown")},
    {T::PfcPause, "pfc_pause", S::Notice, G::Sequence, &M("ex.pfc_pause"), &M("ev.pfc_pause")},
    {T::PfcStorm, "pfc_storm", S::Error, G::Sequence, &M("ex.pfc_storm"), &M("ev.pfc_storm")},
    {T::LengthMismatch, "length_mismatch", S::Warning, G::Protocol, &M("ex.length_mismatch"),
     &M("ev.length")},
    {T::IcrcMismatch, "icrc_mismatch", S::Error, G::Checksum, &M("ex.icrc_mismatch"),
     &M("ev.icrc")},
    {T::VcrcMismatch, "vcrc_mismatch", S::Error, G::Checksum, &M("ex.vcrc_mismatch"),
     &M("ev.vcrc")},
    {T::Malformed, "malformed", S::Error, G::Malformed, &M("ex.malformed"), &M("ev.malformed")},
    {T::UnknownOpcode, "unknown_opcode", S::Error, G::Malformed, &M("ex.unknown_opcode"),
     &M("ev.unknown_opcode")},
}};

// Checked at compile time: the rows' order and names. (Whether each row has
// its texts is a pointer comparison, which GCC cannot evaluate at compile
// time under UBSan; dissect_analyzer_test checks it.)
constexpr bool table_complete() {
  for (std::size_t i = 0; i < kEvents.size(); ++i) {
    const EventInfo& row = kEvents[i];
    if (static_cast<std::size_t>(row.type) != i || row.name.empty()) return false;
  }
  return true;
}
static_assert(table_complete(),
              "kEvents: one row per EventType in enumerator order, each with a name");

constexpr std::array<std::string_view, kCauses> kCauseNames{"unknown", "nak", "rnr", "timeout"};
static_assert(static_cast<std::size_t>(Cause::Timeout) + 1 == kCauses);

}  // namespace

std::span<const EventInfo> event_table() noexcept {
  return kEvents;
}

const EventInfo& event_info(EventType t) noexcept {
  return kEvents[static_cast<std::size_t>(t)];
}

Severity severity(EventType t) noexcept {
  return event_info(t).severity;
}

std::string_view event_name(EventType t) noexcept {
  return event_info(t).name;
}

std::string_view cause_name(Cause c) noexcept {
  return kCauseNames[static_cast<std::size_t>(c)];
}

std::string_view severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Notice: return "notice";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "info";
}

std::string severity_label(Severity s) {
  switch (s) {
    case Severity::Info: return i18n::tr(M("sev.info"));
    case Severity::Notice: return i18n::tr(M("sev.notice"));
    case Severity::Warning: return i18n::tr(M("sev.warning"));
    case Severity::Error: return i18n::tr(M("sev.error"));
  }
  return {};
}

std::string describe(const Event& e) {
  using detail::format_duration;
  const i18n::Message& text = *event_info(e.type).text;
  switch (e.type) {
    case EventType::AckMatched: {
      if (e.related_frame == 0) return i18n::tr(M("ev.ack_nothing"), e.psn);
      std::string s = i18n::tr(text, e.psn_begin, e.psn, e.count, e.related_frame);
      if (e.delta_ns >= 0) s += i18n::tr(M("ev.ack_rtt"), format_duration(e.delta_ns));
      return s;
    }
    case EventType::ReadMatched:
      return i18n::tr(text, e.related_frame, e.value, format_duration(e.delta_ns));
    case EventType::AtomicMatched:
      return i18n::tr(text, e.related_frame, e.value, format_duration(e.delta_ns),
                      i18n::tr(e.code ? M("word.cmpswap") : M("word.fetchadd")));
    case EventType::PsnGap: return i18n::tr(text, e.psn_begin, e.psn, e.count);
    case EventType::OutOfOrder: return i18n::tr(e.code ? M("ev.late_tolerated") : text, e.psn);
    case EventType::NakSequence: return i18n::tr(text, e.psn);
    case EventType::RnrNak:
      return i18n::tr(text, e.psn, wire::rnr_timer_ms(e.code).value_or(0), e.code);
    case EventType::NakFatal: return i18n::tr(text, e.psn, wire::nak_code_name(e.code));
    case EventType::GoBackN:
      return i18n::tr(text, e.psn, format_duration(e.delta_ns), e.related_frame);
    case EventType::RnrRetry:
      return i18n::tr(text, e.psn, format_duration(e.delta_ns), e.related_frame,
                      wire::rnr_timer_ms(e.code).value_or(0));
    case EventType::Timeout:
      return i18n::tr(text, e.psn, format_duration(e.delta_ns), e.code, e.count);
    case EventType::Retransmission:
      if (e.code == 1) return i18n::tr(M("ev.retx_reordered"), e.psn, e.value);
      if (e.related_frame == 0) return i18n::tr(M("ev.retx_unknown"), e.psn);
      return i18n::tr(text, e.psn, e.related_frame, format_duration(e.delta_ns));
    case EventType::DuplicateRequest: return i18n::tr(text, e.psn);
    case EventType::DuplicateAck: return i18n::tr(text, e.related_frame);
    case EventType::UnmatchedResponse: return i18n::tr(text);
    case EventType::RetryExhausted:
      // retry_cnt is 3 bits (at most 7): a requester seen stopping after more
      // retries than that did not run out of a retry count.
      if (e.count > kMaxRetryCount) return i18n::tr(M("ev.retry_stopped"), e.psn, e.count);
      return i18n::tr(text, e.psn, e.count);
    case EventType::StillRetrying:
      if (e.count > kMaxRetryCount) return i18n::tr(M("ev.retry_unlimited"), e.psn, e.count);
      return i18n::tr(text, e.psn, e.count);
    case EventType::Unacknowledged: return i18n::tr(text, e.psn_begin, e.psn, e.count);
    case EventType::Cnp: return i18n::tr(text, e.value);
    case EventType::EcnMarked: return i18n::tr(text);
    case EventType::LengthMismatch: return i18n::tr(text, e.value, e.count);
    case EventType::IcrcMismatch:
      return i18n::tr(text, static_cast<std::uint32_t>(e.value),
                      static_cast<std::uint32_t>(e.value >> 32));
    case EventType::VcrcMismatch:
      return i18n::tr(text, static_cast<std::uint16_t>(e.value),
                      static_cast<std::uint16_t>(e.value >> 32));
    case EventType::Malformed: {
      // The decode error travels in the event's fields (see decode_record).
      const wire::DecodeError err{static_cast<wire::ErrorKind>(e.code),
                                  static_cast<wire::Layer>(e.count), e.value, e.psn, e.psn_begin};
      return i18n::tr(text, wire::describe(err));
    }
    case EventType::UnknownOpcode: return i18n::tr(text, e.code);
    case EventType::CmHandshake:
      switch (static_cast<wire::cm::Attr>(e.code)) {
        case wire::cm::Attr::Req:
          return i18n::tr(M("cm.req"), e.psn_begin, e.value, e.psn, e.count);
        case wire::cm::Attr::Rep: return i18n::tr(M("cm.rep"), e.related_frame, e.psn_begin, e.psn);
        case wire::cm::Attr::Rtu: return i18n::tr(M("cm.rtu"));
        case wire::cm::Attr::Rej: {
          const std::string why = e.value == wire::cm::kRejInvalidServiceId
                                      ? i18n::tr(M("cm.rej.8"))
                                  : e.value == wire::cm::kRejConsumer ? i18n::tr(M("cm.rej.28"))
                                                                      : i18n::tr(M("cm.rej.other"));
          return i18n::tr(M("cm.rej"), e.related_frame, e.value, why);
        }
        default: return i18n::tr(text, wire::cm::attr_name(static_cast<wire::cm::Attr>(e.code)));
      }
    case EventType::CmLinked:
      if (e.value == e.psn) return i18n::tr(text, e.related_frame, e.psn);
      return i18n::tr(M("cm.linked_bad"), e.related_frame, e.psn, e.value);
    case EventType::CeWithoutCnp: return i18n::tr(text, e.count, e.value);
    case EventType::CnpPaced:
      return i18n::tr(text, e.psn, format_duration(e.delta_ns),
                      format_duration(static_cast<std::int64_t>(e.value)), e.count);
    case EventType::CnpNoSlowdown:
      return i18n::tr(text, e.count, format_duration(e.delta_ns),
                      detail::format_rate(static_cast<double>(e.value >> 32) * 1e6 / 8),
                      detail::format_rate(static_cast<double>(e.value & 0xFFFFFFFFU) * 1e6 / 8));
    case EventType::PfcPause: {
      const std::string mac = mac_string(e.value);
      const std::string prios = priority_list(e.code);
      if (e.psn_begin == wire::kPauseOpcode) {
        if (e.count == 0) return i18n::tr(M("ev.pause_xon"), mac);
        return i18n::tr(M("ev.pause_link"), mac, e.count, format_duration(e.delta_ns),
                        e.psn / 1000);
      }
      if (e.count == 0) return i18n::tr(M("ev.pfc_xon"), mac, prios);
      return i18n::tr(text, mac, prios, e.count, format_duration(e.delta_ns), e.psn / 1000);
    }
    case EventType::PfcStorm: {
      const std::string who = e.code < wire::kPriorities ? i18n::tr(M("word.priority"), e.code)
                                                         : i18n::tr(M("word.whole_link"));
      return i18n::tr(e.count != 0 ? M("ev.pfc_storm_end") : text, who, mac_string(e.value),
                      format_duration(e.delta_ns),
                      format_duration(static_cast<std::int64_t>(e.psn) * 1000));
    }
  }
  return {};
}

}  // namespace rdmalab::dissect
