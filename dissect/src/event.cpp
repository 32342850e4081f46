#include "rdmalab/dissect/event.hpp"

#include "catalog.hpp"
#include "format.hpp"
#include "rdmalab/dissect/cm.hpp"
#include "rdmalab/wire/describe.hpp"
#include "rdmalab/wire/timers.hpp"

namespace rdmalab::dissect {

using detail::M;

std::span<const i18n::Message> catalog() noexcept {
  return detail::kCatalog;
}

Severity severity(EventType t) noexcept {
  switch (t) {
    case EventType::AckMatched:
    case EventType::ReadMatched:
    case EventType::AtomicMatched:
    case EventType::CmHandshake: return Severity::Info;
    case EventType::CmLinked: return Severity::Info;
    case EventType::LateArrival:
    case EventType::DuplicateRequest:
    case EventType::DuplicateAck:
    case EventType::UnmatchedResponse:
    case EventType::Cnp:
    case EventType::EcnMarked: return Severity::Notice;
    case EventType::PsnGap:
    case EventType::NakSequence:
    case EventType::RnrNak:
    case EventType::GoBackN:
    case EventType::RnrRetry:
    case EventType::Timeout:
    case EventType::Retransmission:
    case EventType::Unacknowledged:
    case EventType::LengthMismatch: return Severity::Warning;
    case EventType::NakFatal:
    case EventType::RetryExhausted:
    case EventType::IcrcMismatch:
    case EventType::Malformed:
    case EventType::UnknownOpcode: return Severity::Error;
  }
  return Severity::Info;
}

std::string_view event_name(EventType t) noexcept {
  switch (t) {
    case EventType::AckMatched: return "ack";
    case EventType::ReadMatched: return "read_response";
    case EventType::AtomicMatched: return "atomic_ack";
    case EventType::PsnGap: return "psn_gap";
    case EventType::LateArrival: return "out_of_order";
    case EventType::NakSequence: return "nak_psn_sequence";
    case EventType::RnrNak: return "rnr_nak";
    case EventType::NakFatal: return "nak_fatal";
    case EventType::GoBackN: return "go_back_n";
    case EventType::RnrRetry: return "rnr_retry";
    case EventType::Timeout: return "timeout";
    case EventType::Retransmission: return "retransmission";
    case EventType::DuplicateRequest: return "duplicate_request";
    case EventType::DuplicateAck: return "duplicate_ack";
    case EventType::UnmatchedResponse: return "unmatched_response";
    case EventType::RetryExhausted: return "retry_exhausted";
    case EventType::Unacknowledged: return "unacknowledged";
    case EventType::Cnp: return "cnp";
    case EventType::EcnMarked: return "ecn_ce";
    case EventType::LengthMismatch: return "length_mismatch";
    case EventType::CmHandshake: return "cm";
    case EventType::CmLinked: return "cm_linked";
    case EventType::IcrcMismatch: return "icrc_mismatch";
    case EventType::Malformed: return "malformed";
    case EventType::UnknownOpcode: return "unknown_opcode";
  }
  return "unknown";
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
  switch (e.type) {
    case EventType::AckMatched: {
      if (e.related_frame == 0) return i18n::tr(M("ev.ack_nothing"), e.psn);
      std::string s = i18n::tr(M("ev.ack"), e.psn_begin, e.psn, e.count, e.related_frame);
      if (e.delta_ns >= 0) s += i18n::tr(M("ev.ack_rtt"), format_duration(e.delta_ns));
      return s;
    }
    case EventType::ReadMatched:
      return i18n::tr(M("ev.read"), e.related_frame, e.value, format_duration(e.delta_ns));
    case EventType::AtomicMatched:
      return i18n::tr(M("ev.atomic"), e.related_frame, e.value, format_duration(e.delta_ns),
                      i18n::tr(e.code ? M("word.cmpswap") : M("word.fetchadd")));
    case EventType::PsnGap: return i18n::tr(M("ev.gap"), e.psn_begin, e.psn, e.count);
    case EventType::LateArrival:
      return i18n::tr(e.code ? M("ev.late_tolerated") : M("ev.late"), e.psn);
    case EventType::NakSequence: return i18n::tr(M("ev.nak_seq"), e.psn);
    case EventType::RnrNak:
      return i18n::tr(M("ev.rnr"), e.psn, wire::rnr_timer_ms(e.code).value_or(0), e.code);
    case EventType::NakFatal:
      return i18n::tr(M("ev.nak_fatal"), e.psn, wire::nak_code_name(e.code));
    case EventType::GoBackN:
      return i18n::tr(M("ev.go_back_n"), e.psn, format_duration(e.delta_ns), e.related_frame);
    case EventType::RnrRetry:
      return i18n::tr(M("ev.rnr_retry"), e.psn, format_duration(e.delta_ns), e.related_frame,
                      wire::rnr_timer_ms(e.code).value_or(0));
    case EventType::Timeout:
      return i18n::tr(M("ev.timeout"), e.psn, format_duration(e.delta_ns), e.code, e.count);
    case EventType::Retransmission:
      if (e.related_frame == 0) return i18n::tr(M("ev.retx_unknown"), e.psn);
      return i18n::tr(M("ev.retx"), e.psn, e.related_frame, format_duration(e.delta_ns));
    case EventType::DuplicateRequest: return i18n::tr(M("ev.dup_req"), e.psn);
    case EventType::DuplicateAck: return i18n::tr(M("ev.dup_ack"), e.related_frame);
    case EventType::UnmatchedResponse: return i18n::tr(M("ev.unmatched"));
    case EventType::RetryExhausted: return i18n::tr(M("ev.retry_exhausted"), e.psn, e.count);
    case EventType::Unacknowledged: return i18n::tr(M("ev.unacked"), e.psn_begin, e.psn, e.count);
    case EventType::Cnp: return i18n::tr(M("ev.cnp"), e.value);
    case EventType::EcnMarked: return i18n::tr(M("ev.ecn"));
    case EventType::LengthMismatch: return i18n::tr(M("ev.length"), e.value, e.count);
    case EventType::IcrcMismatch:
      return i18n::tr(M("ev.icrc"), static_cast<std::uint32_t>(e.value),
                      static_cast<std::uint32_t>(e.value >> 32));
    case EventType::Malformed: {
      // The decode error travels in the event's fields (see decode_record).
      const wire::DecodeError err{static_cast<wire::ErrorKind>(e.code),
                                  static_cast<wire::Layer>(e.count), e.value, e.psn, e.psn_begin};
      return i18n::tr(M("ev.malformed"), wire::describe(err));
    }
    case EventType::UnknownOpcode: return i18n::tr(M("ev.unknown_opcode"), e.code);
    case EventType::CmHandshake:
      switch (static_cast<CmKind>(e.code)) {
        case CmKind::Req: return i18n::tr(M("cm.req"), e.psn_begin, e.value, e.psn, e.count);
        case CmKind::Rep: return i18n::tr(M("cm.rep"), e.related_frame, e.psn_begin, e.psn);
        case CmKind::Rtu: return i18n::tr(M("cm.rtu"));
        case CmKind::Rej: {
          const std::string why = e.value == 8    ? i18n::tr(M("cm.rej.8"))
                                  : e.value == 28 ? i18n::tr(M("cm.rej.28"))
                                                  : i18n::tr(M("cm.rej.other"));
          return i18n::tr(M("cm.rej"), e.related_frame, e.value, why);
        }
        default: return i18n::tr(M("cm.other"), cm_kind_name(static_cast<CmKind>(e.code)));
      }
    case EventType::CmLinked:
      if (e.value == e.psn) return i18n::tr(M("cm.linked"), e.related_frame, e.psn);
      return i18n::tr(M("cm.linked_bad"), e.related_frame, e.psn, e.value);
  }
  return {};
}

}  // namespace rdmalab::dissect
