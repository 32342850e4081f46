// The data plane of a simulated QP: requester and responder of the RC, UC
// and UD transports (IBTA vol. 1, chapter 9).
//
// Requester: a send queue of WQEs; each gets its PSNs when it is first put on
// the wire (one per packet, one per expected READ response packet). The
// oldest unacknowledged PSN (`una`) moves with ACKs, READ responses and
// atomic ACKs; retransmission always restarts from a PSN (go-back-N, 9.7.4.1):
// after a NAK PSN-sequence-error from the NAK's PSN, after a local ACK timeout
// or an RNR NAK from `una`.
//
// Responder: one expected PSN (9.7.5.1.1). A packet at that PSN is executed;
// an earlier one is a duplicate (re-ACKed; READs re-executed, atomics replayed
// from the responder resources, 9.7.5.1.4); a later one is out of sequence:
// one NAK PSN-sequence-error, then silence until the expected PSN arrives.
#include <arpa/inet.h>

#include <cstring>
#include <optional>

#include "engine.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/timers.hpp"

namespace rdmalab::sim {
namespace {

using wire::NakCode;
using wire::Operation;
using wire::Position;
using wire::psn_add;
using wire::psn_before;
using wire::psn_before_eq;
using wire::psn_diff;

Position position_of(std::uint32_t index, std::uint32_t count) noexcept {
  if (count <= 1) return Position::Only;
  if (index == 0) return Position::First;
  return index + 1 == count ? Position::Last : Position::Middle;
}

std::uint32_t packets_for(std::uint64_t length, std::uint32_t mtu) noexcept {
  return length == 0 ? 1u : static_cast<std::uint32_t>((length + mtu - 1) / mtu);
}

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

// Copies `data` into an SGE list starting `offset` bytes into it. The SGEs
// were checked when the WQE was posted or started.
void scatter(const ibv_sge* sg, int n, std::uint64_t offset, wire::Bytes data) noexcept {
  std::size_t done = 0;
  for (int i = 0; i < n && done < data.size(); ++i) {
    if (offset >= sg[i].length) {
      offset -= sg[i].length;
      continue;
    }
    const std::size_t take = std::min<std::size_t>(sg[i].length - offset, data.size() - done);
    std::memcpy(reinterpret_cast<void*>(sg[i].addr + offset), data.data() + done, take);
    done += take;
    offset = 0;
  }
}

// Responses a responder keeps queued for the wire at most, beyond those of
// new requests (bounded by max_dest_rd_atomic): answers to duplicates are
// dropped past it, as a NIC drops when its response queue is full.
constexpr std::size_t kMaxQueuedResponses = 64;
// Early packets of the adaptive-routing model kept until they can execute.
constexpr std::size_t kMaxArStash = 16;

// How far ahead of the wire (in time) a NIC with tx_packet_ns == 0 builds
// packets: about 40 small packets, or one 4 KiB packet, at 100 Gb/s.
constexpr Time kTxLookahead = 400;

enum class Verdict : std::uint8_t { Ok, Rnr, InvalidRequest, RemoteAccess, RemoteOperational };

}  // namespace

Time QpImpl::ack_timeout_ns() const noexcept {
  // 4.096 us * 2^timeout, 0 = infinite (IBTA 9.7.6.1.3).
  if (attr.timeout == 0) return 0;
  return Time{4096} << attr.timeout;
}

// --- Transmission --------------------------------------------------------------

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

void QpImpl::pump() {
  if (tx_scheduled) return;
  for (;;) {
    // Only a bind or a local invalidate at the transmit position has work.
    if (tx_index < sq_count && is_local(wqe_at(tx_index))) run_local_ops();
    const bool resp_work = !resp.empty() && state != IBV_QPS_RESET && state != IBV_QPS_INIT;
    const bool req_work = !resp_work && requester_can_send();
    if (!resp_work && !req_work) return;
    Link* ln = link;
    if (type == IBV_QPT_UD) {
      const SendWqe& w = sq[slot_at(tx_index)];
      ln = &engine->link(engine->device_index(*device), engine->device_index(*w.ah->dest_));
    }
    // A NIC queues a few packets ahead of the wire: while the port's backlog
    // is under kTxLookahead the next packet is built now and serialised when
    // the port is free (its capture timestamp is that later time). This
    // keeps one wake-up per batch of small packets instead of one per packet.
    // With a per-packet NIC time (a software NIC) packets are built one by one.
    const Time lookahead = device->config().tx_packet_ns == 0 ? kTxLookahead : 0;
    const Time t = std::max(ln->busy_until - lookahead, next_tx);
    if (t > engine->now) {
      tx_scheduled = true;
      engine->schedule(t, EventKind::QpTx, id, 0);
      return;
    }
    if (resp_work)
      send_response_item();
    else
      send_request_packet();
    next_tx = engine->now + device->config().tx_packet_ns;
    if (state == IBV_QPS_ERR && resp.empty()) return;
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
  // Slow path: gather the pieces into the scratch buffer.
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

void QpImpl::send_request_packet() {
  // Normally the packet at the transmit position; a READ re-request (after a
  // missing response) goes out alone without moving that position.
  std::size_t idx = tx_index;
  std::uint32_t pk = tx_pkt;
  bool rereading = false;
  if (reread) {
    reread = false;
    for (std::size_t i = 0; i < started; ++i) {
      const SendWqe& r = wqe_at(i);
      if (r.opcode == IBV_WR_RDMA_READ && !r.done && r.psn == reread_psn) {
        idx = i;
        pk = r.received;
        rereading = true;
        break;
      }
    }
    if (!rereading && !requester_can_send()) return;
  }
  const std::size_t slot = slot_at(idx);
  SendWqe& w = sq[slot];
  if (!w.started) {
    if (!check_local(w, slot)) {
      // A bad lkey or an SGE outside its MR: the WQE completes in error
      // and the QP goes to the error state (IBV_WC_LOC_PROT_ERR).
      for (std::size_t i = 0; i < tx_index; ++i) complete_send(wqe_at(0), IBV_WC_WR_FLUSH_ERR);
      tx_index = 0;
      enter_error(IBV_WC_LOC_PROT_ERR);
      return;
    }
    w.started = true;
    w.psn = next_psn;
    w.npkts = type == IBV_QPT_UD || (w.opcode != IBV_WR_RDMA_READ && is_rd_atomic(w))
                  ? 1u
                  : packets_for(w.length, mtu);
    next_psn = psn_add(next_psn, w.npkts);
    ++started;
    if (is_rd_atomic(w)) ++rd_atomic_outstanding;
  }

  wire::FrameSpec& fs = spec;
  if (type == IBV_QPT_UD) {
    // A UD packet goes wherever its address handle says.
    const Device& dst = *w.ah->dest_;
    fs.src_mac = device->config().mac;
    fs.dst_mac = dst.config().mac;
    fs.src_ip = device->config().ip;
    fs.dst_ip = dst.config().ip;
    fs.traffic_class = w.ah->attr_.grh.traffic_class;
    fs.hop_limit = w.ah->attr_.grh.hop_limit != 0 ? w.ah->attr_.grh.hop_limit : 64;
    fs.udp_src_port = static_cast<std::uint16_t>(0xC000u | ((qpn * 0x9E3779B1u) >> 18));
  }
  wire::IbPacket& p = fs.packet;
  p.clear();
  const wire::Transport tr = type == IBV_QPT_RC   ? wire::Transport::RC
                             : type == IBV_QPT_UC ? wire::Transport::UC
                                                  : wire::Transport::UD;
  const std::uint32_t psn = psn_add(w.psn, pk);
  p.bth.psn = psn;
  p.bth.dest_qp = type == IBV_QPT_UD ? w.remote_qpn : attr.dest_qp_num;
  const bool last = pk + 1 >= w.npkts;
  const bool solicited = (w.flags & IBV_SEND_SOLICITED) != 0;
  const std::uint64_t offset = std::uint64_t{pk} * mtu;
  const auto len = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(mtu, w.length > offset ? w.length - offset : 0));
  const std::uint8_t* data = nullptr;
  std::uint32_t npkts_sent = 1;
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
        p.deth = wire::Deth{(w.remote_qkey & 0x80000000u) != 0 ? attr.qkey : w.remote_qkey, 0, qpn};
      }
      p.bth.solicited = last && solicited;
      gather(slot, w, offset, len, data);
      break;
    }
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: {
      const bool imm = last && w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
      // Adaptive routing: every packet a WRITE Only with its own RETH, so
      // it can be placed wherever it lands.
      const bool ar = options.adaptive_routing && type == IBV_QPT_RC;
      const Position pos = ar ? Position::Only : position_of(pk, w.npkts);
      op = wire::find_opcode(tr, Operation::Write, pos, imm);
      if (pos == Position::Only && ar)
        p.reth = wire::Reth{w.remote_addr + offset, w.rkey, len};
      else if (pos == Position::First || pos == Position::Only)
        p.reth = wire::Reth{w.remote_addr, w.rkey, w.length};
      if (imm) p.immdt = ntohl(w.imm);
      p.bth.solicited = imm && solicited;
      gather(slot, w, offset, len, data);
      break;
    }
    case IBV_WR_RDMA_READ:
      // One request for the rest of the READ; it takes one PSN per response
      // packet it asks for (9.7.4.1.3).
      op = wire::find_opcode(tr, Operation::ReadRequest, Position::Only);
      p.reth = wire::Reth{
          w.remote_addr + offset, w.rkey,
          static_cast<std::uint32_t>(w.length - std::min<std::uint64_t>(w.length, offset))};
      npkts_sent = w.npkts - pk;
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
  if (op == nullptr) {  // cannot happen: post_send checked the opcode
    enter_error(IBV_WC_LOC_QP_OP_ERR);
    return;
  }
  p.bth.opcode = op->value;
  // AckReq on the last packet of each message, as rxe and hardware do.
  p.bth.ack_req = type == IBV_QPT_RC && (last || w.opcode == IBV_WR_RDMA_READ);
  if (data != nullptr) p.payload = wire::Bytes(data, len);

  const bool resend = psn_before(psn, sent_hw);
  if (resend) ++stats.retransmitted_packets;
  const std::uint32_t after = psn_add(psn, npkts_sent);
  if (!resend || psn_before(sent_hw, after)) sent_hw = after;
  ++stats.packets_sent;
  Link& ln = type == IBV_QPT_UD
                 ? engine->link(engine->device_index(*device), engine->device_index(*w.ah->dest_))
                 : *link;
  engine->transmit(ln, fs);

  if (!rereading) {
    tx_pkt += npkts_sent;
    if (tx_pkt >= w.npkts) {
      ++tx_index;
      tx_pkt = 0;
    }
  }
  if (type == IBV_QPT_RC) {
    if (!ack_armed) arm_ack_timer();
  } else if (tx_pkt == 0 && !rereading) {
    // UC and UD complete when the last packet has left.
    complete_send(wqe_at(0), IBV_WC_SUCCESS);
  }
}

void QpImpl::send_response_item() {
  RespItem& it = resp.front();
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
  engine->transmit(*link, spec);
}

// --- Local operations: memory window bind, local invalidate --------------------------

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
        for (std::size_t i = 0; i < tx_index; ++i) complete_send(wqe_at(0), IBV_WC_WR_FLUSH_ERR);
        tx_index = 0;
        enter_error(status);
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
  auto wit = device->mws_.find(w.bind.mw_rkey >> 8);
  if (wit == device->mws_.end() || wit->second->key_ != w.bind.mw_rkey) return IBV_WC_MW_BIND_ERR;
  MemoryWindow& mw = *wit->second;
  MemoryRegion* mr = nullptr;
  if (w.bind.length != 0) {
    auto mit = device->mrs_.find(w.bind.mr_lkey);
    if (mit == device->mrs_.end()) return IBV_WC_MW_BIND_ERR;
    mr = mit->second;
  }
  const int access = w.bind.access;
  constexpr int kSupported = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  // Zero-based windows are not modelled.
  if ((access & ~kSupported) != 0) return IBV_WC_MW_BIND_ERR;
  if (mw.type() == IBV_MW_TYPE_1) {
    if (mw.state_ != MemoryWindow::State::Valid) return IBV_WC_MW_BIND_ERR;
  } else {
    if (mw.state_ != MemoryWindow::State::Free) return IBV_WC_MW_BIND_ERR;  // o10-37.2.30
    if (&mw.pd() != pd) return IBV_WC_MW_BIND_ERR;                          // C10-72
    if (mr == nullptr) return IBV_WC_MW_BIND_ERR;                           // o10-37.2.40
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
  mw.unbind();
  mw.key_ = (mw.key_ & ~0xFFu) | (w.bind.rkey & 0xFFu);
  mw.state_ = MemoryWindow::State::Valid;
  mw.access_ = access;
  mw.addr_ = w.bind.addr;
  mw.length_ = w.bind.length;
  if (mw.length_ != 0) {
    mw.mr_ = mr;
    ++mr->windows_;
  }
  if (mw.type() == IBV_MW_TYPE_2) mw.qp_ = this;
  return IBV_WC_SUCCESS;
}

// rxe_invalidate_mw(): 0, or EINVAL. rxe checks neither the QP nor the PD the
// window is bound to (the IBTA wants the QP of a type 2 window, o10-37.2.x),
// so any QP of the device may invalidate it; an ordinary registered MR
// cannot be invalidated (only fast-registration MRs, not modelled here).
int QpImpl::invalidate_rkey(std::uint32_t rkey) {
  auto it = device->mws_.find(rkey >> 8);
  if (it == device->mws_.end()) return EINVAL;
  MemoryWindow& mw = *it->second;
  if (mw.key_ != rkey || mw.type() != IBV_MW_TYPE_2 || mw.state_ != MemoryWindow::State::Valid)
    return EINVAL;
  mw.unbind();
  return 0;
}

// --- Requester: completions, ACKs, retries --------------------------------------------

void QpImpl::complete_send(SendWqe& w, ibv_wc_status status) {
  // Always the head of the send queue: completions come in order.
  if (status != IBV_WC_SUCCESS || sig_all || (w.flags & IBV_SEND_SIGNALED) != 0) {
    if (ibv_wc* wc = send_cq->push()) {
      wc->wr_id = w.wr_id;
      wc->status = status;
      wc->opcode = wc_opcode(w.opcode);
      wc->qp_num = qpn;
      // The verbs API leaves byte_len of a send-side completion unsaid; rxe
      // reports the message length (the data read for a READ), 8 for an
      // atomic, and so does the simulator (rxe wins where the spec is silent).
      if (status == IBV_WC_SUCCESS)
        wc->byte_len = is_rd_atomic(w) && w.opcode != IBV_WR_RDMA_READ ? 8 : w.length;
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
  if (una != sent_hw)
    arm_ack_timer();
  else {
    ack_armed = false;
  }
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

namespace {
bool retries_exhausted(int left, std::uint8_t configured, bool seven_is_infinite) noexcept {
  return left <= 0 && !(seven_is_infinite && configured == 7);
}
}  // namespace

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
  if (retries_exhausted(retry_left, attr.retry_cnt, engine->cfg.rxe.retry_cnt_7_infinite)) {
    enter_error(IBV_WC_RETRY_EXC_ERR);
    return;
  }
  if (!(engine->cfg.rxe.retry_cnt_7_infinite && attr.retry_cnt == 7)) --retry_left;
  restart_from(una);
  pump();
}

void QpImpl::on_rnr_timer(std::uint64_t gen) {
  if (gen != rnr_gen || !rnr_wait) return;
  rnr_wait = false;
  pump();
}

void QpImpl::on_response(const wire::IbPacket& p) {
  if (type != IBV_QPT_RC || (state != IBV_QPS_RTS && state != IBV_QPS_SQD)) return;
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  const std::uint32_t psn = p.bth.psn;
  // A response for a PSN never sent, or long acknowledged, is stale.
  if (!psn_before(psn, sent_hw)) return;
  switch (info->operation) {
    case Operation::Acknowledge: {
      const wire::Aeth a = *p.aeth;
      if (a.kind() == wire::AckKind::Ack) {
        ack_upto(psn);
      } else if (a.kind() == wire::AckKind::RnrNak) {
        ++stats.rnr_naks_received;
        if (psn_before(psn, una)) return;
        ack_upto(psn_add(psn, -1));
        if (retries_exhausted(rnr_left, attr.rnr_retry, true)) {
          enter_error(IBV_WC_RNR_RETRY_EXC_ERR);
          return;
        }
        if (attr.rnr_retry != 7) --rnr_left;  // 7 = retry forever (9.7.5.2.8)
        restart_from(psn);
        rnr_wait = true;
        ++rnr_gen;
        ack_armed = false;
        const double ms = wire::rnr_timer_ms(a.value()).value_or(655.36);
        engine->schedule(engine->now + static_cast<Time>(ms * 1e6), EventKind::RnrTimer, id,
                         rnr_gen);
      } else if (a.kind() == wire::AckKind::Nak) {
        ++stats.naks_received;
        if (psn_before(psn, una)) return;
        ack_upto(psn_add(psn, -1));
        const auto code = static_cast<NakCode>(a.value());
        if (code == NakCode::PsnSequenceError) {
          if (retries_exhausted(retry_left, attr.retry_cnt, engine->cfg.rxe.retry_cnt_7_infinite)) {
            enter_error(IBV_WC_RETRY_EXC_ERR);
            return;
          }
          if (!(engine->cfg.rxe.retry_cnt_7_infinite && attr.retry_cnt == 7)) --retry_left;
          restart_from(psn);
          pump();
        } else {
          enter_error(code == NakCode::RemoteAccessError ? IBV_WC_REM_ACCESS_ERR
                      : code == NakCode::InvalidRequest  ? IBV_WC_REM_INV_REQ_ERR
                                                         : IBV_WC_REM_OP_ERR);
        }
      }
      break;
    }
    case Operation::AtomicAcknowledge: {
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
      break;
    }
    case Operation::ReadResponse: {
      for (std::size_t i = 0; i < started; ++i) {
        SendWqe& w = wqe_at(i);
        if (w.opcode != IBV_WR_RDMA_READ || w.done) continue;
        if (!(psn_before_eq(w.psn, psn) && psn_before_eq(psn, last_psn(w)))) continue;
        const std::uint32_t expected = psn_add(w.psn, w.received);
        if (psn_before(psn, expected)) return;  // duplicate
        if (psn != expected) {
          // A response went missing: ask again from the first missing one
          // (an implied sequence error, 9.7.5.2.1) unless already doing so.
          // Re-request only this READ, from the first missing response
          // (9.7.5.2.1); later requests were executed and need no resend. Once
          // per missing PSN: the responses already in flight behind the gap
          // must not each trigger another request.
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
        if (una != sent_hw)
          arm_ack_timer();
        else {
          ack_armed = false;
        }
        pump();
        return;
      }
      break;
    }
    default: break;
  }
}

// --- Errors ------------------------------------------------------------------------

void QpImpl::flush_all(ibv_wc_status first_status) {
  bool first = true;
  while (sq_count > 0) {
    complete_send(wqe_at(0), first ? first_status : IBV_WC_WR_FLUSH_ERR);
    first = false;
  }
  tx_index = 0;
  tx_pkt = 0;
  started = 0;
  rd_atomic_outstanding = 0;
  while (rq_count > 0) complete_recv(IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV, 0, 0, 0);
}

void QpImpl::enter_error(ibv_wc_status first_status) {
  state = IBV_QPS_ERR;
  ack_armed = false;
  ++rnr_gen;
  rnr_wait = false;
  ack_pending = false;
  // Responses already queued (the NAK that explains the error) still go out.
  flush_all(first_status);
  pump();
}

void QpImpl::reset_queues() {
  sq_head = sq_count = tx_index = started = 0;
  reread = false;
  tx_pkt = 0;
  rq_head = rq_count = 0;
  resp.clear();
  ack_pending = false;
  ack_armed = false;
  ++rnr_gen;
  rnr_wait = false;
  ar_armed = false;
  rd_atomic_outstanding = 0;
  in_send = in_write = uc_drop = nak_sent = false;
  msn = 0;
  std::fill(ar_seen.begin(), ar_seen.end(), 0);
  ar_base = 0;
  ar_stash.clear();
}

// --- Responder ---------------------------------------------------------------------------

void QpImpl::complete_recv(ibv_wc_status status, std::uint32_t byte_len, ibv_wc_opcode op,
                           unsigned flags, std::uint32_t imm, std::uint32_t src_qp) {
  const RecvWqe& r = rq[rq_head];
  if (ibv_wc* wc = recv_cq->push()) {
    wc->wr_id = r.wr_id;
    wc->status = status;
    wc->opcode = op;
    wc->byte_len = byte_len;
    wc->qp_num = qpn;
    wc->src_qp = src_qp;
    wc->wc_flags = flags;
    wc->imm_data = imm;
  }
  if (++rq_head == rq.size()) rq_head = 0;
  --rq_count;
}

bool QpImpl::scatter_recv(std::size_t slot, std::uint64_t offset, wire::Bytes data) {
  const RecvWqe& r = rq[slot];
  if (!r.valid || offset + data.size() > r.length) return false;
  const ibv_sge* sg = &rq_sge[slot * cap.max_recv_sge];
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
  auto it = device->mws_.find(rkey >> 8);
  if (it == device->mws_.end()) return nullptr;
  const MemoryWindow& mw = *it->second;
  if (mw.key_ != rkey || mw.state_ != MemoryWindow::State::Valid || &mw.pd() != pd ||
      (mw.type() == IBV_MW_TYPE_2 && mw.qp_ != this) || mw.length_ == 0 ||
      (mw.access_ & need) != need || mw.mr_ == nullptr || !mw.mr_->contains(va, len))
    return nullptr;
  return mw.mr_;
}

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

void QpImpl::receive(const wire::Frame& f, wire::Bytes bytes) {
  const wire::IbPacket& p = *f.ib;
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  if (info == nullptr) return;
  if (info->is_response())
    on_response(p);
  else
    on_request(p, f, bytes);
}

void QpImpl::ud_receive(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes) {
  if (!p.deth || p.deth->qkey != attr.qkey) return;  // Q_Key violation: silently dropped
  if (rq_count == 0) return;                         // UD has no RNR: the message is lost
  const std::size_t slot = rq_head;
  // The first 40 bytes of the buffer receive the GRH; for RoCEv2 over IPv4
  // the IPv4 header fills its last 20 bytes (as rdma-core documents).
  std::array<std::uint8_t, wire::kGrhSize> grh{};
  if (f.ipv4)
    std::memcpy(grh.data() + 20, bytes.data() + f.ip_offset, 20);
  else if (f.ipv6)
    std::memcpy(grh.data(), bytes.data() + f.ip_offset, 40);
  if (!scatter_recv(slot, 0, grh) || !scatter_recv(slot, wire::kGrhSize, p.payload)) {
    complete_recv(IBV_WC_LOC_LEN_ERR, 0, IBV_WC_RECV, 0, 0, p.deth->src_qp);
    return;
  }
  unsigned flags = IBV_WC_GRH;
  std::uint32_t imm = 0;
  if (p.immdt) {
    flags |= IBV_WC_WITH_IMM;
    imm = htonl(*p.immdt);
  }
  complete_recv(IBV_WC_SUCCESS, static_cast<std::uint32_t>(wire::kGrhSize + p.payload.size()),
                IBV_WC_RECV, flags, imm, p.deth->src_qp);
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
  if (!nak_sent) {
    nak_sent = true;
    queue_ack(epsn, wire::Aeth::nak(NakCode::PsnSequenceError), false);
  }
}

void QpImpl::arm_ar_timer() {
  ar_armed = true;
  ar_deadline = engine->now + options.ar_nak_timeout_ns;
  if (!ar_event_queued) {
    ar_event_queued = true;
    engine->schedule(ar_deadline, EventKind::ArTimer, id, 0);
  }
}

void QpImpl::ar_advance() {
  // Slide the window: PSNs placed early now count as received in order.
  const std::size_t w = ar_seen.size();
  while (ar_seen[ar_base] != 0) {
    const bool ackreq = (ar_seen[ar_base] & 2) != 0;
    ar_seen[ar_base] = 0;
    ar_base = (ar_base + 1) % w;
    msn = psn_add(msn, 1);
    if (ackreq) queue_ack(epsn, wire::Aeth::ack(), true);
    epsn = psn_add(epsn, 1);
  }
  bool ahead = false;
  for (std::uint8_t s : ar_seen) ahead = ahead || s != 0;
  ar_armed = false;
  if (ahead) arm_ar_timer();
}

void QpImpl::run_ar_stash() {
  // The window reached a packet that waited in the stash: execute it now, as
  // if it had just arrived in order (which may slide the window further).
  // Copies of PSNs already executed (resent meanwhile) are stale.
  std::erase_if(ar_stash, [&](const auto& e) { return psn_before(e.first, epsn); });
  const auto it = std::find_if(ar_stash.begin(), ar_stash.end(),
                               [&](const auto& e) { return e.first == epsn; });
  if (it == ar_stash.end()) return;
  const std::vector<std::uint8_t> frame = std::move(it->second);
  ar_stash.erase(it);
  const wire::Frame f = wire::decode_frame(frame, wire::LinkType::Ethernet, frame.size());
  if (f.ib) on_request(*f.ib, f, frame);
}

void QpImpl::on_request(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes) {
  if (state != IBV_QPS_RTR && state != IBV_QPS_RTS && state != IBV_QPS_SQD && state != IBV_QPS_SQE)
    return;
  if (type == IBV_QPT_UD) {
    ud_receive(p, f, bytes);
    return;
  }
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  const wire::Transport want = type == IBV_QPT_RC ? wire::Transport::RC : wire::Transport::UC;
  if (info->transport != want) return;
  const std::uint32_t psn = p.bth.psn;
  const std::int32_t d = psn_diff(psn, epsn);
  const bool first_or_only = info->position == Position::First || info->position == Position::Only;

  if (type == IBV_QPT_UC) {
    // UC: no ACKs, no retries. A gap means lost packets: the message in
    // progress is dropped and the receiver waits for the next First/Only.
    if (d != 0) {
      in_send = in_write = false;
      recv_offset = 0;
      uc_drop = !first_or_only;
    } else if (uc_drop && first_or_only) {
      uc_drop = false;
    }
    epsn = psn_add(psn, 1);
    if (uc_drop) return;
  } else {
    const bool ar_write = options.adaptive_routing && info->operation == Operation::Write &&
                          info->position == Position::Only && !info->has_immediate;
    if (d > 0 && options.adaptive_routing && static_cast<std::size_t>(d) < ar_seen.size()) {
      // Adaptive routing: tolerate out-of-order arrival inside the window.
      std::uint8_t& seen = ar_seen[(ar_base + static_cast<std::size_t>(d)) % ar_seen.size()];
      if (ar_write && seen == 0 && p.reth) {
        const wire::Reth& r = *p.reth;
        MemoryRegion* mr =
            r.dma_len == 0 ? nullptr : remote_mr(r.rkey, r.va, r.dma_len, IBV_ACCESS_REMOTE_WRITE);
        if ((mr != nullptr || r.dma_len == 0) && r.dma_len == p.payload.size()) {
          if (mr != nullptr) std::memcpy(mr->host(r.va), p.payload.data(), p.payload.size());
          seen = static_cast<std::uint8_t>(1 | (p.bth.ack_req ? 2 : 0));
        }
      } else if (!ar_write && ar_stash.size() < kMaxArStash &&
                 std::none_of(ar_stash.begin(), ar_stash.end(),
                              [&](const auto& e) { return e.first == psn; })) {
        // It completes a receive or a message: it must execute in order.
        // Keep it until the holes before it are filled.
        ar_stash.emplace_back(psn, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
      }
      if (!ar_armed) arm_ar_timer();
      return;
    }
    if (d > 0) {
      ++stats.out_of_sequence_dropped;
      if (!nak_sent) {
        nak_sent = true;
        queue_ack(epsn, wire::Aeth::nak(NakCode::PsnSequenceError), false);
      }
      return;
    }
    if (d < 0) {
      ++stats.duplicates_received;
      if (info->operation == Operation::ReadRequest) {
        // Re-execute the READ from the responder resources: the data is read
        // again from memory (9.7.5.1.4).
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
        return;
      }
      if (info->operation == Operation::CompareSwap || info->operation == Operation::FetchAdd) {
        // Never execute an atomic twice: replay the saved original value.
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
        return;
      }
      if (resp.size() < kMaxQueuedResponses) queue_ack(psn_add(epsn, -1), wire::Aeth::ack(), false);
      return;
    }
    nak_sent = false;
    (void)ar_write;
  }

  // --- Execute the packet at the expected PSN. ---
  Verdict v = Verdict::Ok;
  std::uint32_t advance = 1;
  const std::size_t len = p.payload.size();
  const bool last_or_only = info->position == Position::Last || info->position == Position::Only;
  switch (info->operation) {
    case Operation::Send: {
      if (first_or_only ? (in_send || in_write) : !in_send) {
        v = Verdict::InvalidRequest;
        break;
      }
      if ((last_or_only ? len > mtu : len != mtu)) {
        v = Verdict::InvalidRequest;
        break;
      }
      if (first_or_only) {
        if (rq_count == 0) {
          v = Verdict::Rnr;
          break;
        }
        recv_offset = 0;
        in_send = true;
      }
      if (!scatter_recv(rq_head, recv_offset, p.payload)) {
        complete_recv(IBV_WC_LOC_LEN_ERR, 0, IBV_WC_RECV, 0, 0, 0);
        in_send = false;
        v = Verdict::InvalidRequest;
        break;
      }
      recv_offset += len;
      if (last_or_only) {
        unsigned flags = 0;
        std::uint32_t imm = 0;
        if (p.immdt) {
          flags |= IBV_WC_WITH_IMM;
          imm = htonl(*p.immdt);
        }
        if (p.ieth) {
          // SEND with Invalidate: revoke the window named by the IETH after
          // the data is placed (rxe's execute()). A key that names no valid
          // type 2 window is class J: the receive completes with
          // IBV_WC_REM_INV_REQ_ERR, the packet is still ACKed (the
          // requester's SEND succeeds) and the responder QP goes to error.
          if (invalidate_rkey(*p.ieth) != 0) {
            complete_recv(IBV_WC_REM_INV_REQ_ERR, static_cast<std::uint32_t>(recv_offset),
                          IBV_WC_RECV, 0, 0, 0);
            in_send = false;
            if (p.bth.ack_req) queue_ack(psn, wire::Aeth::ack(), false);
            enter_error(IBV_WC_WR_FLUSH_ERR);
            return;
          }
          flags |= IBV_WC_WITH_INV;
          imm = *p.ieth;
        }
        complete_recv(IBV_WC_SUCCESS, static_cast<std::uint32_t>(recv_offset), IBV_WC_RECV, flags,
                      imm, 0);
        in_send = false;
        msn = psn_add(msn, 1);
      }
      break;
    }
    case Operation::Write: {
      if (first_or_only ? (in_send || in_write) : !in_write) {
        v = Verdict::InvalidRequest;
        break;
      }
      if (first_or_only) {
        const wire::Reth& r = *p.reth;
        // A zero-length WRITE touches no memory: its R_Key and VA are not
        // checked (IBTA C9-88; rxe does the same). TensorFlow's ACKs and
        // GDR's release are such WRITEs with immediate and rkey 0.
        write_mr =
            r.dma_len == 0 ? nullptr : remote_mr(r.rkey, r.va, r.dma_len, IBV_ACCESS_REMOTE_WRITE);
        if (write_mr == nullptr && r.dma_len != 0) {
          v = Verdict::RemoteAccess;
          break;
        }
        const bool ok_len = info->position == Position::Only ? (len == r.dma_len && len <= mtu)
                                                             : (len == mtu && r.dma_len > mtu);
        if (!ok_len) {
          v = Verdict::InvalidRequest;
          break;
        }
        write_va = r.va;
        write_left = r.dma_len;
        write_total = r.dma_len;
      } else if (info->position == Position::Middle ? (len != mtu || write_left <= mtu)
                                                    : len != write_left) {
        v = Verdict::InvalidRequest;
        break;
      }
      if (info->has_immediate && rq_count == 0) {
        v = Verdict::Rnr;  // WRITE with immediate needs a receive WQE
        break;
      }
      if (len > 0) std::memcpy(write_mr->host(write_va), p.payload.data(), len);
      write_va += len;
      write_left -= static_cast<std::uint32_t>(len);
      in_write = !last_or_only;
      if (last_or_only) {
        if (info->has_immediate)
          complete_recv(IBV_WC_SUCCESS, write_total, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM,
                        htonl(*p.immdt), 0);
        msn = psn_add(msn, 1);
      }
      break;
    }
    case Operation::ReadRequest:
    case Operation::CompareSwap:
    case Operation::FetchAdd: {
      if (in_send || in_write || attr.max_dest_rd_atomic == 0) {
        v = Verdict::InvalidRequest;
        break;
      }
      RdAtomicResource res;
      res.psn = psn;
      RespItem it;
      it.psn = psn;
      if (info->operation == Operation::ReadRequest) {
        const wire::Reth& r = *p.reth;
        const MemoryRegion* mr = remote_mr(r.rkey, r.va, r.dma_len, IBV_ACCESS_REMOTE_READ);
        if (r.dma_len > 0 && mr == nullptr) {
          v = Verdict::RemoteAccess;
          break;
        }
        res.va = r.va;
        res.rkey = r.rkey;
        res.length = r.dma_len;
        res.npkts = packets_for(r.dma_len, mtu);
        advance = res.npkts;
        it.kind = RespItem::Kind::ReadResponse;
        it.va = r.dma_len > 0 ? reinterpret_cast<std::uintptr_t>(mr->host(r.va)) : 0;
        it.length = r.dma_len;
        it.total = r.dma_len;
      } else {
        const wire::AtomicEth& a = *p.atomic_eth;
        if (a.va % 8 != 0) {
          v = Verdict::InvalidRequest;
          break;
        }
        const MemoryRegion* mr = remote_mr(a.rkey, a.va, 8, IBV_ACCESS_REMOTE_ATOMIC);
        if (mr == nullptr) {
          v = Verdict::RemoteAccess;
          break;
        }
        // The atomic itself, on a host-order 64-bit word (9.4.5); memcpy
        // because the caller's buffer need not be a uint64_t object.
        std::uint8_t* target = mr->host(a.va);
        std::uint64_t orig = 0;
        std::memcpy(&orig, target, sizeof orig);
        std::uint64_t next = orig;
        if (info->operation == Operation::FetchAdd)
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
      break;
    }
    default: v = Verdict::InvalidRequest; break;
  }

  if (type == IBV_QPT_UC) {
    if (v != Verdict::Ok) {
      // UC never NAKs: a message that cannot be executed is dropped.
      in_send = in_write = false;
      uc_drop = true;
    }
    return;
  }
  switch (v) {
    case Verdict::Ok: {
      epsn = psn_add(epsn, advance);
      if (options.adaptive_routing) {
        for (std::uint32_t i = 0; i < advance; ++i) {
          ar_seen[ar_base] = 0;
          ar_base = (ar_base + 1) % ar_seen.size();
        }
      }
      const bool needs_ack = p.bth.ack_req && (info->operation == Operation::Send ||
                                               info->operation == Operation::Write);
      if (needs_ack) queue_ack(psn, wire::Aeth::ack(), true);
      if (options.adaptive_routing) {
        ar_advance();
        run_ar_stash();
      }
      break;
    }
    case Verdict::Rnr:
      ++stats.rnr_naks_sent;
      queue_ack(psn, wire::Aeth::rnr_nak(attr.min_rnr_timer), false);
      // The packets already behind it are dropped silently: one NAK per
      // expected PSN, so the RNR round does not also cost a retry_cnt.
      nak_sent = true;
      break;
    case Verdict::InvalidRequest:
    case Verdict::RemoteAccess:
    case Verdict::RemoteOperational: {
      const NakCode code = v == Verdict::InvalidRequest ? NakCode::InvalidRequest
                           : v == Verdict::RemoteAccess ? NakCode::RemoteAccessError
                                                        : NakCode::RemoteOperationalError;
      queue_ack(psn, wire::Aeth::nak(code), false);
      // The responder QP goes to the error state after the NAK (9.9.3.1).
      in_send = in_write = false;
      enter_error(IBV_WC_WR_FLUSH_ERR);
      break;
    }
  }
}

}  // namespace rdmalab::sim
