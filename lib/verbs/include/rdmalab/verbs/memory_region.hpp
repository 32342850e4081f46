// A registered memory region (ibv_reg_mr / ibv_dereg_mr).
//
// Registration pins the pages, gives the NIC the virtual-to-physical mapping,
// and returns two keys: the lkey, which local work requests put in their
// SGEs, and the rkey, which a peer puts in RETH or AtomicETH to reach this
// memory. The access flags decide what the peer may do with the rkey.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace rdmalab::verbs {

class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  [[nodiscard]] virtual void* addr() const noexcept = 0;
  [[nodiscard]] virtual std::size_t length() const noexcept = 0;
  [[nodiscard]] virtual std::uint32_t lkey() const noexcept = 0;
  [[nodiscard]] virtual std::uint32_t rkey() const noexcept = 0;
  /// IBV_ACCESS_* flags given at registration.
  [[nodiscard]] virtual int access() const noexcept = 0;
  /// The ibv_mr itself, for the verbs that name a region by it
  /// (ibv_mw_bind_info::mr when binding a memory window).
  [[nodiscard]] virtual ibv_mr* get() const noexcept = 0;
  /// The address as the 64-bit value a peer puts in a RETH.
  [[nodiscard]] std::uint64_t va() const noexcept {
    return reinterpret_cast<std::uintptr_t>(addr());
  }

 protected:
  MemoryRegion() = default;
};

}  // namespace rdmalab::verbs
