// The switches of a simulated fabric: output queues, traffic classes, the
// shared buffer, ECN marking, PFC and the choice of an egress port.
//
// Without a switch the fabric joins every pair of hosts by a direct link (the
// `back-to-back` topology every lab uses by default). Once a host is
// connected to a switch (Fabric::connect), everything it sends leaves through
// that port and the switches forward it, hop by hop, to the destination's
// port: each hop serialises the frame at its link's rate, and frames wait in
// the egress port's queue while the link is busy or paused.
//
// The model, and where it is simpler than a switch ASIC (see chapter 14):
//  - Output-queued: a frame is classified and queued at its egress port the
//    moment it has arrived whole (store and forward, no cut-through, no
//    crossbar or ingress pipeline delay).
//  - Classification: the IP header's DSCP picks the traffic class through
//    SwitchConfig::dscp_to_tc; traffic class and priority (the PFC class) are
//    the same number. A frame keeps its bytes: no TTL decrement, no MAC rewrite.
//  - Scheduling between the 8 classes of a port: strict priority (7 first) or
//    deficit-weighted round robin.
//  - Buffer: one shared pool per switch. A lossy class admits a frame while
//    its egress queue stays under alpha x (free shared buffer), the dynamic
//    threshold of Choudhury and Hahne (1998) that switch ASICs use; otherwise
//    the frame is tail-dropped. A lossless (PFC) class is never dropped while
//    the headroom holds.
//  - ECN: RED-style on the egress queue at dequeue (as the DCQCN reference
//    simulation does): an ECT frame leaving a queue of q bytes is marked CE
//    with probability 0 below Kmin, Pmax x (q - Kmin) / (Kmax - Kmin) between
//    Kmin and Kmax, and 1 above Kmax. The IPv4 header checksum is updated; the
//    ICRC masks the ECN bits and stays valid.
//  - PFC (802.1Qbb): per ingress port and priority, the bytes it has in the
//    buffer. Crossing `xoff_bytes` sends a pause frame of 0xFFFF quanta for
//    that priority to the upstream port (refreshed before it expires); falling
//    under xoff_bytes - resume_offset_bytes sends an XON (0 quanta). The
//    upstream port, switch or NIC, stops starting frames of that priority for
//    exactly the paused time (a frame already being serialised finishes).
//  - Routing: shortest paths; among equal-cost egress ports, ECMP hashes the
//    5-tuple (the RoCEv2 UDP source port is the entropy) with a per-switch
//    seed, and adaptive routing takes, per packet, the eligible port with the
//    fewest bytes queued for that class.
//
// On an InfiniBand fabric (FabricConfig::link_layer) a switch is an IB switch:
//  - It forwards by the LRH's DLID with a linear forwarding table: one egress
//    port per DLID, from the same shortest paths; among equal-cost ports the
//    DLID picks one (port index DLID mod their number), so the destinations
//    spread over the uplinks as a subnet manager's routing (OpenSM's
//    min-hop, fat-tree) spreads them, if not by the same rule. No hashing of
//    flows: every packet to one LID takes one path (LMC 0).
//  - The packet's VL is its traffic class: the VL its SL has in
//    SwitchConfig::sl_to_vl (the identity by default, as the hosts'), written
//    into the LRH on the way out with the VCRC recomputed. The scheduling
//    between classes stands in for IB's VL arbitration tables.
//  - Every packet's VCRC is checked on arrival (FabricConfig::verify_icrc):
//    a bad one is dropped there (FabricStats::bad_vcrc). The VL is not
//    changed, so the VCRC stays as it came.
//  - Credit-based flow control: each port keeps a receive buffer of
//    SwitchConfig::ib_vl_buffer_blocks 64-byte blocks per VL, and its
//    upstream (a host's port or another switch's) starts a packet of a VL
//    only with credits for all its blocks. A packet's blocks are freed when
//    its last byte has left the switch, and the upstream hears of them one
//    propagation delay later. So an IB switch never drops for lack of buffer
//    (SwitchConfig::buffer_bytes and dynamic_alpha are Ethernet's): a full
//    egress queue holds its ingress ports' credits, their upstream ports
//    stop sending on that VL, and congestion backs up hop by hop, holding
//    up whatever else shares the VL on the way (head-of-line blocking, as
//    PFC does per priority). Counters: SwitchPortStats::xmit_wait_ns and
//    HostPortStats::xmit_wait_ns, the time a port had a packet of a VL to
//    send and no credits for it (IB's PortXmitWait, in ns, not ticks).
//    Simpler than the link layer: credits travel as if a flow control packet
//    left the moment blocks were freed (a real port sends one per VL at
//    least every 65,536 symbol times, and its 6 bytes share the link); the
//    blocks of a packet lost on the link come back at once (a real receiver
//    resynchronises from the sender's next FCTBS); a host's port waits for
//    credits for a whole packet of its path MTU before it builds the next
//    one (a NIC's scheduler knows the next packet's length).
//  - PFC and ECN marking are Ethernet's and are refused (Fabric::add_switch
//    throws std::invalid_argument). Routing::Adaptive works as on Ethernet,
//    among the equal-cost ports towards the DLID's host: each packet to the
//    eligible port with the fewest bytes queued for its VL (the adaptive
//    routing of IB switches, which is per packet too).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rdmalab/sim/dcqcn.hpp"

namespace rdmalab::sim {

inline constexpr std::size_t kTrafficClasses = 8;
/// InfiniBand: the receive buffer per VL of a switch port by default, in
/// 64-byte blocks (SwitchConfig::ib_vl_buffer_blocks).
inline constexpr std::uint32_t kIbDefaultVlBufferBlocks = 1024;

/// RED-style ECN marking on one traffic class's egress queues.
struct EcnConfig {
  bool enabled = false;
  std::uint64_t kmin_bytes = 100'000;
  std::uint64_t kmax_bytes = 400'000;
  double pmax = 0.2;

  /// Marking on, with the thresholds a DCQCN preset pairs with its NIC
  /// parameters (DcqcnParams::ecn).
  [[nodiscard]] static EcnConfig from(const EcnMarking& m) noexcept {
    return EcnConfig{true, m.kmin_bytes, m.kmax_bytes, m.pmax};
  }
};

/// PFC on one priority (IEEE 802.1Qbb).
struct PfcConfig {
  bool enabled = false;
  /// Bytes an ingress port may have in the buffer for this priority before
  /// it pauses its upstream.
  std::uint64_t xoff_bytes = 128 * 1024ULL;
  /// XON is sent when the ingress port's bytes fall below
  /// xoff_bytes - resume_offset_bytes.
  std::uint64_t resume_offset_bytes = 16 * 1024ULL;
  /// Bytes accepted after XOFF (frames already on the wire and the ones the
  /// upstream sends before it has heard the pause). A frame beyond it is
  /// dropped and counted as a headroom overflow: a misconfiguration.
  std::uint64_t headroom_bytes = 64 * 1024ULL;
};

enum class Scheduling : std::uint8_t { StrictPriority, Dwrr };
enum class Routing : std::uint8_t { Ecmp, Adaptive };

struct SwitchConfig {
  std::string name;
  /// Shared buffer of the whole switch. 16 MiB is the order of a 32-port
  /// 100 GbE switch of the Spectrum or Trident 3 generation.
  std::uint64_t buffer_bytes = 16ull * 1024 * 1024;
  /// Dynamic threshold of a lossy class: alpha x the free shared buffer.
  double dynamic_alpha = 1.0;
  /// DSCP (0..63) -> traffic class. Default: everything in class 0 but RoCE
  /// data (DSCP 26) in class 3 and CNPs (DSCP 48) in class 6, as common
  /// RoCE deployments configure.
  std::array<std::uint8_t, 64> dscp_to_tc = default_dscp_map();
  Scheduling scheduling = Scheduling::StrictPriority;
  /// DWRR quantum of each class, in bytes per round: a class's share of a
  /// busy port is its quantum over the sum of the busy classes' quanta.
  /// Equal by default.
  std::array<std::uint32_t, kTrafficClasses> dwrr_quantum = {4096, 4096, 4096, 4096,
                                                             4096, 4096, 4096, 4096};
  std::array<EcnConfig, kTrafficClasses> ecn{};
  std::array<PfcConfig, kTrafficClasses> pfc{};
  Routing routing = Routing::Ecmp;
  /// InfiniBand: each port's receive buffer per VL, in 64-byte blocks, all
  /// of it advertised as credits (at most kIbMaxCreditBlocks, at least the
  /// largest packet's 66 blocks, or Fabric::add_switch throws). 1024 blocks
  /// (64 KiB) keep a 100 Gb/s link of 1 us propagation busy with room to
  /// spare: a block's credit is back 2 x 1 us + 0.34 us (a 4 KiB packet's
  /// serialisation) after it was sent, when 29 KB have gone at 12.5 GB/s.
  std::uint32_t ib_vl_buffer_blocks = kIbDefaultVlBufferBlocks;
  /// InfiniBand: the SL-to-VL table of every port, SL n -> sl_to_vl[n] (the
  /// model's SLs and VLs are 0-7). The identity by default, the hosts' too;
  /// a subnet manager writes these tables (OpenSM only with its QoS
  /// enabled). A packet leaves on the VL of its SL, written into its LRH.
  std::array<std::uint8_t, kTrafficClasses> sl_to_vl = {0, 1, 2, 3, 4, 5, 6, 7};

  [[nodiscard]] static std::array<std::uint8_t, 64> default_dscp_map() noexcept {
    std::array<std::uint8_t, 64> m{};
    m[26] = 3;
    m[48] = 6;
    return m;
  }
};

/// Counters of one switch port and one traffic class.
struct SwitchQueueStats {
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t dropped = 0;            // tail drops (lossy) and headroom overflows
  std::uint64_t headroom_overflow = 0;  // of `dropped`: a lossless class overran
  std::uint64_t ecn_marked = 0;
  std::uint64_t max_queue_bytes = 0;
  std::uint64_t queue_bytes = 0;  // now
};

/// Counters of one switch port, named as switches and `ethtool -S` name them.
struct SwitchPortStats {
  std::array<SwitchQueueStats, kTrafficClasses> tc{};
  /// PFC frames this port sent upstream, XOFF and XON, per priority.
  std::array<std::uint64_t, kTrafficClasses> tx_pause = {};
  std::array<std::uint64_t, kTrafficClasses> tx_xon = {};
  /// Pause frames received on this port (its egress was paused), per priority.
  std::array<std::uint64_t, kTrafficClasses> rx_pause = {};
  /// Time (ns) this port's egress spent paused, per priority.
  std::array<std::int64_t, kTrafficClasses> rx_pause_duration = {};
  /// InfiniBand: time (ns) this port's egress had a packet of the VL to
  /// send and too few credits for it (PortXmitWait).
  std::array<std::int64_t, kTrafficClasses> xmit_wait_ns = {};
  /// The most bytes that arrived on this port were in the switch's buffer at
  /// once, per class (PFC's ingress accounting; on InfiniBand what the
  /// port's credits bound).
  std::array<std::uint64_t, kTrafficClasses> max_ingress_bytes = {};
  /// What the port is connected to: a host's name or "switch:port".
  std::string peer;
};

/// A host port's PFC counters (the NIC's rx_prioN_pause,
/// rx_prioN_pause_duration and tx_prioN_pause).
struct HostPortStats {
  std::array<std::uint64_t, kTrafficClasses> rx_pause = {};
  std::array<std::int64_t, kTrafficClasses> rx_pause_duration = {};
  /// PFC frames the host's port sent (HostConfig::pfc_storm), XOFF and XON,
  /// per priority: the NIC's tx_prioN_pause.
  std::array<std::uint64_t, kTrafficClasses> tx_pause = {};
  std::array<std::uint64_t, kTrafficClasses> tx_xon = {};
  /// InfiniBand: time (ns) the host's port had a packet of the VL to send
  /// and too few credits for it from its switch (PortXmitWait).
  std::array<std::int64_t, kTrafficClasses> xmit_wait_ns = {};
};

/// One change of a switch queue, for a lab's time series or a test:
/// reported (Fabric::on_queue) for every frame queued, sent or dropped.
struct QueueSample {
  enum class Kind : std::uint8_t { Enqueue, Dequeue, Drop };
  std::int64_t time = 0;  // ns
  std::uint32_t sw = 0;
  std::uint32_t port = 0;
  std::uint8_t tc = 0;
  Kind kind = Kind::Enqueue;
  /// The queue's bytes after the change (for a dequeue: the bytes still
  /// queued behind the frame, the length RED marks on).
  std::uint64_t queue_bytes = 0;
  std::uint32_t frame_bytes = 0;
  /// Dequeue: the frame was ECT and this switch marked it CE.
  bool ce_marked = false;
};

/// A switch of the fabric, by the order it was added.
struct SwitchId {
  std::uint32_t index = 0;
};

}  // namespace rdmalab::sim
