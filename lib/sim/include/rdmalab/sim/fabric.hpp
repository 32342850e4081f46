// The simulated fabric, RoCEv2 or InfiniBand: hosts, links, virtual time and
// the capture.
//
// A Fabric owns a virtual clock (nanoseconds), one event queue, the simulated
// hosts (each a NIC model, see device.hpp) and one link model per direction
// between two hosts. Nothing happens in wall time: a packet "takes" 1 us of
// propagation because an event is scheduled 1000 ns later on the virtual
// clock, and a 1 s ACK timeout costs nothing but one event. The simulation
// advances only when asked: Fabric::step(), run(), run_for(), run_until(), or
// CompletionQueue::poll() when the CQ is empty (see device.hpp).
//
// Every packet is a real RoCEv2 frame. The sender builds it with
// wire::encode_frame() (Ethernet, IPv4 or IPv6, UDP 4791, BTH, extension
// headers, payload, pad, ICRC) and the receiver parses those bytes with
// wire::decode_frame(): the responder never sees anything but the bytes on
// the wire. With a capture file open, every frame put on a link is written to
// it with its virtual transmit time.
//
// The link layer (FabricConfig::link_layer) is Ethernet by default, as above.
// With InfiniBand the same hosts, QPs and links carry native IB packets
// instead (IBTA vol. 1; see "InfiniBand" below).
//
// Determinism: all randomness (loss, jitter, reordering, path choice) comes
// from one splitmix64 generator per link, seeded from FabricConfig::seed and
// the link's endpoints, using integer arithmetic only. The same program with
// the same seed gives the same capture, byte for byte, on any platform, once
// its buffers are registered with fixed IOVAs (ProtectionDomain::reg_mr_iova)
// so that the addresses in RETHs do not depend on where the heap put them.
//
// InfiniBand (FabricConfig::link_layer = wire::LinkLayer::Infiniband):
//  - A trivial subnet manager: each host's port gets a LID in the order the
//    hosts join the fabric (add_host: 1, 2, 3, ...; a host's ports in turn),
//    LMC 0, and the subnet manager is the first host's (SM LID 1). A real
//    subnet manager (OpenSM) sweeps the fabric and may number the ports
//    differently. The port is ACTIVE at once (no INIT/ARMED steps), its link
//    layer InfiniBand; its GID table holds one GID, fe80::<port GUID>, the
//    GUID derived from the port's MAC as a modified EUI-64 (RFC 4291, appendix A: FF:FE in the
//    middle, the universal/local bit inverted), so the GID is the IPv6 link-local address of that
//    MAC. No RoCE GIDs. Device::lid(), Device::query_port().
//  - Every packet is LRH [GRH] BTH ... ICRC VCRC (wire::FrameSpec with
//    link_layer Infiniband): DLID from the address vector (ah_attr.dlid),
//    SLID the sender's LID, SL from ah_attr.sl, VL = SL at the host (an
//    identity SL-to-VL table, a model; a switch maps by its own table,
//    SwitchConfig::sl_to_vl; the ports have the data VLs 0-7, so an SL
//    above 7 is refused with EINVAL), a GRH (LNH 3) only when the address
//    vector is global (ah_attr.is_global), with the ports' fe80:: GIDs.
//    ACKs, NAKs and READ responses go to the requester's LID, UD packets to
//    their address handle's DLID, the CM's MADs too (cm.hpp).
//  - A link serialises the packet, LRH through VCRC, plus kIbWireOverhead
//    bytes of delimiters instead of Ethernet's 20 of preamble and gap.
//  - Switches forward by DLID (switch.hpp); a receiving port checks the VCRC
//    and the ICRC (FabricConfig::verify_icrc) and hands the packet to the QP
//    its DLID's port and BTH name.
//  - Captures are ERF (wire::LinkType::Erf, one type-21 record per packet),
//    the format ibdump writes and Wireshark opens.
//  - Credit-based link-level flow control (IBTA vol. 1, the link layer's
//    flow control) on every link into a switch port: the port has
//    SwitchConfig::ib_vl_buffer_blocks of 64-byte blocks per VL, and the
//    sender (a host's port or a switch's) starts a packet of a VL only when
//    the credits it holds for that VL cover all its blocks. So nothing is
//    dropped for lack of buffer: congestion backs up hop by hop instead
//    (switch.hpp has the model and where it is simpler). A host's port takes
//    everything that arrives: its receive buffer is not modelled.
//  - Not modelled: partitions beyond the default P_Key, multicast LIDs,
//    subnet management packets (QP 0, VL 15), the SA or routers. PFC, ECN
//    marking and DCQCN belong to Ethernet and RoCE: configuring them on an
//    InfiniBand fabric throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/sim/dcqcn.hpp"
#include "rdmalab/sim/switch.hpp"
#include "rdmalab/wire/frame.hpp"

namespace rdmalab::capture {
class PcapWriter;
}

namespace rdmalab::sim {

/// Virtual time in nanoseconds since the fabric was created.
using Time = std::int64_t;

inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1000;
inline constexpr Time kMillisecond = 1000 * kMicrosecond;
inline constexpr Time kSecond = 1000 * kMillisecond;
/// "No deadline".
inline constexpr Time kForever = INT64_MAX;

/// What a link's serialisation counts on top of a frame's bytes, per
/// packet. Ethernet: the preamble and start delimiter (8 bytes) and the
/// minimum inter-frame gap (12 bytes) of IEEE 802.3.
inline constexpr std::size_t kEthernetWireOverhead = 20;
/// InfiniBand: the packet (LRH through VCRC) is framed on the physical layer
/// by a start delimiter (SDP, start of data packet) and an end delimiter
/// (EGP, end of good packet), one symbol each, taken here as the time of
/// one byte each (IBTA vol. 2, the physical layer's packet delimiters; in
/// the 8b/10b generations each is one 10-bit control symbol, K27.7 and
/// K29.7, as one data byte is). IB has no minimum gap between packets. Not
/// counted: the idles and skip sequences between packets, the flow control
/// packets (their credits are modelled, their 6 bytes on the link are not),
/// and the 64b/66b block framing of FDR and later generations, whose control
/// blocks stand in for the delimiters.
inline constexpr std::size_t kIbWireOverhead = 2;
/// InfiniBand's flow control counts buffer space in blocks of 64 bytes
/// (IBTA vol. 1, the link layer's flow control): a packet takes its length,
/// LRH through VCRC, rounded up to whole blocks.
inline constexpr std::size_t kIbCreditBlock = 64;
/// The most blocks one VL's credits may stand at: a flow control packet's
/// credit limit (FCCL) and the blocks sent (FCTBS) are 12-bit counters
/// compared modulo 4096, so a receiver advertises at most 2048 blocks
/// beyond what it has received (IBTA vol. 1, the link layer's flow control).
inline constexpr std::uint32_t kIbMaxCreditBlocks = 2048;

/// An explicit drop on one direction of a link: a tool to stage exactly the
/// loss a lab wants to show. Rules are checked in order for every packet
/// offered to the link; the first rule that matches drops the packet.
struct DropRule {
  enum class Kind : std::uint8_t {
    Psn,        // request packets (not ACKs/responses) carrying this PSN
    Responses,  // ACK, NAK, atomic ACK and READ response packets
    Opcode,     // packets with this BTH opcode
    Nth,        // the n-th packet offered to this direction (1-based)
    AfterNth,   // every packet after the first n (a dead link or peer)
  };
  Kind kind = Kind::Psn;
  std::uint32_t value = 0;  // PSN, opcode or n
  /// How many more packets this rule may drop; 0 means no limit.
  std::uint32_t times = 1;
  /// Packets this rule has dropped so far (updated by the fabric).
  std::uint32_t dropped = 0;

  /// "Drop PSN p once" (or `times` times; 0 = every time).
  [[nodiscard]] static DropRule psn(std::uint32_t p, std::uint32_t times = 1) {
    return {Kind::Psn, p, times, 0};
  }
  /// "Drop all ACKs" (times = 0) or the first `times` of them.
  [[nodiscard]] static DropRule responses(std::uint32_t times = 0) {
    return {Kind::Responses, 0, times, 0};
  }
  [[nodiscard]] static DropRule opcode(std::uint8_t op, std::uint32_t times = 0) {
    return {Kind::Opcode, op, times, 0};
  }
  /// "Drop the n-th packet" on this direction.
  [[nodiscard]] static DropRule nth(std::uint32_t n) { return {Kind::Nth, n, 1, 0}; }
  /// Drop everything after the first n packets (cut the link).
  [[nodiscard]] static DropRule after(std::uint32_t n) { return {Kind::AfterNth, n, 0, 0}; }
};

/// The model of one direction of a link (host A -> host B).
///
/// A packet is serialised at `rate_bps` (the sender's port: one packet at a
/// time), then travels for `delay_ns` plus its path's extra delay plus a
/// uniformly random jitter in [0, jitter_ns]. Packets of one QP take one path
/// (ECMP hashes the UDP source port) unless `adaptive_routing` is on, in which
/// case each packet takes a random path: with unequal path delays they arrive
/// out of order, as on a fabric with adaptive routing.
struct LinkConfig {
  double rate_bps = 100e9;
  Time delay_ns = 1 * kMicrosecond;
  /// Probability that a packet is lost (independently).
  double loss = 0.0;
  /// Probability that a packet is delivered twice.
  double duplicate = 0.0;
  /// Uniform random extra delay in [0, jitter_ns]; reorders packets when it
  /// exceeds the serialisation time.
  Time jitter_ns = 0;
  /// Probability that a packet is held back by `reorder_delay_ns` (so that
  /// later packets overtake it).
  double reorder = 0.0;
  Time reorder_delay_ns = 10 * kMicrosecond;
  /// Extra delay of each parallel path; empty means one path.
  std::vector<Time> path_extra_ns;
  /// Spread the packets of every flow over all paths.
  bool adaptive_routing = false;
  std::vector<DropRule> drops;
  /// Bit errors: a packet these rules match (the same rules as `drops`,
  /// counted apart), or one chosen with probability `corrupt`, travels with
  /// one bit flipped in the last byte its ICRC covers. The receiving NIC
  /// finds the ICRC wrong and drops it silently (FabricStats::bad_icrc), as
  /// a real one does; the requester recovers by NAK or timeout. On
  /// InfiniBand the byte is covered by the VCRC too, which the receiving
  /// port (a switch's, or the destination's) checks first: the packet is
  /// dropped there and counted in FabricStats::bad_vcrc. A capture at
  /// the sender's port shows the frame as sent, one at the receiver's port
  /// as it arrived. With FabricConfig::verify_icrc off the packet is taken
  /// as it is, flipped bit and all.
  std::vector<DropRule> corruptions;
  double corrupt = 0.0;
  // --- DCQCN test tool ---
  /// ECN marks without a switch: an ECN-capable packet (ECT(0) or ECT(1)
  /// in its IP header) that these rules match (the rules of `drops`, counted
  /// apart; other packets are not offered to them) leaves the link marked
  /// CE (11b), the IPv4 header checksum updated. The ICRC masks the ECN
  /// bits, so it stays valid. A capture at the sender's port shows the
  /// frame as sent, one at the receiver's port as marked. An InfiniBand
  /// packet has no ECN field: on an InfiniBand fabric a link with rules
  /// here throws std::invalid_argument at its first packet.
  std::vector<DropRule> ce_marks;
};

/// A model of a PFC storm's source: a NIC whose host has stopped taking
/// what arrives (its receive buffers full, its queues no longer drained)
/// pauses its link partner on one priority without a break. From `from`
/// (virtual time) the host's port sends a PFC XOFF of 0xFFFF quanta for
/// `priority` and renews it when half of it has passed, as the switches
/// renew theirs; at `until` it sends an XON (0 quanta) and stops. Only on a
/// host connected to a switch; the pauses are counted in
/// HostPortStats::tx_pause and tx_xon. Real NICs differ in when they pause
/// (their receive buffer's thresholds); this keeps only the result. PFC is
/// Ethernet's: add_host() refuses a storm on an InfiniBand fabric
/// (std::invalid_argument).
struct PfcStorm {
  bool enabled = false;
  std::uint8_t priority = 3;
  Time from = 0;
  Time until = kForever;
};

/// The addresses of one more port of a host's NIC (HostConfig::more_ports).
struct HostPortConfig {
  wire::MacAddress mac{};
  wire::IpAddress ip;
};

/// The most ports one simulated NIC may have: ports 1-8. Real HCAs have one
/// or two.
inline constexpr std::size_t kMaxHostPorts = 8;

/// One simulated host: its name and addresses. The IP address is IPv4 or
/// IPv6; it is the host's RoCEv2 GID (index 0), IPv4-mapped for IPv4. On an
/// InfiniBand fabric the IP address is the host's IPoIB address (what the
/// CM resolves), the MAC gives the port GUID and the GID, and the LID is
/// the subnet manager's (see the top of this file).
///
/// A host's NIC has port 1 (`mac`, `ip`) and one more port for each entry
/// of `more_ports` (ports 2, 3, ...), each with its own MAC, IP address,
/// GID and (InfiniBand) LID, as a dual-port HCA has (ibv_query_device's
/// phys_port_cnt; ConnectX-3 and older show both ports on one device, and
/// ConnectX-4 and later each port as a device of its own: add one host per
/// port for those). A QP belongs to the port its INIT transition names
/// (ibv_qp_attr::port_num): it sends from that port's addresses and link,
/// and only packets arriving at that port reach it. The QP numbers are the
/// device's, shared by its ports, except the GSI QP (QP1), which each port
/// has. Everything else (port MTU, NIC costs, DCQCN, counters) is the
/// NIC's, the same for all its ports.
struct HostConfig {
  std::string name;
  wire::MacAddress mac{};
  wire::IpAddress ip;
  /// Port MTU (the largest path MTU a QP may use), in bytes: 256 .. 4096.
  std::uint32_t port_mtu = 4096;
  /// Time the NIC needs to produce one packet, on top of the link's
  /// serialisation time. 0 for a hardware NIC at line rate; tens of
  /// microseconds model a software NIC such as Soft-RoCE.
  Time tx_packet_ns = 0;

  // --- The NIC cost model of the send path (all 0 = off) -----------------
  // Each QP's send engine is one serial resource: it handles the doorbells,
  // WQE fetches and CQE writes asked of it in order, each for its cost. A
  // WQE's packets leave no earlier than its fetch is done plus, unless it is
  // inline, the payload's DMA read latency (which overlaps the next fetch).
  /// Per doorbell (one ibv_post_send, however many WRs it chains): the MMIO
  /// write that tells the NIC there is work.
  Time doorbell_ns = 0;
  /// Per WQE: the NIC reads the descriptor from host memory over PCIe.
  Time wqe_fetch_ns = 0;
  /// Per WQE without IBV_SEND_INLINE: the latency of the payload's DMA read
  /// before its first packet can leave (an inline WQE carries its data).
  Time payload_fetch_ns = 0;
  /// Per send completion written (a signalled WQE, or any with sq_sig_all):
  /// the CQE's DMA write.
  Time cqe_write_ns = 0;

  // --- DCQCN in this NIC (only with FabricConfig::dcqcn on) ---------------
  /// The notification point: a CE-marked request makes this NIC send a CNP.
  /// Off, as on a receiving NIC whose congestion control is disabled for the
  /// priority (mlx5: /sys/class/net/<if>/ecn/roce_np/enable/<prio> = 0): it
  /// still counts the marked requests (np_ecn_marked_roce_packets) and sends
  /// no CNP.
  bool dcqcn_np = true;
  /// The reaction point: this NIC's requests leave at the rate its CNPs set.
  /// Off (mlx5: ecn/roce_rp/enable/<prio> = 0): its requests leave at the
  /// line rate, and a CNP changes nothing; it is counted in rp_cnp_ignored.
  /// The requests stay ECN-capable (ECT(0)) so that a switch can mark them:
  /// a model; what a real NIC with its reaction point off puts in the ECN
  /// field depends on its firmware.
  bool dcqcn_rp = true;

  /// Off by default; see PfcStorm.
  PfcStorm pfc_storm{};

  /// Ports 2 .. kMaxHostPorts (none by default); add_host() refuses more
  /// (std::invalid_argument).
  std::vector<HostPortConfig> more_ports{};
};

/// Deviations from the IBTA that reproduce Soft-RoCE (rdma_rxe) behaviour.
struct RxeCompat {
  /// rxe never decrements a retry_cnt of 7, so 7 means "retry forever".
  /// The IBTA makes only rnr_retry 7 infinite; off by default.
  bool retry_cnt_7_infinite = false;
};

/// Where the capture tap sits.
enum class CapturePoint : std::uint8_t {
  /// The sender's port: every frame put on a link, in the order sent; a frame
  /// the link drops is still there (like an nftables drop after tcpdump's tap).
  SenderPort,
  /// The receiving ports: every frame in the order it arrived; dropped frames
  /// are missing and reordering shows (like tcpdump on the responder's side).
  ReceiverPort,
};

struct FabricConfig {
  std::uint64_t seed = 1;
  CapturePoint capture_point = CapturePoint::SenderPort;
  /// The link model used for every direction not configured explicitly.
  LinkConfig default_link;
  /// How long a responder may hold an ACK to cover more packets (ACK
  /// coalescing, allowed by the IBTA). 0: one ACK per AckReq packet, as rxe.
  Time ack_coalesce_ns = 0;
  /// Check the ICRC of every received frame; a bad ICRC drops the packet.
  /// Costs one CRC-32 over each frame. With this off and no capture open,
  /// the ICRC is not even computed (the field stays zero): nobody reads it.
  /// A fast path for big simulations; captures always carry a correct ICRC.
  /// On InfiniBand the same goes for the VCRC, which every receiving port,
  /// a switch's too, checks before anything else.
  bool verify_icrc = true;
  RxeCompat rxe;
  // --- DCQCN ---
  /// Congestion control in the NICs (dcqcn.hpp); off when empty, as before.
  /// On: the packets that carry a QP's data (RC and UC requests, READ
  /// responses) carry ECT(0) and are paced at that QP's reaction point's
  /// rate; a CE-marked one makes the receiving QP send a CNP (paced per QP)
  /// to the QP that sent it; a CNP cuts that QP's rate. Not on an
  /// InfiniBand fabric (the Fabric's constructor throws
  /// std::invalid_argument).
  std::optional<DcqcnParams> dcqcn;
  /// Ethernet (RoCE, as everything above describes) or InfiniBand (native
  /// IB packets; see the top of this file).
  wire::LinkLayer link_layer = wire::LinkLayer::Ethernet;
};

/// Counters of the whole fabric.
struct FabricStats {
  std::uint64_t packets_sent = 0;       // frames put on a link
  std::uint64_t packets_delivered = 0;  // frames handed to a receiving NIC
  std::uint64_t packets_dropped = 0;    // lost, by rules or randomly
  std::uint64_t payload_bytes_sent = 0;
  std::uint64_t packets_corrupted = 0;  // a bit flipped on the link
  std::uint64_t bad_icrc = 0;           // dropped by a receiver for it
  std::uint64_t switch_hops = 0;        // frames a switch sent on (pause frames too)
  std::uint64_t events = 0;
  std::uint64_t packets_ce_marked = 0;  // DCQCN: by LinkConfig::ce_marks
  /// InfiniBand: packets a receiving port (a switch's or a host's) dropped
  /// for a bad VCRC (a bit flipped on the link).
  std::uint64_t bad_vcrc = 0;
  /// InfiniBand: packets a host's port dropped because their DLID is not
  /// its LID.
  std::uint64_t wrong_dlid = 0;
  /// Packets that arrived at a host's port for a QP of another of its
  /// ports (the QP belongs to the port its INIT named), dropped.
  std::uint64_t wrong_port = 0;
};

class Device;
struct Engine;

/// The simulated network. Not copyable or movable: devices and their
/// objects keep references to it.
class Fabric {
 public:
  /// Throws std::invalid_argument for DCQCN on an InfiniBand fabric.
  explicit Fabric(FabricConfig config = {});
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  /// Adds a host with its NIC. The reference stays valid as long as the
  /// fabric lives. On InfiniBand its ports get the next LIDs (1 for the
  /// first host's port 1, then its port 2 if it has one, ...); a
  /// HostConfig::pfc_storm throws std::invalid_argument, as do more than
  /// kMaxHostPorts ports.
  Device& add_host(const HostConfig& config);

  /// The model of the direction from -> to (created from the default on
  /// first use), port 1 to port 1, or the ports given. Change it at any
  /// time; it applies to packets sent later. Once `from`'s port is
  /// connected to a switch, this is that port's link to the switch,
  /// whatever `to` is. Without a switch every port of every host reaches
  /// every other by a wire of its own. A port the device does not have
  /// throws std::out_of_range.
  LinkConfig& link(const Device& from, const Device& to);
  LinkConfig& link(const Device& from, std::uint8_t from_port, const Device& to,
                   std::uint8_t to_port);

  /// Adds a switch (see switch.hpp). Its ports are made by connect(). On
  /// InfiniBand, a configuration with PFC or ECN marking on any class, or
  /// with Routing::Adaptive, throws std::invalid_argument.
  SwitchId add_switch(const SwitchConfig& config);
  /// Joins a host's port (port 1, or `port`) to a new port of `sw` by a
  /// link, the same model in both directions. From now on everything that
  /// port sends goes to the switch. Connect before QPs are set up. A port
  /// the device does not have throws std::out_of_range, one already
  /// connected std::logic_error.
  void connect(Device& host, SwitchId sw, const LinkConfig& link);
  void connect(Device& host, std::uint8_t port, SwitchId sw, const LinkConfig& link);
  /// Joins two switches by a link (a new port on each).
  void connect(SwitchId a, SwitchId b, const LinkConfig& link);
  /// The link model of a switch port's egress (towards its peer): change
  /// it to make one path slower or lossy.
  LinkConfig& switch_link(SwitchId sw, std::size_t port);
  [[nodiscard]] std::size_t switch_count() const noexcept;
  [[nodiscard]] const SwitchConfig& switch_config(SwitchId sw) const;
  [[nodiscard]] std::size_t switch_ports(SwitchId sw) const;
  /// The counters of a switch's port `port` (numbered in connect() order).
  [[nodiscard]] SwitchPortStats switch_port_stats(SwitchId sw, std::size_t port) const;
  /// The counters of a host's port (port 1, or `port`; zero for a port on
  /// no switch).
  [[nodiscard]] HostPortStats host_port_stats(const Device& host, std::uint8_t port = 1) const;
  /// The egress port (numbered as switch_port_stats() numbers them) that
  /// `sw` takes under Routing::Ecmp for a UDP datagram from `src` to `dst`
  /// with these ports: the hash the switch applies to every such frame (a
  /// RoCEv2 packet's destination port is 4791, its source port the QP's;
  /// wire/udp_port.hpp). With one shortest-path port, that port; nullopt
  /// when no host has `dst` or the switch has no route to it. `src` and
  /// `dst` are both IPv4 or both IPv6. What adaptive routing would pick
  /// depends on the queues of the moment: not this. nullopt on InfiniBand,
  /// whose switches do not hash (lft_port()).
  [[nodiscard]] std::optional<std::size_t> ecmp_port(SwitchId sw, const wire::IpAddress& src,
                                                     const wire::IpAddress& dst,
                                                     std::uint16_t sport,
                                                     std::uint16_t dport = 4791);
  /// InfiniBand: the egress port (numbered as switch_port_stats() numbers
  /// them) that `sw`'s linear forwarding table gives packets to `dlid`;
  /// nullopt when no host has that LID or the switch has no route to it.
  [[nodiscard]] std::optional<std::size_t> lft_port(SwitchId sw, std::uint16_t dlid);
  /// A second tap, on one switch port: every frame that arrives on the
  /// port (stamped when it is whole) and every frame that leaves it (stamped
  /// when its first bit goes), as a mirror of that cable both ways would
  /// see them. Throws capture::CaptureError when the file cannot be made.
  void start_port_capture(SwitchId sw, std::size_t port, const std::string& path,
                          std::uint32_t snaplen = 0);
  void stop_port_capture(SwitchId sw, std::size_t port);
  /// Calls `probe` for every frame a switch queues, sends or drops (an empty
  /// function stops it). For time series of queue lengths.
  void on_queue(std::function<void(const QueueSample&)> probe);

  /// Writes every frame put on the wire to a pcap file with nanosecond
  /// virtual timestamps. snaplen 0 keeps whole frames; a small snap length
  /// (e.g. 128) keeps headers only, for big transfers. Throws
  /// capture::CaptureError when the file cannot be created. On InfiniBand
  /// the file's link type is ERF (197), one type-21 record per packet, the
  /// snap length counting the packet's bytes (a port capture likewise).
  void start_capture(const std::string& path, std::uint32_t snaplen = 0);
  /// Flushes and closes the capture file.
  void stop_capture();

  /// Virtual time now.
  [[nodiscard]] Time now() const noexcept;
  /// Processes the next event. Returns false when nothing is scheduled (the
  /// fabric is idle).
  bool step();
  /// Runs until idle or until virtual time would pass `deadline`. Returns
  /// true when the fabric became idle. A QP retrying forever (rnr_retry 7)
  /// never lets the fabric become idle: give a deadline.
  bool run(Time deadline = kForever);
  /// Runs for `duration` of virtual time (events up to now + duration).
  void run_for(Time duration);
  /// Runs until `pred()` holds (checked after each event), the fabric is
  /// idle or the deadline passes; returns pred().
  bool run_until(const std::function<bool()>& pred, Time deadline = kForever);

  [[nodiscard]] const FabricStats& stats() const noexcept;
  [[nodiscard]] const FabricConfig& config() const noexcept;

  /// The engine shared by the fabric's objects (internal).
  [[nodiscard]] Engine& engine() noexcept { return *engine_; }

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace rdmalab::sim
