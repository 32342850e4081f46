// Text and JSON renderings of records and summaries. A packet's JSON is
// written with fmt straight into the output buffer: JSON Lines output is
// produced for every packet of captures with millions of them, and building
// a DOM per packet costs more than the decode itself. The summary, one
// document per capture, is built with nlohmann-json. Both shapes are
// documented by the JSON Schemas in docs/schema/.
#include "rdmalab/dissect/render.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "catalog.hpp"
#include "format.hpp"
#include "rdmalab/wire/describe.hpp"
#include "rdmalab/wire/erf.hpp"

namespace rdmalab::dissect {

using detail::M;

namespace {

template <class... Args>
void put(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

/// One explained field line: name, value, explanation.
void field(std::string& out, std::string_view name, std::string_view value, std::string_view note) {
  put(out, "    {:<10} {:<20} {}\n", name, value, note);
}

std::string opcode_note(const wire::OpcodeInfo& op) {
  using wire::Operation;
  using wire::Position;
  switch (op.operation) {
    case Operation::ReadRequest: return i18n::tr(M("op.read_req"));
    case Operation::ReadResponse: return i18n::tr(M("op.read_resp"));
    case Operation::Acknowledge: return i18n::tr(M("op.ack"));
    case Operation::AtomicAcknowledge: return i18n::tr(M("op.atomic_ack"));
    case Operation::CompareSwap:
    case Operation::FetchAdd: return i18n::tr(M("op.atomic"));
    case Operation::Cnp: return i18n::tr(M("op.cnp"));
    case Operation::Flush: return i18n::tr(M("op.flush"));
    case Operation::AtomicWrite: return i18n::tr(M("op.atomic_write"));
    case Operation::Send:
    case Operation::Write: break;
  }
  switch (op.position) {
    case Position::First: return i18n::tr(M("op.first"));
    case Position::Middle: return i18n::tr(M("op.middle"));
    case Position::Last: return i18n::tr(M("op.last"));
    case Position::Only: return i18n::tr(M("op.only"));
  }
  return {};
}

std::string addr_or_dash(const std::optional<wire::IpAddress>& a) {
  return a ? a->to_string() : std::string("-");
}

std::string_view short_op(const wire::OpcodeInfo& op) {
  using wire::Operation;
  switch (op.operation) {
    case Operation::Send: return "SEND";
    case Operation::Write: return "WRITE";
    case Operation::ReadRequest: return "READ req";
    case Operation::ReadResponse: return "READ resp";
    case Operation::Acknowledge: return "ACK";
    case Operation::AtomicAcknowledge: return "ATOMIC ACK";
    case Operation::CompareSwap: return "CmpSwap";
    case Operation::FetchAdd: return "FetchAdd";
    case Operation::Cnp: return "CNP";
    case Operation::Flush: return "FLUSH";
    case Operation::AtomicWrite: return "ATOMIC WRITE";
  }
  return "?";
}

std::string_view short_pos(wire::Position p) {
  switch (p) {
    case wire::Position::First: return " First";
    case wire::Position::Middle: return " Middle";
    case wire::Position::Last: return " Last";
    case wire::Position::Only: return "";
  }
  return "";
}

}  // namespace

namespace {

/// endpoint_string()'s text in a buffer of its own: a summary of a whole
/// cluster names hundreds of thousands of endpoints, and "10.0.1.1 QP
/// 0x001000" is too long for a std::string's own room, so each would be
/// allocated, copied into the line and freed.
class EndpointText {
 public:
  explicit EndpointText(const Endpoint& e) {
    const std::string addr = e.addr.to_string();  // IPv4: within the string's own room
    const std::size_t n = std::min(addr.size(), kAddrMax);
    std::memcpy(buf_.data(), addr.data(), n);
    char* const end = e.qpn_known
                          ? fmt::format_to(buf_.data() + n, FMT_COMPILE(" QP 0x{:06x}"), e.qpn)
                          : fmt::format_to(buf_.data() + n, FMT_COMPILE(" QP ?"));
    len_ = static_cast<std::size_t>(end - buf_.data());
  }
  [[nodiscard]] std::string_view view() const noexcept { return {buf_.data(), len_}; }

 private:
  static constexpr std::size_t kAddrMax = 64;  // an IPv6 text is at most 45
  std::array<char, kAddrMax + 16> buf_{};      // " QP 0x" and eight digits
  std::size_t len_ = 0;
};

}  // namespace

std::string endpoint_string(const Endpoint& e) {
  return std::string(EndpointText(e).view());
}

std::string short_label(const PacketRecord& rec) {
  if (!rec.has_bth()) return "?";
  const wire::Bth& b = rec.decoded.ib->bth;
  if (rec.op == nullptr) return fmt::format("opcode 0x{:02x} PSN 0x{:06x}", b.opcode, b.psn);
  if (rec.cm) return fmt::format("CM {}", wire::cm::attr_name(wire::cm::attr_of(*rec.cm)));
  if (rec.mad) return wire::mad::summary(*rec.mad);
  const auto& aeth = rec.decoded.ib->aeth;
  if (rec.op->operation == wire::Operation::Acknowledge && aeth) {
    switch (aeth->kind()) {
      case wire::AckKind::Ack: return fmt::format("ACK PSN 0x{:06x} MSN {}", b.psn, aeth->msn);
      case wire::AckKind::RnrNak: return fmt::format("RNR NAK PSN 0x{:06x}", b.psn);
      case wire::AckKind::Nak: return fmt::format("NAK({}) PSN 0x{:06x}", aeth->value(), b.psn);
      case wire::AckKind::Reserved: break;
    }
  }
  std::string s = fmt::format("{}{}", short_op(*rec.op), short_pos(rec.op->position));
  if (rec.op->has_immediate) s += " Imm";
  if (rec.op->has_invalidate) s += " Inv";
  put(s, " PSN 0x{:06x}", b.psn);
  return s;
}

void render_packet_text(const PacketRecord& rec, std::int64_t start_ns, std::string& out) {
  const wire::Frame& f = rec.decoded;
  std::string kind;
  if (f.roce == wire::RoceVersion::V2)
    kind = i18n::tr(M("dec.rocev2"), f.udp ? f.udp->src_port : 0);
  else if (f.roce == wire::RoceVersion::V1)
    kind = i18n::tr(M("dec.rocev1"));
  else if (f.roce == wire::RoceVersion::NativeIb)
    kind = i18n::tr(M("dec.ib"), f.lrh->sl, f.lrh->vl);
  else if (f.lrh)
    kind = i18n::tr(M("dec.ib_raw"), static_cast<int>(f.lrh->lnh));
  else if (f.erf_type == wire::erf::kTypeInfinibandLink)
    kind = i18n::tr(M("dec.ib_link"));
  else
    kind = i18n::tr(M("dec.not_roce"));
  // An ERF record's header is the capture's, not the wire's: the length
  // shown is the packet's, as Wireshark shows it (frame.len).
  std::size_t length = rec.original_length;
  if (f.erf_type) {
    const std::size_t header = f.lrh ? f.ip_offset : wire::erf::kHeaderSize;
    length -= std::min(length, header);
  }
  put(out, "{}\n",
      i18n::tr(M("dec.frame"), rec.frame, detail::format_seconds(rec.time_ns - start_ns),
               addr_or_dash(f.src_address()), addr_or_dash(f.dst_address()), kind, length));
  if (!f.is_roce()) {
    if (f.error) put(out, "  {}\n", i18n::tr(M("dec.error"), wire::describe(*f.error)));
    for (const Event& e : rec.events)
      put(out, "  [{}] {}\n", severity_label(severity(e.type)), describe(e));
    return;
  }
  if (f.eth && f.eth->vlan_count > 0)
    put(out, "  {}\n",
        i18n::tr(M("dec.vlan"), f.eth->vlan_tci[0] & 0xFFF, f.eth->vlan_tci[0] >> 13));
  if (f.ipv4) put(out, "  {}\n", i18n::tr(M("dec.ip_ecn"), f.ipv4->tos >> 2, f.ipv4->tos & 3));
  if (f.ipv6)
    put(out, "  {}\n",
        i18n::tr(M("dec.ip_ecn"), f.ipv6->traffic_class >> 2, f.ipv6->traffic_class & 3));
  if (f.lrh) {
    const wire::ib::Lrh& h = *f.lrh;
    put(out, "  {}\n", i18n::tr(M("dec.lrh")));
    field(out, "VL", fmt::format("{}", h.vl), i18n::tr(M("dec.vl")));
    field(out, "LVer", fmt::format("{}", h.lver), i18n::tr(M("dec.lver")));
    field(out, "SL", fmt::format("{}", h.sl), i18n::tr(M("dec.sl")));
    field(out, "LNH", fmt::format("{}", static_cast<int>(h.lnh)),
          i18n::tr(h.lnh == wire::ib::Lnh::Global ? M("dec.lnh_global") : M("dec.lnh_local")));
    field(out, "DLID", fmt::format("{}", h.dlid), i18n::tr(M("dec.dlid")));
    field(out, "PktLen", fmt::format("{}", h.pkt_len_words),
          i18n::tr(M("dec.pktlen"), h.packet_bytes()));
    field(out, "SLID", fmt::format("{}", h.slid), i18n::tr(M("dec.slid")));
  }
  if (f.grh) {
    // A native packet's addresses are its GIDs when it has a GRH.
    const auto gid = [](const std::array<std::uint8_t, 16>& g) {
      return wire::IpAddress::from_v6(g).to_string();
    };
    put(out, "  {}\n", i18n::tr(M("dec.grh"), gid(f.grh->sgid), gid(f.grh->dgid)));
  }

  if (rec.has_bth()) {
    const wire::IbPacket& ib = *f.ib;
    const wire::Bth& b = ib.bth;
    put(out, "  {}\n", i18n::tr(M("dec.bth")));
    const std::string opname =
        rec.op ? fmt::format("{} {}", wire::transport_name(rec.op->transport), rec.op->name)
               : i18n::tr(M("word.unknown"));
    field(out, "Opcode", fmt::format("0x{:02x}", b.opcode),
          i18n::tr(M("dec.opcode"), opname,
                   rec.op ? opcode_note(*rec.op) : i18n::tr(M("op.unknown"))));
    field(out, "SE", b.solicited ? "1" : "0",
          i18n::tr(M("dec.se"), i18n::tr(b.solicited ? M("dec.se_yes") : M("dec.se_no"))));
    field(out, "MigReq", b.migreq ? "1" : "0", i18n::tr(M("dec.migreq")));
    field(out, "PadCnt", fmt::format("{}", b.pad_count), i18n::tr(M("dec.padcnt")));
    field(out, "TVer", fmt::format("{}", b.tver), i18n::tr(M("dec.tver")));
    field(out, "P_Key", fmt::format("0x{:04x}", b.pkey),
          i18n::tr(M("dec.pkey"),
                   b.pkey == 0xFFFF ? i18n::tr(M("dec.pkey_default")) : std::string()));
    if (b.fecn || b.becn)
      field(out, "FECN/BECN", fmt::format("{}/{}", int{b.fecn}, int{b.becn}),
            i18n::tr(M("dec.ecn_bits"), int{b.fecn}, int{b.becn}));
    field(out, "DestQP", fmt::format("0x{:06x}", b.dest_qp),
          i18n::tr(M("dec.destqp"), addr_or_dash(f.dst_address())));
    field(out, "AckReq", b.ack_req ? "1" : "0",
          i18n::tr(b.ack_req ? M("dec.ackreq_yes") : M("dec.ackreq_no")));
    std::string psn_note = i18n::tr(M("dec.psn"), b.psn);
    if (rec.op && rec.op->operation == wire::Operation::Acknowledge && ib.aeth) {
      psn_note += i18n::tr(M("dec.sep"));
      psn_note +=
          i18n::tr(ib.aeth->kind() == wire::AckKind::Nak ? M("dec.nak_psn") : M("dec.ack_psn"));
    }
    field(out, "PSN", fmt::format("0x{:06x}", b.psn), psn_note);

    // In wire order: the XRCETH comes first after the BTH, FLUSH's FETH
    // before its RETH.
    if (ib.xrc_srq) {
      put(out, "  {}\n", i18n::tr(M("dec.xrceth")));
      field(out, "XRCSRQ", fmt::format("0x{:06x}", *ib.xrc_srq), i18n::tr(M("dec.xrcsrq")));
    }
    if (ib.feth) {
      put(out, "  {}\n", i18n::tr(M("dec.feth")));
      field(out, "PLT", fmt::format("{}", ib.feth->placement_type), i18n::tr(M("dec.placement")));
      field(out, "SEL", fmt::format("{}", ib.feth->selectivity), i18n::tr(M("dec.selectivity")));
    }
    if (ib.reth) {
      put(out, "  {}\n", i18n::tr(M("dec.reth")));
      field(out, "VA", fmt::format("0x{:016x}", ib.reth->va), i18n::tr(M("dec.va")));
      field(out, "R_Key", fmt::format("0x{:08x}", ib.reth->rkey), i18n::tr(M("dec.rkey")));
      std::string note;
      const std::uint32_t len = ib.reth->dma_len;
      if (rec.op && rec.op->operation == wire::Operation::ReadRequest) {
        note = i18n::tr(M("dec.dmalen_read"));
      } else if (rec.op && rec.op->operation == wire::Operation::Flush) {
        note = i18n::tr(M("dec.dmalen_flush"));
      } else if (rec.op && rec.op->position == wire::Position::Only) {
        note = ib.payload_length == len ? i18n::tr(M("dec.dmalen_only"))
                                        : i18n::tr(M("dec.dmalen_only_bad"), ib.payload_length);
      } else {
        const std::size_t per = ib.payload_length == 0 ? 1 : ib.payload_length;
        note = i18n::tr(M("dec.dmalen_write"), (std::size_t{len} + per - 1) / per);
      }
      field(out, "DMA len", fmt::format("{}", len), note);
    }
    if (ib.aeth) {
      put(out, "  {}\n", i18n::tr(M("dec.aeth")));
      field(out, "Syndrome", fmt::format("0x{:02x}", ib.aeth->syndrome),
            wire::describe_syndrome(ib.aeth->syndrome));
      field(out, "MSN", fmt::format("{}", ib.aeth->msn), i18n::tr(M("dec.msn")));
    }
    if (ib.atomic_eth) {
      put(out, "  {}\n", i18n::tr(M("dec.atomiceth")));
      field(out, "VA", fmt::format("0x{:016x}", ib.atomic_eth->va), i18n::tr(M("dec.va")));
      field(out, "R_Key", fmt::format("0x{:08x}", ib.atomic_eth->rkey), i18n::tr(M("dec.rkey")));
      field(out, "Swap/Add", fmt::format("0x{:016x}", ib.atomic_eth->swap_add),
            i18n::tr(M("dec.swap")));
      field(out, "Compare", fmt::format("0x{:016x}", ib.atomic_eth->compare),
            i18n::tr(M("dec.compare")));
    }
    if (ib.atomic_ack_eth) {
      put(out, "  {}\n", i18n::tr(M("dec.atomicack")));
      field(out, "OrigRemDt", fmt::format("0x{:016x}", ib.atomic_ack_eth->orig),
            i18n::tr(M("dec.orig")));
    }
    if (ib.immdt)
      put(out, "  {}\n    {:<10} 0x{:08x}\n", i18n::tr(M("dec.immdt")), "ImmDt", *ib.immdt);
    if (ib.ieth)
      put(out, "  {}\n    {:<10} 0x{:08x}\n", i18n::tr(M("dec.ieth")), "R_Key", *ib.ieth);
    if (ib.deth) {
      put(out, "  {}\n", i18n::tr(M("dec.deth")));
      field(out, "Q_Key", fmt::format("0x{:08x}", ib.deth->qkey), i18n::tr(M("dec.qkey")));
      field(out, "SrcQP", fmt::format("0x{:06x}", ib.deth->src_qp), i18n::tr(M("dec.srcqp")));
    }
    if (rec.mad && !rec.cm) {
      const wire::mad::Header& h = *rec.mad;
      put(out, "  {}\n", i18n::tr(M("dec.mad"), wire::mad::summary(h)));
      field(out, "MgmtClass", fmt::format("0x{:02x}", h.mgmt_class), i18n::tr(M("dec.mad_class")));
      field(out, "Method", fmt::format("0x{:02x}", h.method),
            i18n::tr(h.is_response() ? M("dec.mad_response") : M("dec.mad_request")));
      field(out, "Status", fmt::format("0x{:04x}", h.status), i18n::tr(M("dec.mad_status")));
      field(out, "TID", fmt::format("0x{:016x}", h.transaction_id), i18n::tr(M("dec.mad_tid")));
      field(out, "AttrID", fmt::format("0x{:04x}", h.attr_id), i18n::tr(M("dec.mad_attr")));
    }
    if (rec.cm) {
      put(out, "  {}\n", i18n::tr(M("dec.cm"), wire::cm::attr_name(wire::cm::attr_of(*rec.cm))));
      field(out, "CommID", fmt::format("0x{:08x}", wire::cm::local_comm_id(*rec.cm)),
            i18n::tr(M("dec.cm_comm")));
      if (const auto qp = wire::cm::announced_qp(*rec.cm)) {
        field(out, "LocalQPN", fmt::format("0x{:06x}", qp->qpn), i18n::tr(M("dec.cm_qpn")));
        field(out, "StartPSN", fmt::format("0x{:06x}", qp->starting_psn),
              i18n::tr(M("dec.cm_psn")));
      }
    }
    if (rec.op && (rec.op->has_payload || ib.payload_length > 0)) {
      if (ib.payload.size() < ib.payload_length)
        put(out, "  {}\n", i18n::tr(M("dec.payload_snap"), ib.payload_length, ib.payload.size()));
      else
        put(out, "  {}\n", i18n::tr(M("dec.payload"), ib.payload_length));
    }
    if (rec.icrc) {
      put(out, "  {}\n",
          rec.icrc->ok() ? i18n::tr(M("dec.icrc_ok"), rec.icrc->actual)
                         : i18n::tr(M("dec.icrc_bad"), rec.icrc->actual, rec.icrc->expected));
    } else if (rec.op) {
      put(out, "  {}\n", i18n::tr(M("dec.icrc_none")));
    }
    if (rec.vcrc)
      put(out, "  {}\n",
          rec.vcrc->ok() ? i18n::tr(M("dec.vcrc_ok"), rec.vcrc->actual)
                         : i18n::tr(M("dec.vcrc_bad"), rec.vcrc->actual, rec.vcrc->expected));
  }
  if (f.error && f.error->kind != wire::ErrorKind::UnknownOpcode)
    put(out, "  {}\n", i18n::tr(M("dec.error"), wire::describe(*f.error)));
  if (!rec.events.empty()) {
    put(out, "  {}\n", i18n::tr(M("dec.analysis")));
    for (const Event& e : rec.events)
      put(out, "    [{}] {}\n", severity_label(severity(e.type)), describe(e));
  }
}

void append_json_string(std::string_view s, std::string& out) {
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20)
          put(out, "\\u{:04x}", static_cast<unsigned>(c));
        else
          out.push_back(ch);
    }
  }
  out.push_back('"');
}

void render_event_json(const Event& e, std::string& out) {
  put(out, "{{\"type\":\"{}\",\"severity\":\"{}\",\"frame\":{}", event_name(e.type),
      severity_name(severity(e.type)), e.frame);
  if (e.related_frame != 0) put(out, ",\"related_frame\":{}", e.related_frame);
  // Packet-level problems keep other facts in the PSN fields (see
  // decode_record): no PSN is shown for them.
  if (e.type != EventType::Malformed && e.type != EventType::UnknownOpcode &&
      e.type != EventType::IcrcMismatch && e.type != EventType::PfcPause &&
      e.type != EventType::PfcStorm && e.type != EventType::CeWithoutCnp &&
      e.type != EventType::CnpNoSlowdown && e.type != EventType::CnpPaced)
    put(out, ",\"psn\":{}", e.psn);
  switch (e.type) {
    case EventType::AckMatched:
    case EventType::ReadMatched:
    case EventType::PsnGap:
    case EventType::Unacknowledged:
      put(out, ",\"psn_first\":{},\"count\":{}", e.psn_begin, e.count);
      break;
    case EventType::Timeout: put(out, ",\"timeout\":{},\"retry\":{}", e.code, e.count); break;
    case EventType::RetryExhausted:
    case EventType::StillRetrying: put(out, ",\"retries\":{}", e.count); break;
    case EventType::RnrNak:
    case EventType::RnrRetry: put(out, ",\"rnr_timer\":{}", e.code); break;
    case EventType::NakFatal: put(out, ",\"nak_code\":{}", e.code); break;
    case EventType::Retransmission: put(out, ",\"cause\":\"{}\"", cause_name(e.cause)); break;
    case EventType::AtomicMatched: put(out, ",\"orig\":{}", e.value); break;
    case EventType::OutOfOrder: put(out, ",\"tolerated\":{}", e.code != 0); break;
    case EventType::PfcPause:
      put(out, ",\"class_enable\":{},\"quanta\":{}", e.code, e.count);
      break;
    case EventType::PfcStorm:
      if (e.code < wire::kPriorities) put(out, ",\"priority\":{}", e.code);
      break;
    default: break;
  }
  if (e.delta_ns >= 0) put(out, ",\"delta_ns\":{}", e.delta_ns);
  out += ",\"text\":";
  append_json_string(describe(e), out);
  out.push_back('}');
}

void render_end_of_capture_json(const Event& e, std::string& out) {
  out += "{\"end_of_capture\":true,\"event\":";
  render_event_json(e, out);
  out += "}\n";
}

void render_packet_json(const PacketRecord& rec, std::string& out) {
  const wire::Frame& f = rec.decoded;
  put(out, "{{\"frame\":{},\"time\":{},\"src\":\"{}\",\"dst\":\"{}\",\"roce\":\"{}\"", rec.frame,
      detail::format_seconds(rec.time_ns), addr_or_dash(f.src_address()),
      addr_or_dash(f.dst_address()),
      f.roce == wire::RoceVersion::V1         ? "v1"
      : f.roce == wire::RoceVersion::NativeIb ? "ib"
                                              : "v2");
  if (f.udp) put(out, ",\"udp_sport\":{}", f.udp->src_port);
  if (f.lrh)
    put(out,
        ",\"lrh\":{{\"vl\":{},\"lver\":{},\"sl\":{},\"lnh\":{},\"dlid\":{},\"pktlen\":{},\"slid\":{"
        "}}}",
        f.lrh->vl, f.lrh->lver, f.lrh->sl, static_cast<int>(f.lrh->lnh), f.lrh->dlid,
        f.lrh->pkt_len_words, f.lrh->slid);
  // The IP ECN field (RFC 3168): 0 not ECN-capable, 1 and 2 ECN-capable,
  // 3 Congestion Experienced.
  if (f.ipv4)
    put(out, ",\"ecn\":{}", f.ipv4->tos & 3);
  else if (f.ipv6)
    put(out, ",\"ecn\":{}", f.ipv6->traffic_class & 3);
  if (rec.has_bth()) {
    const wire::IbPacket& ib = *f.ib;
    const wire::Bth& b = ib.bth;
    put(out, ",\"opcode\":{},\"opname\":", b.opcode);
    if (rec.op)
      append_json_string(
          fmt::format("{} {}", wire::transport_name(rec.op->transport), rec.op->name), out);
    else
      out += "null";
    put(out,
        ",\"dqpn\":{},\"psn\":{},\"ackreq\":{},\"se\":{},\"migreq\":{},\"padcnt\":{},\"tver\":{},"
        "\"pkey\":{},\"fecn\":{},\"becn\":{},\"payload_len\":{}",
        b.dest_qp, b.psn, b.ack_req, b.solicited, b.migreq, b.pad_count, b.tver, b.pkey, b.fecn,
        b.becn, ib.payload_length);
    if (ib.xrc_srq) put(out, ",\"xrceth\":{{\"srq\":{}}}", *ib.xrc_srq);
    if (ib.feth)
      put(out, ",\"feth\":{{\"placement_type\":{},\"selectivity\":{}}}", ib.feth->placement_type,
          ib.feth->selectivity);
    if (ib.reth)
      put(out, ",\"reth\":{{\"va\":{},\"rkey\":{},\"len\":{}}}", ib.reth->va, ib.reth->rkey,
          ib.reth->dma_len);
    if (ib.aeth)
      put(out, ",\"aeth\":{{\"syndrome\":{},\"msn\":{}}}", ib.aeth->syndrome, ib.aeth->msn);
    if (ib.atomic_eth)
      put(out, ",\"atomiceth\":{{\"va\":{},\"rkey\":{},\"swap_add\":{},\"compare\":{}}}",
          ib.atomic_eth->va, ib.atomic_eth->rkey, ib.atomic_eth->swap_add, ib.atomic_eth->compare);
    if (ib.atomic_ack_eth) put(out, ",\"atomicack\":{{\"orig\":{}}}", ib.atomic_ack_eth->orig);
    if (ib.immdt) put(out, ",\"immdt\":{}", *ib.immdt);
    if (ib.ieth) put(out, ",\"ieth\":{}", *ib.ieth);
    if (ib.deth) put(out, ",\"deth\":{{\"qkey\":{},\"srcqp\":{}}}", ib.deth->qkey, ib.deth->src_qp);
    if (ib.icrc) {
      put(out, ",\"icrc\":{{\"value\":{},\"ok\":", *ib.icrc);
      if (rec.icrc)
        put(out, "{}}}", rec.icrc->ok());
      else
        out += "null}";
    }
    if (f.vcrc) {
      put(out, ",\"vcrc\":{{\"value\":{},\"ok\":", *f.vcrc);
      if (rec.vcrc)
        put(out, "{}}}", rec.vcrc->ok());
      else
        out += "null}";
    }
  }
  if (rec.mad) {
    const wire::mad::Header& h = *rec.mad;
    put(out,
        ",\"mad\":{{\"class\":{},\"method\":{},\"status\":{},\"tid\":{},\"attr_id\":{},"
        "\"attr_mod\":{},\"summary\":",
        h.mgmt_class, h.method, h.status, h.transaction_id, h.attr_id, h.attr_modifier);
    append_json_string(wire::mad::summary(h), out);
    out.push_back('}');
  }
  if (rec.cm) {
    put(out, ",\"cm\":{{\"type\":\"{}\",\"local_comm_id\":{},\"remote_comm_id\":{}",
        wire::cm::attr_name(wire::cm::attr_of(*rec.cm)), wire::cm::local_comm_id(*rec.cm),
        wire::cm::remote_comm_id(*rec.cm));
    if (const auto qp = wire::cm::announced_qp(*rec.cm))
      put(out, ",\"local_qpn\":{},\"starting_psn\":{}", qp->qpn, qp->starting_psn);
    out.push_back('}');
  }
  if (rec.conversation != 0) put(out, ",\"conversation\":{}", rec.conversation);
  if (f.error) {
    put(out, ",\"malformed\":{},\"error\":", rec.malformed());
    append_json_string(wire::describe(*f.error), out);
  }
  out += ",\"events\":[";
  for (std::size_t i = 0; i < rec.events.size(); ++i) {
    if (i) out.push_back(',');
    render_event_json(rec.events[i], out);
  }
  out += "]}\n";
}

void render_pause_json(const PacketRecord& rec, std::string& out) {
  const wire::PauseFrame& p = *rec.pause;
  put(out, "{{\"frame\":{},\"time\":{},\"src_mac\":\"{}\",\"dst_mac\":\"{}\"", rec.frame,
      detail::format_seconds(rec.time_ns), wire::mac_to_string(p.src), wire::mac_to_string(p.dst));
  put(out, ",\"pause\":{{\"opcode\":{},\"class_enable\":{},\"quanta\":[", p.opcode, p.class_enable);
  const std::size_t n = p.pfc() ? wire::kPriorities : 1;
  for (std::size_t i = 0; i < n; ++i) put(out, "{}{}", i ? "," : "", p.quanta[i]);
  out += "]}";
  out += ",\"events\":[";
  for (std::size_t i = 0; i < rec.events.size(); ++i) {
    if (i) out.push_back(',');
    render_event_json(rec.events[i], out);
  }
  out += "]}\n";
}

namespace {

std::string pfc_who(const PfcSummary& p) {
  return p.priority ? i18n::tr(M("word.priority"), *p.priority) : i18n::tr(M("word.whole_link"));
}

std::string speed_source(CaptureStats::SpeedSource s) {
  switch (s) {
    case CaptureStats::SpeedSource::Given: return i18n::tr(M("sum.speed_given"));
    case CaptureStats::SpeedSource::Inferred: return i18n::tr(M("sum.speed_inferred"));
    case CaptureStats::SpeedSource::Assumed:
    case CaptureStats::SpeedSource::None: break;
  }
  return i18n::tr(M("sum.speed_assumed"));
}

std::string_view speed_source_name(CaptureStats::SpeedSource s) {
  switch (s) {
    case CaptureStats::SpeedSource::Given: return "given";
    case CaptureStats::SpeedSource::Inferred: return "inferred";
    case CaptureStats::SpeedSource::Assumed: return "assumed";
    case CaptureStats::SpeedSource::None: break;
  }
  return "none";
}

void render_pfc_text(const CaptureStats& st, std::span<const PfcSummary> pfc, std::string& out) {
  if (pfc.empty()) return;
  put(out, "{}\n",
      i18n::tr(M("sum.pfc_head"), st.pause_frames, st.link_speed_bps / 1'000'000'000,
               speed_source(st.link_speed_source)));
  for (const PfcSummary& p : pfc) {
    out +=
        i18n::tr(M("sum.pfc"), wire::mac_to_string(p.src), pfc_who(p), p.frames, p.xon_frames,
                 detail::format_duration(p.paused_ns), detail::format_duration(p.longest_pause_ns));
    if (p.storms) out += i18n::tr(M("sum.pfc_storms"), p.storms);
    if (p.paused_at_end) out += i18n::tr(M("sum.pfc_at_end"));
    out.push_back('\n');
  }
}

}  // namespace

namespace {

// A summary of a whole cluster writes a dozen lines for each of hundreds of
// thousands of conversations, each a catalog message whose text is known
// only at run time: fmt would parse each text again for every line, most of
// the cost of the summary. A text made only of literal text and "{}" or
// "{N}" fields is split once (per thread) into pieces and put together
// here; any other text (format specifications, escaped braces) is left to
// fmt, so that every line reads exactly as fmt would write it.

struct Piece {
  std::string_view text;  // literal text before the field
  int arg = -1;           // the field's argument, -1 for none (the text's end)
};

struct SplitText {
  bool simple = false;
  int max_arg = -1;
  std::vector<Piece> pieces;
};

SplitText split_text(std::string_view text) {
  SplitText r;
  int next_auto = 0;
  bool automatic = false, manual = false;
  std::size_t lit = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') return r;  // "}}" or a stray brace: fmt's to judge
    if (text[i] != '{') continue;
    const std::size_t close = text.find('}', i);
    if (close == std::string_view::npos) return r;
    const std::string_view field = text.substr(i + 1, close - i - 1);
    int arg = 0;
    if (field.empty()) {
      automatic = true;
      arg = next_auto++;
    } else {
      manual = true;
      for (const char ch : field) {
        if (ch < '0' || ch > '9' || arg > 1000) return r;  // a specification, "{{", a name
        arg = arg * 10 + (ch - '0');
      }
    }
    if (automatic && manual) return r;
    r.pieces.push_back(Piece{text.substr(lit, i - lit), arg});
    r.max_arg = std::max(r.max_arg, arg);
    i = close;
    lit = close + 1;
  }
  r.pieces.push_back(Piece{text.substr(lit), -1});
  r.simple = true;
  return r;
}

/// The pieces of a catalog text, split the first time this thread sees it
/// (texts are static: their address identifies them).
const SplitText& split_once(std::string_view text) {
  thread_local std::unordered_map<const char*, SplitText> cache;
  auto it = cache.find(text.data());
  if (it == cache.end()) it = cache.emplace(text.data(), split_text(text)).first;
  return it->second;
}

/// Copies `n` bytes to `w` and returns the end: a line's pieces are mostly a
/// few bytes long, copied here without a call (memcpy of a size known only
/// at run time is one), by overlapping moves of a fixed size.
inline char* put_bytes(char* w, const char* s, std::size_t n) noexcept {
  if (n >= 8 && n <= 16) {
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(w, &a, 8);
    std::memcpy(w + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    std::uint32_t a = 0, b = 0;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(w, &a, 4);
    std::memcpy(w + n - 4, &b, 4);
  } else if (n > 0 && n < 4) {
    w[0] = s[0];
    w[n / 2] = s[n / 2];
    w[n - 1] = s[n - 1];
  } else if (n > 16) {
    std::memcpy(w, s, n);
  }
  return w + n;
}

/// One argument of a line as text: a number written with std::to_chars
/// (what fmt writes for "{}"), or a string as it is.
class LineArg {
 public:
  // NOLINTBEGIN(google-explicit-constructor): built from each argument in place
  LineArg(std::string_view s) : text_(s) {}
  LineArg(const std::string& s) : text_(s) {}
  LineArg(const char* s) : text_(s) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
      LineArg(T v) {
    const auto r = std::to_chars(digits_.data(), digits_.data() + digits_.size(), v);
    len_ = static_cast<std::size_t>(r.ptr - digits_.data());
    number_ = true;
  }
  // NOLINTEND(google-explicit-constructor)
  [[nodiscard]] std::string_view view() const noexcept {
    return number_ ? std::string_view(digits_.data(), len_) : text_;
  }

 private:
  std::string_view text_;
  std::array<char, 24> digits_{};
  std::size_t len_ = 0;
  bool number_ = false;
};

/// One line of a message in the user's language, written into `out`.
template <class... Args>
void line(std::string& out, const i18n::Message& m, const Args&... args) {
  const std::string_view text = i18n::text(m);
  const SplitText& split = split_once(text);
  if (!split.simple || split.max_arg >= static_cast<int>(sizeof...(Args))) {
    fmt::format_to(std::back_inserter(out), fmt::runtime(text), args...);
    out.push_back('\n');
    return;
  }
  // Measured, then made room for once and copied in: a summary of a whole
  // cluster writes millions of lines, and appending piece by piece checked
  // the string's room for each.
  const std::array<LineArg, sizeof...(Args)> a{LineArg(args)...};
  std::size_t n = 1;  // the newline
  for (const Piece& p : split.pieces)
    n += p.text.size() + (p.arg >= 0 ? a[static_cast<std::size_t>(p.arg)].view().size() : 0);
  const std::size_t at = out.size();
  out.resize(at + n);
  char* w = out.data() + at;
  for (const Piece& p : split.pieces) {
    w = put_bytes(w, p.text.data(), p.text.size());
    if (p.arg >= 0) {
      const std::string_view v = a[static_cast<std::size_t>(p.arg)].view();
      w = put_bytes(w, v.data(), v.size());
    }
  }
  *w = '\n';
}

void summary_text_head(const CaptureStats& st, std::size_t conversations, std::string& out) {
  put(out, "{}\n",
      i18n::tr(M("sum.capture"), st.frames, st.roce, st.roce_v1, st.other, st.malformed,
               st.snap_truncated, st.unknown_opcode, st.icrc_errors, st.datagrams));
  if (st.native_ib) put(out, "{}\n", i18n::tr(M("sum.native_ib"), st.native_ib, st.vcrc_errors));
  if (st.untracked) put(out, "{}\n", i18n::tr(M("sum.untracked"), st.untracked));
  if (st.cnps_unattributed)
    put(out, "{}\n", i18n::tr(M("sum.cnps_unattributed"), st.cnps_unattributed));
  put(out, "{}\n", i18n::tr(M("sum.duration"), detail::format_seconds(st.last_ns - st.first_ns)));
  if (conversations == 0) put(out, "{}\n", i18n::tr(M("sum.none")));
}

void summary_text_conversation(const ConversationSummary& v, std::string& out) {
  using detail::format_duration;
  out.push_back('\n');
  line(out, M("sum.conv"), v.id, EndpointText(v.a).view(), EndpointText(v.b).view(), v.packets,
       detail::format_seconds(v.last_ns - v.first_ns));
  for (const ChannelSummary& c : v.channels) {
    line(out, M("sum.channel"), EndpointText(c.requester).view(), EndpointText(c.responder).view());
    line(out, M("sum.packets"), c.request_packets, c.response_packets);
    line(out, M("sum.messages"), c.sends, c.writes, c.reads, c.compare_swaps, c.fetch_adds);
    line(out, M("sum.payload"), c.payload_bytes, c.unique_payload_bytes);
    if (c.path_mtu == 0)
      line(out, M("sum.mtu_unknown"));
    else
      line(out, c.path_mtu_exact ? M("sum.mtu_exact") : M("sum.mtu_bound"), c.path_mtu);
    line(out, M("sum.loss"), c.retransmitted_packets, c.psn_gaps, c.out_of_order);
    line(out, M("sum.acks"), c.acks, c.duplicate_acks);
    line(out, M("sum.naks"), c.naks[0], c.naks[1], c.naks[2], c.naks[3], c.naks[4], c.go_back_n);
    if (c.rnr_naks) line(out, M("sum.rnr"), c.rnr_naks, format_duration(c.rnr_wait_ns));
    if (c.timeouts)
      line(out, M("sum.timeouts"), c.timeouts, format_duration(c.timeout_gap_ns),
           c.timeout_exponent ? fmt::format("{}", *c.timeout_exponent) : "?", c.max_retries);
    else
      line(out, M("sum.no_timeouts"));
    if (c.retry_exhausted) line(out, M("sum.exhausted"));
    if (c.still_retrying) line(out, M("sum.still_retrying"));
    if (c.rtt_samples)
      line(out, M("sum.rtt"), format_duration(c.rtt_min_ns), format_duration(c.rtt_median_ns),
           format_duration(c.rtt_max_ns), c.rtt_samples);
    else
      line(out, M("sum.rtt_none"));
    line(out, M("sum.goodput"), detail::format_rate(c.goodput_bps));
    if (c.cnps || c.icrc_errors) line(out, M("sum.cnp"), c.cnps, c.icrc_errors);
    if (c.cnps || c.ecn_ce)
      line(out, M("sum.congestion"), c.ecn_ce, c.cnps, format_duration(c.cnp_interval_min_ns),
           format_duration(c.cnp_interval_median_ns), format_duration(c.ce_to_cnp_median_ns));
    if (c.fecn || c.becn) line(out, M("sum.fecn"), c.fecn, c.becn);
    if (c.rate_cnps)
      line(out, M("sum.rate_cnp"), format_duration(c.rate_window_ns), c.rate_cnps,
           detail::format_rate(c.rate_before_cnp_bps / 8),
           detail::format_rate(c.rate_after_cnp_bps / 8));
  }
}

}  // namespace

void render_summary_text(const CaptureStats& st, std::span<const ConversationSummary> convs,
                         std::string& out, std::span<const PfcSummary> pfc) {
  summary_text_head(st, convs.size(), out);
  for (const ConversationSummary& v : convs) summary_text_conversation(v, out);
  render_pfc_text(st, pfc, out);
}

namespace {

using Json = nlohmann::ordered_json;  // keys in the order written, as documented

Json endpoint_json(const Endpoint& e) {
  return {{"addr", e.addr.to_string()}, {"qpn", e.qpn_known ? Json(e.qpn) : Json(nullptr)}};
}

Json ns_or_null(std::int64_t v) {
  return v < 0 ? Json(nullptr) : Json(v);
}

Json channel_json(const ChannelSummary& c) {
  return {
      {"requester", endpoint_json(c.requester)},
      {"responder", endpoint_json(c.responder)},
      {"request_packets", c.request_packets},
      {"response_packets", c.response_packets},
      {"messages",
       {{"send", c.sends},
        {"write", c.writes},
        {"read", c.reads},
        {"compare_swap", c.compare_swaps},
        {"fetch_add", c.fetch_adds}}},
      {"payload_bytes", c.payload_bytes},
      {"unique_payload_bytes", c.unique_payload_bytes},
      {"path_mtu", c.path_mtu},
      {"path_mtu_exact", c.path_mtu_exact},
      {"retransmitted_packets", c.retransmitted_packets},
      {"psn_gaps", c.psn_gaps},
      {"out_of_order", c.out_of_order},
      {"acks", c.acks},
      {"duplicate_acks", c.duplicate_acks},
      {"naks",
       {{"psn_sequence", c.naks[0]},
        {"invalid_request", c.naks[1]},
        {"remote_access", c.naks[2]},
        {"remote_operational", c.naks[3]},
        {"invalid_rd", c.naks[4]}}},
      {"go_back_n", c.go_back_n},
      {"rnr_naks", c.rnr_naks},
      {"timeouts", c.timeouts},
      {"max_retries", c.max_retries},
      {"retry_exhausted", c.retry_exhausted},
      {"still_retrying", c.still_retrying},
      {"cnps", c.cnps},
      {"icrc_errors", c.icrc_errors},
      {"rtt_samples", c.rtt_samples},
      {"timeout", c.timeout_exponent ? Json(*c.timeout_exponent) : Json(nullptr)},
      {"timeout_gap_ns", ns_or_null(c.timeout_gap_ns)},
      {"rnr_wait_ns", ns_or_null(c.rnr_wait_ns)},
      {"rtt_min_ns", ns_or_null(c.rtt_min_ns)},
      {"rtt_median_ns", ns_or_null(c.rtt_median_ns)},
      {"rtt_max_ns", ns_or_null(c.rtt_max_ns)},
      // Bytes per second to a tenth: more digits would be noise.
      {"goodput_bytes_per_s", std::round(c.goodput_bps * 10) / 10},
      {"ecn_ce", c.ecn_ce},
      {"fecn", c.fecn},
      {"becn", c.becn},
      {"cnp_interval_min_ns", ns_or_null(c.cnp_interval_min_ns)},
      {"cnp_interval_median_ns", ns_or_null(c.cnp_interval_median_ns)},
      {"ce_to_cnp_median_ns", ns_or_null(c.ce_to_cnp_median_ns)},
      {"rate_cnps", c.rate_cnps},
      {"rate_before_cnp_bps",
       c.rate_cnps ? Json(std::round(c.rate_before_cnp_bps)) : Json(nullptr)},
      {"rate_after_cnp_bps", c.rate_cnps ? Json(std::round(c.rate_after_cnp_bps)) : Json(nullptr)},
      {"rate", {{"bin_ns", c.rate_bin_ns}, {"bytes", c.rate_bytes}}},
  };
}

}  // namespace

namespace {

// The summary document, {"capture":{...},"conversations":[...],"pfc":[...]},
// is written in pieces: each piece is dumped as nlohmann-json dumps it inside
// the whole (compact, no spaces), so the pieces put together are the document.

void summary_json_head(const CaptureStats& st, std::string& out) {
  const Json capture{{"frames", st.frames},
                     {"roce", st.roce},
                     {"roce_v1", st.roce_v1},
                     {"native_ib", st.native_ib},
                     {"vcrc_errors", st.vcrc_errors},
                     {"other", st.other},
                     {"malformed", st.malformed},
                     {"snap_truncated", st.snap_truncated},
                     {"unknown_opcode", st.unknown_opcode},
                     {"icrc_errors", st.icrc_errors},
                     {"datagrams", st.datagrams},
                     {"untracked", st.untracked},
                     {"cnps_unattributed", st.cnps_unattributed},
                     {"bytes", st.bytes},
                     {"duration_ns", st.last_ns - st.first_ns},
                     {"pause_frames", st.pause_frames},
                     {"link_speed_bps", st.link_speed_bps},
                     {"link_speed_source", speed_source_name(st.link_speed_source)}};
  out += "{\"capture\":";
  out += capture.dump();
  out += ",\"conversations\":[";
}

void summary_json_conversation(const ConversationSummary& v, bool first, std::string& out) {
  Json channels = Json::array();
  for (const ChannelSummary& c : v.channels) channels.push_back(channel_json(c));
  const Json conv{{"id", v.id},
                  {"a", endpoint_json(v.a)},
                  {"b", endpoint_json(v.b)},
                  {"packets", v.packets},
                  {"duration_ns", v.last_ns - v.first_ns},
                  {"channels", std::move(channels)}};
  if (!first) out.push_back(',');
  out += conv.dump();
}

void summary_json_tail(std::span<const PfcSummary> pfc, std::string& out) {
  Json pauses = Json::array();
  for (const PfcSummary& p : pfc)
    pauses.push_back({{"src", wire::mac_to_string(p.src)},
                      {"priority", p.priority ? Json(*p.priority) : Json(nullptr)},
                      {"frames", p.frames},
                      {"xon_frames", p.xon_frames},
                      {"paused_ns", p.paused_ns},
                      {"longest_pause_ns", p.longest_pause_ns},
                      {"storms", p.storms},
                      {"paused_at_end", p.paused_at_end}});
  out += "],\"pfc\":";
  out += pauses.dump();
  out += "}\n";
}

}  // namespace

void render_summary_json(const CaptureStats& st, std::span<const ConversationSummary> convs,
                         std::string& out, std::span<const PfcSummary> pfc) {
  summary_json_head(st, out);
  for (std::size_t i = 0; i < convs.size(); ++i) summary_json_conversation(convs[i], i == 0, out);
  summary_json_tail(pfc, out);
}

SummaryWriter::SummaryWriter(Format format, const CaptureStats& stats, std::size_t conversations,
                             std::string& out)
    : format_(format), stats_(stats), out_(out) {
  if (format_ == Format::Json)
    summary_json_head(stats_, out_);
  else
    summary_text_head(stats_, conversations, out_);
}

void SummaryWriter::conversation(const ConversationSummary& v) {
  conversation(format_, v, written_++, out_);
}

void SummaryWriter::conversation(Format format, const ConversationSummary& v, std::size_t index,
                                 std::string& out) {
  if (format == Format::Json)
    summary_json_conversation(v, index == 0, out);
  else
    summary_text_conversation(v, out);
}

void SummaryWriter::end(std::span<const PfcSummary> pfc) {
  if (format_ == Format::Json)
    summary_json_tail(pfc, out_);
  else
    render_pfc_text(stats_, pfc, out_);
}

void render_payload_hex(const PacketRecord& rec, bool compact, std::string& out) {
  if (!rec.decoded.ib) return;
  const wire::Bytes p = rec.decoded.ib->payload;
  static constexpr char kHex[] = "0123456789abcdef";
  if (compact) {
    for (std::uint8_t b : p) {
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
    return;
  }
  if (!p.empty()) put(out, "  {}\n", i18n::tr(M("dec.payload_hex")));
  for (std::size_t at = 0; at < p.size(); at += 16) {
    put(out, "    {:04x}  ", at);
    const std::size_t n = std::min<std::size_t>(16, p.size() - at);
    for (std::size_t i = 0; i < 16; ++i) {
      if (i < n) {
        out.push_back(kHex[p[at + i] >> 4]);
        out.push_back(kHex[p[at + i] & 0xF]);
        out.push_back(' ');
      } else {
        out += "   ";
      }
    }
    out += " |";
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t c = p[at + i];
      out.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '.');
    }
    out += "|\n";
  }
}

}  // namespace rdmalab::dissect
