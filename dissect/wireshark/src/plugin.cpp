// rdmalab's Wireshark plugin: the analyser's findings inside Wireshark and tshark.
//
// Wireshark's own InfiniBand dissector decodes the headers; this plugin adds
// what it lacks (PSN analysis, ICRC check, expert information) without
// replacing it. It is a postdissector: Wireshark calls it for every frame
// after all the other dissectors, with the whole frame. It decodes the
// frame's bytes again with rdmalab's decoder (dissect::decode_record) rather
// than reading the InfiniBand dissector's fields, so its verdicts are exactly
// those of rdmapcap, and it claims no UDP port.
//
// Two passes. Wireshark dissects each frame once in order when a file is
// read (PINFO_FD_VISITED false), then again, in any order, whenever a packet
// is shown, filtered or tapped. Only the in-order pass feeds the analyser;
// every dissection reads the findings stored under the frame number (see
// frame_store.hpp), so clicking frames in any order shows the same thing.
// End-of-capture conclusions (retries exhausted) concern earlier frames and
// are known only when the first pass is over: tshark shows them with -2.
//
// Wireshark reports errors by longjmp (its THROW macros). No C++ object with
// a destructor is alive across a call into Wireshark that may throw, and no
// C++ exception leaves this file: texts are formatted first, copied into the
// packet's wmem pool, and only then handed to Wireshark.

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto.h>
#include <wiretap/wtap.h>
#include <ws_symbol_export.h>
#include <ws_version.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "catalog.hpp"
#include "rdmalab/dissect/event.hpp"
#include "rdmalab/wire/describe.hpp"
#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/pause.hpp"
#include "rdmalab/wire/timers.hpp"
#include "rdmalab/wireshark/frame_store.hpp"

namespace {

using rdmalab::dissect::Cause;
using rdmalab::dissect::Event;
using rdmalab::dissect::EventType;
using rdmalab::wireshark::FrameFindings;
using rdmalab::wireshark::FrameStore;
using rdmalab::wireshark::IcrcStatus;
using rdmalab::wireshark::detail::M;
namespace i18n = rdmalab::i18n;

int proto_rdmalab = -1;
int ett_rdmalab = -1;
int ett_event = -1;

// Field ids. Their abbreviations ("rdmalab.retransmission") are the plugin's
// public contract: display filters, tshark -e, columns, and the tests use
// them. Never rename one.
int hf_event = -1;
int hf_explanation = -1;
int hf_expected_psn = -1;
int hf_retransmission = -1;
int hf_retrans_cause = -1;
int hf_original_frame = -1;
int hf_nak = -1;
int hf_nak_meaning = -1;
int hf_rnr = -1;
int hf_msg_id = -1;
int hf_msg_index = -1;
int hf_msg_length = -1;
int hf_request_frame = -1;
int hf_icrc_status = -1;
int hf_icrc_computed = -1;
int hf_vcrc_status = -1;
int hf_vcrc_computed = -1;
int hf_timeout = -1;
int hf_wait = -1;
int hf_retries = -1;
int hf_ooo = -1;
int hf_missing = -1;
int hf_retry_exhausted = -1;
int hf_related_frame = -1;
// Congestion and flow control.
int hf_ecn = -1;
int hf_cnp = -1;
int hf_pfc_link_speed = -1;
int hf_pfc_priority = -1;
int hf_pfc_quanta = -1;
int hf_pfc_pause_us = -1;
int hf_pfc_xon = -1;
int ett_pause = -1;

// Value names used by filters (rdmalab.icrc.status == "bad"): stable
// identifiers like the event names, not translated. The tree shows the
// translated text.
const value_string kIcrcStatusNames[] = {{0, "not_checked"}, {1, "good"}, {2, "bad"}, {0, nullptr}};
// Wireshark's value strings for rdmalab.retrans_cause, made from
// dissect::cause_name() when the plugin registers.
std::array<value_string, rdmalab::dissect::kCauses + 1> g_cause_names{};
// The IP ECN codepoints (RFC 3168, 5): rdmalab.ecn == 3 is CE.
const value_string kEcnNames[] = {
    {0, "Not-ECT"}, {1, "ECT(1)"}, {2, "ECT(0)"}, {3, "CE"}, {0, nullptr}};

// ---- expert information ----

// One expert item per event type whose row in dissect::event_table() names
// an expert group; its filter name, group, severity and summary all come
// from that row. Events without one (ACK matched, READ response matched,
// CM) are shown in the tree only.
std::array<expert_field, rdmalab::dissect::kEventTypes> g_ei;

int expert_group(rdmalab::dissect::ExpertGroup g) {
  using rdmalab::dissect::ExpertGroup;
  switch (g) {
    case ExpertGroup::Sequence: return PI_SEQUENCE;
    case ExpertGroup::ResponseCode: return PI_RESPONSE_CODE;
    case ExpertGroup::Protocol: return PI_PROTOCOL;
    case ExpertGroup::Checksum: return PI_CHECKSUM;
    case ExpertGroup::Malformed: return PI_MALFORMED;
    case ExpertGroup::None: break;
  }
  return 0;
}

int expert_severity(rdmalab::dissect::Severity s) {
  using rdmalab::dissect::Severity;
  switch (s) {
    case Severity::Info: return PI_CHAT;
    case Severity::Notice: return PI_NOTE;
    case Severity::Warning: return PI_WARN;
    case Severity::Error: return PI_ERROR;
  }
  return PI_NOTE;
}

// ---- state and preferences ----

// The port speed pause quanta are converted at (Gb/s; 0: inferred from the
// closest spacing of two frames, as rdmapcap does without --link-speed), and
// the PFC storm threshold (µs, so that short test captures can show one),
// rdmapcap's --link-speed and --pfc-storm-ms. 100 Gb/s: the common RoCE port
// today; 100 ms: rdmapcap's default (the "auto" PFC storm prevention timeout
// of NVIDIA's mlx5 driver).
guint g_link_speed_gbps = 100;
guint g_pfc_storm_us = 100'000;

rdmalab::dissect::AnalyzerOptions analyzer_options() {
  rdmalab::dissect::AnalyzerOptions o;
  o.link_speed_bps = std::uint64_t{g_link_speed_gbps} * 1'000'000'000;
  o.pfc_storm_ns = std::int64_t{std::max(1U, g_pfc_storm_us)} * 1'000;
  return o;
}

// The one analysis state of the loaded capture file. Wireshark opens one
// file at a time per process and calls the init routine before a file is
// dissected (and again before a full redissection), the cleanup routine
// when it is closed.
FrameStore& store() {
  static FrameStore s(analyzer_options());
  return s;
}

void reset_state() {
  // A new file or a redissection: analysed with the preferences as they are now.
  store().reset(analyzer_options());
}

enum LanguagePref : int { kLangEnvironment = 0, kLangEnglish = 1, kLangChinese = 2 };
gint g_language = kLangEnvironment;

void apply_language() {
  switch (g_language) {
    case kLangEnglish: i18n::set_current(i18n::Lang::En); break;
    case kLangChinese: i18n::set_current(i18n::Lang::Zh); break;
    default: i18n::set_current(i18n::lang_from_env()); break;
  }
}

// A catalog text as a C string that lives as long as the program (the
// catalog holds string literals), in the language of the environment: what
// Wireshark keeps from registration time.
const char* startup_text(const i18n::Message& m) {
  return i18n::text(m).data();
}

// ---- dissection ----

// The pcap link type of a frame's bytes, from Wireshark's encapsulation
// number. An ERF record (ibdump) reaches a dissector without its ERF header,
// which Wireshark keeps in the pseudo-header: a record of type 21 leaves the
// bare InfiniBand packet, as link type 247 has it. Other ERF types hold no
// RoCE or InfiniBand packet.
std::optional<rdmalab::wire::LinkType> link_type(const packet_info* pinfo) {
  using rdmalab::wire::LinkType;
  if (pinfo->rec == nullptr || pinfo->rec->rec_type != REC_TYPE_PACKET) return std::nullopt;
  switch (pinfo->rec->rec_header.packet_header.pkt_encap) {
    case WTAP_ENCAP_ETHERNET: return LinkType::Ethernet;
    case WTAP_ENCAP_RAW_IP: return LinkType::RawIp;
    case WTAP_ENCAP_RAW_IP4: return LinkType::Ipv4;
    case WTAP_ENCAP_RAW_IP6: return LinkType::Ipv6;
    case WTAP_ENCAP_SLL: return LinkType::LinuxSll;
    case WTAP_ENCAP_SLL2: return LinkType::LinuxSll2;
    case WTAP_ENCAP_INFINIBAND: return LinkType::Infiniband;
    case WTAP_ENCAP_ERF:
      // The type's top bit says that extension headers follow.
      if (pinfo->pseudo_header != nullptr &&
          (pinfo->pseudo_header->erf.phdr.type & 0x7F) == rdmalab::wire::erf::kTypeInfiniband)
        return LinkType::Infiniband;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Feeds the frame on the first pass; closes the first pass when a frame is
// seen again. Returns the frame's findings, if any. Never throws.
std::optional<FrameFindings> analyse(tvbuff_t* tvb, packet_info* pinfo) noexcept {
  try {
    FrameStore& s = store();
    if (!PINFO_FD_VISITED(pinfo)) {
      const guint len = tvb_captured_length(tvb);
      const auto link = link_type(pinfo);
      if (len > 0 && link && pinfo->num > s.last_fed()) {
        // The whole frame is one real-data tvb: tvb_get_ptr does not copy.
        const auto* data = tvb_get_ptr(tvb, 0, static_cast<gint>(len));
        const std::int64_t ns =
            static_cast<std::int64_t>(pinfo->abs_ts.secs) * 1'000'000'000 + pinfo->abs_ts.nsecs;
        s.feed(rdmalab::wire::Bytes(data, len), pinfo->fd->pkt_len, *link, pinfo->num, ns);
      }
    } else {
      // Dissecting a visited frame: the in-order pass has run (at least up
      // to the last frame read), so end-of-capture conclusions can be drawn.
      s.finish();
    }
    return s.find(pinfo->num);
  } catch (const std::exception&) {
    // Out of memory: show nothing for this frame rather than abort Wireshark.
    return std::nullopt;
  }
}

// What one frame shows, decided in C++ and then handed to Wireshark. A plan
// is plain data (no destructors), so the Wireshark calls that may longjmp
// run after every C++ object of the first phase is gone.
struct PlannedItem {
  enum class Kind : std::uint8_t { Uint, Uint64, Flag, String, Time, Double, Subtree, Event };
  Kind kind = Kind::Uint;
  int hf = -1;
  bool nested = false;  // under the last Event or Subtree item, else under the top item
  guint64 number = 0;
  double real = 0;
  nstime_t time{};
  const char* value = nullptr;        // FT_STRING value
  const char* text = nullptr;         // the whole line shown in the tree
  int expert = -1;                    // the EventType of an expert item (g_ei index)
  const char* expert_text = nullptr;  // the expert message: the explanation
};

struct Plan {
  // A frame has an ICRC line, four message lines and a few events of at
  // most seven lines each; more than this is cut (and never seen in practice).
  static constexpr std::size_t kMaxItems = 96;
  const char* title = nullptr;
  const char* info = nullptr;        // appended to the Info column, or nullptr
  const char* info_first = nullptr;  // replaces the Info column first, or nullptr
  std::array<PlannedItem, kMaxItems> items{};
  std::size_t count = 0;
};

// Phase 1: formats every text of a frame into the packet's wmem pool.
class Planner {
 public:
  Planner(packet_info* pinfo, Plan& plan) : pinfo_(pinfo), plan_(plan) {}

  void build(const FrameFindings& f) {
    plan_.title = keep(std::string(i18n::text(M("proto.name"))));
    std::string info;
    if (f.pause) {
      add_pause(*f.pause, f.link_speed_bps);
    } else {
      add_icrc(f);
      add_congestion(f);
      add_message(f);
    }
    for (const Event& e : f.events) add_event(e, false, info);
    for (const Event& e : f.end_events) add_event(e, true, info);
    if (!info.empty()) plan_.info = keep(" [" + info + "]");
  }

 private:
  // A copy of `s` in the packet's memory pool, freed by Wireshark.
  const char* keep(const std::string& s) { return wmem_strdup(pinfo_->pool, s.c_str()); }

  // "Label: value" in the current language.
  const char* line(const i18n::Message& label, const std::string& value) {
    return keep(i18n::tr(M("tree.item"), i18n::text(label), value));
  }

  PlannedItem* push(PlannedItem::Kind kind, int hf, bool nested, const char* text) {
    if (plan_.count == plan_.items.size()) return nullptr;
    PlannedItem& it = plan_.items[plan_.count++];
    it = PlannedItem{};
    it.kind = kind;
    it.hf = hf;
    it.nested = nested;
    it.text = text;
    return &it;
  }

  void add_uint(bool nested, int hf, const i18n::Message& label, guint64 v,
                const std::string& shown, PlannedItem::Kind kind = PlannedItem::Kind::Uint) {
    if (PlannedItem* it = push(kind, hf, nested, line(label, shown))) it->number = v;
  }
  void add_frame(int hf, const i18n::Message& label, std::uint64_t frame) {
    add_uint(true, hf, label, frame, i18n::tr(M("tree.frame"), frame));
  }
  void add_flag(int hf, const i18n::Message& label) {
    push(PlannedItem::Kind::Flag, hf, true, line(label, std::string(i18n::text(M("tree.yes")))));
  }
  void add_string(int hf, const i18n::Message& label, const std::string& v) {
    if (PlannedItem* it = push(PlannedItem::Kind::String, hf, true, line(label, v)))
      it->value = keep(v);
  }

  // The IP ECN field of every RoCEv2 packet, and a CNP named as such
  // (Wireshark's InfiniBand dissector knows opcode 0x81 only as a number;
  // the CNP event's expert summary names it in the Info column).
  void add_congestion(const FrameFindings& f) {
    if (f.ecn) {
      static constexpr std::array<const i18n::Message*, 4> kMeaning{
          &M("ecn.not_ect"), &M("ecn.ect1"), &M("ecn.ect0"), &M("ecn.ce")};
      add_uint(false, hf_ecn, M("hf.ecn"), *f.ecn,
               i18n::tr(M("tree.ecn"), *f.ecn, i18n::text(*kMeaning[*f.ecn & 3U])));
    }
    if (f.cnp) {
      push(PlannedItem::Kind::Flag, hf_cnp, false,
           line(M("hf.cnp"), std::string(i18n::text(M("tree.cnp")))));
      // "Unknown OpCode" in the InfiniBand dissector's Info becomes its name.
      plan_.info_first = keep(i18n::tr(M("info.cnp"), f.cnp_qp));
    }
  }

  // An 802.3x / 802.1Qbb pause frame: per priority it names, the quanta and
  // the time they stand for at the port speed (512 bit times a quantum).
  void add_pause(const rdmalab::wire::PauseFrame& p, std::uint64_t bps) {
    const double gbps = static_cast<double>(bps) / 1e9;
    push(PlannedItem::Kind::Subtree, -1, false,
         keep(i18n::tr(p.pfc() ? M("tree.pfc") : M("tree.pause"), gbps)));
    add_uint(true, hf_pfc_link_speed, M("hf.pfc_link_speed"), bps / 1'000'000,
             fmt::format("{:g} Gb/s", gbps));
    const auto one = [&](std::size_t prio, std::uint16_t quanta) {
      const std::int64_t ns = rdmalab::wire::pause_quanta_ns(quanta, bps);
      const double us = static_cast<double>(ns) / 1e3;
      if (p.pfc())
        add_uint(true, hf_pfc_priority, M("hf.pfc_priority"), prio, std::to_string(prio));
      add_uint(true, hf_pfc_quanta, M("hf.pfc_quanta"), quanta, std::to_string(quanta));
      if (PlannedItem* it =
              push(PlannedItem::Kind::Double, hf_pfc_pause_us, true,
                   line(M("hf.pfc_pause_us"),
                        quanta == 0 ? i18n::tr(M("tree.xon")) : i18n::tr(M("tree.us"), us))))
        it->real = us;
      if (quanta == 0) add_flag(hf_pfc_xon, M("hf.pfc_xon"));
    };
    if (p.pfc()) {
      for (std::size_t prio = 0; prio < rdmalab::wire::kPriorities; ++prio)
        if (p.enabled(prio)) one(prio, p.quanta[prio]);
    } else {
      one(0, p.quanta[0]);
    }
  }

  // One CRC's verdict, and the computed value when it is wrong.
  struct CrcLines {
    int hf_status, hf_computed;
    const i18n::Message &status, &computed, &good, &bad;
    int hex_digits;
  };
  void add_crc(const CrcLines& l, IcrcStatus st, std::uint32_t actual, std::uint32_t expected) {
    std::string shown;
    switch (st) {
      case IcrcStatus::Good: shown = i18n::tr(l.good, actual); break;
      case IcrcStatus::Bad: shown = i18n::tr(l.bad, actual, expected); break;
      case IcrcStatus::NotChecked: shown = i18n::tr(M("icrc.unchecked")); break;
    }
    add_uint(false, l.hf_status, l.status, static_cast<guint64>(st), shown);
    if (st == IcrcStatus::Bad)
      add_uint(false, l.hf_computed, l.computed, expected,
               fmt::format("0x{:0{}x}", expected, l.hex_digits));
  }

  void add_icrc(const FrameFindings& f) {
    add_crc({hf_icrc_status, hf_icrc_computed, M("hf.icrc_status"), M("hf.icrc_computed"),
             M("icrc.good"), M("icrc.bad"), 8},
            f.icrc, f.icrc_actual, f.icrc_expected);
    // Native InfiniBand: the VCRC of the last link as well.
    if (f.native_ib)
      add_crc({hf_vcrc_status, hf_vcrc_computed, M("hf.vcrc_status"), M("hf.vcrc_computed"),
               M("vcrc.good"), M("vcrc.bad"), 4},
              f.vcrc, f.vcrc_actual, f.vcrc_expected);
  }

  void add_message(const FrameFindings& f) {
    const auto& m = f.message;
    if (m.id == 0) return;
    add_uint(false, hf_msg_id, M("hf.msg_id"), m.id, std::to_string(m.id));
    add_uint(false, hf_msg_index, M("hf.msg_index"), m.index, std::to_string(m.index));
    if (m.length)
      add_uint(false, hf_msg_length, M("hf.msg_length"), *m.length,
               i18n::tr(M("tree.bytes"), *m.length), PlannedItem::Kind::Uint64);
    if (m.request_frame != 0) {
      add_uint(false, hf_request_frame, M("hf.request_frame"), m.request_frame,
               i18n::tr(M("tree.frame"), m.request_frame));
      request_frame_ = m.request_frame;
    }
  }

  void add_event(const Event& e, bool end_of_capture, std::string& info) {
    std::string text = rdmalab::dissect::describe(e);
    if (end_of_capture) text = i18n::tr(M("tree.end_of_capture"), text);
    PlannedItem* it = push(PlannedItem::Kind::Event, hf_event, false, line(M("hf.event"), text));
    if (it == nullptr) return;
    it->value = keep(std::string(rdmalab::dissect::event_name(e.type)));
    const rdmalab::dissect::EventInfo& row = rdmalab::dissect::event_info(e.type);
    if (row.summary != nullptr) {
      it->expert = static_cast<int>(e.type);
      it->expert_text = keep(text);
      if (!info.empty()) info += "; ";
      info += i18n::text(*row.summary);
    }
    add_string(hf_explanation, M("hf.explanation"), text);
    add_details(e);
  }

  // The filterable fields each event type carries.
  void add_details(const Event& e) {
    bool related_shown = false;
    switch (e.type) {
      case EventType::Retransmission: {
        add_flag(hf_retransmission, M("hf.retransmission"));
        const i18n::Message* cause = &M("cause.unknown");
        if (e.cause == Cause::Nak) cause = &M("cause.nak");
        if (e.cause == Cause::Rnr) cause = &M("cause.rnr");
        if (e.cause == Cause::Timeout) cause = &M("cause.timeout");
        add_uint(true, hf_retrans_cause, M("hf.retrans_cause"), static_cast<guint64>(e.cause),
                 std::string(i18n::text(*cause)));
        if (e.related_frame != 0) {
          add_frame(hf_original_frame, M("hf.original_frame"), e.related_frame);
          related_shown = true;
        }
        break;
      }
      case EventType::GoBackN:
      case EventType::RnrRetry: add_wait(e); break;
      case EventType::Timeout:
        add_wait(e);
        if (e.code != 0) {
          const double ms = rdmalab::wire::ack_timeout_seconds(e.code).value_or(0) * 1e3;
          add_uint(true, hf_timeout, M("hf.timeout"), e.code,
                   i18n::tr(M("tree.timeout"), e.code, ms));
        }
        add_uint(true, hf_retries, M("hf.retries"), e.count, std::to_string(e.count));
        break;
      case EventType::NakSequence:
        // The PSN of a sequence-error NAK is the one the responder expected
        // (IBTA vol. 1, ch. 9: AETH); its AETH syndrome is 0x60 (NAK, code 0).
        add_nak(0x60);
        add_uint(true, hf_expected_psn, M("hf.expected_psn"), e.psn,
                 fmt::format("0x{:06x}", e.psn));
        break;
      case EventType::NakFatal: add_nak(static_cast<std::uint8_t>(0x60 | (e.code & 0x1F))); break;
      case EventType::RnrNak: {
        // RNR NAK syndrome: 0b01 in bits 6:5, the timer code in bits 4:0.
        add_nak(static_cast<std::uint8_t>(0x20 | (e.code & 0x1F)));
        const double ms = rdmalab::wire::rnr_timer_ms(e.code).value_or(0);
        add_uint(true, hf_rnr, M("hf.rnr"), e.code, i18n::tr(M("tree.rnr"), e.code, ms));
        break;
      }
      case EventType::PsnGap:
        add_uint(true, hf_expected_psn, M("hf.expected_psn"), e.psn_begin,
                 fmt::format("0x{:06x}", e.psn_begin));
        add_uint(true, hf_missing, M("hf.missing"), e.count, std::to_string(e.count));
        break;
      case EventType::OutOfOrder: add_flag(hf_ooo, M("hf.ooo")); break;
      case EventType::ReadMatched:
      case EventType::AtomicMatched:
        // The message line already names a READ response's request frame.
        if (e.related_frame != 0 && e.related_frame != request_frame_)
          add_frame(hf_request_frame, M("hf.request_frame"), e.related_frame);
        related_shown = e.related_frame != 0;
        break;
      case EventType::RetryExhausted:
        add_flag(hf_retry_exhausted, M("hf.retry_exhausted"));
        add_uint(true, hf_retries, M("hf.retries"), e.count, std::to_string(e.count));
        break;
      default: break;
    }
    if (!related_shown && e.related_frame != 0)
      add_frame(hf_related_frame, M("hf.related_frame"), e.related_frame);
  }

  void add_wait(const Event& e) {
    if (e.delta_ns < 0) return;
    const char* text =
        line(M("hf.wait"), i18n::tr(M("tree.us"), static_cast<double>(e.delta_ns) / 1e3));
    if (PlannedItem* it = push(PlannedItem::Kind::Time, hf_wait, true, text)) {
      it->time.secs = static_cast<time_t>(e.delta_ns / 1'000'000'000);
      it->time.nsecs = static_cast<int>(e.delta_ns % 1'000'000'000);
    }
  }

  void add_nak(std::uint8_t syndrome) {
    add_uint(true, hf_nak, M("hf.nak"), syndrome, fmt::format("0x{:02x}", syndrome));
    add_string(hf_nak_meaning, M("hf.nak_meaning"), rdmalab::wire::describe_syndrome(syndrome));
  }

  packet_info* pinfo_;
  Plan& plan_;
  std::uint64_t request_frame_ = 0;  // shown on the message line
};

// Phase 2: Wireshark calls only, over plain data.
void show(const Plan& plan, tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree) {
  proto_item* top =
      proto_tree_add_protocol_format(tree, proto_rdmalab, tvb, 0, 0, "%s", plan.title);
  proto_tree* t = proto_item_add_subtree(top, ett_rdmalab);
  proto_tree* event_tree = t;
  for (std::size_t i = 0; i < plan.count; ++i) {
    const PlannedItem& it = plan.items[i];
    proto_tree* parent = it.nested ? event_tree : t;
    proto_item* pi = nullptr;
    switch (it.kind) {
      case PlannedItem::Kind::Uint:
        pi = proto_tree_add_uint_format(parent, it.hf, tvb, 0, 0, static_cast<guint32>(it.number),
                                        "%s", it.text);
        break;
      case PlannedItem::Kind::Uint64:
        pi = proto_tree_add_uint64_format(parent, it.hf, tvb, 0, 0, it.number, "%s", it.text);
        break;
      case PlannedItem::Kind::Flag:
        pi = proto_tree_add_boolean_format(parent, it.hf, tvb, 0, 0, TRUE, "%s", it.text);
        break;
      case PlannedItem::Kind::String:
        pi = proto_tree_add_string_format(parent, it.hf, tvb, 0, 0, it.value, "%s", it.text);
        break;
      case PlannedItem::Kind::Double:
        pi = proto_tree_add_double_format(parent, it.hf, tvb, 0, 0, it.real, "%s", it.text);
        break;
      case PlannedItem::Kind::Subtree:
        pi = proto_tree_add_subtree(t, tvb, 0, 0, ett_pause, &event_tree, it.text);
        break;
      case PlannedItem::Kind::Time: {
        nstime_t time = it.time;  // the API takes a non-const pointer
        pi = proto_tree_add_time_format(parent, it.hf, tvb, 0, 0, &time, "%s", it.text);
        break;
      }
      case PlannedItem::Kind::Event:
        pi = proto_tree_add_string_format(t, it.hf, tvb, 0, 0, it.value, "%s", it.text);
        event_tree = proto_item_add_subtree(pi, ett_event);
        // The expert message is the explanation, in the current language.
        if (it.expert >= 0)
          expert_add_info_format(pinfo, pi, &g_ei[static_cast<std::size_t>(it.expert)], "%s",
                                 it.expert_text);
        break;
    }
    proto_item_set_generated(pi);
  }
  if (plan.info_first != nullptr) col_add_str(pinfo->cinfo, COL_INFO, plan.info_first);
  if (plan.info != nullptr) col_append_str(pinfo->cinfo, COL_INFO, plan.info);
}

int dissect_rdmalab(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, void* /*data*/) {
  const std::optional<FrameFindings> found = analyse(tvb, pinfo);
  if (!found) return 0;
  // The plan is large: it lives in the packet pool, not on the stack.
  // Plan is trivially destructible: the pool frees it without a destructor.
  Plan* plan = new (wmem_alloc(pinfo->pool, sizeof(Plan))) Plan{};
  try {
    Planner(pinfo, *plan).build(*found);
  } catch (const std::exception&) {
    // A formatting or allocation failure: show what was planned so far.
  }
  show(*plan, tvb, pinfo, tree);
  return static_cast<int>(tvb_captured_length(tvb));
}

// ---- registration ----

void register_rdmalab() {
  // Field names and preference texts are registered once, in the language
  // of the environment; the tree follows the preference (apply_language).
  apply_language();
  proto_rdmalab = proto_register_protocol(startup_text(M("proto.name")), "rdmalab", "rdmalab");

  auto hf = [](int* id, const char* abbrev, const i18n::Message& name, ftenum type, int display,
               const void* strings) {
    return hf_register_info{
        id, {startup_text(name), abbrev, type, display, strings, 0x0, nullptr, HFILL}};
  };
  for (std::size_t i = 0; i < rdmalab::dissect::kCauses; ++i) {
    const std::string_view name = rdmalab::dissect::cause_name(static_cast<Cause>(i));
    g_cause_names[i] = {static_cast<guint32>(i), name.data()};  // a string literal: NUL-terminated
  }
  g_cause_names.back() = {0, nullptr};
  static hf_register_info fields[] = {
      hf(&hf_event, "rdmalab.event", M("hf.event"), FT_STRING, BASE_NONE, nullptr),
      hf(&hf_explanation, "rdmalab.explanation", M("hf.explanation"), FT_STRING, BASE_NONE,
         nullptr),
      hf(&hf_expected_psn, "rdmalab.expected_psn", M("hf.expected_psn"), FT_UINT32, BASE_HEX,
         nullptr),
      hf(&hf_retransmission, "rdmalab.retransmission", M("hf.retransmission"), FT_BOOLEAN,
         BASE_NONE, nullptr),
      hf(&hf_retrans_cause, "rdmalab.retrans_cause", M("hf.retrans_cause"), FT_UINT8, BASE_DEC,
         VALS(g_cause_names.data())),
      hf(&hf_original_frame, "rdmalab.original_frame", M("hf.original_frame"), FT_FRAMENUM,
         BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV)),
      hf(&hf_nak, "rdmalab.nak", M("hf.nak"), FT_UINT8, BASE_HEX, nullptr),
      hf(&hf_nak_meaning, "rdmalab.nak.meaning", M("hf.nak_meaning"), FT_STRING, BASE_NONE,
         nullptr),
      hf(&hf_rnr, "rdmalab.rnr_timer", M("hf.rnr"), FT_UINT8, BASE_DEC, nullptr),
      hf(&hf_msg_id, "rdmalab.msg.id", M("hf.msg_id"), FT_UINT32, BASE_DEC, nullptr),
      hf(&hf_msg_index, "rdmalab.msg.index", M("hf.msg_index"), FT_UINT32, BASE_DEC, nullptr),
      hf(&hf_msg_length, "rdmalab.msg.length", M("hf.msg_length"), FT_UINT64, BASE_DEC, nullptr),
      hf(&hf_request_frame, "rdmalab.request_frame", M("hf.request_frame"), FT_FRAMENUM, BASE_NONE,
         FRAMENUM_TYPE(FT_FRAMENUM_REQUEST)),
      hf(&hf_icrc_status, "rdmalab.icrc.status", M("hf.icrc_status"), FT_UINT8, BASE_DEC,
         VALS(kIcrcStatusNames)),
      hf(&hf_icrc_computed, "rdmalab.icrc.computed", M("hf.icrc_computed"), FT_UINT32, BASE_HEX,
         nullptr),
      hf(&hf_vcrc_status, "rdmalab.vcrc.status", M("hf.vcrc_status"), FT_UINT8, BASE_DEC,
         VALS(kIcrcStatusNames)),
      hf(&hf_vcrc_computed, "rdmalab.vcrc.computed", M("hf.vcrc_computed"), FT_UINT16, BASE_HEX,
         nullptr),
      hf(&hf_timeout, "rdmalab.timeout", M("hf.timeout"), FT_UINT8, BASE_DEC, nullptr),
      hf(&hf_wait, "rdmalab.wait", M("hf.wait"), FT_RELATIVE_TIME, BASE_NONE, nullptr),
      hf(&hf_retries, "rdmalab.retries", M("hf.retries"), FT_UINT32, BASE_DEC, nullptr),
      hf(&hf_ooo, "rdmalab.ooo", M("hf.ooo"), FT_BOOLEAN, BASE_NONE, nullptr),
      hf(&hf_missing, "rdmalab.missing_psns", M("hf.missing"), FT_UINT32, BASE_DEC, nullptr),
      hf(&hf_retry_exhausted, "rdmalab.retry_exhausted", M("hf.retry_exhausted"), FT_BOOLEAN,
         BASE_NONE, nullptr),
      hf(&hf_related_frame, "rdmalab.related_frame", M("hf.related_frame"), FT_FRAMENUM, BASE_NONE,
         FRAMENUM_TYPE(FT_FRAMENUM_NONE)),
      hf(&hf_ecn, "rdmalab.ecn", M("hf.ecn"), FT_UINT8, BASE_DEC, VALS(kEcnNames)),
      hf(&hf_cnp, "rdmalab.cnp", M("hf.cnp"), FT_BOOLEAN, BASE_NONE, nullptr),
      hf(&hf_pfc_link_speed, "rdmalab.pfc.link_speed", M("hf.pfc_link_speed"), FT_UINT32, BASE_DEC,
         nullptr),
      hf(&hf_pfc_priority, "rdmalab.pfc.priority", M("hf.pfc_priority"), FT_UINT8, BASE_DEC,
         nullptr),
      hf(&hf_pfc_quanta, "rdmalab.pfc.quanta", M("hf.pfc_quanta"), FT_UINT16, BASE_DEC, nullptr),
      hf(&hf_pfc_pause_us, "rdmalab.pfc.pause_us", M("hf.pfc_pause_us"), FT_DOUBLE, BASE_NONE,
         nullptr),
      hf(&hf_pfc_xon, "rdmalab.pfc.xon", M("hf.pfc_xon"), FT_BOOLEAN, BASE_NONE, nullptr),
  };
  proto_register_field_array(proto_rdmalab, fields, G_N_ELEMENTS(fields));

  static gint* subtrees[] = {&ett_rdmalab, &ett_event, &ett_pause};
  proto_register_subtree_array(subtrees, G_N_ELEMENTS(subtrees));

  // Wireshark keeps the filter names' pointers: they live as long as the program.
  static std::array<std::string, rdmalab::dissect::kEventTypes> abbrevs;
  static std::array<ei_register_info, rdmalab::dissect::kEventTypes> experts{};
  std::size_t n_experts = 0;
  for (const rdmalab::dissect::EventInfo& row : rdmalab::dissect::event_table()) {
    const auto i = static_cast<std::size_t>(row.type);
    g_ei[i] = EI_INIT;
    if (row.summary == nullptr) continue;
    abbrevs[i] = "rdmalab.expert." + std::string(row.name);
    experts[n_experts++] =
        ei_register_info{&g_ei[i],
                         {abbrevs[i].c_str(), expert_group(row.expert),
                          expert_severity(row.severity), startup_text(*row.summary), EXPFILL}};
  }
  expert_module_t* em = expert_register_protocol(proto_rdmalab);
  expert_register_field_array(em, experts.data(), static_cast<int>(n_experts));

  static const enum_val_t languages[] = {
      {"environment", startup_text(M("pref.lang.env")), kLangEnvironment},
      {"en", startup_text(M("pref.lang.en")), kLangEnglish},
      {"zh", startup_text(M("pref.lang.zh")), kLangChinese},
      {nullptr, nullptr, -1}};
  module_t* prefs = prefs_register_protocol(proto_rdmalab, apply_language);
  prefs_register_uint_preference(prefs, "link_speed_gbps", startup_text(M("pref.link_speed")),
                                 startup_text(M("pref.link_speed.desc")), 10, &g_link_speed_gbps);
  prefs_register_uint_preference(prefs, "pfc_storm_us", startup_text(M("pref.pfc_storm")),
                                 startup_text(M("pref.pfc_storm.desc")), 10, &g_pfc_storm_us);
  prefs_register_enum_preference(prefs, "language", startup_text(M("pref.language")),
                                 startup_text(M("pref.language.desc")), &g_language, languages,
                                 FALSE);

  register_init_routine(reset_state);
  register_cleanup_routine(reset_state);
}

void handoff_rdmalab() {
  dissector_handle_t handle = create_dissector_handle(dissect_rdmalab, proto_rdmalab);
  register_postdissector(handle);
}

}  // namespace

// ---- the plugin's entry points (Wireshark 4.0 plugin ABI) ----
// Everything else is hidden (-fvisibility=hidden): only these four symbols
// are exported. Wireshark refuses a plugin built for another major.minor.

extern "C" WS_DLL_PUBLIC_DEF const gchar plugin_version[] = RDMALAB_VERSION;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

extern "C" WS_DLL_PUBLIC_DEF void plugin_register(void) {
  static const proto_plugin plugin{register_rdmalab, handoff_rdmalab};
  proto_register_plugin(&plugin);
}
