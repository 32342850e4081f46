// A protection domain (ibv_alloc_pd / ibv_dealloc_pd): the scope in which
// memory regions and queue pairs may be used together. An rkey registered in
// one PD is rejected by a QP of another.
#pragma once

#include <cstddef>
#include <memory>

#include "rdmalab/verbs/address_handle.hpp"
#include "rdmalab/verbs/memory_region.hpp"
#include "rdmalab/verbs/memory_window.hpp"
#include "rdmalab/verbs/queue_pair.hpp"
#include "rdmalab/verbs/srq.hpp"

namespace rdmalab::verbs {

class ProtectionDomain {
 public:
  virtual ~ProtectionDomain() = default;
  ProtectionDomain(const ProtectionDomain&) = delete;
  ProtectionDomain& operator=(const ProtectionDomain&) = delete;

  /// ibv_reg_mr. Throws VerbsError (ENOMEM: the memlock limit, with a hint).
  [[nodiscard]] virtual std::unique_ptr<MemoryRegion> reg_mr(void* addr, std::size_t length,
                                                             int access) = 0;
  /// ibv_alloc_mw (IBV_MW_TYPE_1 or IBV_MW_TYPE_2). Throws VerbsError
  /// (EOPNOTSUPP/ENOSYS: the device has no memory windows).
  [[nodiscard]] virtual std::unique_ptr<MemoryWindow> alloc_mw(ibv_mw_type type) = 0;
  /// ibv_create_qp. Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<QueuePair> create_qp(const QpInitAttrs& attrs) = 0;
  /// ibv_create_srq. Throws VerbsError (EINVAL: max_wr or max_sge above the
  /// device's max_srq_wr / max_srq_sge; EOPNOTSUPP: a device without SRQs).
  [[nodiscard]] virtual std::unique_ptr<Srq> create_srq(const SrqInitAttrs& attrs) = 0;

  /// ibv_create_ah: the destination of UD datagrams. Throws VerbsError
  /// (EINVAL: no such GID index, or on the simulator no host has the GID).
  [[nodiscard]] virtual std::unique_ptr<AddressHandle> create_ah(const ibv_ah_attr& attr) = 0;

 protected:
  ProtectionDomain() = default;
};

}  // namespace rdmalab::verbs
