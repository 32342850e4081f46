// Path MTU codes, as IBTA vol. 1 encodes an MTU (a port's MTU capability, a
// path's MTU, the CM REQ's Path Packet Payload MTU): 1 = 256, 2 = 512,
// 3 = 1024, 4 = 2048, 5 = 4096 bytes, the values of libibverbs' enum ibv_mtu.
#pragma once

#include <cstdint>

namespace rdmalab::wire {

/// Path MTU in bytes for an MTU code (1..5), 0 otherwise.
[[nodiscard]] constexpr std::uint32_t mtu_bytes(std::uint8_t code) noexcept {
  return code >= 1 && code <= 5 ? 128u << code : 0u;
}

/// The code of the largest MTU not above `bytes`: 1 (256) below 512, 5 (4096)
/// from 4096 up.
[[nodiscard]] constexpr std::uint8_t mtu_code_at_most(std::uint32_t bytes) noexcept {
  std::uint8_t code = 1;
  for (std::uint32_t m = 512; m <= bytes && code < 5; m *= 2) ++code;
  return code;
}

}  // namespace rdmalab::wire
