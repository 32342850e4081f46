// A memory window (ibv_alloc_mw / ibv_dealloc_mw, IBTA 10.6.7).
//
// A window is a second rkey over part of a registered region. It is not
// registered: it is bound to a region with a work request, which costs no
// system call and no page pinning, and revoked the same way. Binding picks a
// new key byte (the low 8 bits of the rkey, ibv_inc_rkey), so a peer holding
// an old rkey of the same window is refused.
//
//   type 1: bound with QueuePair::bind_mw (ibv_bind_mw); valid for every QP
//           of the PD; unbound by binding it again with length 0.
//   type 2: bound with an IBV_WR_BIND_MW send work request on one QP; valid
//           only for requests arriving on that QP; revoked by
//           IBV_WR_LOCAL_INV or by the peer's IBV_WR_SEND_WITH_INV.
//
// The region must be registered with IBV_ACCESS_MW_BIND (`man ibv_bind_mw`).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace rdmalab::verbs {

class MemoryWindow {
 public:
  virtual ~MemoryWindow() = default;
  MemoryWindow(const MemoryWindow&) = delete;
  MemoryWindow& operator=(const MemoryWindow&) = delete;

  /// The ibv_mw to put in ibv_send_wr::bind_mw.mw.
  [[nodiscard]] virtual ibv_mw* get() const noexcept = 0;
  [[nodiscard]] ibv_mw_type type() const noexcept { return get()->type; }
  /// The rkey as this program knows it (ibv_mw::rkey): updated by a type 1
  /// bind, and by set_rkey() after a type 2 bind.
  [[nodiscard]] std::uint32_t rkey() const noexcept { return get()->rkey; }
  /// Records the rkey a type 2 bind gave the window (ibv_send_wr::bind_mw.rkey),
  /// once its completion says it succeeded: the next bind names the window
  /// by this key.
  void set_rkey(std::uint32_t rkey) noexcept { get()->rkey = rkey; }

 protected:
  MemoryWindow() = default;
};

}  // namespace rdmalab::verbs
