#include "rdmalab/wire/frame.hpp"

#include <arpa/inet.h>
#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "rdmalab/wire/erf.hpp"
#include "rdmalab/wire/icrc.hpp"

namespace rdmalab::wire {

// ---------------------------------------------------------------- addresses

IpAddress IpAddress::from_v4(std::array<std::uint8_t, 4> a) noexcept {
  IpAddress ip;
  ip.v4 = true;
  ip.bytes[10] = 0xFF;
  ip.bytes[11] = 0xFF;
  std::copy(a.begin(), a.end(), ip.bytes.begin() + 12);
  return ip;
}

IpAddress IpAddress::from_v6(std::array<std::uint8_t, 16> a) noexcept {
  IpAddress ip;
  ip.v4 = false;
  ip.bytes = a;
  return ip;
}

IpAddress IpAddress::from_lid(std::uint16_t lid) noexcept {
  IpAddress a;
  a.v4 = false;
  a.lid = true;
  a.bytes[14] = static_cast<std::uint8_t>(lid >> 8);
  a.bytes[15] = static_cast<std::uint8_t>(lid & 0xFF);
  return a;
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  const std::string s(text);
  std::array<std::uint8_t, 4> v4{};
  if (inet_pton(AF_INET, s.c_str(), v4.data()) == 1) return from_v4(v4);
  std::array<std::uint8_t, 16> v6{};
  if (inet_pton(AF_INET6, s.c_str(), v6.data()) == 1) return from_v6(v6);
  return std::nullopt;
}

std::array<std::uint8_t, 4> IpAddress::v4_bytes() const noexcept {
  return {bytes[12], bytes[13], bytes[14], bytes[15]};
}

std::string IpAddress::to_string() const {
  if (lid) return "LID " + std::to_string(load_be16(bytes.data() + 14));
  if (v4) {
    // What inet_ntop writes for AF_INET, without its sprintf: a summary of
    // a whole cluster names hundreds of thousands of endpoints.
    const auto a = v4_bytes();
    char buf[16];
    char* end = fmt::format_to(buf, FMT_COMPILE("{}.{}.{}.{}"), a[0], a[1], a[2], a[3]);
    return std::string(buf, end);
  }
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  return buf;
}

std::string mac_to_string(const MacAddress& m) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

std::optional<LinkType> link_type_from_pcap(int value) noexcept {
  switch (value) {
    case 1: return LinkType::Ethernet;
    case 12:  // DLT_RAW on Linux and most BSDs
    case 14:  // DLT_RAW on OpenBSD
    case 101: return LinkType::RawIp;
    case 113: return LinkType::LinuxSll;
    case 228: return LinkType::Ipv4;
    case 229: return LinkType::Ipv6;
    case 276: return LinkType::LinuxSll2;
    case 197: return LinkType::Erf;
    case 247: return LinkType::Infiniband;
    default: return std::nullopt;
  }
}

std::optional<IpAddress> Frame::src_address() const noexcept {
  if (ipv4) return IpAddress::from_v4(ipv4->src);
  if (ipv6) return IpAddress::from_v6(ipv6->src);
  if (grh) return IpAddress::from_v6(grh->sgid);
  if (lrh) return IpAddress::from_lid(lrh->slid);
  return std::nullopt;
}

std::optional<IpAddress> Frame::dst_address() const noexcept {
  if (ipv4) return IpAddress::from_v4(ipv4->dst);
  if (ipv6) return IpAddress::from_v6(ipv6->dst);
  if (grh) return IpAddress::from_v6(grh->dgid);
  if (lrh) return IpAddress::from_lid(lrh->dlid);
  return std::nullopt;
}

std::uint16_t ipv4_checksum(Bytes header) noexcept {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < header.size(); i += 2) sum += load_be16(header.data() + i);
  if (header.size() & 1) sum += std::uint32_t{header.back()} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// ---------------------------------------------------------------- decoding

namespace {

constexpr std::uint16_t kEthIpv4 = 0x0800;
constexpr std::uint16_t kEthIpv6 = 0x86DD;
constexpr std::uint16_t kEthVlan = 0x8100;
constexpr std::uint16_t kEthQinQ = 0x88A8;
constexpr std::uint16_t kEthQinQOld = 0x9100;

class FrameDecoder {
 public:
  FrameDecoder(Bytes captured, std::size_t original, Frame& f)
      : bytes_(captured), original_(std::max(original, captured.size())), f_(f) {}

  void run() {
    switch (f_.link) {
      case LinkType::Ethernet: return ethernet();
      case LinkType::LinuxSll: return sll(16, 14);
      case LinkType::LinuxSll2: return sll(20, 0);
      case LinkType::RawIp: return raw_ip(0);
      case LinkType::Ipv4: return ipv4(0);
      case LinkType::Ipv6: return ipv6(0);
      case LinkType::Infiniband: return infiniband(0);
      case LinkType::Erf: return erf();
    }
    fail(ErrorKind::UnsupportedLink, Layer::Link, 0, 0);
  }

 private:
  // Records why decoding stopped. A header cut by the snap length is not a
  // malformed packet, so it is reported as such.
  void fail(ErrorKind kind, Layer layer, std::size_t offset, std::size_t needed) {
    if (kind == ErrorKind::Truncated && bytes_.size() < original_ &&
        offset + needed > bytes_.size())
      kind = ErrorKind::SnapTruncated;
    const std::size_t have = offset < bytes_.size() ? bytes_.size() - offset : 0;
    f_.error = DecodeError{kind, layer, offset, needed, have};
  }

  // Each header is decoded in place, into the Frame's own member: built on
  // the stack field by field and then copied whole, it would be loaded
  // before its narrow stores could be forwarded, a stall per header.
  void ethernet() {
    if (bytes_.size() < 14) return fail(ErrorKind::Truncated, Layer::Ethernet, 0, 14);
    const std::uint8_t* p = bytes_.data();
    EthernetHeader& e = f_.eth.emplace();
    std::memcpy(e.dst.data(), p, 6);
    std::memcpy(e.src.data(), p + 6, 6);
    e.ethertype = load_be16(p + 12);
    std::size_t at = 14;
    while ((e.ethertype == kEthVlan || e.ethertype == kEthQinQ || e.ethertype == kEthQinQOld) &&
           e.vlan_count < e.vlan_tci.size()) {
      if (bytes_.size() < at + 4) return fail(ErrorKind::Truncated, Layer::Vlan, at, 4);
      e.vlan_tci[e.vlan_count++] = load_be16(p + at);
      e.ethertype = load_be16(p + at + 2);
      at += 4;
    }
    ethertype(e.ethertype, at);
  }

  // Linux cooked capture: a pseudo-header ending (SLL) or starting (SLL2)
  // with the protocol, an ethertype.
  void sll(std::size_t header_len, std::size_t protocol_at) {
    if (bytes_.size() < header_len) return fail(ErrorKind::Truncated, Layer::Link, 0, header_len);
    std::uint16_t proto = load_be16(bytes_.data() + protocol_at);
    std::size_t at = header_len;
    // A VLAN tag kept in the payload follows the pseudo-header.
    while (proto == kEthVlan || proto == kEthQinQ) {
      if (bytes_.size() < at + 4) return fail(ErrorKind::Truncated, Layer::Vlan, at, 4);
      proto = load_be16(bytes_.data() + at + 2);
      at += 4;
    }
    ethertype(proto, at);
  }

  void ethertype(std::uint16_t type, std::size_t at) {
    switch (type) {
      case kEthIpv4: return ipv4(at);
      case kEthIpv6: return ipv6(at);
      case kRoceV1Ethertype: return roce_v1(at);
      default: return;  // not RoCE
    }
  }

  void raw_ip(std::size_t at) {
    if (bytes_.size() <= at) return fail(ErrorKind::Truncated, Layer::Ipv4, at, 1);
    const unsigned version = bytes_[at] >> 4;
    if (version == 4) return ipv4(at);
    if (version == 6) return ipv6(at);
  }

  void ipv4(std::size_t at) {
    f_.ip_offset = at;
    if (bytes_.size() < at + 20) return fail(ErrorKind::Truncated, Layer::Ipv4, at, 20);
    const std::uint8_t* p = bytes_.data() + at;
    if ((p[0] >> 4) != 4) return fail(ErrorKind::BadVersion, Layer::Ipv4, at, 20);
    const std::uint8_t ihl = p[0] & 0x0F;
    const std::uint16_t total_length = load_be16(p + 2);
    const std::size_t hlen = std::size_t{ihl} * 4;
    if (ihl < 5 || total_length < hlen) return fail(ErrorKind::BadLength, Layer::Ipv4, at, hlen);
    Ipv4Header& h = f_.ipv4.emplace();
    h.ihl = ihl;
    h.tos = p[1];
    h.total_length = total_length;
    h.id = load_be16(p + 4);
    h.flags_fragment = load_be16(p + 6);
    h.ttl = p[8];
    h.protocol = p[9];
    h.checksum = load_be16(p + 10);
    std::memcpy(h.src.data(), p + 12, 4);
    std::memcpy(h.dst.data(), p + 16, 4);
    if (bytes_.size() < at + hlen) return fail(ErrorKind::Truncated, Layer::Ipv4, at, hlen);
    const std::size_t end = at + total_length;
    if (end > original_) return fail(ErrorKind::BadLength, Layer::Ipv4, at, total_length);
    // A fragment other than the first, or a first fragment: not a whole UDP datagram.
    if ((h.flags_fragment & 0x3FFF) != 0 || h.protocol != 17) return;
    udp(at + hlen, end);
  }

  void ipv6(std::size_t at) {
    f_.ip_offset = at;
    if (bytes_.size() < at + 40) return fail(ErrorKind::Truncated, Layer::Ipv6, at, 40);
    const std::uint8_t* p = bytes_.data() + at;
    const std::uint32_t w0 = load_be32(p);
    if ((w0 >> 28) != 6) return fail(ErrorKind::BadVersion, Layer::Ipv6, at, 40);
    Ipv6Header& h = f_.ipv6.emplace();
    h.traffic_class = static_cast<std::uint8_t>(w0 >> 20);
    h.flow_label = w0 & 0xFFFFF;
    h.payload_length = load_be16(p + 4);
    h.next_header = p[6];
    h.hop_limit = p[7];
    std::memcpy(h.src.data(), p + 8, 16);
    std::memcpy(h.dst.data(), p + 24, 16);
    Reader r(bytes_, at + 40);
    const std::size_t end = at + 40 + h.payload_length;
    if (h.payload_length == 0 || end > original_)
      return fail(ErrorKind::BadLength, Layer::Ipv6, at, 40 + std::size_t{h.payload_length});
    // Walk the extension headers that may precede UDP (hop-by-hop, routing,
    // destination options). A fragment header means no whole datagram here.
    std::uint8_t next = h.next_header;
    while (next == 0 || next == 43 || next == 60) {
      const std::size_t ext_at = r.offset();
      std::uint8_t nh = 0, len = 0;
      if (!r.u8(nh) || !r.u8(len) || !r.skip(std::size_t{len} * 8 + 6))
        return fail(ErrorKind::Truncated, Layer::Ipv6, ext_at, std::size_t{len} * 8 + 8);
      next = nh;
    }
    if (next != 17) return;
    udp(r.offset(), end);
  }

  void udp(std::size_t at, std::size_t ip_end) {
    if (bytes_.size() < at + 8) return fail(ErrorKind::Truncated, Layer::Udp, at, 8);
    const std::uint8_t* p = bytes_.data() + at;
    UdpHeader& u = f_.udp.emplace();
    u.src_port = load_be16(p);
    u.dst_port = load_be16(p + 2);
    u.length = load_be16(p + 4);
    u.checksum = load_be16(p + 6);
    if (u.dst_port != kRoceV2Port) return;  // not RoCEv2 (the source port is entropy)
    f_.roce = RoceVersion::V2;
    if (u.length < 8 || at + u.length > ip_end)
      return fail(ErrorKind::BadLength, Layer::Udp, at, u.length);
    transport(at + 8, at + u.length);
  }

  void roce_v1(std::size_t at) {
    f_.roce = RoceVersion::V1;
    f_.ip_offset = at;
    Reader r(bytes_, at);
    Grh& g = f_.grh.emplace();
    if (!decode_grh(r, g)) {
      f_.grh.reset();
      return fail(ErrorKind::Truncated, Layer::Grh, at, kGrhSize);
    }
    const std::size_t end = at + kGrhSize + g.payload_length;
    if (end > original_) return fail(ErrorKind::BadLength, Layer::Grh, at, g.payload_length);
    transport(at + kGrhSize, end);
  }

  // An ERF record: its header (and extension headers), then for type 21 a
  // whole IB packet. Other types (25: IB link packets, flow control; the
  // Ethernet ones) hold no transport packet here. The packet's length on
  // the wire is the record's wlen; the record may be padded past it.
  void erf() {
    erf::Record rec;
    if (const auto err = erf::parse(bytes_, rec)) {
      const std::size_t needed =
          *err == erf::Error::ExtensionsCutOff ? bytes_.size() + 1 : erf::kHeaderSize;
      return fail(*err == erf::Error::BadLength ? ErrorKind::BadLength : ErrorKind::Truncated,
                  Layer::Erf, 0, needed);
    }
    f_.erf_type = rec.type;
    if (rec.type != erf::kTypeInfiniband) return;
    const auto at = static_cast<std::size_t>(rec.packet.data() - bytes_.data());
    bytes_ = bytes_.first(at + rec.packet.size());
    original_ = at + std::max<std::size_t>(rec.wlen, rec.packet.size());
    infiniband(at);
  }

  // A native IB packet: LRH, the GRH when LNH = 3, the transport, the ICRC,
  // then the VCRC. LNH 0 and 1 (raw packets, IPv6 over IB's raw form) are
  // not transport packets: decoded as far as the LRH.
  void infiniband(std::size_t at) {
    f_.ip_offset = at;
    const auto h = ib::parse_lrh(bytes_.subspan(std::min(at, bytes_.size())));
    if (!h) return fail(ErrorKind::Truncated, Layer::Lrh, at, ib::kLrhSize);
    f_.lrh = *h;
    if (h->lnh != ib::Lnh::Local && h->lnh != ib::Lnh::Global) return;
    f_.roce = RoceVersion::NativeIb;
    const std::size_t end = at + h->packet_bytes();
    std::size_t bth = at + ib::kLrhSize;
    if (h->packet_bytes() < ib::kLrhSize || end + ib::kVcrcSize > original_)
      return fail(ErrorKind::BadLength, Layer::Lrh, at, h->packet_bytes() + ib::kVcrcSize);
    if (h->lnh == ib::Lnh::Global) {
      Reader r(bytes_, bth);
      Grh& g = f_.grh.emplace();
      if (!decode_grh(r, g)) {
        f_.grh.reset();
        return fail(ErrorKind::Truncated, Layer::Grh, bth, kGrhSize);
      }
      bth += kGrhSize;
      if (bth + g.payload_length != end)
        return fail(ErrorKind::BadLength, Layer::Grh, bth - kGrhSize, g.payload_length);
    }
    if (end + ib::kVcrcSize <= bytes_.size())  // stored least significant byte first
      f_.vcrc = static_cast<std::uint16_t>(bytes_[end] | (bytes_[end + 1] << 8));
    transport(bth, end);
  }

  void transport(std::size_t bth_at, std::size_t end) {
    f_.bth_offset = bth_at;
    f_.ib_end = end;
    // The packet of the frame decoded before, when there was one, cleared
    // member by member: constructing a new one clears its whole size.
    IbPacket& ib = f_.ib ? *f_.ib : f_.ib.emplace();
    ib.clear();
    auto err = decode_ib(bytes_, bth_at, end, ib);
    if (err) f_.error = *err;
  }

  Bytes bytes_;
  std::size_t original_;
  Frame& f_;
};

}  // namespace

Frame decode_frame(Bytes captured, LinkType link, std::size_t original_length) noexcept {
  Frame f;
  decode_frame(captured, link, original_length, f);
  return f;
}

void decode_frame(Bytes captured, LinkType link, std::size_t original_length, Frame& out) noexcept {
  // Field by field rather than `out = Frame{}`: a Frame is a few hundred
  // bytes, and a capture reader calls this once per packet.
  out.link = link;
  out.eth.reset();
  out.ipv4.reset();
  out.ipv6.reset();
  out.udp.reset();
  out.grh.reset();
  out.lrh.reset();
  out.vcrc.reset();
  out.erf_type.reset();
  out.roce = RoceVersion::None;
  out.ip_offset = 0;
  out.bth_offset = 0;
  out.ib_end = 0;
  out.error.reset();
  // out.ib is kept for the decoder to reuse, and emptied when this frame
  // has no transport packet: when the decoder never reached transport(),
  // the one place that sets bth_offset (always past an IP/UDP header or a
  // GRH, so never 0).
  FrameDecoder(captured, original_length, out).run();
  if (out.bth_offset == 0) out.ib.reset();
}

// ---------------------------------------------------------------- encoding

namespace {

std::size_t network_header_size(const FrameSpec& s) noexcept {
  if (s.version == RoceVersion::V1) return kGrhSize;
  return (s.dst_ip.v4 ? 20u : 40u) + 8u;  // IP + UDP
}

// encode_frame() checks the frame's size once and then stores every field
// straight into the buffer (the put* functions of bytes.hpp and the *_at
// encoders of headers.hpp): a simulator builds millions of frames, and a
// bounds check per field cost more than the fields.

// The checksum of the 20-byte IPv4 header encode_frame writes, from the
// values it writes: read back from the frame, each 16-bit word would wait
// for the byte stores that made it.
std::uint16_t ipv4_header_checksum(const FrameSpec& s, std::uint16_t total_length) noexcept {
  const auto word = [](const IpAddress& a, std::size_t i) {
    return std::uint32_t{a.bytes[i]} << 8 | a.bytes[i + 1];
  };
  std::uint32_t sum = (0x45u << 8 | s.traffic_class) + total_length + s.ip_id + 0x4000u +
                      (std::uint32_t{s.hop_limit} << 8 | 17u) + word(s.src_ip, 12) +
                      word(s.src_ip, 14) + word(s.dst_ip, 12) + word(s.dst_ip, 14);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

/// PktLen is 11 bits of 4-byte words (IBTA 7.7): the longest packet, LRH
/// through ICRC, an LRH can describe.
constexpr std::size_t kMaxIbPacket = std::size_t{0x7FF} * 4;

/// Bytes of the native IB packet for `s`, LRH through VCRC, or 0.
std::size_t native_ib_size(const FrameSpec& s) noexcept {
  const std::size_t ib = ib_encoded_size(s.packet);
  // LRH through ICRC: a multiple of 4, as every extension header's size is
  // and the pad makes the payload's.
  const std::size_t len = ib::kLrhSize + (s.ib_global ? ib::kGrhSize : 0) + ib;
  if (ib == 0 || len > kMaxIbPacket) return 0;
  return len + ib::kVcrcSize;
}

/// encode_frame() for link_layer == Infiniband (see FrameSpec). Kept out of
/// line so that the RoCE path, which the simulator takes for every packet,
/// is compiled as before.
[[gnu::noinline]] std::size_t encode_native_ib(const FrameSpec& s,
                                               std::span<std::uint8_t> out) noexcept {
  const std::size_t total = native_ib_size(s);
  if (total == 0 || out.size() < total) return 0;
  const std::size_t len = total - ib::kVcrcSize;  // LRH through ICRC
  std::uint8_t* const packet = out.data();
  ib::Lrh h;
  h.vl = s.vl;
  h.sl = s.sl;
  h.lnh = s.ib_global ? ib::Lnh::Global : ib::Lnh::Local;
  h.dlid = s.dlid;
  h.slid = s.slid;
  h.pkt_len_words = static_cast<std::uint16_t>(len / 4);
  ib::write_lrh(h, packet);  // LVer 0, reserved bits 0; VL and SL kept to 4 bits
  std::uint8_t* p = packet + ib::kLrhSize;
  if (s.ib_global) {
    Grh g;
    g.traffic_class = s.traffic_class;
    g.flow_label = s.flow_label;
    g.payload_length = static_cast<std::uint16_t>(len - ib::kLrhSize - ib::kGrhSize);
    g.next_header = ib::kGrhNextHeaderIba;
    g.hop_limit = s.hop_limit;
    g.sgid = s.src_ip.bytes;
    g.dgid = s.dst_ip.bytes;
    p = encode_grh_at(g, p);
  }
  // The ICRC is left zero by encode_ib_at, the VCRC here; seal fills both.
  std::uint8_t* const vcrc = encode_ib_at(s.packet, p);
  if (vcrc != packet + len) return 0;
  vcrc[0] = vcrc[1] = 0;
  if (s.compute_icrc && !ib::seal(out.first(total))) return 0;
  return total;
}

}  // namespace

std::size_t frame_size(const FrameSpec& s) noexcept {
  if (s.link_layer == LinkLayer::Infiniband) return native_ib_size(s);
  const std::size_t ib = ib_encoded_size(s.packet);
  if (ib == 0 || s.version == RoceVersion::None) return 0;
  return 14 + (s.vlan_tci ? 4 : 0) + network_header_size(s) + ib;
}

std::size_t encode_frame(const FrameSpec& s, std::span<std::uint8_t> out) noexcept {
  if (s.link_layer == LinkLayer::Infiniband) return encode_native_ib(s, out);
  const IbPacket& pk = s.packet;
  const OpcodeInfo* info = find_opcode(pk.bth.opcode);
  if (info == nullptr || s.version == RoceVersion::None) return 0;
  const std::size_t payload = pk.payload.size();
  // As ib_encoded_size() and frame_size() count them.
  const std::size_t ib = kBthSize + info->ext_bytes() + payload + pad_for(payload) + kIcrcSize;
  const std::size_t total = 14 + (s.vlan_tci ? 4 : 0) + network_header_size(s) + ib;
  if (out.size() < total) return 0;
  std::uint8_t* const frame = out.data();
  std::uint8_t* p = put_bytes(frame, s.dst_mac);
  p = put_bytes(p, s.src_mac);
  if (s.vlan_tci) p = put16(put16(p, kEthVlan), *s.vlan_tci);
  const std::size_t net_at = static_cast<std::size_t>(p - frame) + 2;
  if (s.version == RoceVersion::V1) {
    p = put16(p, kRoceV1Ethertype);
    Grh g;
    g.traffic_class = s.traffic_class;
    g.flow_label = s.flow_label;
    g.payload_length = static_cast<std::uint16_t>(ib);
    g.hop_limit = s.hop_limit;
    g.sgid = s.src_ip.bytes;
    g.dgid = s.dst_ip.bytes;
    p = encode_grh_at(g, p);
  } else if (s.dst_ip.v4) {
    p = put16(p, kEthIpv4);
    const auto total_length = static_cast<std::uint16_t>(20 + 8 + ib);
    p = put8(put8(p, 0x45), s.traffic_class);
    p = put16(p, total_length);
    p = put16(put16(p, s.ip_id), 0x4000);  // don't fragment
    p = put8(put8(p, s.hop_limit), 17);
    p = put16(p, ipv4_header_checksum(s, total_length));
    p = put_bytes(p, Bytes(s.src_ip.bytes).subspan(12, 4));
    p = put_bytes(p, Bytes(s.dst_ip.bytes).subspan(12, 4));
  } else {
    p = put16(p, kEthIpv6);
    p = put32(p, (6u << 28) | (std::uint32_t{s.traffic_class} << 20) | (s.flow_label & 0xFFFFF));
    p = put16(p, static_cast<std::uint16_t>(8 + ib));
    p = put8(put8(p, 17), s.hop_limit);
    p = put_bytes(p, s.src_ip.bytes);
    p = put_bytes(p, s.dst_ip.bytes);
  }
  if (s.version == RoceVersion::V2) {
    p = put16(put16(p, s.udp_src_port), kRoceV2Port);
    p = put16(put16(p, static_cast<std::uint16_t>(8 + ib)), 0);
  }
  const std::size_t bth_at = static_cast<std::size_t>(p - frame);
  // The ICRC stays zero unless computed below.
  if (encode_ib_at(pk, p) != frame + total) return 0;
  if (!s.compute_icrc) return total;
  // (Not icrc_of: its optional would be assembled in memory and read back.)
  std::uint32_t crc = 0;
  if (!detail::icrc_into(Bytes(frame, total), s.version, net_at, bth_at, total - kIcrcSize, crc))
    return 0;
  Writer tail(out.subspan(total - kIcrcSize, kIcrcSize));
  tail.le32(crc);
  return total;
}

}  // namespace rdmalab::wire
