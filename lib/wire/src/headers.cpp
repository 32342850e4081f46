#include "rdmalab/wire/headers.hpp"

#include <algorithm>
#include <cstring>

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
    case Layer::Xrceth: return "XRCETH";
    case Layer::Feth: return "FETH";
    case Layer::Payload: return "payload";
    case Layer::Icrc: return "ICRC";
    case Layer::Erf: return "ERF";
    case Layer::Lrh: return "LRH";
    case Layer::Vcrc: return "VCRC";
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
    case Ext::XRCETH: return Layer::Xrceth;
    case Ext::FETH: return Layer::Feth;
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

namespace {

std::uint8_t* encode_bth_at(const Bth& b, std::uint8_t* p) noexcept {
  p = put8(p, b.opcode);
  p = put8(p, (b.solicited ? 0x80u : 0u) | (b.migreq ? 0x40u : 0u) | ((b.pad_count & 0x3u) << 4) |
                  (b.tver & 0x0Fu));
  p = put16(p, b.pkey);
  p = put8(p, (b.fecn ? 0x80u : 0u) | (b.becn ? 0x40u : 0u) | (b.resv6 & 0x3Fu));
  p = put24(p, b.dest_qp & 0xFFFFFF);
  p = put8(p, (b.ack_req ? 0x80u : 0u) | (b.resv7 & 0x7Fu));
  return put24(p, b.psn & 0xFFFFFF);
}

}  // namespace

void encode_bth(const Bth& b, Writer& w) noexcept {
  if (std::uint8_t* at = w.take(kBthSize)) encode_bth_at(b, at);
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

std::uint8_t* encode_grh_at(const Grh& g, std::uint8_t* p) noexcept {
  p = put32(p, (std::uint32_t{g.ip_version} << 28) | (std::uint32_t{g.traffic_class} << 20) |
                   (g.flow_label & 0xFFFFF));
  p = put16(p, g.payload_length);
  p = put8(put8(p, g.next_header), g.hop_limit);
  p = put_bytes(p, g.sgid);
  return put_bytes(p, g.dgid);
}

void encode_grh(const Grh& g, Writer& w) noexcept {
  if (std::uint8_t* at = w.take(kGrhSize)) encode_grh_at(g, at);
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
    case Ext::XRCETH: {
      std::uint8_t reserved = 0;
      std::uint32_t srq = 0;
      (void)r.u8(reserved);
      (void)r.u24(srq);
      p.xrc_srq = srq;
      break;
    }
    case Ext::FETH: {
      std::uint32_t bits = 0;
      (void)r.u32(bits);
      p.feth = Feth{static_cast<std::uint8_t>(bits & 0xF),
                    static_cast<std::uint8_t>((bits >> 4) & 0x3), bits >> 6};
      break;
    }
  }
  return true;
}

std::uint8_t* encode_ext_at(Ext e, const IbPacket& pk, std::uint8_t* p) noexcept {
  switch (e) {
    case Ext::RETH: {
      const Reth h = pk.reth.value_or(Reth{});
      return put32(put32(put64(p, h.va), h.rkey), h.dma_len);
    }
    case Ext::AETH: {
      const Aeth h = pk.aeth.value_or(Aeth{});
      return put24(put8(p, h.syndrome), h.msn & 0xFFFFFF);
    }
    case Ext::AtomicETH: {
      const AtomicEth h = pk.atomic_eth.value_or(AtomicEth{});
      return put64(put64(put32(put64(p, h.va), h.rkey), h.swap_add), h.compare);
    }
    case Ext::AtomicAckETH: return put64(p, pk.atomic_ack_eth.value_or(AtomicAckEth{}).orig);
    case Ext::ImmDt: return put32(p, pk.immdt.value_or(0));
    case Ext::IETH: return put32(p, pk.ieth.value_or(0));
    case Ext::DETH: {
      const Deth h = pk.deth.value_or(Deth{});
      return put24(put8(put32(p, h.qkey), h.resv), h.src_qp & 0xFFFFFF);
    }
    case Ext::CnpPad: {
      const std::size_t n = ext_size(e);
      std::memset(p, 0, n);
      return p + n;
    }
    case Ext::XRCETH: return put24(put8(p, 0), pk.xrc_srq.value_or(0) & 0xFFFFFF);
    case Ext::FETH: {
      const Feth h = pk.feth.value_or(Feth{});
      return put32(p,
                   (h.reserved << 6) | ((h.selectivity & 0x3u) << 4) | (h.placement_type & 0xFu));
    }
  }
  return p;
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

std::uint8_t* encode_ib_at(const IbPacket& p, std::uint8_t* out) noexcept {
  const OpcodeInfo* info = find_opcode(p.bth.opcode);
  if (info == nullptr) return nullptr;
  Bth bth = p.bth;
  bth.pad_count = pad_for(p.payload.size());
  std::uint8_t* at = encode_bth_at(bth, out);
  for (Ext e : info->exts()) at = encode_ext_at(e, p, at);
  at = put_bytes(at, p.payload);
  // Pad, and the ICRC's place, filled in by the frame encoder once the
  // whole frame exists.
  std::memset(at, 0, bth.pad_count + kIcrcSize);
  return at + bth.pad_count + kIcrcSize;
}

bool encode_ib(const IbPacket& p, Writer& w) noexcept {
  const std::size_t n = ib_encoded_size(p);
  if (n == 0) return false;
  std::uint8_t* at = w.take(n);
  return at != nullptr && encode_ib_at(p, at) != nullptr;
}

}  // namespace rdmalab::wire
