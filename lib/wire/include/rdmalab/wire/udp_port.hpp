// The UDP source port of a RoCEv2 packet: flow entropy, in one place.
//
// RoCEv2 fixes the destination port (4791) and leaves the source port to the
// sender as entropy for ECMP: switches hash the 5-tuple, so packets of one
// flow stay on one path (in order) and different flows spread. Any value
// will do on the wire; by convention senders take it from 0xC000..0xFFFF
// (the top quarter, IB_ROCE_UDP_ENCAP_VALID_PORT_MIN in the kernel).
//
// What the Linux kernel does:
//   - rxe gives each QP a port when the QP is created: 0xC000 plus the 14
//     top bits of the QP number multiplied by the 32-bit golden ratio
//     (hash_32(qpn, 14), multiplier 0x61C88647). Both directions of a
//     connection then use different ports (one per QP).
//   - When the connection's address carries a GRH flow label (rdma_cm sets
//     one for RC: rdma_calc_flow_label(lqpn, rqpn), a 20-bit fold of the
//     product of both QP numbers), rxe and mlx5 derive the port from it
//     instead (rdma_flow_label_to_udp_sport: the label's low 14 bits XOR its
//     high 6 bits, plus 0xC000). The product is symmetric, so both
//     directions of the connection share one port.
//
// What the simulator does, with its own numbers (captures and goldens are
// made with them, so they stay):
//   - a connected QP (RC, UC): udp_source_port(local, remote), a hash of both
//     QP numbers that does not depend on their order, so both directions share
//     one port, as with rdma_cm's flow label; a different mix than the
//     kernel's, so the same QP numbers give other ports than on Soft-RoCE;
//   - a UD QP: udp_source_port(qpn), rxe's per-QP shape (0xC000 plus the top
//     14 bits of qpn times a golden-ratio constant), with the multiplier
//     0x9E3779B1 instead of the kernel's 0x61C88647.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rdmalab::wire {

/// The lowest source port a RoCEv2 sender picks from (0xC000..0xFFFF).
inline constexpr std::uint16_t kRoceSourcePortMin = 0xC000;

/// The source port of a UD QP's packets (one port per QP, as rxe).
[[nodiscard]] constexpr std::uint16_t udp_source_port(std::uint32_t qpn) noexcept {
  return static_cast<std::uint16_t>(kRoceSourcePortMin | ((qpn * 0x9E3779B1u) >> 18));
}

/// The source port of a connection between QPs `a` and `b`, the same in both
/// directions (as a port derived from rdma_cm's flow label is).
[[nodiscard]] constexpr std::uint16_t udp_source_port(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t lo = std::min(a, b);
  const std::uint32_t hi = std::max(a, b);
  const std::uint32_t h = (lo * 0x9E3779B1u) ^ (hi * 0x85EBCA77u);
  return static_cast<std::uint16_t>(kRoceSourcePortMin | ((h >> 13) & 0x3FFFu));
}

}  // namespace rdmalab::wire
