// The verbs side of TensorFlow's RDMA transports, shared by lab 10 (the
// verbs rendezvous) and lab 11 (GDR, which measures lab 10's exchange next to
// its own): the work requests their messages travel in, and the polling
// loop of the two workers.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <span>

#include "rdmalab/lab/endpoint.hpp"

namespace rdmalab::tf {

/// What a signalled write was, in the high half of its wr_id (the low half
/// is the request index): the peer's completion handler tells them apart.
enum class WrKind : std::uint64_t { Ack = 1, Message = 2, Tensor = 3 };
[[nodiscard]] constexpr std::uint64_t wr_id(WrKind k, std::uint64_t index) noexcept {
  return static_cast<std::uint64_t>(k) << 32 | index;
}
[[nodiscard]] constexpr WrKind wr_kind(std::uint64_t wr_id) noexcept {
  return static_cast<WrKind>(wr_id >> 32);
}
[[nodiscard]] constexpr std::uint64_t wr_index(std::uint64_t wr_id) noexcept {
  return wr_id & 0xFFFFFFFF;
}

/// One signalled RDMA WRITE with immediate (`imm` in host order) of `len`
/// bytes from `sge` to `raddr`/`rkey`; no SGE at all when `len` is 0 (an ACK).
void post_write_imm(lab::Endpoint& e, std::uint64_t wr_id, const ibv_sge& sge, std::uint64_t raddr,
                    std::uint32_t rkey, std::uint32_t imm);

/// A receive WQE without SGE (wr_id 0): an immediate consumes one, its bytes
/// go where the RETH says.
void post_imm_recv(lab::Endpoint& e);

/// Both workers' polling threads, interleaved: polls each endpoint's CQ in
/// turn, eight completions at a time, and hands each completion to `on_wc`
/// with the index of its endpoint in `sides`; when every CQ is empty, lets
/// the backend make progress (on the simulator: virtual time runs). Returns
/// true as soon as `done()` holds before a poll; when the backend is idle or
/// 30 s have passed, returns what `done()` says then.
bool poll_loop(std::span<lab::Endpoint* const> sides,
               const std::function<void(std::size_t side, const ibv_wc& wc)>& on_wc,
               const std::function<bool()>& done);

}  // namespace rdmalab::tf
