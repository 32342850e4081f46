// The requester of a simulated QP: its send queue on the wire, and what comes
// back for it (IBTA vol. 1, 9.7 Reliable Service: 9.7.1 PSNs, 9.7.5.2 the
// requester's handling of ACKs, NAKs and READ and atomic responses, 9.7.6
// the local ACK timer and the retry counters; UC and UD send without ACKs).
//
// A send queue of WQEs; each gets its PSNs when it is first put on the wire
// (one per packet, one per expected READ response packet). The oldest
// unacknowledged PSN (`una`) moves with ACKs, READ responses and atomic
// ACKs. Retransmission always restarts from a PSN (go-back-N): after a NAK
// PSN-sequence-error from the NAK's PSN, after a local ACK timeout or an RNR
// NAK from `una`. A missing READ response re-requests that READ alone.
#include <arpa/inet.h>

#include "engine.hpp"
#include "qp_common.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/timers.hpp"
#include "rdmalab/wire/udp_port.hpp"

namespace rdmalab::sim {
namespace {

using wire::NakCode;
using wire::Operation;
using wire::Position;
using wire::psn_add;
using wire::psn_before;
using wire::psn_before_eq;
using wire::psn_diff;

/// The high bit of a work request's remote Q_Key: a controlled Q_Key, which
/// the sender may not use; the QP's own Q_Key goes on the wire instead (IBTA
/// vol. 1, Q_Keys in chapter 10; ibv_post_send(3), wr.ud.remote_qkey).
constexpr std::uint32_t kControlledQkey = 0x80000000u;

ibv_wc_opcode wc_opcode(ibv_wr_opcode op) noexcept {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
    case IBV_WR_BIND_MW: return IBV_WC_BIND_MW;
    case IBV_WR_LOCAL_INV: return IBV_WC_LOCAL_INV;
    default: return IBV_WC_SEND;
  }
}

wire::Transport transport_of(ibv_qp_type type) noexcept {
  return type == IBV_QPT_RC   ? wire::Transport::RC
         : type == IBV_QPT_UC ? wire::Transport::UC
                              : wire::Transport::UD;
}

/// Spends one retry of a retry counter (retry_cnt, rnr_retry): false when
/// none is left. An infinite counter is never spent.
bool spend_retry(int& left, bool infinite) noexcept {
  if (infinite) return true;
  if (left <= 0) return false;
  --left;
  return true;
}

}  // namespace

// --- Sending requests ------------------------------------------------------------

bool QpImpl::requester_can_send() const noexcept {
  if (state != IBV_QPS_RTS && state != IBV_QPS_SQD) return false;
  if (reread && !rnr_wait) return true;
  if (rnr_wait || tx_index >= sq_count) return false;
  const SendWqe& w = sq[slot_at(tx_index)];
  if (is_local(w)) return false;  // run_local_ops() has not reached it yet
  if (w.started) return true;
  if (state == IBV_QPS_SQD) return false;  // drained: nothing new starts
  if (is_rd_atomic(w) && rd_atomic_outstanding >= std::max<int>(1, attr.max_rd_atomic))
    return false;
  // A fenced WQE waits for earlier READs and atomics (IBV_SEND_FENCE).
  if ((w.flags & IBV_SEND_FENCE) != 0 && rd_atomic_outstanding > 0) return false;
  return true;
}

// One request packet on the wire, in steps: which packet, the WQE's PSNs
// when it starts, the addressing (UD), the headers, the transmission, and
// the transmit position or the completion (UC, UD) after it.
void QpImpl::send_request_packet() {
  // Normally the packet at the transmit position; a READ re-request (after a
  // missing response) goes out alone without moving that position.
  std::size_t idx = tx_index;
  std::uint32_t pk = tx_pkt;
  bool rereading = false;
  if (reread) {
    reread = false;
    rereading = find_reread(idx, pk);
    if (!rereading && !requester_can_send()) return;
  }
  const std::size_t slot = slot_at(idx);
  SendWqe& w = sq[slot];
  if (!w.started && !start_wqe(w, slot)) return;
  if (type == IBV_QPT_UD && w.length > device->config().port_mtu) {
    // IBTA C10-93.1.1: a UD message longer than the port's MTU is not sent
    // at all, and the CI reports no error for it. As rxe does (rxe_req.c),
    // the WQE takes its PSN and completes with IBV_WC_SUCCESS; nothing goes
    // on the wire and the receiver never hears of it.
    after_request(w, 1, false);
    return;
  }
  if (type == IBV_QPT_UD) address_ud(w);
  std::uint32_t npkts = 1;
  const wire::OpcodeInfo* op = build_request(w, slot, pk, npkts);
  if (op == nullptr) {  // cannot happen: post_send checked the opcode
    enter_error(IBV_WC_LOC_QP_OP_ERR);
    return;
  }
  count_sent(spec.packet.bth.psn, npkts);
  Link& ln = egress_link(w);
  if (engine->cfg.dcqcn && type != IBV_QPT_UD)
    dcqcn_transmit(ln);  // ECN-capable, and paced at the reaction point's rate
  else
    engine->transmit(ln, spec);
  after_request(w, npkts, rereading);
  // The WQE's next packet leaves after other QPs' packets: the first lines
  // of its payload are asked for now, so that its copy into the frame does
  // not wait for memory (the processor's own prefetchers take over within a
  // longer one). Here, not in a function of their own: GCC takes a function
  // whose only effect is a prefetch for one without effects, and deletes
  // its calls.
  if (!rereading && tx_pkt != 0 && w.opcode != IBV_WR_RDMA_READ && !is_rd_atomic(w)) {
    constexpr std::uint64_t kAhead = 512;
    const auto [from, n] = payload_piece(slot, w, std::uint64_t{tx_pkt} * mtu);
    const std::uint64_t to = from + std::min<std::uint64_t>({kAhead, mtu, n});
    for (std::uint64_t line = from & ~std::uint64_t{63}; line < to; line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

// The READ to re-request (reread_psn is its first PSN) and the response
// packet it resumes from; false when it is no longer outstanding.
bool QpImpl::find_reread(std::size_t& index, std::uint32_t& pkt) const noexcept {
  for (std::size_t i = 0; i < started; ++i) {
    const SendWqe& r = sq[slot_at(i)];
    if (r.opcode == IBV_WR_RDMA_READ && !r.done && r.psn == reread_psn) {
      index = i;
      pkt = r.received;
      return true;
    }
  }
  return false;
}

// A WQE's first transmission: its local SGEs are checked and it takes its
// PSNs. False when it failed (and the QP went to the error state).
bool QpImpl::start_wqe(SendWqe& w, std::size_t slot) {
  if (!check_local(w, slot)) {
    // A bad lkey or an SGE outside its MR: the WQE completes in error
    // and the QP goes to the error state (IBV_WC_LOC_PROT_ERR).
    fail_tx_wqe(IBV_WC_LOC_PROT_ERR);
    return false;
  }
  w.started = true;
  w.psn = next_psn;
  // A READ takes one PSN per response packet it asks for (9.7.1); an atomic
  // and a UD message one.
  w.npkts = type == IBV_QPT_UD || (w.opcode != IBV_WR_RDMA_READ && is_rd_atomic(w))
                ? 1u
                : packets_for(w.length, mtu);
  next_psn = psn_add(next_psn, w.npkts);
  ++started;
  if (is_rd_atomic(w)) ++rd_atomic_outstanding;
  return true;
}

// A UD packet goes wherever its address handle says.
void QpImpl::address_ud(const SendWqe& w) {
  const Device& dst = w.ah->destination();
  const std::uint8_t dst_port = w.ah->destination_port();
  const ibv_global_route& grh = w.ah->attr().grh;
  spec.src_mac = device->mac(port);
  spec.dst_mac = dst.mac(dst_port);
  spec.src_ip = device->ip(port);
  spec.dst_ip = dst.ip(dst_port);
  spec.traffic_class = grh.traffic_class;
  spec.hop_limit = grh.hop_limit != 0 ? grh.hop_limit : 64;
  spec.udp_src_port = wire::udp_source_port(qpn);
  if (engine->ib) address_ib(spec, *device, port, w.ah->attr());
}

// The headers and payload of packet `pk` of `w` in spec.packet. Returns its
// opcode (nullptr for an opcode the transport lacks) and sets `npkts` to the
// PSNs it takes (a READ request: one per response packet it asks for).
const wire::OpcodeInfo* QpImpl::build_request(const SendWqe& w, std::size_t slot, std::uint32_t pk,
                                              std::uint32_t& npkts) {
  wire::IbPacket& p = spec.packet;
  p.clear();
  const wire::Transport tr = transport_of(type);
  p.bth.psn = psn_add(w.psn, pk);
  p.bth.dest_qp = type == IBV_QPT_UD ? w.remote_qpn : attr.dest_qp_num;
  const bool last = pk + 1 >= w.npkts;
  const bool solicited = (w.flags & IBV_SEND_SOLICITED) != 0;
  const std::uint64_t offset = std::uint64_t{pk} * mtu;
  // A UD message is one packet of its whole length (at most the port MTU,
  // see send_request_packet); a UD QP has no path MTU of its own.
  const std::uint32_t seg = type == IBV_QPT_UD ? w.length : mtu;
  const auto len = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(seg, w.length > offset ? w.length - offset : 0));
  const std::uint8_t* data = nullptr;
  const wire::OpcodeInfo* op = nullptr;

  switch (w.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_SEND_WITH_INV: {
      const bool imm = last && w.opcode == IBV_WR_SEND_WITH_IMM;
      const bool inv = last && w.opcode == IBV_WR_SEND_WITH_INV;
      op = wire::find_opcode(tr, Operation::Send, position_of(pk, w.npkts), imm, inv);
      if (imm) p.immdt = ntohl(w.imm);
      if (inv) p.ieth = w.imm;
      if (type == IBV_QPT_UD) {
        const bool controlled = (w.remote_qkey & kControlledQkey) != 0;
        p.deth = wire::Deth{controlled ? attr.qkey : w.remote_qkey, 0, qpn};
      }
      p.bth.solicited = last && solicited;
      gather(slot, w, offset, len, data);
      break;
    }
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: {
      const bool imm = last && w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
      const Position pos = position_of(pk, w.npkts);
      op = wire::find_opcode(tr, Operation::Write, pos, imm);
      if (pos == Position::First || pos == Position::Only)
        p.reth = wire::Reth{w.remote_addr, w.rkey, w.length};
      if (imm) p.immdt = ntohl(w.imm);
      p.bth.solicited = imm && solicited;
      gather(slot, w, offset, len, data);
      break;
    }
    case IBV_WR_RDMA_READ:
      // One request for the rest of the READ.
      op = wire::find_opcode(tr, Operation::ReadRequest, Position::Only);
      p.reth = wire::Reth{
          w.remote_addr + offset, w.rkey,
          static_cast<std::uint32_t>(w.length - std::min<std::uint64_t>(w.length, offset))};
      npkts = w.npkts - pk;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      op = wire::find_opcode(tr, Operation::CompareSwap, Position::Only);
      p.atomic_eth = wire::AtomicEth{w.remote_addr, w.rkey, w.swap, w.compare_add};
      break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      op = wire::find_opcode(tr, Operation::FetchAdd, Position::Only);
      p.atomic_eth = wire::AtomicEth{w.remote_addr, w.rkey, w.compare_add, 0};
      break;
    default: break;
  }
  if (op == nullptr) return nullptr;
  p.bth.opcode = op->value;
  // AckReq on the last packet of each message, and inside a long message on
  // every 66th packet, as rxe does: its requester asks for an ACK once more
  // than RXE_MAX_PKT_PER_ACK (64) packets have gone out without one since the
  // last AckReq, and a message's last packet starts that count again. The
  // responder ACKs each of them, so a long message is acknowledged as it goes.
  constexpr std::uint32_t kPacketsPerAckReq = 66;
  p.bth.ack_req = type == IBV_QPT_RC &&
                  (last || w.opcode == IBV_WR_RDMA_READ || (pk + 1) % kPacketsPerAckReq == 0);
  if (data != nullptr) p.payload = wire::Bytes(data, len);
  return op;
}

// Counters, and the highest PSN sent so far (a resend below it moves it only
// when it reaches further).
void QpImpl::count_sent(std::uint32_t psn, std::uint32_t npkts) {
  const bool resend = psn_before(psn, sent_hw);
  if (resend) ++stats.retransmitted_packets;
  const std::uint32_t after = psn_add(psn, npkts);
  if (!resend || psn_before(sent_hw, after)) sent_hw = after;
  ++stats.packets_sent;
}

// After a request packet: the transmit position moves on (a re-request does
// not move it); RC waits for its ACK, UC and UD complete the WQE when its
// last packet has left.
void QpImpl::after_request(const SendWqe& w, std::uint32_t npkts, bool rereading) {
  if (!rereading) {
    tx_pkt += npkts;
    if (tx_pkt >= w.npkts) {
      ++tx_index;
      tx_pkt = 0;
    }
  }
  if (type == IBV_QPT_RC) {
    if (!ack_armed) arm_ack_timer();
  } else if (tx_pkt == 0 && !rereading) {
    complete_send(wqe_at(0), IBV_WC_SUCCESS);
  }
}

bool QpImpl::check_local(SendWqe& w, std::size_t slot) {
  if (w.is_inline) return true;
  const bool needs_write = w.opcode == IBV_WR_RDMA_READ || is_rd_atomic(w);
  for (int i = 0; i < w.num_sge; ++i) {
    ibv_sge& g = sq_sge[slot * cap.max_send_sge + static_cast<std::size_t>(i)];
    const MemoryRegion* found = engine->find_mr(*device, g.lkey);
    if (found == nullptr) return false;
    const MemoryRegion& mr = *found;
    if (&mr.pd() != pd || !mr.contains(g.addr, g.length)) return false;
    if (needs_write && (mr.access() & IBV_ACCESS_LOCAL_WRITE) == 0) return false;
    // From here on the WQE's copy of the SGE holds the host address.
    g.addr = reinterpret_cast<std::uintptr_t>(mr.host(g.addr));
  }
  return true;
}

std::size_t QpImpl::gather(std::size_t slot, const SendWqe& w, std::uint64_t offset,
                           std::uint32_t len, const std::uint8_t*& out) {
  if (w.is_inline) {
    out = sq_inline.data() + slot * cap.max_inline_data + offset;
    return len;
  }
  const ibv_sge* sg = &sq_sge[slot * cap.max_send_sge];
  // Fast path: the packet lies inside one SGE, send straight from it.
  std::uint64_t off = offset;
  for (int i = 0; i < w.num_sge; ++i) {
    if (off < sg[i].length) {
      if (off + len <= sg[i].length) {
        out = reinterpret_cast<const std::uint8_t*>(sg[i].addr + off);
        return len;
      }
      break;
    }
    off -= sg[i].length;
  }
  // Slow path: gather the pieces into the fabric's gather buffer.
  std::vector<std::uint8_t>& scratch = engine->gather_buf;
  if (scratch.size() < len) scratch.resize(len);
  std::size_t done = 0;
  off = offset;
  for (int i = 0; i < w.num_sge && done < len; ++i) {
    if (off >= sg[i].length) {
      off -= sg[i].length;
      continue;
    }
    const std::size_t take = std::min<std::size_t>(sg[i].length - off, len - done);
    std::memcpy(scratch.data() + done, reinterpret_cast<const void*>(sg[i].addr + off), take);
    done += take;
    off = 0;
  }
  out = scratch.data();
  return len;
}

std::pair<std::uint64_t, std::uint64_t> QpImpl::payload_piece(std::size_t slot, const SendWqe& w,
                                                              std::uint64_t offset) const noexcept {
  if (w.is_inline) return {0, 0};
  const ibv_sge* sg = &sq_sge[slot * cap.max_send_sge];
  for (int i = 0; i < w.num_sge; ++i) {
    if (offset < sg[i].length) return {sg[i].addr + offset, sg[i].length - offset};
    offset -= sg[i].length;
  }
  return {0, 0};
}

// --- Responses: ACK, RNR NAK, NAK, atomic ACK, READ response ----------------------

void QpImpl::on_response(const wire::IbPacket& p) {
  if (type != IBV_QPT_RC || (state != IBV_QPS_RTS && state != IBV_QPS_SQD)) return;
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  const std::uint32_t psn = p.bth.psn;
  // A response for a PSN never sent, or long acknowledged, is stale.
  if (!psn_before(psn, sent_hw)) return;
  switch (info->operation) {
    case Operation::Acknowledge: {
      const wire::Aeth a = *p.aeth;
      switch (a.kind()) {
        case wire::AckKind::Ack: on_ack(psn); break;
        case wire::AckKind::RnrNak: on_rnr_nak(psn, a); break;
        case wire::AckKind::Nak: on_nak(psn, a); break;
        default: break;
      }
      break;
    }
    case Operation::AtomicAcknowledge: on_atomic_ack(p); break;
    case Operation::ReadResponse: on_read_response(p); break;
    default: break;
  }
}

void QpImpl::on_ack(std::uint32_t psn) {
  ack_upto(psn);
}

// The responder had no receive WQE (9.7.5.2.8): everything before `psn` is
// acknowledged; resend from it after the RNR timer, while rnr_retry lasts
// (7 = retry forever).
void QpImpl::on_rnr_nak(std::uint32_t psn, wire::Aeth a) {
  ++stats.rnr_naks_received;
  if (psn_before(psn, una)) return;
  ack_upto(psn_add(psn, -1));
  if (!spend_retry(rnr_left, attr.rnr_retry == 7)) {
    enter_error(IBV_WC_RNR_RETRY_EXC_ERR);
    return;
  }
  restart_from(psn);
  rnr_wait = true;
  ++rnr_gen;
  ack_armed = false;
  const double ms = wire::rnr_timer_ms(a.value()).value_or(655.36);
  engine->schedule(engine->now + static_cast<Time>(ms * 1e6), EventKind::RnrTimer, id, rnr_gen);
}

// A NAK acknowledges everything before its PSN. A PSN sequence error is
// retried from that PSN (9.7.5.2.4); the other codes are fatal and complete
// the WQE with the matching status.
void QpImpl::on_nak(std::uint32_t psn, wire::Aeth a) {
  ++stats.naks_received;
  if (psn_before(psn, una)) return;
  ack_upto(psn_add(psn, -1));
  const auto code = static_cast<NakCode>(a.value());
  if (code == NakCode::PsnSequenceError) {
    ++stats.seq_err_naks_received;
    go_back_n(psn);
    return;
  }
  enter_error(code == NakCode::RemoteAccessError ? IBV_WC_REM_ACCESS_ERR
              : code == NakCode::InvalidRequest  ? IBV_WC_REM_INV_REQ_ERR
                                                 : IBV_WC_REM_OP_ERR);
}

void QpImpl::on_atomic_ack(const wire::IbPacket& p) {
  const std::uint32_t psn = p.bth.psn;
  for (std::size_t i = 0; i < started; ++i) {
    SendWqe& w = wqe_at(i);
    if (w.psn != psn || !is_rd_atomic(w) || w.opcode == IBV_WR_RDMA_READ) continue;
    if (w.done) return;                   // a duplicate answer
    const std::size_t slot = slot_at(i);  // before ack_upto() retires WQEs
    ack_upto(psn_add(psn, -1));
    if (una != psn) return;
    const std::uint64_t orig = p.atomic_ack_eth->orig;
    const ibv_sge* sg = &sq_sge[slot * cap.max_send_sge];
    scatter(sg, w.num_sge, 0,
            wire::Bytes(reinterpret_cast<const std::uint8_t*>(&orig), sizeof orig));
    w.done = true;
    --rd_atomic_outstanding;
    una = psn_add(psn, 1);
    retire();
    if (una != sent_hw) arm_ack_timer();
    pump();
    return;
  }
}

void QpImpl::on_read_response(const wire::IbPacket& p) {
  const std::uint32_t psn = p.bth.psn;
  for (std::size_t i = 0; i < started; ++i) {
    SendWqe& w = wqe_at(i);
    if (w.opcode != IBV_WR_RDMA_READ || w.done) continue;
    if (!(psn_before_eq(w.psn, psn) && psn_before_eq(psn, last_psn(w)))) continue;
    const std::uint32_t expected = psn_add(w.psn, w.received);
    if (psn_before(psn, expected)) return;  // duplicate
    if (psn != expected) {
      // A response went missing (an implied sequence error, 9.7.5.2.1):
      // re-request only this READ, from the first missing response; later
      // requests were executed and need no resend. Once per missing PSN:
      // the responses already in flight behind the gap must not each
      // trigger another request.
      if (tx_index > i && una == expected && !(w.regap && w.regap_psn == expected)) {
        w.regap = true;
        w.regap_psn = expected;
        reread = true;
        reread_psn = w.psn;
        pump();
      }
      return;
    }
    const std::size_t slot = slot_at(i);  // before ack_upto() retires WQEs
    if (w.received == 0) ack_upto(psn_add(w.psn, -1));
    // Responses are accepted in PSN order only: an earlier atomic whose
    // ACK is still missing keeps `una` below this READ.
    if (una != expected) return;
    const ibv_sge* sg = &sq_sge[slot * cap.max_send_sge];
    scatter(sg, w.num_sge, std::uint64_t{w.received} * mtu, p.payload);
    ++w.received;
    una = psn_add(psn, 1);
    retry_left = attr.retry_cnt;
    if (w.received >= w.npkts) {
      w.done = true;
      --rd_atomic_outstanding;
    }
    retire();
    rearm_ack_timer();
    pump();
    return;
  }
}

// --- Completions, acknowledgement, retransmission -----------------------------------

void QpImpl::complete_send(SendWqe& w, ibv_wc_status status) {
  // Always the head of the send queue: completions come in order.
  if (status != IBV_WC_SUCCESS || sig_all || (w.flags & IBV_SEND_SIGNALED) != 0) {
    // rxe posts send completions as not solicited: a solicited-only arm
    // waits for a receive.
    if (ibv_wc* wc = send_cq->push(false)) {
      wc->wr_id = w.wr_id;
      wc->status = status;
      wc->opcode = wc_opcode(w.opcode);
      wc->qp_num = qpn;
      // The verbs API leaves byte_len of a send-side completion unsaid; rxe
      // reports the message length (the data read for a READ), 8 for an
      // atomic, and so does the simulator (rxe wins where the spec is silent).
      if (status == IBV_WC_SUCCESS)
        wc->byte_len = is_rd_atomic(w) && w.opcode != IBV_WR_RDMA_READ ? 8 : w.length;
      // NIC cost model (HostConfig::cqe_write_ns; 0 = off): the CQE's DMA
      // write takes the send engine's time, after what it was already doing.
      if (const Time c = device->config().cqe_write_ns; c > 0)
        nic_free = std::max(nic_free, engine->now) + c;
    }
  }
  if (w.started && is_rd_atomic(w) && !w.done) --rd_atomic_outstanding;
  if (++sq_head == sq.size()) sq_head = 0;
  --sq_count;
  if (tx_index > 0) {
    --tx_index;
  } else {
    tx_pkt = 0;
  }
  if (started > 0) --started;
}

void QpImpl::retire() {
  while (sq_count > 0 && started > 0) {
    SendWqe& w = wqe_at(0);
    const bool acked = is_rd_atomic(w) || is_local(w) ? w.done : psn_before(last_psn(w), una);
    if (!acked) break;
    complete_send(w, IBV_WC_SUCCESS);
  }
}

void QpImpl::ack_upto(std::uint32_t p) {
  const std::uint32_t target = psn_add(p, 1);
  // Ignore ACKs for PSNs already acknowledged or never sent.
  if (!psn_before(una, target) || psn_before(sent_hw, target)) return;
  for (std::size_t i = 0; i < started; ++i) {
    const SendWqe& w = wqe_at(i);
    if (is_rd_atomic(w) && !w.done) {
      // An ACK cannot stand for READ data or an atomic result: stop there.
      const std::uint32_t need = psn_add(w.psn, w.received);
      if (psn_before(una, need)) una = need;
      break;
    }
    if (psn_before_eq(last_psn(w), p)) {
      una = psn_add(last_psn(w), 1);
      continue;
    }
    una = target;
    break;
  }
  // Forward progress resets both retry counters (9.7.6.1.3).
  retry_left = attr.retry_cnt;
  rnr_left = attr.rnr_retry;
  retire();
  rearm_ack_timer();
}

void QpImpl::restart_from(std::uint32_t p) {
  for (std::size_t i = 0; i < started; ++i) {
    const SendWqe& w = wqe_at(i);
    if (psn_before_eq(w.psn, p) && psn_before_eq(p, last_psn(w))) {
      tx_index = i;
      tx_pkt = static_cast<std::uint32_t>(psn_diff(p, w.psn));
      if (w.opcode == IBV_WR_RDMA_READ) tx_pkt = w.received;
      return;
    }
  }
  tx_index = started;
  tx_pkt = 0;
}

// A NAK sequence error or a local ACK timeout: resend from `psn`, while
// retry_cnt lasts (then IBV_WC_RETRY_EXC_ERR). rxe treats 7 as infinite; the
// IBTA does not (FabricConfig::rxe chooses).
void QpImpl::go_back_n(std::uint32_t psn) {
  const bool infinite = engine->cfg.rxe.retry_cnt_7_infinite && attr.retry_cnt == 7;
  if (!spend_retry(retry_left, infinite)) {
    ++stats.retries_exceeded;
    enter_error(IBV_WC_RETRY_EXC_ERR);
    return;
  }
  restart_from(psn);
  pump();
}

// --- Timers -----------------------------------------------------------------------

void QpImpl::arm_ack_timer() {
  // (Re)starting the timer only moves its deadline: at most one timer event
  // per QP is ever queued, however many ACKs restart it (9.7.6.1.3).
  const Time t = ack_timeout_ns();
  ack_armed = t != 0;
  if (!ack_armed) return;
  ack_deadline = engine->now + t;
  if (!ack_event_queued) {
    ack_event_queued = true;
    engine->schedule(ack_deadline, EventKind::AckTimer, id, 0);
  }
}

// After an acknowledgement: the timer restarts while PSNs are outstanding
// and stops when none is.
void QpImpl::rearm_ack_timer() {
  if (una != sent_hw)
    arm_ack_timer();
  else
    ack_armed = false;
}

void QpImpl::on_ack_timer(std::uint64_t /*unused*/) {
  ack_event_queued = false;
  if (!ack_armed) return;
  if (engine->now < ack_deadline) {  // restarted since: wait for the new deadline
    ack_event_queued = true;
    engine->schedule(ack_deadline, EventKind::AckTimer, id, 0);
    return;
  }
  ack_armed = false;
  if (state != IBV_QPS_RTS && state != IBV_QPS_SQD) return;
  if (una == sent_hw) return;  // nothing outstanding
  ++stats.timeouts;
  go_back_n(una);
}

void QpImpl::on_rnr_timer(std::uint64_t gen) {
  if (gen != rnr_gen || !rnr_wait) return;
  rnr_wait = false;
  pump();
}

}  // namespace rdmalab::sim
