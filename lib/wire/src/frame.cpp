#include "rdmalab/wire/frame.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

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
  char buf[INET6_ADDRSTRLEN] = {};
  if (v4) {
    const auto a = v4_bytes();
    inet_ntop(AF_INET, a.data(), buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  }
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
    default: return std::nullopt;
  }
}

std::optional<IpAddress> Frame::src_address() const noexcept {
  if (ipv4) return IpAddress::from_v4(ipv4->src);
  if (ipv6) return IpAddress::from_v6(ipv6->src);
  if (grh) return IpAddress::from_v6(grh->sgid);
  return std::nullopt;
}

std::optional<IpAddress> Frame::dst_address() const noexcept {
  if (ipv4) return IpAddress::from_v4(ipv4->dst);
  if (ipv6) return IpAddress::from_v6(ipv6->dst);
  if (grh) return IpAddress::from_v6(grh->dgid);
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

  void ethernet() {
    Reader r(bytes_);
    EthernetHeader e;
    if (!r.array(e.dst) || !r.array(e.src) || !r.u16(e.ethertype))
      return fail(ErrorKind::Truncated, Layer::Ethernet, 0, 14);
    while ((e.ethertype == kEthVlan || e.ethertype == kEthQinQ || e.ethertype == kEthQinQOld) &&
           e.vlan_count < e.vlan_tci.size()) {
      const std::size_t at = r.offset();
      if (!r.u16(e.vlan_tci[e.vlan_count]) || !r.u16(e.ethertype)) {
        f_.eth = e;
        return fail(ErrorKind::Truncated, Layer::Vlan, at, 4);
      }
      ++e.vlan_count;
    }
    f_.eth = e;
    ethertype(e.ethertype, r.offset());
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
    Reader r(bytes_, at);
    if (!r.has(20)) return fail(ErrorKind::Truncated, Layer::Ipv4, at, 20);
    Ipv4Header h;
    std::uint8_t ver_ihl = 0;
    (void)r.u8(ver_ihl);
    (void)r.u8(h.tos);
    (void)r.u16(h.total_length);
    (void)r.u16(h.id);
    (void)r.u16(h.flags_fragment);
    (void)r.u8(h.ttl);
    (void)r.u8(h.protocol);
    (void)r.u16(h.checksum);
    (void)r.array(h.src);
    (void)r.array(h.dst);
    h.ihl = ver_ihl & 0x0F;
    if ((ver_ihl >> 4) != 4) return fail(ErrorKind::BadVersion, Layer::Ipv4, at, 20);
    const std::size_t hlen = std::size_t{h.ihl} * 4;
    if (h.ihl < 5 || h.total_length < hlen)
      return fail(ErrorKind::BadLength, Layer::Ipv4, at, hlen);
    f_.ipv4 = h;
    if (!r.skip(hlen - 20)) return fail(ErrorKind::Truncated, Layer::Ipv4, at, hlen);
    const std::size_t end = at + h.total_length;
    if (end > original_) return fail(ErrorKind::BadLength, Layer::Ipv4, at, h.total_length);
    // A fragment other than the first, or a first fragment: not a whole UDP datagram.
    if ((h.flags_fragment & 0x3FFF) != 0 || h.protocol != 17) return;
    udp(at + hlen, end);
  }

  void ipv6(std::size_t at) {
    f_.ip_offset = at;
    Reader r(bytes_, at);
    if (!r.has(40)) return fail(ErrorKind::Truncated, Layer::Ipv6, at, 40);
    Ipv6Header h;
    std::uint32_t w0 = 0;
    (void)r.u32(w0);
    (void)r.u16(h.payload_length);
    (void)r.u8(h.next_header);
    (void)r.u8(h.hop_limit);
    (void)r.array(h.src);
    (void)r.array(h.dst);
    if ((w0 >> 28) != 6) return fail(ErrorKind::BadVersion, Layer::Ipv6, at, 40);
    h.traffic_class = static_cast<std::uint8_t>(w0 >> 20);
    h.flow_label = w0 & 0xFFFFF;
    f_.ipv6 = h;
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
    Reader r(bytes_, at);
    UdpHeader u;
    if (!r.u16(u.src_port) || !r.u16(u.dst_port) || !r.u16(u.length) || !r.u16(u.checksum))
      return fail(ErrorKind::Truncated, Layer::Udp, at, 8);
    f_.udp = u;
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
    Grh g;
    if (!decode_grh(r, g)) return fail(ErrorKind::Truncated, Layer::Grh, at, kGrhSize);
    f_.grh = g;
    const std::size_t end = at + kGrhSize + g.payload_length;
    if (end > original_) return fail(ErrorKind::BadLength, Layer::Grh, at, g.payload_length);
    transport(at + kGrhSize, end);
  }

  void transport(std::size_t bth_at, std::size_t end) {
    f_.bth_offset = bth_at;
    f_.ib_end = end;
    auto err = decode_ib(bytes_, bth_at, end, f_.ib.emplace());
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
  out.roce = RoceVersion::None;
  out.ib.reset();
  out.ip_offset = 0;
  out.bth_offset = 0;
  out.ib_end = 0;
  out.error.reset();
  FrameDecoder(captured, original_length, out).run();
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

// ipv4_checksum() of a 20-byte header, with the loop unrolled.
std::uint16_t ipv4_header_checksum(const std::uint8_t* h) noexcept {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < 20; i += 2) sum += load_be16(h + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

}  // namespace

std::size_t frame_size(const FrameSpec& s) noexcept {
  const std::size_t ib = ib_encoded_size(s.packet);
  if (ib == 0 || s.version == RoceVersion::None) return 0;
  return 14 + (s.vlan_tci ? 4 : 0) + network_header_size(s) + ib;
}

std::size_t encode_frame(const FrameSpec& s, std::span<std::uint8_t> out) noexcept {
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
    std::uint8_t* const ip = p;
    p = put8(put8(p, 0x45), s.traffic_class);
    p = put16(p, static_cast<std::uint16_t>(20 + 8 + ib));
    p = put16(put16(p, s.ip_id), 0x4000);  // don't fragment
    p = put8(put8(p, s.hop_limit), 17);
    p = put16(p, 0);  // checksum, filled in below
    p = put_bytes(p, Bytes(s.src_ip.bytes).subspan(12, 4));
    p = put_bytes(p, Bytes(s.dst_ip.bytes).subspan(12, 4));
    put16(ip + 10, ipv4_header_checksum(ip));
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
  const auto crc = icrc_of(Bytes(frame, total), s.version, net_at, bth_at, total - kIcrcSize);
  if (!crc) return 0;
  Writer tail(out.subspan(total - kIcrcSize, kIcrcSize));
  tail.le32(*crc);
  return total;
}

}  // namespace rdmalab::wire
