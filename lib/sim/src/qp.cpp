// The data plane of a simulated QP: what its requester and its responder
// share (IBTA vol. 1, chapter 9, Transport Layer: 9.7 Reliable Service for
// RC; UC and UD use the same packets without its acknowledgements).
//
// One QP plays both roles, each in its own file:
//   requester.cpp  the send queue: request packets on the wire, their ACKs,
//                  NAKs, READ responses and atomic ACKs, retransmission and
//                  the local ACK and RNR timers;
//   responder.cpp  request packets off the wire: the PSN check, duplicates,
//                  execution, the ACK or NAK, the adaptive-routing window;
//   local_ops.cpp  memory window bind and local invalidate, which the send
//                  queue runs without putting anything on the wire.
// This file holds the transmit loop that serves both (pump), the dispatch of
// an arriving packet to one of them, and the error state and queue flush.
#include "engine.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::sim {
namespace {

// How far ahead of the wire (in time) a NIC with tx_packet_ns == 0 builds
// packets: about 40 small packets, or one 4 KiB packet, at 100 Gb/s.
constexpr Time kTxLookahead = 400;

}  // namespace

Time QpImpl::ack_timeout_ns() const noexcept {
  // 4.096 us * 2^timeout, 0 = infinite (IBTA 9.7.6.1.3).
  if (attr.timeout == 0) return 0;
  return Time{4096} << attr.timeout;
}

// The transmit loop: responses first (they answer the peer's requests, which
// wait for them), then request packets, as long as the port takes them.
void QpImpl::pump() {
  if (tx_scheduled) return;
  for (;;) {
    // Only a bind or a local invalidate at the transmit position has work.
    if (tx_index < sq_count && is_local(wqe_at(tx_index))) run_local_ops();
    const bool resp_work = !resp.empty() && state != IBV_QPS_RESET && state != IBV_QPS_INIT;
    const bool req_work = !resp_work && requester_can_send();
    if (!resp_work && !req_work) return;
    Link& ln = egress_link(wqe_at(tx_index));
    // A NIC queues a few packets ahead of the wire: while the port's backlog
    // is under kTxLookahead the next packet is built now and serialised when
    // the port is free (its capture timestamp is that later time). This
    // keeps one wake-up per batch of small packets instead of one per packet.
    // With a per-packet NIC time (a software NIC) packets are built one by one.
    const Time lookahead = device->config().tx_packet_ns == 0 ? kTxLookahead : 0;
    Time t = std::max(ln.busy_until - lookahead, next_tx);
    // PFC: while the switch has paused this QP's priority nothing new is
    // built; an XON wakes the QP early (Engine::apply_pause).
    if (!engine->host_uplink.empty()) {
      const PauseTrack& pause = ln.pause[engine->nic_dscp_to_prio[spec.traffic_class >> 2] & 7];
      if (pause.until > engine->now) {
        t = std::max(t, pause.until);
        if (!pause_wait) {
          pause_wait = true;
          ln.pause_waiters.push_back(id);
        }
      }
    }
    // InfiniBand into a switch: not without the switch's credits for a
    // whole packet of the path MTU on this VL; their return wakes the QP
    // (Engine::credit_return).
    if (ln.credited) {
      const bool ud = type == IBV_QPT_UD && req_work;
      const auto vl =
          static_cast<std::uint8_t>((ud ? wqe_at(tx_index).ah->attr().sl : spec.vl) & 7);
      const std::uint32_t need =
          Engine::ib_blocks((ud ? device->config().port_mtu : mtu) + Engine::kIbMaxHeaderBytes);
      if (ln.credits[vl] < need) {
        engine->credit_wait(ln, vl, need);
        if (!pause_wait) {
          pause_wait = true;
          ln.pause_waiters.push_back(id);
        }
        return;
      }
    }
    // NIC cost model (HostConfig::doorbell_ns ...): a request waits until
    // its WQE (and its payload) have been fetched; 0 with the model off.
    if (req_work && tx_index < sq_count) t = std::max(t, wqe_at(tx_index).ready_at);
    // --- DCQCN: data packets (requests, READ responses) wait for the
    // reaction point's rate; ACKs do not. A packet held back by the rate
    // wakes at the RP's next rate change too, to be re-timed at the new rate.
    Time wake = t;
    if (rp && (req_work || resp.front().kind == RespItem::Kind::ReadResponse)) {
      const Time paced = dcqcn_next_tx();
      if (paced > t) {
        wake = std::max(t, std::min(paced, rp->next_rate_change()));
        t = paced;
      }
    }
    if (t > engine->now) {
      tx_scheduled = true;
      engine->schedule(wake, EventKind::QpTx, id, ++tx_gen);
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

void QpImpl::receive(const wire::Frame& f, wire::Bytes bytes) {
  const wire::IbPacket& p = *f.ib;
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  if (info == nullptr) return;
  if (f.lrh) {  // InfiniBand: for the receive completions
    rx_slid = f.lrh->slid;
    rx_sl = f.lrh->sl;
  }
  // --- DCQCN: CNPs and CE-marked requests ---
  if (engine->cfg.dcqcn && dcqcn_receive(f)) return;
  if (info->is_response())
    on_response(p);
  else
    on_request(p, f, bytes);
}

// --- Errors ----------------------------------------------------------------------

// The WQE at the transmit position fails before it reaches the wire (a bad
// local SGE, a failed bind or local invalidate). The WQEs before it, sent
// but not yet acknowledged, are flushed first, so that completions stay in
// order and the failed WQE is the one that carries `status`; then the QP
// enters the error state.
void QpImpl::fail_tx_wqe(ibv_wc_status status) {
  for (std::size_t i = 0; i < tx_index; ++i) complete_send(wqe_at(0), IBV_WC_WR_FLUSH_ERR);
  tx_index = 0;
  enter_error(status);
}

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
  while (rq_count > 0) complete_recv(IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV, 0, 0, 0, true);
  // With an SRQ only the WQE this QP took is flushed; the others stay in the
  // SRQ for its other QPs.
  if (srq_taken) complete_recv(IBV_WC_WR_FLUSH_ERR, 0, IBV_WC_RECV, 0, 0, 0, true);
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
  srq_taken = false;
  resp.clear();
  ack_pending = false;
  ack_armed = false;
  ++rnr_gen;
  rnr_wait = false;
  ar_armed = false;
  rd_atomic_outstanding = 0;
  in_send = in_write = uc_drop = nak_sent = false;
  msn = 0;
  for (auto& held : ar_held) held.clear();
  ar_held_count = 0;
  ar_base = 0;
  // --- DCQCN: a reset QP starts again at the line rate of its next link ---
  rp.reset();
  np.reset();
  rp_last_start = 0;
  rp_last_bits = 0;
}

}  // namespace rdmalab::sim
