// The responder of a simulated QP: request packets off the wire and the
// responses they call for (IBTA vol. 1, 9.7 Reliable Service: 9.7.1 PSNs,
// 9.7.5.1 the responder's side of the ACK/NAK protocol, with ACK coalescing
// in 9.7.5.1.2 and the responder resources of READs and atomics; 9.9.3 the
// errors that end in the error state; UC and UD never answer).
//
// An RC responder expects one PSN. A packet at that PSN is executed; an
// earlier one is a duplicate (re-ACKed; READs re-executed, atomics replayed
// from the responder resources); a later one is out of sequence: one NAK
// PSN-sequence-error, then silence until the expected PSN arrives. With
// adaptive routing on, a later one inside the window is accepted early.
//
// on_request() reads as the order of those decisions:
//   uc_in_sequence / rc_in_sequence   the PSN check (UC gap; RC: the AR
//                                     window, out of sequence, duplicates)
//   execute                           the request at the expected PSN
//   answer                            the ACK or NAK verdict (RC only)
#include <arpa/inet.h>

#include "engine.hpp"
#include "qp_common.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::sim {
namespace {

using wire::NakCode;
using wire::Operation;
using wire::Position;
using wire::psn_add;
using wire::psn_before;
using wire::psn_before_eq;
using wire::psn_diff;

// Responses a responder keeps queued for the wire at most, beyond those of
// new requests (bounded by max_dest_rd_atomic): answers to duplicates are
// dropped past it, as a NIC drops when its response queue is full.
constexpr std::size_t kMaxQueuedResponses = 64;

bool is_first_or_only(const wire::OpcodeInfo& info) noexcept {
  return info.position == Position::First || info.position == Position::Only;
}
bool is_last_or_only(const wire::OpcodeInfo& info) noexcept {
  return info.position == Position::Last || info.position == Position::Only;
}

}  // namespace

// --- The dispatcher --------------------------------------------------------------

void QpImpl::on_request(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes) {
  if (state != IBV_QPS_RTR && state != IBV_QPS_RTS && state != IBV_QPS_SQD && state != IBV_QPS_SQE)
    return;
  if (type == IBV_QPT_UD) {
    ud_receive(p, f, bytes);
    return;
  }
  const wire::OpcodeInfo& info = *wire::find_opcode(p.bth.opcode);
  const wire::Transport want = type == IBV_QPT_RC ? wire::Transport::RC : wire::Transport::UC;
  if (info.transport != want) return;

  if (type == IBV_QPT_UC) {
    if (!uc_in_sequence(info, p.bth.psn)) return;
    if (execute(p, info) != Verdict::Ok) {
      // UC never NAKs: a message that cannot be executed is dropped.
      in_send = in_write = false;
      uc_drop = true;
    }
    return;
  }
  if (!rc_in_sequence(p, info, bytes)) return;
  answer(p, info, execute(p, info));
}

// --- The PSN check -----------------------------------------------------------------

// UC: no ACKs, no retries. A gap means lost packets: the message in progress
// is dropped and the receiver waits for the next First/Only. True when the
// packet is to be executed.
bool QpImpl::uc_in_sequence(const wire::OpcodeInfo& info, std::uint32_t psn) {
  const bool first_or_only = is_first_or_only(info);
  if (psn_diff(psn, epsn) != 0) {
    in_send = in_write = false;
    recv_offset = 0;
    uc_drop = !first_or_only;
  } else if (uc_drop && first_or_only) {
    uc_drop = false;
  }
  epsn = psn_add(psn, 1);
  return !uc_drop;
}

// RC: true when the packet is at the expected PSN. A later one is accepted
// early inside the adaptive-routing window, or else NAKed once; an earlier
// one is a duplicate.
bool QpImpl::rc_in_sequence(const wire::IbPacket& p, const wire::OpcodeInfo& info,
                            wire::Bytes bytes) {
  const std::int32_t d = psn_diff(p.bth.psn, epsn);
  if (d > 0 && options.adaptive_routing && static_cast<std::size_t>(d) < ar_held.size()) {
    ar_accept_early(static_cast<std::size_t>(d), bytes);
    return false;
  }
  if (d > 0) {
    ++stats.out_of_sequence_dropped;
    nak_sequence_error();
    return false;
  }
  if (d < 0) {
    on_duplicate(info, p.bth.psn);
    return false;
  }
  nak_sent = false;
  return true;
}

// One NAK PSN-sequence-error for the expected PSN, then silence until it
// arrives.
void QpImpl::nak_sequence_error() {
  if (nak_sent) return;
  nak_sent = true;
  queue_ack(epsn, wire::Aeth::nak(NakCode::PsnSequenceError), false);
}

// --- Duplicates -------------------------------------------------------------------

// A request before the expected PSN was executed already: it is answered
// again, never executed again (9.7.5.1.4: READs from the responder
// resources, atomics with the saved original value, the rest with an ACK).
void QpImpl::on_duplicate(const wire::OpcodeInfo& info, std::uint32_t psn) {
  ++stats.duplicates_received;
  switch (info.operation) {
    case Operation::ReadRequest: reexecute_read(psn); return;
    case Operation::CompareSwap:
    case Operation::FetchAdd: replay_atomic(psn); return;
    default:
      if (resp.size() < kMaxQueuedResponses) queue_ack(psn_add(epsn, -1), wire::Aeth::ack(), false);
      return;
  }
}

// A duplicate READ request: the data is read again from memory, from the
// response packet the request asks for.
void QpImpl::reexecute_read(std::uint32_t psn) {
  for (const RdAtomicResource& r : resources) {
    if (r.atomic || r.npkts == 0) continue;
    const std::int32_t k = psn_diff(psn, r.psn);
    if (k < 0 || static_cast<std::uint32_t>(k) >= r.npkts) continue;
    // A newer request for the same READ replaces the responses still
    // queued for it; the queue stays bounded whatever the requester does.
    std::erase_if(resp, [&](const RespItem& q) {
      return q.kind == RespItem::Kind::ReadResponse && psn_before_eq(r.psn, q.psn) &&
             psn_before(q.psn, psn_add(r.psn, r.npkts));
    });
    if (resp.size() >= kMaxQueuedResponses) return;
    const MemoryRegion* mr = remote_mr(r.rkey, r.va, r.length, IBV_ACCESS_REMOTE_READ);
    if (mr == nullptr && r.length > 0) return;  // deregistered since
    RespItem it;
    it.kind = RespItem::Kind::ReadResponse;
    it.psn = psn;
    const std::uint64_t off = std::uint64_t{static_cast<std::uint32_t>(k)} * mtu;
    it.va = r.length > 0 ? reinterpret_cast<std::uintptr_t>(mr->host(r.va + off)) : 0;
    it.length = static_cast<std::uint32_t>(r.length - std::min<std::uint64_t>(off, r.length));
    it.total = it.length;
    it.msn = msn;
    resp.push_back(it);
    pump();
    return;
  }
}

// A duplicate atomic: never executed twice, the saved original value is
// sent again.
void QpImpl::replay_atomic(std::uint32_t psn) {
  for (const RdAtomicResource& r : resources) {
    if (!r.atomic || r.psn != psn) continue;
    if (resp.size() >= kMaxQueuedResponses) return;
    RespItem it;
    it.kind = RespItem::Kind::AtomicAck;
    it.psn = psn;
    it.orig = r.orig;
    it.msn = msn;
    resp.push_back(it);
    pump();
    return;
  }
}

// --- Execution of the request at the expected PSN ----------------------------------

QpImpl::Verdict QpImpl::execute(const wire::IbPacket& p, const wire::OpcodeInfo& info) {
  switch (info.operation) {
    case Operation::Send: return execute_send(p, info);
    case Operation::Write: return execute_write(p, info);
    case Operation::ReadRequest:
    case Operation::CompareSwap:
    case Operation::FetchAdd: return execute_read_atomic(p, info);
    default: return Verdict::InvalidRequest;
  }
}

QpImpl::Verdict QpImpl::execute_send(const wire::IbPacket& p, const wire::OpcodeInfo& info) {
  const bool first_or_only = is_first_or_only(info);
  const bool last_or_only = is_last_or_only(info);
  const std::size_t len = p.payload.size();
  if (first_or_only ? (in_send || in_write) : !in_send) return Verdict::InvalidRequest;
  if ((last_or_only ? len > mtu : len != mtu)) return Verdict::InvalidRequest;
  if (first_or_only) {
    if (!take_recv()) return Verdict::Rnr;
    recv_offset = 0;
    in_send = true;
  }
  if (!scatter_recv(recv_offset, p.payload)) {
    complete_recv(IBV_WC_LOC_LEN_ERR, 0, IBV_WC_RECV, 0, 0, 0, p.bth.solicited);
    in_send = false;
    return Verdict::InvalidRequest;
  }
  recv_offset += len;
  if (!last_or_only) return Verdict::Ok;
  unsigned flags = 0;
  std::uint32_t imm = 0;
  if (p.immdt) {
    flags |= IBV_WC_WITH_IMM;
    imm = htonl(*p.immdt);
  }
  if (p.ieth) {
    // SEND with Invalidate: revoke the window named by the IETH after the
    // data is placed (rxe's execute()). A key that names no valid type 2
    // window is class J: the receive completes with IBV_WC_REM_INV_REQ_ERR,
    // the packet is still ACKed (the requester's SEND succeeds) and the
    // responder QP goes to error.
    if (invalidate_rkey(*p.ieth) != 0) {
      complete_recv(IBV_WC_REM_INV_REQ_ERR, static_cast<std::uint32_t>(recv_offset), IBV_WC_RECV, 0,
                    0, 0, p.bth.solicited);
      in_send = false;
      return Verdict::BadInvalidate;
    }
    flags |= IBV_WC_WITH_INV;
    imm = *p.ieth;
  }
  complete_recv(IBV_WC_SUCCESS, static_cast<std::uint32_t>(recv_offset), IBV_WC_RECV, flags, imm, 0,
                p.bth.solicited);
  in_send = false;
  msn = psn_add(msn, 1);
  return Verdict::Ok;
}

QpImpl::Verdict QpImpl::execute_write(const wire::IbPacket& p, const wire::OpcodeInfo& info) {
  const bool first_or_only = is_first_or_only(info);
  const bool last_or_only = is_last_or_only(info);
  const std::size_t len = p.payload.size();
  if (first_or_only ? (in_send || in_write) : !in_write) return Verdict::InvalidRequest;
  if (first_or_only) {
    const wire::Reth& r = *p.reth;
    // A zero-length WRITE touches no memory: its R_Key and VA are not
    // checked (IBTA C9-88; rxe does the same). TensorFlow's ACKs and GDR's
    // release are such WRITEs with immediate and rkey 0.
    write_mr =
        r.dma_len == 0 ? nullptr : remote_mr(r.rkey, r.va, r.dma_len, IBV_ACCESS_REMOTE_WRITE);
    if (write_mr == nullptr && r.dma_len != 0) return Verdict::RemoteAccess;
    const bool ok_len = info.position == Position::Only ? (len == r.dma_len && len <= mtu)
                                                        : (len == mtu && r.dma_len > mtu);
    if (!ok_len) return Verdict::InvalidRequest;
    write_va = r.va;
    write_left = r.dma_len;
    write_total = r.dma_len;
  } else if (info.position == Position::Middle ? (len != mtu || write_left <= mtu)
                                               : len != write_left) {
    return Verdict::InvalidRequest;
  }
  if (info.has_immediate && !take_recv()) return Verdict::Rnr;  // it needs a receive WQE
  if (len > 0) std::memcpy(write_mr->host(write_va), p.payload.data(), len);
  write_va += len;
  write_left -= static_cast<std::uint32_t>(len);
  in_write = !last_or_only;
  if (last_or_only) {
    if (info.has_immediate)
      complete_recv(IBV_WC_SUCCESS, write_total, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM,
                    htonl(*p.immdt), 0, p.bth.solicited);
    msn = psn_add(msn, 1);
  }
  return Verdict::Ok;
}

// A READ or an atomic: checked, executed (an atomic) or read (a READ, when
// its responses are built), kept in the responder resources for duplicates,
// and its response queued.
QpImpl::Verdict QpImpl::execute_read_atomic(const wire::IbPacket& p, const wire::OpcodeInfo& info) {
  if (in_send || in_write || attr.max_dest_rd_atomic == 0) return Verdict::InvalidRequest;
  RdAtomicResource res;
  res.psn = p.bth.psn;
  RespItem it;
  it.psn = p.bth.psn;
  if (info.operation == Operation::ReadRequest) {
    const wire::Reth& r = *p.reth;
    const MemoryRegion* mr = remote_mr(r.rkey, r.va, r.dma_len, IBV_ACCESS_REMOTE_READ);
    if (r.dma_len > 0 && mr == nullptr) return Verdict::RemoteAccess;
    res.va = r.va;
    res.rkey = r.rkey;
    res.length = r.dma_len;
    res.npkts = packets_for(r.dma_len, mtu);
    it.kind = RespItem::Kind::ReadResponse;
    it.va = r.dma_len > 0 ? reinterpret_cast<std::uintptr_t>(mr->host(r.va)) : 0;
    it.length = r.dma_len;
    it.total = r.dma_len;
  } else {
    const wire::AtomicEth& a = *p.atomic_eth;
    if (a.va % 8 != 0) return Verdict::InvalidRequest;
    const MemoryRegion* mr = remote_mr(a.rkey, a.va, 8, IBV_ACCESS_REMOTE_ATOMIC);
    if (mr == nullptr) return Verdict::RemoteAccess;
    // The atomic itself, on a host-order 64-bit word (9.4.5); memcpy
    // because the caller's buffer need not be a uint64_t object.
    std::uint8_t* target = mr->host(a.va);
    std::uint64_t orig = 0;
    std::memcpy(&orig, target, sizeof orig);
    std::uint64_t next = orig;
    if (info.operation == Operation::FetchAdd)
      next = orig + a.swap_add;
    else if (orig == a.compare)
      next = a.swap_add;
    std::memcpy(target, &next, sizeof next);
    res.atomic = true;
    res.orig = orig;
    it.kind = RespItem::Kind::AtomicAck;
    it.orig = orig;
  }
  resources[resource_next] = res;
  resource_next = (resource_next + 1) % resources.size();
  msn = psn_add(msn, 1);
  it.msn = msn;
  resp.push_back(it);
  pump();
  return Verdict::Ok;
}

// --- The verdict: ACK, RNR NAK or NAK ------------------------------------------------

void QpImpl::answer(const wire::IbPacket& p, const wire::OpcodeInfo& info, Verdict v) {
  const std::uint32_t psn = p.bth.psn;
  switch (v) {
    case Verdict::Ok: {
      // A READ request takes the PSNs of all its response packets.
      const std::uint32_t advance =
          info.operation == Operation::ReadRequest ? packets_for(p.reth->dma_len, mtu) : 1;
      epsn = psn_add(epsn, advance);
      if (options.adaptive_routing) ar_skip(advance);
      const bool needs_ack = p.bth.ack_req && (info.operation == Operation::Send ||
                                               info.operation == Operation::Write);
      if (needs_ack) queue_ack(psn, wire::Aeth::ack(), true);
      if (options.adaptive_routing) run_ar_held();
      return;
    }
    case Verdict::Rnr:
      ++stats.rnr_naks_sent;
      queue_ack(psn, wire::Aeth::rnr_nak(attr.min_rnr_timer), false);
      // The packets already behind it are dropped silently: one NAK per
      // expected PSN, so the RNR round does not also cost a retry_cnt.
      nak_sent = true;
      return;
    case Verdict::BadInvalidate:
      if (p.bth.ack_req) queue_ack(psn, wire::Aeth::ack(), false);
      enter_error(IBV_WC_WR_FLUSH_ERR);
      return;
    case Verdict::InvalidRequest:
    case Verdict::RemoteAccess:
      queue_ack(psn,
                wire::Aeth::nak(v == Verdict::InvalidRequest ? NakCode::InvalidRequest
                                                             : NakCode::RemoteAccessError),
                false);
      // The responder QP goes to the error state after the NAK (9.9.3.1).
      in_send = in_write = false;
      enter_error(IBV_WC_WR_FLUSH_ERR);
      return;
  }
}

// --- Responses on the wire ---------------------------------------------------------

void QpImpl::send_response_item() {
  RespItem& it = resp.front();
  // A READ response carries the READ's data: with DCQCN it is
  // ECN-capable and paced like a request (dcqcn_nic.cpp); ACKs are neither.
  const bool paced = engine->cfg.dcqcn && it.kind == RespItem::Kind::ReadResponse;
  wire::IbPacket& p = spec.packet;
  p.clear();
  p.bth.dest_qp = attr.dest_qp_num;
  p.bth.psn = it.psn;
  switch (it.kind) {
    case RespItem::Kind::Ack:
      p.bth.opcode = wire::opcode::kRcAcknowledge;
      p.aeth = wire::Aeth{it.syndrome, it.msn};
      if (wire::Aeth{it.syndrome, 0}.is_nak())
        ++stats.naks_sent;
      else
        ++stats.acks_sent;
      resp.pop_front();
      break;
    case RespItem::Kind::AtomicAck:
      p.bth.opcode = wire::opcode::kRcAtomicAcknowledge;
      p.aeth = wire::Aeth{wire::Aeth::ack(), it.msn};
      p.atomic_ack_eth = wire::AtomicAckEth{it.orig};
      resp.pop_front();
      break;
    case RespItem::Kind::ReadResponse: {
      const std::uint32_t len = std::min(mtu, it.length);
      Position pos;
      if (it.first)
        pos = it.length <= mtu ? Position::Only : Position::First;
      else
        pos = it.length <= mtu ? Position::Last : Position::Middle;
      p.bth.opcode = wire::find_opcode(wire::Transport::RC, Operation::ReadResponse, pos)->value;
      if (pos != Position::Middle) p.aeth = wire::Aeth{wire::Aeth::ack(), it.msn};
      // Memory is read when the packet is built, as a NIC's DMA would.
      if (len > 0) p.payload = wire::Bytes(reinterpret_cast<const std::uint8_t*>(it.va), len);
      it.psn = psn_add(it.psn, 1);
      it.va += len;
      it.length -= len;
      it.first = false;
      if (pos == Position::Last || pos == Position::Only) resp.pop_front();
      break;
    }
  }
  ++stats.packets_sent;
  if (paced)
    dcqcn_transmit(*link);
  else
    engine->transmit(*link, spec);
}

// An ACK or NAK for the wire. A plain ACK may be coalesced (9.7.5.1.2: an
// ACK acknowledges every older PSN): held for ack_coalesce_ns, or merged into
// an ACK still waiting for the link.
void QpImpl::queue_ack(std::uint32_t psn, std::uint8_t syndrome, bool coalesce) {
  const bool plain_ack = wire::Aeth{syndrome, 0}.kind() == wire::AckKind::Ack;
  if (coalesce && engine->cfg.ack_coalesce_ns > 0) {
    if (!ack_pending) {
      ack_pending = true;
      engine->schedule(engine->now + engine->cfg.ack_coalesce_ns, EventKind::AckFlush, id, 0);
    }
    pending_ack = RespItem{};
    pending_ack.psn = psn;
    pending_ack.syndrome = syndrome;
    pending_ack.msn = msn;
    return;
  }
  ack_pending = false;
  // An ACK still waiting for the link is replaced by a newer one: it would
  // acknowledge less (coalescing that every responder may do).
  if (plain_ack && !resp.empty() && resp.back().kind == RespItem::Kind::Ack &&
      wire::Aeth{resp.back().syndrome, 0}.kind() == wire::AckKind::Ack) {
    resp.back().psn = psn;
    resp.back().msn = msn;
    return;
  }
  RespItem& it = resp.emplace_back();  // filled in place, not copied in
  it.psn = psn;
  it.syndrome = syndrome;
  it.msn = msn;
  pump();
}

void QpImpl::flush_ack() {
  if (!ack_pending) return;
  ack_pending = false;
  resp.push_back(pending_ack);
  pump();
}

// --- Receive queue and memory access -------------------------------------------------

bool QpImpl::take_recv() {
  if (srq == nullptr) return rq_count > 0;
  if (srq_taken) return true;  // a WRITE with immediate retried after an RNR NAK
  srq_taken = srq->take(srq_wqe, srq_sge);
  return srq_taken;
}

void QpImpl::complete_recv(ibv_wc_status status, std::uint32_t byte_len, ibv_wc_opcode op,
                           unsigned flags, std::uint32_t imm, std::uint32_t src_qp,
                           bool solicited) {
  const RecvWqe& r = srq != nullptr ? srq_wqe : rq[rq_head];
  if (ibv_wc* wc = recv_cq->push(solicited)) {
    wc->wr_id = r.wr_id;
    wc->status = status;
    wc->opcode = op;
    wc->byte_len = byte_len;
    wc->qp_num = qpn;
    wc->src_qp = src_qp;
    wc->wc_flags = flags;
    wc->imm_data = imm;
    // InfiniBand: who sent it, from the LRH (RoCE has no LIDs).
    if (engine->ib && status == IBV_WC_SUCCESS) {
      wc->slid = rx_slid;
      wc->sl = rx_sl;
    }
  }
  if (srq != nullptr) {
    srq_taken = false;
    return;
  }
  if (++rq_head == rq.size()) rq_head = 0;
  --rq_count;
}

bool QpImpl::scatter_recv(std::uint64_t offset, wire::Bytes data) {
  const bool shared = srq != nullptr;
  const RecvWqe& r = shared ? srq_wqe : rq[rq_head];
  if (!r.valid || offset + data.size() > r.length) return false;
  const ibv_sge* sg = shared ? srq_sge.data() : &rq_sge[rq_head * cap.max_recv_sge];
  scatter(sg, r.num_sge, offset, data);
  return true;
}

MemoryRegion* QpImpl::remote_mr(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                                int need) const {
  // The QP must allow the remote operation and the MR must grant it, belong
  // to the QP's PD and hold the whole range (IBTA 10.6.3.3, 9.7.5.1.6).
  if ((static_cast<int>(attr.qp_access_flags) & need) == 0) return nullptr;
  MemoryRegion* mr = engine->find_mr(*device, rkey);
  if (mr == nullptr) return window_mr(rkey, va, len, need);
  if (&mr->pd() != pd || (mr->access() & need) == 0 || !mr->contains(va, len)) return nullptr;
  return mr;
}

MemoryRegion* QpImpl::window_mr(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                                int need) const {
  // rxe_lookup_mw(): the key byte must match the last bind, the window be
  // valid, of this QP's PD, bound to this very QP (type 2), non-empty and
  // grant the operation. Then, as rxe's check_rkey() does, the range is
  // checked against the MR the window is bound to, not the window's own
  // range (the IBTA checks the window's bounds: a difference of rxe).
  const MemoryWindow* mw = device->window_of(rkey);
  if (mw == nullptr) return nullptr;
  if (mw->rkey() != rkey || mw->state() != MemoryWindow::State::Valid || &mw->pd() != pd ||
      (mw->type() == IBV_MW_TYPE_2 && !mw->bound_to(this)) || mw->length() == 0 ||
      (mw->access() & need) != need || mw->mr() == nullptr || !mw->mr()->contains(va, len))
    return nullptr;
  return mw->mr();
}

// --- UD -----------------------------------------------------------------------------

void QpImpl::ud_receive(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes) {
  if (!p.deth || p.deth->qkey != attr.qkey) return;  // Q_Key violation: silently dropped
  if (!take_recv()) return;                          // UD has no RNR: the message is lost
  // The first 40 bytes of the buffer receive the GRH; for RoCEv2 over IPv4
  // the IPv4 header fills its last 20 bytes (as rdma-core documents). A
  // native IB packet without a GRH (LNH 2) leaves them as they were, and
  // the completion has no IBV_WC_GRH; byte_len counts them all the same.
  std::array<std::uint8_t, wire::kGrhSize> grh{};
  const bool has_grh = !engine->ib || f.grh.has_value();
  if (f.ipv4)
    std::memcpy(grh.data() + 20, bytes.data() + f.ip_offset, 20);
  else if (f.ipv6)
    std::memcpy(grh.data(), bytes.data() + f.ip_offset, 40);
  else if (engine->ib && has_grh)
    std::memcpy(grh.data(), bytes.data() + f.ip_offset + wire::ib::kLrhSize, wire::kGrhSize);
  if ((has_grh && !scatter_recv(0, grh)) || !scatter_recv(wire::kGrhSize, p.payload)) {
    complete_recv(IBV_WC_LOC_LEN_ERR, 0, IBV_WC_RECV, 0, 0, p.deth->src_qp, p.bth.solicited);
    return;
  }
  unsigned flags = has_grh ? IBV_WC_GRH : 0;
  std::uint32_t imm = 0;
  if (p.immdt) {
    flags |= IBV_WC_WITH_IMM;
    imm = htonl(*p.immdt);
  }
  complete_recv(IBV_WC_SUCCESS, static_cast<std::uint32_t>(wire::kGrhSize + p.payload.size()),
                IBV_WC_RECV, flags, imm, p.deth->src_qp, p.bth.solicited);
}

// --- Adaptive routing: the out-of-order window -------------------------------------
//
// A model of recent NICs, not IBTA. A request packet up to ar_held.size()
// PSNs ahead of the expected one is not a sequence error: its frame is held
// and it executes, exactly as if it had just arrived in order, when the
// expected PSN reaches it. Messages therefore keep their verbs meaning (one
// RETH per WRITE, one MSN and one completion per message). A hole that stays
// open for ar_nak_timeout_ns is a loss and gets the usual NAK
// PSN-sequence-error.

// A packet `ahead` PSNs past the expected one, inside the window. A copy of
// one already held (a resend) is dropped.
void QpImpl::ar_accept_early(std::size_t ahead, wire::Bytes bytes) {
  std::vector<std::uint8_t>& slot = ar_held[(ar_base + ahead) % ar_held.size()];
  if (slot.empty()) {
    slot.assign(bytes.begin(), bytes.end());
    ++ar_held_count;
    ++stats.out_of_order_held;
  }
  if (!ar_armed) arm_ar_timer();
}

// The expected PSN moved past `n` PSNs executed in order: their slots leave
// the window (a READ request takes the PSNs of its responses; anything held
// there was a stray copy).
void QpImpl::ar_skip(std::uint32_t n) {
  if (ar_held.empty()) return;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::uint8_t>& slot = ar_held[ar_base];
    if (!slot.empty()) {
      slot = {};
      --ar_held_count;
    }
    ar_base = (ar_base + 1) % ar_held.size();
  }
}

// The window reached held packets: execute them in order, each as if it had
// just arrived, until the next hole. An execution that ends the QP's
// service (an error NAK, the error state) clears the window.
void QpImpl::run_ar_held() {
  if (ar_running) return;  // an execution below is sliding the window already
  ar_running = true;
  while (!ar_held.empty() && !ar_held[ar_base].empty() &&
         (state == IBV_QPS_RTR || state == IBV_QPS_RTS)) {
    const std::vector<std::uint8_t> frame = std::move(ar_held[ar_base]);
    ar_held[ar_base] = {};
    --ar_held_count;
    const std::uint32_t before = epsn;
    const wire::Frame f = wire::decode_frame(frame, engine->wire_link(), frame.size());
    if (f.ib) on_request(*f.ib, f, frame);
    // Not executed (an RNR NAK, an error): the hole is back at epsn.
    if (epsn == before) break;
  }
  ar_running = false;
  ar_armed = false;
  if (ar_held_count > 0) arm_ar_timer();
}

void QpImpl::arm_ar_timer() {
  ar_armed = true;
  ar_deadline = engine->now + options.ar_nak_timeout_ns;
  if (!ar_event_queued) {
    ar_event_queued = true;
    engine->schedule(ar_deadline, EventKind::ArTimer, id, 0);
  }
}

void QpImpl::on_ar_timer(std::uint64_t /*unused*/) {
  ar_event_queued = false;
  if (!ar_armed) return;
  if (engine->now < ar_deadline) {
    ar_event_queued = true;
    engine->schedule(ar_deadline, EventKind::ArTimer, id, 0);
    return;
  }
  ar_armed = false;
  if (state != IBV_QPS_RTR && state != IBV_QPS_RTS) return;
  // A hole stayed open: now it is a loss, NAK it.
  nak_sequence_error();
}

}  // namespace rdmalab::sim
