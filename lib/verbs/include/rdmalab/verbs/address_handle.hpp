// An address handle (ibv_create_ah / ibv_destroy_ah): where a UD datagram
// goes. A connected QP (RC, UC) learns its one peer at RTR; a UD QP has no
// peer, so every send work request names its destination instead: the
// address handle (the peer's GID, our source GID index, hop limit, traffic
// class) in wr.ud.ah, the peer's QPN in wr.ud.remote_qpn and the Q_Key the
// peer's QP expects in wr.ud.remote_qkey.
#pragma once

#include <infiniband/verbs.h>

namespace rdmalab::verbs {

class AddressHandle {
 public:
  virtual ~AddressHandle() = default;
  AddressHandle(const AddressHandle&) = delete;
  AddressHandle& operator=(const AddressHandle&) = delete;

  /// The ibv_ah to put in ibv_send_wr::wr.ud.ah.
  [[nodiscard]] virtual ibv_ah* get() const noexcept = 0;

 protected:
  AddressHandle() = default;
};

}  // namespace rdmalab::verbs
