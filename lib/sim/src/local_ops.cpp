// Local operations of a simulated QP's send queue: memory window bind and
// local invalidate (IBTA vol. 1, 10.6.7 memory windows, and the rules
// C10-72..C10-75 and o10-37.2.x cited below; 9.4 for SEND with Invalidate,
// whose responder calls invalidate_rkey()). They take no PSN and put nothing
// on the wire. The checks follow rxe (drivers/infiniband/sw/rxe/rxe_mw.c),
// including where it is laxer than the IBTA.
#include <cerrno>

#include "engine.hpp"

namespace rdmalab::sim {

// The requester executes a bind or a local invalidate when it reaches it in
// the send queue, as rxe's rxe_do_local_ops() does: it takes no PSN and puts
// nothing on the wire, and it completes in order, after the requests before
// it. A failure completes it in error and moves the QP to the error state.
void QpImpl::run_local_ops() {
  bool ran = false;
  while ((state == IBV_QPS_RTS || state == IBV_QPS_SQD) && !rnr_wait && !reread &&
         tx_index < sq_count) {
    SendWqe& w = wqe_at(tx_index);
    if (!is_local(w)) break;
    if (!w.started) {
      if (state != IBV_QPS_RTS) break;  // SQD: nothing new starts
      if ((w.flags & IBV_SEND_FENCE) != 0 && rd_atomic_outstanding > 0) break;
      ibv_wc_status status = IBV_WC_SUCCESS;
      if (w.opcode == IBV_WR_BIND_MW)
        status = execute_bind(w);
      else if (invalidate_rkey(w.imm) != 0)
        status = IBV_WC_LOC_QP_OP_ERR;  // rxe: a failed local invalidate
      if (status != IBV_WC_SUCCESS) {
        fail_tx_wqe(status);
        return;
      }
      w.started = true;
      w.done = true;
      w.psn = next_psn;
      w.npkts = 0;
      ++started;
      ran = true;
    }
    ++tx_index;  // a retransmission walks over it without executing it again
    tx_pkt = 0;
  }
  if (ran) retire();
}

// rxe_bind_mw() and rxe_check_bind_mw(), check for check. Where rxe is laxer
// than the IBTA it is followed: the MR's PD is not compared with the
// window's for type 2 (C10-72 names the QP's PD only) and a window's rights
// need not be a subset of the MR's remote rights (only C10-74: remote write
// or atomic need local write on the MR).
ibv_wc_status QpImpl::execute_bind(const SendWqe& w) {
  MemoryWindow* found = device->window_of(w.bind.mw_rkey);
  if (found == nullptr || found->rkey() != w.bind.mw_rkey) return IBV_WC_MW_BIND_ERR;
  MemoryWindow& mw = *found;
  MemoryRegion* mr = nullptr;
  if (w.bind.length != 0) {
    mr = engine->find_mr(*device, w.bind.mr_lkey);
    if (mr == nullptr) return IBV_WC_MW_BIND_ERR;
  }
  const int access = w.bind.access;
  constexpr int kSupported = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  // Zero-based windows are not modelled.
  if ((access & ~kSupported) != 0) return IBV_WC_MW_BIND_ERR;
  if (mw.type() == IBV_MW_TYPE_1) {
    if (mw.state() != MemoryWindow::State::Valid) return IBV_WC_MW_BIND_ERR;
  } else {
    if (mw.state() != MemoryWindow::State::Free) return IBV_WC_MW_BIND_ERR;  // o10-37.2.30
    if (&mw.pd() != pd) return IBV_WC_MW_BIND_ERR;                           // C10-72
    if (mr == nullptr) return IBV_WC_MW_BIND_ERR;                            // o10-37.2.40
  }
  if (mr != nullptr) {
    if ((mr->access() & IBV_ACCESS_MW_BIND) == 0) return IBV_WC_MW_BIND_ERR;  // C10-73
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 &&
        (mr->access() & IBV_ACCESS_LOCAL_WRITE) == 0)
      return IBV_WC_MW_BIND_ERR;  // C10-74
    if (w.bind.addr < mr->iova() || w.bind.length > mr->length() ||
        w.bind.addr - mr->iova() > mr->length() - w.bind.length)
      return IBV_WC_MW_BIND_ERR;  // C10-75
  }
  mw.bind(w.bind.rkey, mr, w.bind.addr, w.bind.length, access, this);
  return IBV_WC_SUCCESS;
}

// rxe_invalidate_mw(): 0, or EINVAL. rxe checks neither the QP nor the PD the
// window is bound to (the IBTA wants the QP of a type 2 window, o10-37.2.x),
// so any QP of the device may invalidate it; an ordinary registered MR
// cannot be invalidated (only fast-registration MRs, not modelled here).
int QpImpl::invalidate_rkey(std::uint32_t rkey) {
  MemoryWindow* mw = device->window_of(rkey);
  if (mw == nullptr) return EINVAL;
  if (mw->rkey() != rkey || mw->type() != IBV_MW_TYPE_2 ||
      mw->state() != MemoryWindow::State::Valid)
    return EINVAL;
  mw->unbind();
  return 0;
}

}  // namespace rdmalab::sim
