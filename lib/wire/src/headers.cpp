#include "rdmalab/wire/headers.hpp"

#include <algorithm>

namespace rdmalab::wire {

std::string_view layer_name(Layer l) noexcept {
  switch (l) {
    case Layer::Link: return "link layer";
    case Layer::Ethernet: return "Ethernet";
    case Layer::Vlan: return "802.1Q VLAN";
    case Layer::Ipv4: return "IPv4";
    case Layer::Ipv6: return "IPv6";
    case Layer::Udp: return "UDP";
    case Layer::Grh: return "GRH";
    case Layer::Bth: return "BTH";
    case Layer::Reth: return "RETH";
    case Layer::Aeth: return "AETH";
    case Layer::AtomicEth: return "AtomicETH";
    case Layer::AtomicAckEth: return "AtomicAckETH";
    case Layer::ImmDt: return "ImmDt";
    case Layer::Ieth: return "IETH";
    case Layer::Deth: return "DETH";
    case Layer::CnpPad: return "CNP";
    case Layer::Payload: return "payload";
    case Layer::Icrc: return "ICRC";
  }
  return "?";
}

Layer layer_of(Ext e) noexcept {
  switch (e) {
    case Ext::RETH: return Layer::Reth;
    case Ext::AETH: return Layer::Aeth;
    case Ext::AtomicETH: return Layer::AtomicEth;
    case Ext::AtomicAckETH: return Layer::AtomicAckEth;
    case Ext::ImmDt: return Layer::ImmDt;
    case Ext::IETH: return Layer::Ieth;
    case Ext::DETH: return Layer::Deth;
    case Ext::CnpPad: return Layer::CnpPad;
  }
  return Layer::Payload;
}

bool decode_bth(Reader& r, Bth& b) noexcept {
  if (!r.has(kBthSize)) return false;
  std::uint8_t b1 = 0, b4 = 0, b8 = 0;
  (void)r.u8(b.opcode);
  (void)r.u8(b1);
  (void)r.u16(b.pkey);
  (void)r.u8(b4);
  (void)r.u24(b.dest_qp);
  (void)r.u8(b8);
  (void)r.u24(b.psn);
  b.solicited = (b1 & 0x80) != 0;
  b.migreq = (b1 & 0x40) != 0;
  b.pad_count = (b1 >> 4) & 0x3;
  b.tver = b1 & 0x0F;
  b.fecn = (b4 & 0x80) != 0;
  b.becn = (b4 & 0x40) != 0;
  b.resv6 = b4 & 0x3F;
  b.ack_req = (b8 & 0x80) != 0;
  b.resv7 = b8 & 0x7F;
  return true;
}

void encode_bth(const Bth& b, Writer& w) noexcept {
  w.u8(b.opcode);
  w.u8(static_cast<std::uint8_t>((b.solicited ? 0x80 : 0) | (b.migreq ? 0x40 : 0) |
                                 ((b.pad_count & 0x3) << 4) | (b.tver & 0x0F)));
  w.u16(b.pkey);
  w.u8(static_cast<std::uint8_t>((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0) | (b.resv6 & 0x3F)));
  w.u24(b.dest_qp & 0xFFFFFF);
  w.u8(static_cast<std::uint8_t>((b.ack_req ? 0x80 : 0) | (b.resv7 & 0x7F)));
  w.u24(b.psn & 0xFFFFFF);
}

bool decode_grh(Reader& r, Grh& g) noexcept {
  if (!r.has(kGrhSize)) return false;
  std::uint32_t w0 = 0;
  (void)r.u32(w0);
  g.ip_version = static_cast<std::uint8_t>(w0 >> 28);
  g.traffic_class = static_cast<std::uint8_t>(w0 >> 20);
  g.flow_label = w0 & 0xFFFFF;
  (void)r.u16(g.payload_length);
  (void)r.u8(g.next_header);
  (void)r.u8(g.hop_limit);
  (void)r.array(g.sgid);
  (void)r.array(g.dgid);
  return true;
}

void encode_grh(const Grh& g, Writer& w) noexcept {
  w.u32((std::uint32_t{g.ip_version} << 28) | (std::uint32_t{g.traffic_class} << 20) |
        (g.flow_label & 0xFFFFF));
  w.u16(g.payload_length);
  w.u8(g.next_header);
  w.u8(g.hop_limit);
  w.bytes(g.sgid);
  w.bytes(g.dgid);
}

namespace {

bool decode_ext(Ext e, Reader& r, IbPacket& p) noexcept {
  if (!r.has(ext_size(e))) return false;
  switch (e) {
    case Ext::RETH: {
      Reth h;
      (void)r.u64(h.va);
      (void)r.u32(h.rkey);
      (void)r.u32(h.dma_len);
      p.reth = h;
      break;
    }
    case Ext::AETH: {
      Aeth h;
      (void)r.u8(h.syndrome);
      (void)r.u24(h.msn);
      p.aeth = h;
      break;
    }
    case Ext::AtomicETH: {
      AtomicEth h;
      (void)r.u64(h.va);
      (void)r.u32(h.rkey);
      (void)r.u64(h.swap_add);
      (void)r.u64(h.compare);
      p.atomic_eth = h;
      break;
    }
    case Ext::AtomicAckETH: {
      AtomicAckEth h;
      (void)r.u64(h.orig);
      p.atomic_ack_eth = h;
      break;
    }
    case Ext::ImmDt: {
      std::uint32_t v = 0;
      (void)r.u32(v);
      p.immdt = v;
      break;
    }
    case Ext::IETH: {
      std::uint32_t v = 0;
      (void)r.u32(v);
      p.ieth = v;
      break;
    }
    case Ext::DETH: {
      Deth h;
      (void)r.u32(h.qkey);
      (void)r.u8(h.resv);
      (void)r.u24(h.src_qp);
      p.deth = h;
      break;
    }
    case Ext::CnpPad: (void)r.skip(ext_size(e)); break;
  }
  return true;
}

void encode_ext(Ext e, const IbPacket& p, Writer& w) noexcept {
  switch (e) {
    case Ext::RETH: {
      const Reth h = p.reth.value_or(Reth{});
      w.u64(h.va);
      w.u32(h.rkey);
      w.u32(h.dma_len);
      break;
    }
    case Ext::AETH: {
      const Aeth h = p.aeth.value_or(Aeth{});
      w.u8(h.syndrome);
      w.u24(h.msn & 0xFFFFFF);
      break;
    }
    case Ext::AtomicETH: {
      const AtomicEth h = p.atomic_eth.value_or(AtomicEth{});
      w.u64(h.va);
      w.u32(h.rkey);
      w.u64(h.swap_add);
      w.u64(h.compare);
      break;
    }
    case Ext::AtomicAckETH: w.u64(p.atomic_ack_eth.value_or(AtomicAckEth{}).orig); break;
    case Ext::ImmDt: w.u32(p.immdt.value_or(0)); break;
    case Ext::IETH: w.u32(p.ieth.value_or(0)); break;
    case Ext::DETH: {
      const Deth h = p.deth.value_or(Deth{});
      w.u32(h.qkey);
      w.u8(h.resv);
      w.u24(h.src_qp & 0xFFFFFF);
      break;
    }
    case Ext::CnpPad: w.zeros(ext_size(e)); break;
  }
}

}  // namespace

std::optional<DecodeError> decode_ib(Bytes bytes, std::size_t bth_offset, std::size_t end,
                                     IbPacket& out) noexcept {
  // The part of the transport packet that was captured.
  const std::size_t captured_end = end < bytes.size() ? end : bytes.size();
  const bool snapped = end > bytes.size();
  Reader r(bytes.first(captured_end), bth_offset);
  auto fail = [&](ErrorKind kind, Layer layer, std::size_t need) {
    // A header cut by the snap length is not a malformed packet.
    const auto k = (kind == ErrorKind::Truncated && snapped) ? ErrorKind::SnapTruncated : kind;
    return DecodeError{k, layer, r.offset(), need, r.remaining()};
  };

  if (!decode_bth(r, out.bth)) return fail(ErrorKind::Truncated, Layer::Bth, kBthSize);
  const OpcodeInfo* info = find_opcode(out.bth.opcode);
  if (info == nullptr) {
    // Unknown opcode: keep everything after the BTH as raw payload.
    out.payload = r.rest();
    out.payload_length = end - r.offset();
    return DecodeError{ErrorKind::UnknownOpcode, Layer::Bth, bth_offset, 0, 0};
  }
  for (Ext e : info->exts())
    if (!decode_ext(e, r, out)) return fail(ErrorKind::Truncated, layer_of(e), ext_size(e));

  // What remains on the wire is payload + pad + ICRC.
  const std::size_t after_headers = r.offset();
  if (end < after_headers + kIcrcSize)
    return DecodeError{ErrorKind::Truncated, Layer::Icrc, after_headers, kIcrcSize,
                       end - after_headers};
  const std::size_t wire_payload_and_pad = end - after_headers - kIcrcSize;
  if (out.bth.pad_count > wire_payload_and_pad)
    return DecodeError{ErrorKind::BadPadding, Layer::Payload, after_headers, out.bth.pad_count,
                       wire_payload_and_pad};
  out.payload_length = wire_payload_and_pad - out.bth.pad_count;
  const std::size_t captured_payload = std::min(out.payload_length, captured_end - after_headers);
  out.payload = bytes.subspan(after_headers, captured_payload);
  if (snapped) {
    // ICRC not captured (or only partly): report where the capture stopped.
    if (captured_end < end)
      return DecodeError{ErrorKind::SnapTruncated,
                         captured_payload < out.payload_length ? Layer::Payload : Layer::Icrc,
                         captured_end, end - captured_end, 0};
  }
  out.icrc = load_le32(bytes.data() + end - kIcrcSize);
  return std::nullopt;
}

std::size_t ib_encoded_size(const IbPacket& p) noexcept {
  const OpcodeInfo* info = find_opcode(p.bth.opcode);
  if (info == nullptr) return 0;
  return kBthSize + info->ext_bytes() + p.payload.size() + pad_for(p.payload.size()) + kIcrcSize;
}

bool encode_ib(const IbPacket& p, Writer& w) noexcept {
  const OpcodeInfo* info = find_opcode(p.bth.opcode);
  if (info == nullptr) return false;
  Bth bth = p.bth;
  bth.pad_count = pad_for(p.payload.size());
  encode_bth(bth, w);
  for (Ext e : info->exts()) encode_ext(e, p, w);
  w.bytes(p.payload);
  w.zeros(bth.pad_count);
  w.zeros(kIcrcSize);  // filled in by the frame encoder once the whole frame exists
  return !w.overflow();
}

}  // namespace rdmalab::wire
