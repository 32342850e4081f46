#include "rdmalab/wire/pause.hpp"

#include <algorithm>

namespace rdmalab::wire {
namespace {

constexpr std::size_t kMacHeader = 14;  // destination, source, ethertype
constexpr std::size_t kMinFrame = 60;   // without the FCS
constexpr MacAddress kPauseDst{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};

void store16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

}  // namespace

std::optional<PauseFrame> decode_pause(Bytes captured, LinkType link) noexcept {
  // MAC Control frames never carry a VLAN tag (802.3 annex 31A): only the
  // ethertype right after the addresses is looked at.
  if (link != LinkType::Ethernet || captured.size() < kMacHeader + 4) return std::nullopt;
  const std::uint8_t* p = captured.data();
  if (load_be16(p + 12) != kEthMacControl) return std::nullopt;
  PauseFrame f;
  std::copy_n(p, 6, f.dst.begin());
  std::copy_n(p + 6, 6, f.src.begin());
  f.opcode = load_be16(p + kMacHeader);
  const std::size_t body = kMacHeader + 2;
  if (f.opcode == kPauseOpcode) {
    f.class_enable = 0xFF;
    f.quanta.fill(load_be16(p + body));
    return f;
  }
  if (f.opcode != kPfcOpcode || captured.size() < body + 2 + 2 * kPriorities) return std::nullopt;
  f.class_enable = load_be16(p + body);
  for (std::size_t i = 0; i < kPriorities; ++i) f.quanta[i] = load_be16(p + body + 2 + 2 * i);
  return f;
}

std::size_t encode_pause(const PauseFrame& f, std::span<std::uint8_t> out) noexcept {
  if (out.size() < kMinFrame) return 0;
  std::uint8_t* p = out.data();
  std::fill_n(p, kMinFrame, std::uint8_t{0});
  const MacAddress& dst = f.dst == MacAddress{} ? kPauseDst : f.dst;
  std::copy(dst.begin(), dst.end(), p);
  std::copy(f.src.begin(), f.src.end(), p + 6);
  store16(p + 12, kEthMacControl);
  store16(p + kMacHeader, f.opcode);
  const std::size_t body = kMacHeader + 2;
  if (f.opcode == kPfcOpcode) {
    store16(p + body, f.class_enable);
    for (std::size_t i = 0; i < kPriorities; ++i) store16(p + body + 2 + 2 * i, f.quanta[i]);
  } else {
    store16(p + body, f.quanta[0]);
  }
  return kMinFrame;
}

std::int64_t pause_quanta_ns(std::uint32_t quanta, std::uint64_t bits_per_second) noexcept {
  if (bits_per_second == 0) return 0;
  // quanta * 512 bits / speed, rounded to the nearest ns (65535 * 512 * 1e9
  // fits in 64 bits).
  const std::uint64_t bits = std::uint64_t{quanta} * kBitsPerQuantum;
  return static_cast<std::int64_t>((bits * 1'000'000'000ULL + bits_per_second / 2) /
                                   bits_per_second);
}

}  // namespace rdmalab::wire
