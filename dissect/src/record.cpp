#include "rdmalab/dissect/record.hpp"

namespace rdmalab::dissect {

bool PacketRecord::malformed() const noexcept {
  // Snap-length truncation is the capture's choice, not the packet's fault;
  // an unknown opcode is reported on its own.
  return decoded.error && decoded.error->kind != wire::ErrorKind::SnapTruncated &&
         decoded.error->kind != wire::ErrorKind::UnknownOpcode;
}

bool PacketRecord::has_bth() const noexcept {
  // decode_frame leaves an IbPacket in place when the bytes ended inside the
  // BTH; its fields are then not real.
  return decoded.ib.has_value() && !(decoded.error && decoded.error->layer == wire::Layer::Bth &&
                                     decoded.error->kind != wire::ErrorKind::UnknownOpcode);
}

void decode_record(wire::Bytes captured, std::size_t original_length, wire::LinkType link,
                   std::uint64_t frame, std::int64_t time_ns, PacketRecord& rec, bool check_icrc) {
  rec.frame = frame;
  rec.time_ns = time_ns;
  rec.captured_length = captured.size();
  rec.original_length = std::max(original_length, captured.size());
  rec.conversation = 0;
  rec.channel = -1;
  rec.rtt_ns = -1;
  rec.events.clear();
  wire::decode_frame(captured, link, rec.original_length, rec.decoded);
  rec.op = nullptr;
  rec.icrc.reset();
  rec.vcrc.reset();
  rec.cm.reset();
  rec.mad.reset();
  rec.pause.reset();
  if (rec.decoded.eth && rec.decoded.eth->ethertype == wire::kEthMacControl)
    rec.pause = wire::decode_pause(captured, link);
  if (!rec.decoded.is_roce() || !rec.has_bth()) {
    if (rec.malformed()) {
      const wire::DecodeError& err = *rec.decoded.error;
      Event e{EventType::Malformed, frame};
      e.code = static_cast<std::uint8_t>(err.kind);
      e.count = static_cast<std::uint32_t>(err.layer);
      e.value = err.offset;
      e.psn = static_cast<std::uint32_t>(err.needed);
      e.psn_begin = static_cast<std::uint32_t>(err.available);
      rec.events.push_back(e);
    }
    return;
  }
  rec.op = wire::find_opcode(rec.decoded.ib->bth.opcode);
  if (rec.decoded.error && rec.decoded.error->kind == wire::ErrorKind::UnknownOpcode) {
    Event e{EventType::UnknownOpcode, frame};
    e.code = rec.decoded.ib->bth.opcode;
    rec.events.push_back(e);
  } else if (rec.malformed()) {
    const wire::DecodeError& err = *rec.decoded.error;
    Event e{EventType::Malformed, frame};
    e.code = static_cast<std::uint8_t>(err.kind);
    e.count = static_cast<std::uint32_t>(err.layer);
    e.value = err.offset;
    e.psn = static_cast<std::uint32_t>(err.needed);
    e.psn_begin = static_cast<std::uint32_t>(err.available);
    rec.events.push_back(e);
  }
  const wire::IbPacket& ib = *rec.decoded.ib;
  if (rec.op != nullptr && rec.op->transport == wire::Transport::UD && ib.bth.dest_qp <= 1 &&
      !rec.decoded.error) {
    rec.mad = wire::mad::parse_header(ib.payload);
    if (ib.bth.dest_qp == 1) rec.cm = wire::cm::decode(ib.payload);
  }
  if (check_icrc) check_record_crc(captured, rec);
}

void check_record_crc(wire::Bytes captured, PacketRecord& rec) {
  if (!rec.decoded.is_roce() || !rec.has_bth()) return;
  rec.icrc = wire::check_icrc(rec.decoded, captured);
  rec.vcrc = wire::check_vcrc(rec.decoded, captured);
  if (rec.icrc && !rec.icrc->ok()) {
    Event e{EventType::IcrcMismatch, rec.frame};
    e.value = (std::uint64_t{rec.icrc->expected} << 32) | rec.icrc->actual;
    rec.events.push_back(e);
  }
  if (rec.vcrc && !rec.vcrc->ok()) {
    Event e{EventType::VcrcMismatch, rec.frame};
    e.value = (std::uint64_t{rec.vcrc->expected} << 32) | rec.vcrc->actual;
    rec.events.push_back(e);
  }
}

}  // namespace rdmalab::dissect
