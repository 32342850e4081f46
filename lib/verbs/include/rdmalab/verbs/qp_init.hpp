// The ibv_qp_init_attr both backends (rdmalab::verbs and rdmalab::verbs_sim)
// build from QpInitAttrs.
#pragma once

#include <infiniband/verbs.h>

#include "rdmalab/verbs/queue_pair.hpp"

namespace rdmalab::verbs::detail {

[[nodiscard]] inline ibv_qp_init_attr to_ibv(const QpInitAttrs& a, ibv_cq* send_cq,
                                             ibv_cq* recv_cq) noexcept {
  ibv_qp_init_attr init{};
  init.qp_type = a.type;
  init.send_cq = send_cq;
  init.recv_cq = recv_cq;
  init.cap.max_send_wr = a.max_send_wr;
  init.cap.max_recv_wr = a.max_recv_wr;
  init.cap.max_send_sge = a.max_send_sge;
  init.cap.max_recv_sge = a.max_recv_sge;
  init.cap.max_inline_data = a.max_inline_data;
  init.sq_sig_all = a.sq_sig_all ? 1 : 0;
  return init;
}

}  // namespace rdmalab::verbs::detail
