// Ethernet MAC Control pause frames: how a switch or NIC tells its link
// partner to stop sending (IEEE 802.3 annex 31B, and 802.1Qbb for the
// per-priority form that lossless RoCE depends on).
//
// Both travel untagged with ethertype 0x8808 to 01-80-C2-00-00-01:
//   802.3x PAUSE  opcode 0x0001, then pause_time (2 bytes): the whole link.
//   802.1Qbb PFC  opcode 0x0101, then the priority-enable vector (2 bytes, the
//                 low 8 bits name priorities 0..7) and 8 x 2-byte times, one
//                 per priority (a time is only meaningful when its bit is set).
// A time is in quanta of 512 bit times at the port's speed (5.12 ns at
// 100 Gb/s, so the largest, 65535, is 335.5 µs); 0 is XON: resume now.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/frame.hpp"

namespace rdmalab::wire {

inline constexpr std::uint16_t kEthMacControl = 0x8808;
inline constexpr std::uint16_t kPauseOpcode = 0x0001;  // 802.3x
inline constexpr std::uint16_t kPfcOpcode = 0x0101;    // 802.1Qbb
inline constexpr std::size_t kPriorities = 8;
/// Bit times in one pause quantum.
inline constexpr std::uint64_t kBitsPerQuantum = 512;

struct PauseFrame {
  MacAddress src{};
  MacAddress dst{};
  std::uint16_t opcode = kPfcOpcode;
  /// 802.1Qbb: the priority-enable vector (bits 8..15 are reserved and kept
  /// as sent); 802.3x: 0xFF, every priority.
  std::uint16_t class_enable = 0;
  /// Quanta per priority; 802.3x puts its one pause_time in every slot.
  std::array<std::uint16_t, kPriorities> quanta{};

  [[nodiscard]] bool pfc() const noexcept { return opcode == kPfcOpcode; }
  [[nodiscard]] bool enabled(std::size_t priority) const noexcept {
    return priority < kPriorities && ((class_enable >> priority) & 1U) != 0;
  }
};

/// The pause frame in an Ethernet frame whose (outer) ethertype is 0x8808
/// and whose MAC Control opcode is PAUSE or PFC; nullopt for anything else
/// (other link types, other opcodes, too short).
[[nodiscard]] std::optional<PauseFrame> decode_pause(Bytes captured, LinkType link) noexcept;

/// Writes a minimum-size (60-byte, FCS excluded) pause frame; returns the
/// bytes written, or 0 when `out` is smaller than 60.
std::size_t encode_pause(const PauseFrame& p, std::span<std::uint8_t> out) noexcept;

/// How long `quanta` last at `bits_per_second`, in nanoseconds (0 when the
/// speed is 0).
[[nodiscard]] std::int64_t pause_quanta_ns(std::uint32_t quanta,
                                           std::uint64_t bits_per_second) noexcept;

}  // namespace rdmalab::wire
