// The incast fabric that labs 18 and 19 share: a dumbbell whose left switch
// holds N senders and two victims' senders, and whose right switch holds the
// one receiver and the victims' receivers; the constants their derivations
// use; and the narrated set-up of every host, QP and connection.
//
//   sim0 .. sim{N-1}   the senders (left)
//   sim{N}             the victim: same priority, another receiver (left)
//   sim{N+1}           the other-class victim: priority 0 (left)
//   sim{N+2}           the receiver (right)
//   sim{N+3}, sim{N+4} the two victims' receivers (right)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/narrator.hpp"
#include "rdmalab/sim/topology.hpp"

namespace rdmalab::lab::incast {

// Path MTU of every QP: 4096-byte payloads, the fewest packets.
inline constexpr int kMtu = 4096;
// Propagation delay of every link.
inline constexpr sim::Time kDelayNs = 1 * sim::kMicrosecond;
// Up to this much random extra delay per frame on every host link: less
// than one frame's serialisation (no reordering), enough that the senders'
// frames do not reach the switch in lockstep.
inline constexpr sim::Time kJitterNs = 100;
// The shared buffer of each switch (the simulator's default, a 100 GbE
// switch of the Spectrum or Trident 3 generation).
inline constexpr std::uint64_t kBufferBytes = 16ull * 1024 * 1024;
// The simulator's default PFC thresholds: XOFF and the resume offset.
inline constexpr std::uint64_t kXoffBytes = 128 * 1024ULL;
inline constexpr std::uint64_t kResumeBytes = 16 * 1024ULL;
// DSCP 26 (RoCE data, traffic class 3) and DSCP 0 (class 0) as the IP
// traffic class byte: DSCP << 2 (the NIC sets the ECN bits).
inline constexpr std::uint8_t kRoceTclass = 26 << 2;
inline constexpr std::uint8_t kOtherTclass = 0;
inline constexpr std::uint8_t kRoceTc = 3;
// Frame sizes at MTU 4096 over IPv4: Ethernet 14, IPv4 20, UDP 8, BTH 12,
// ICRC 4; a WRITE First/Only adds a RETH (16); an ACK an AETH (4); each
// frame takes 20 more bytes on the wire (preamble, delimiter, gap).
inline constexpr std::uint64_t kHeaders = 14 + 20 + 8 + 12 + 4;
inline constexpr std::uint64_t kReth = 16;
inline constexpr std::uint64_t kAeth = 4;
inline constexpr std::uint64_t kWireOverhead = 20;
inline constexpr std::uint64_t kLargestFrame = kHeaders + kReth + 4096;
// Native InfiniBand (--link-layer ib): LRH 8, BTH 12, ICRC 4, VCRC 2; a
// WRITE First/Only adds a RETH, an ACK an AETH; each packet takes 2 more
// byte times on the wire (its start and end delimiters), and no gap.
inline constexpr std::uint64_t kIbHeaders = 8 + 12 + 4 + 2;
inline constexpr std::uint64_t kIbWireOverhead = 2;
// On InfiniBand the senders and the victim use SL 3 (the simulator's ports
// map SL n to VL n: the VL is the switches' class 3, as DSCP 26 is on
// RoCE); the other-class victim SL 0.
inline constexpr std::uint8_t kIbDataSl = 3;
// Each switch port's receive buffer per VL on InfiniBand, all of it
// credits: the simulator's default, 1024 blocks of 64 bytes.
inline constexpr std::uint64_t kIbVlBufferBytes =
    std::uint64_t{sim::kIbDefaultVlBufferBlocks} * sim::kIbCreditBlock;
// DCQCN rates are sampled this often.
inline constexpr sim::Time kSampleNs = 1 * sim::kMicrosecond;
// How long a run may take in virtual time before the lab gives up.
inline constexpr sim::Time kRunLimit = 10 * sim::kSecond;

struct Shape {
  std::uint32_t senders = 8;
  std::uint32_t messages = 2;  // each sender's, and each victim's
  std::uint32_t size = 1 << 20;
  bool infiniband = false;  // native IB frames (kIbHeaders) instead of RoCEv2's
};

/// ns a frame of `bytes` (without preamble and gap, or IB's delimiters)
/// takes on a link of `bps` with `overhead` bytes of them, as the simulator
/// counts it: truncated to the ns, frame by frame.
[[nodiscard]] std::int64_t ser_ns(std::uint64_t bytes, double bps,
                                  std::uint64_t overhead = kWireOverhead);

/// What both labs derive before they measure (chapter 26 writes it out).
struct Ideal {
  double rate_bps = 0;  // every host link
  double isl_bps = 0;   // the link between the switches: (senders + 2) x rate
  std::uint64_t packets_per_message = 0;
  std::int64_t message_ser_ns = 0;  // one message's frames back to back at the host rate
  /// The incast's last completion if the bottleneck never idles: the first
  /// frame crosses a host link and the link between the switches, the
  /// bottleneck sends every message's frames back to back, the last one
  /// reaches the receiver and its ACK crosses three links back.
  std::int64_t ideal_ns = 0;
  std::int64_t victim_ideal_ns = 0;  // the same for one victim's messages alone
  /// A victim's rate alone, less what may delay it without any pause: the
  /// jitter of the three host links its first frame and last ACK cross,
  /// and its first frame behind the other left hosts' first frames on the
  /// link between the switches.
  double victim_ideal_gbps = 0;
  /// PFC headroom: after XOFF, what the upstream still sends until it has
  /// heard the pause: a link delay there and back at the fastest link's
  /// rate, the frame the pause waits behind and the frame the upstream is
  /// serialising; twice that, for margin.
  std::uint64_t headroom_bytes = 0;
};
[[nodiscard]] Ideal derive_ideal(const Shape& s, double rate_gbps);

/// "sim{i}": the device name of host `i` (see the map above).
[[nodiscard]] std::string device(std::uint32_t i);

/// The dumbbell for `senders` senders: host links at `rate_bps` with
/// kDelayNs and kJitterNs, the link between the switches at `isl_bps`, each
/// switch with kBufferBytes of buffer and nothing else configured.
[[nodiscard]] sim::TopologySpec topology(std::uint32_t senders, double rate_bps, double isl_bps);

/// The endpoints of every host. rx[0] is the receiver's host (its PD, MR of
/// senders x size bytes and CQ); rx[i] is the receiver's QP for sender i.
/// Destroying it destroys the QPs, the last opened first.
struct Hosts {
  explicit Hosts(std::uint32_t senders) : tx(senders), rx(senders) {}
  Hosts(const Hosts&) = delete;
  Hosts& operator=(const Hosts&) = delete;
  ~Hosts();

  std::vector<Endpoint> tx, rx;
  Endpoint vtx, vrx;  // the victim and its receiver
  Endpoint wtx, wrx;  // the other-class victim and its receiver
};

/// Opens every host of the map above (PD, MR, CQ, one RC QP per flow),
/// fills the senders' buffers, and connects every flow: the senders and the
/// victim on kRoceTclass, the other-class victim on kOtherTclass. The
/// receiver's and sender 0's verbs are narrated to `say`, the others to
/// `quiet`; `why_tclass`, the lab's explanation of the traffic class (taking
/// the traffic class byte, its DSCP and the switch's class), is said once
/// the senders are connected.
void open_and_connect(Narrator& say, Narrator& quiet, Environment& env, const CommonOptions& co,
                      const Shape& s, const i18n::Message& why_tclass, Hosts& h);

/// The checks both labs make of InfiniBand's credits, in the user's
/// language: nothing dropped; the last completion by `by_us`.
[[nodiscard]] std::string no_drops_credits_text();
[[nodiscard]] std::string line_rate_credits_text(double by_us);

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::lab::incast
