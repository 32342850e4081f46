// RoCE framing: how IB transport packets travel on Ethernet.
//
// RoCEv2 (IBTA annex A17): Ethernet [802.1Q] / IPv4 or IPv6 / UDP with
// destination port 4791 / BTH ... / ICRC. The UDP source port is flow entropy
// chosen by the sender (any value): it is never used to recognise RoCE.
// RoCEv1 (annex A16): Ethernet [802.1Q] with ethertype 0x8915 / GRH / BTH ...
// Native InfiniBand (no Ethernet at all): LRH [GRH] / BTH ... / ICRC / VCRC
// (ib_link.hpp), read from an ibdump capture (ERF records, link type 197) or
// a libpcap one of an IB port (link type 247).
//
// decode_frame() takes captured bytes and a link type and never reads past
// them; encode_frame() builds a complete frame with lengths, the IPv4 header
// checksum and the ICRC filled in (native IB: the LRH's PktLen, the ICRC and
// the VCRC).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/headers.hpp"
#include "rdmalab/wire/ib_link.hpp"

namespace rdmalab::wire {

using MacAddress = std::array<std::uint8_t, 6>;

/// An IPv4 or IPv6 address (or GID). IPv4 is stored IPv4-mapped
/// (::ffff:a.b.c.d), which is also how RoCEv2 writes an IPv4 address into a
/// GID. A native InfiniBand packet routed inside its subnet carries no GID:
/// its endpoints are LIDs, held here as the last two bytes with `lid` set,
/// so that everything keyed by an address keys IB hosts by LID.
struct IpAddress {
  std::array<std::uint8_t, 16> bytes{};
  bool v4 = true;
  bool lid = false;

  [[nodiscard]] static IpAddress from_v4(std::array<std::uint8_t, 4> a) noexcept;
  [[nodiscard]] static IpAddress from_v6(std::array<std::uint8_t, 16> a) noexcept;
  [[nodiscard]] static IpAddress from_lid(std::uint16_t lid) noexcept;
  /// Parses dotted IPv4 or textual IPv6; nullopt when neither.
  [[nodiscard]] static std::optional<IpAddress> parse(std::string_view text);
  [[nodiscard]] std::array<std::uint8_t, 4> v4_bytes() const noexcept;
  /// "10.0.0.1", "fe80::1", or "LID 1" (decimal, as ibv_devinfo prints it).
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  // clang-tidy 14 reports a literal 0 inside the defaulted <=> it generates.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
};

[[nodiscard]] std::string mac_to_string(const MacAddress& m);

/// Link types rdmalab reads. Values are the pcap LINKTYPE_ numbers.
enum class LinkType : std::uint16_t {
  Ethernet = 1,
  RawIp = 101,
  LinuxSll = 113,
  Ipv4 = 228,
  Ipv6 = 229,
  Infiniband = 247,  ///< a whole IB packet, LRH through VCRC (libpcap on an IB port)
  Erf = 197,         ///< Endace ERF records (ibdump): type 21 holds an IB packet
  LinuxSll2 = 276,
};

/// The link type for a pcap LINKTYPE_ or DLT_ value, or nullopt.
[[nodiscard]] std::optional<LinkType> link_type_from_pcap(int value) noexcept;

struct EthernetHeader {
  MacAddress dst{};
  MacAddress src{};
  /// 802.1Q / 802.1ad tags, outermost first (TCI: PCP 3 bits, DEI 1, VID 12).
  std::array<std::uint16_t, 2> vlan_tci{};
  std::uint8_t vlan_count = 0;
  std::uint16_t ethertype = 0;  // after the tags
};

struct Ipv4Header {
  std::uint8_t ihl = 5;  // in 32-bit words
  std::uint8_t tos = 0;  // DSCP (7:2) and ECN (1:0)
  std::uint16_t total_length = 0;
  std::uint16_t id = 0;
  std::uint16_t flags_fragment = 0x4000;  // DF
  std::uint8_t ttl = 64;
  std::uint8_t protocol = 17;
  std::uint16_t checksum = 0;
  std::array<std::uint8_t, 4> src{};
  std::array<std::uint8_t, 4> dst{};
};

struct Ipv6Header {
  std::uint8_t traffic_class = 0;
  std::uint32_t flow_label = 0;
  std::uint16_t payload_length = 0;
  std::uint8_t next_header = 17;
  std::uint8_t hop_limit = 64;
  std::array<std::uint8_t, 16> src{};
  std::array<std::uint8_t, 16> dst{};
};

struct UdpHeader {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = kRoceV2Port;
  std::uint16_t length = 0;
  std::uint16_t checksum = 0;
};

/// How the transport packet travels: RoCEv1 or RoCEv2 on Ethernet, or on an
/// InfiniBand link (not RoCE at all; the name is the field's history).
enum class RoceVersion : std::uint8_t { None, V1, V2, NativeIb };

/// A decoded frame. Layers absent from the packet are empty optionals.
/// (decode_frame into an existing Frame clears each member: a new member
/// must be cleared there too.)
struct Frame {
  // The members are in the order a RoCEv2 packet's analysis reads them,
  // the rarer layers after: an analyser of a large capture reads millions
  // of frames decoded on another core, and each cache line it need not
  // fetch is time (dissect::PacketRecord holds one).
  LinkType link = LinkType::Ethernet;
  RoceVersion roce = RoceVersion::None;
  /// Why decoding stopped early (the layers before it are filled in).
  std::optional<DecodeError> error;
  std::optional<Ipv4Header> ipv4;
  std::optional<UdpHeader> udp;
  std::optional<IbPacket> ib;
  std::optional<EthernetHeader> eth;
  std::optional<Ipv6Header> ipv6;
  std::optional<Grh> grh;  // RoCEv1, or native IB with LNH 3
  /// Native IB: the LRH, and the VCRC as carried (when captured).
  std::optional<ib::Lrh> lrh;
  std::optional<std::uint16_t> vcrc;
  /// ERF input: the record's type (21 an IB packet, 25 an IB link packet).
  std::optional<std::uint8_t> erf_type;
  /// Byte offsets in the frame (valid when the layer is present); for native
  /// IB, ip_offset is where the LRH starts.
  std::size_t ip_offset = 0;
  std::size_t bth_offset = 0;
  /// Where the transport packet ends on the wire (one past its ICRC).
  std::size_t ib_end = 0;

  /// Carries an IB transport packet: RoCE, or native InfiniBand.
  [[nodiscard]] bool is_roce() const noexcept { return roce != RoceVersion::None; }
  /// Source and destination network addresses (IP, the GIDs of RoCEv1 or of
  /// a native IB packet with a GRH, else its LIDs).
  [[nodiscard]] std::optional<IpAddress> src_address() const noexcept;
  [[nodiscard]] std::optional<IpAddress> dst_address() const noexcept;
};

/// Decodes one captured frame.
///
/// `captured` holds the bytes the capture kept; `original_length` is the
/// frame's length on the wire (pcap "len"), at least captured.size(). When the
/// capture was cut by its snap length, decoding goes as far as the bytes go
/// and reports ErrorKind::SnapTruncated rather than a malformed packet.
/// A frame that is not RoCE (ARP, TCP, UDP to another port, an IP fragment)
/// decodes with roce == None and no error.
[[nodiscard]] Frame decode_frame(Bytes captured, LinkType link,
                                 std::size_t original_length = 0) noexcept;
/// The same into an existing Frame, which is cleared first (for a caller
/// that decodes many frames into one).
void decode_frame(Bytes captured, LinkType link, std::size_t original_length, Frame& out) noexcept;

/// The link a FrameSpec is framed for.
enum class LinkLayer : std::uint8_t {
  Ethernet,    ///< RoCE, as `version` says (RoCEv1 or RoCEv2)
  Infiniband,  ///< native InfiniBand: LRH [GRH] / BTH ... / ICRC / VCRC
};

/// Everything needed to put an IB transport packet on an Ethernet wire, or
/// on an InfiniBand link.
///
/// Native InfiniBand (link_layer == Infiniband) writes no Ethernet, IP or UDP
/// header and reads neither `version` nor the MAC, VLAN, IP ID and UDP
/// fields. The packet is
///   LRH (IBTA vol. 1, 7.7): vl, LVer 0, sl, LNH 3 when ib_global else 2,
///       dlid, PktLen (the packet's length in 4-byte words from the LRH
///       through the ICRC), slid;
///   GRH (8.3), when ib_global: src_ip and dst_ip as the source and
///       destination GIDs (the 16 bytes as held: an IPv4 address goes in
///       IPv4-mapped, as RoCEv2 writes it into a GID), traffic_class,
///       flow_label, hop_limit, PayLen (BTH through ICRC) and next header
///       0x1B (IBA transport, 8.3.1);
///   the BTH and all after it as RoCE carries them (pad count, extension
///       headers, payload, pad);
///   ICRC (7.8.1) computed over the native packet, with the VL (LNH 2) or
///       the whole LRH and the GRH's variant fields (LNH 3) masked, and
///   VCRC (7.8.2) over LRH through ICRC (ib_link.hpp has both rules).
/// compute_icrc == false leaves both CRCs zero. PktLen is 11 bits: a packet
/// above 2047 words (8188 bytes, more than a 4096-byte MTU needs) cannot be
/// framed, and frame_size() and encode_frame() give 0 for it.
struct FrameSpec {
  RoceVersion version = RoceVersion::V2;
  MacAddress src_mac{};
  MacAddress dst_mac{};
  std::optional<std::uint16_t> vlan_tci;
  IpAddress src_ip;                // RoCEv1, or native IB with a GRH: the source GID
  IpAddress dst_ip;                // RoCEv1, or native IB with a GRH: the destination GID
  std::uint8_t traffic_class = 0;  // IPv4 TOS / IPv6 traffic class / GRH TClass
  std::uint8_t hop_limit = 64;     // TTL / hop limit
  std::uint16_t ip_id = 0;
  std::uint32_t flow_label = 0;
  std::uint16_t udp_src_port = 0xC000;
  /// false leaves the ICRC field zero (native IB: the VCRC too): a fast
  /// path for a producer whose frames nobody verifies (the simulator
  /// without capture or ICRC check).
  bool compute_icrc = true;
  LinkLayer link_layer = LinkLayer::Ethernet;
  /// Native IB only (read when link_layer == Infiniband), the LRH's fields:
  std::uint8_t vl = 0;     // virtual lane, 4 bits (VL 15: subnet management only)
  std::uint8_t sl = 0;     // service level, 4 bits (each hop maps it to a VL)
  bool ib_global = false;  // a GRH follows the LRH (LNH 3), else LNH 2
  std::uint16_t dlid = 0;  // destination LID
  std::uint16_t slid = 0;  // source LID
  IbPacket packet;         // BTH, extension headers and payload
};

/// Bytes encode_frame() writes for `spec`, or 0 when the opcode is unknown.
[[nodiscard]] std::size_t frame_size(const FrameSpec& spec) noexcept;

/// Writes the complete frame into `out` (lengths, IPv4 checksum, BTH pad count
/// and ICRC computed; the UDP checksum is 0, as rxe and most NICs send it;
/// native IB: PktLen, the GRH's PayLen, the ICRC and the VCRC).
/// Returns the number of bytes written, or 0 when `out` is too small, the
/// opcode is unknown or (native IB) the packet is too long for PktLen.
std::size_t encode_frame(const FrameSpec& spec, std::span<std::uint8_t> out) noexcept;

/// The RFC 1071 checksum of an IPv4 header (with its checksum field as given).
[[nodiscard]] std::uint16_t ipv4_checksum(Bytes header) noexcept;

}  // namespace rdmalab::wire
