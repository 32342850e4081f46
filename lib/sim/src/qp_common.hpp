// Internal: small helpers the requester and the responder of a QP both use
// (requester.cpp, responder.cpp). Inline: they run for every packet.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::sim {

/// The position of packet `index` of a message of `count` packets.
[[nodiscard]] inline wire::Position position_of(std::uint32_t index, std::uint32_t count) noexcept {
  if (count <= 1) return wire::Position::Only;
  if (index == 0) return wire::Position::First;
  return index + 1 == count ? wire::Position::Last : wire::Position::Middle;
}

/// Packets of a message of `length` bytes at path MTU `mtu` (at least one).
[[nodiscard]] inline std::uint32_t packets_for(std::uint64_t length, std::uint32_t mtu) noexcept {
  return length == 0 ? 1u : static_cast<std::uint32_t>((length + mtu - 1) / mtu);
}

/// Copies `data` into an SGE list starting `offset` bytes into it. The SGEs
/// were checked when the WQE was posted or started.
inline void scatter(const ibv_sge* sg, int n, std::uint64_t offset, wire::Bytes data) noexcept {
  std::size_t done = 0;
  for (int i = 0; i < n && done < data.size(); ++i) {
    if (offset >= sg[i].length) {
      offset -= sg[i].length;
      continue;
    }
    const std::size_t take = std::min<std::size_t>(sg[i].length - offset, data.size() - done);
    std::memcpy(reinterpret_cast<void*>(sg[i].addr + offset), data.data() + done, take);
    done += take;
    offset = 0;
  }
}

}  // namespace rdmalab::sim
