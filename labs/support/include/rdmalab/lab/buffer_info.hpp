// The one-sided labs' buffer advertisement when the CM connects them (--cm):
// there is no side channel, so once connected the passive side sends its
// buffer's VA, rkey and length in one SEND of 16 bytes, big-endian, from a
// small buffer of its own (rping does the same with its rping_rdma_info).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "rdmalab/lab/endpoint.hpp"

namespace rdmalab::lab {

/// wr_id of the receive for the buffer information (active side) and of the
/// SEND carrying it (passive side).
inline constexpr std::uint64_t kBufferInfoRecvWrId = 900;
inline constexpr std::uint64_t kBufferInfoWrId = 901;

struct BufferInfo {
  std::array<std::uint8_t, 16> bytes{};
  std::unique_ptr<verbs::MemoryRegion> mr;
};

/// The active side: one receive for the peer's message, posted before
/// connecting (the peer may send as soon as it is connected). A receive needs
/// the QP in INIT at least: this moves it there itself, and the CM's INIT
/// attributes are applied later, INIT -> INIT.
void expect_buffer_info(Narrator& n, Endpoint& e, BufferInfo& in, const CommonOptions& o,
                        std::string_view peer_role);

/// The passive side: VA, rkey and length of its buffer in a SEND.
void send_buffer_info(Narrator& n, Endpoint& e, BufferInfo& out);

/// The active side: the peer's message, decoded; std::runtime_error (in the
/// user's language) for anything else.
[[nodiscard]] verbs::ConnInfo take_buffer_info(Narrator& n, Endpoint& e, const BufferInfo& in,
                                               std::string_view peer_role);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> buffer_info_catalog() noexcept;

}  // namespace rdmalab::lab
