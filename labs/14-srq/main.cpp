// Lab 14: a shared receive queue (SRQ) behind several RC QPs.
//
// Read this file next to docs/en/21-lab14-srq.md. Without an SRQ every QP
// needs its own receive queue, each filled for the worst case; with one, the
// receiver posts into a single pool and whichever QP a SEND arrives on takes
// the next WQE from it. The lab connects --qps sender QPs to as many receiver
// QPs that all take their receives from one SRQ, then shows:
//   - which QP each completion came from (wc.qp_num): the only way to tell,
//     since the WQE no longer belongs to a QP;
//   - the SRQ limit: ibv_modify_srq(IBV_SRQ_LIMIT) arms it, and when fewer
//     WQEs than the limit are left the device raises
//     IBV_EVENT_SRQ_LIMIT_REACHED once, on the async event queue, and
//     disarms it: the moment to post more;
//   - --empty-srq: nothing posted, so every sender's QP gets RNR NAKs.
// One process plays both sides (the receiver QPs all live on one device).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab14::M;

namespace {

// The receives are wr_id 100, 101, ...; sender QP i's messages wr_id
// 10 * (i + 1) + round.
constexpr std::uint64_t kFirstRecvWrId = 100;
// Sender QP i starts at PSN 0x000100 + i * 0x100, receiver QP i at 0x000800 + i * 0x100.
constexpr std::uint32_t kReceiverFirstPsn = 0x000800;
constexpr std::uint32_t kPsnStride = 0x100;

struct Options {
  lab::CommonOptions common;
  int qps = 3;
  int msgs = 2;  // per sender QP
  std::uint32_t size = 64;
  int limit = -1;  // -1: the number of QPs
  bool empty_srq = false;
  int mtu = 1024;
};

// The message sender QP `qp` sends in round `round`: a text naming both,
// padded with a pattern, so that the receiver can tell from its memory alone
// which message a WQE received.
std::vector<std::uint8_t> message(int qp, int round, std::uint32_t size) {
  std::vector<std::uint8_t> m(size);
  const auto shift = 7 * static_cast<std::uint32_t>(round);
  for (std::uint32_t i = 0; i < size; ++i) m[i] = static_cast<std::uint8_t>('a' + (i + shift) % 26);
  const std::string head = fmt::format("QP{} msg{} ", qp, round);
  std::memcpy(m.data(), head.data(), std::min<std::size_t>(head.size(), size));
  return m;
}

// The receiver's side, opened as lab::open_endpoint opens one, except that
// its QPs come later, on the SRQ created here: device and GID, PD, MR, CQ, SRQ.
void open_receiver(lab::Narrator& n, lab::Environment& env, lab::Endpoint& e,
                   std::unique_ptr<verbs::Srq>& srq, std::size_t buffer, int cqe,
                   std::uint32_t srq_max_wr, const lab::CommonOptions& o) {
  e.ctx = env.backend->open(lab::responder_device(env, o));
  const std::string& dev = e.ctx->info().name;
  n.call(fmt::format("ibv_open_device({})", dev), {});
  lab::choose_gid(n, e, o);
  e.pd = e.ctx->alloc_pd();
  n.call("ibv_alloc_pd(ctx)", {});
  e.storage.assign((buffer + 7) / 8, 0);
  e.mr = e.pd->reg_mr(e.buf(), buffer, IBV_ACCESS_LOCAL_WRITE);
  n.call(fmt::format("ibv_reg_mr(pd, buf, {}, IBV_ACCESS_LOCAL_WRITE)", buffer),
         fmt::format("lkey {}  rkey {}", lab::hex(e.mr->lkey(), 8), lab::hex(e.mr->rkey(), 8)));
  e.cq = e.ctx->create_cq(cqe);
  n.call(fmt::format("ibv_create_cq(ctx, cqe={})", cqe), {});
  verbs::SrqInitAttrs sa;
  sa.max_wr = srq_max_wr;
  srq = e.pd->create_srq(sa);
  n.call(fmt::format("ibv_create_srq(pd, max_wr={}, max_sge={})", sa.max_wr, sa.max_sge), {});
}

// QP `i` of one side, on the objects of the side's first endpoint (its
// device, PD, CQ and MR), and on `srq` when given.
void add_qp(lab::Narrator& n, std::vector<lab::Endpoint>& side, std::size_t i,
            const std::string& role, std::uint32_t max_wr, verbs::Srq* srq) {
  lab::Endpoint& base = side[0];
  lab::Endpoint& e = side[i];
  e.role = role;
  e.same_port_as(base);
  verbs::QpInitAttrs init;
  init.send_cq = base.cq.get();
  init.recv_cq = base.cq.get();
  init.max_send_wr = init.max_recv_wr = max_wr;
  init.srq = srq;
  e.qp = base.pd->create_qp(init);
  n.call(srq != nullptr
             ? fmt::format("ibv_create_qp(pd, qp_type=IBV_QPT_RC, max_send_wr={}, srq=srq)", max_wr)
             : fmt::format("ibv_create_qp(pd, qp_type=IBV_QPT_RC, max_send_wr={}, "
                           "max_recv_wr={})",
                           max_wr, max_wr),
         fmt::format("qp_num {}", lab::hex(e.qp->qpn(), 6)));
}

// The SRQ limit, as ibv_query_srq reports it.
std::uint32_t query_limit(lab::Narrator& n, verbs::Srq& srq) {
  ibv_srq_attr a{};
  verbs::check_rc(srq.query(a), "ibv_query_srq");
  n.call("ibv_query_srq(srq, &attr)",
         fmt::format("max_wr {}  max_sge {}  srq_limit {}", a.max_wr, a.max_sge, a.srq_limit));
  return a.srq_limit;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const auto nq = static_cast<std::size_t>(o.qps);
  const int total = o.empty_srq ? 0 : o.qps * o.msgs;  // receives posted = messages sent
  const int msgs = o.empty_srq ? 1 : o.msgs;
  const auto limit = static_cast<std::uint32_t>(o.limit >= 0 ? o.limit : o.qps);
  if (!o.empty_srq && (limit < 1 || limit > static_cast<std::uint32_t>(total)))
    throw verbs::UsageError(tr(M("bad_limit"), limit, total));

  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  // Senders on one device, receivers on the other; each side's first
  // endpoint owns the device, PD, MR and CQ its other QPs share, and on the
  // receiver side the SRQ.
  n.step(tr(M("step.resources")));
  std::vector<lab::Endpoint> tx(nq), rx(nq);
  std::unique_ptr<verbs::Srq> srq_owner;
  // The QPs use the objects of endpoint 0 (its CQ, PD and, on the receiver,
  // the SRQ): they go first, last QP first, then the SRQ, before the
  // vectors destroy endpoint 0.
  struct Teardown {
    std::vector<lab::Endpoint>& rx;
    std::vector<lab::Endpoint>& tx;
    std::unique_ptr<verbs::Srq>& srq;
    ~Teardown() {
      for (auto* side : {&rx, &tx})
        for (auto it = side->rbegin(); it != side->rend(); ++it) it->qp.reset();
      srq.reset();
    }
  } teardown{rx, tx, srq_owner};
  tx[0].role = tr(M("sender"), 0);
  rx[0].role = tr(M("receiver"), 0);
  lab::EndpointSpec tspec;
  tspec.device = lab::requester_device(env, o.common);
  tspec.buffer = std::size_t{o.size} * nq * static_cast<std::size_t>(msgs);
  tspec.cqe = o.qps * msgs + 4;
  tspec.max_wr = static_cast<std::uint32_t>(msgs + 1);
  lab::open_endpoint(n, env, tx[0], tspec, o.common);
  for (std::size_t i = 1; i < nq; ++i) add_qp(n, tx, i, tr(M("sender"), i), tspec.max_wr, nullptr);
  open_receiver(n, env, rx[0], srq_owner, tspec.buffer, tspec.cqe,
                static_cast<std::uint32_t>(std::max(total, 1)), o.common);
  for (std::size_t i = 0; i < nq; ++i)
    add_qp(n, rx, i, tr(M("receiver"), i), tspec.max_wr, srq_owner.get());
  n.say(tr(M("why.srq")));

  n.step(tr(M("step.connect")));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  // With --empty-srq one RNR retry, so that every SEND ends (as lab 01's --no-recv).
  c.rnr_retry = o.empty_srq ? 1 : 7;
  for (std::size_t i = 0; i < nq; ++i) {
    tx[i].first_psn = lab::kRequesterFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    rx[i].first_psn = kReceiverFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    lab::connect_pair(n, tx[i], rx[i], c, o.common);
  }

  // The receives go to the SRQ, not to a QP: one pool for all.
  verbs::Srq& srq = *srq_owner;
  n.step(o.empty_srq ? tr(M("step.no_recv")) : tr(M("step.recv")));
  n.say(o.empty_srq ? tr(M("why.no_recv")) : tr(M("why.recv")));
  for (int k = 0; k < total; ++k) {
    ibv_sge sge = rx[0].sge(std::size_t{o.size} * static_cast<std::size_t>(k), o.size);
    ibv_recv_wr wr{};
    wr.wr_id = kFirstRecvWrId + static_cast<std::uint64_t>(k);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(srq.post_recv(&wr, &bad), "ibv_post_srq_recv");
    n.call("ibv_post_srq_recv(srq, wr)", "0");
    n.field("wr_id", std::to_string(wr.wr_id));
    n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(sge.addr), sge.length,
                                      lab::hex(sge.lkey, 8)));
  }

  // Arm the limit: the event fires when taking a WQE leaves fewer than
  // `limit`, i.e. with the message that leaves limit - 1 of the `total`.
  if (!o.empty_srq) {
    n.step(tr(M("step.limit")));
    ibv_srq_attr a{};
    a.srq_limit = limit;
    verbs::check_rc(srq.modify(a, IBV_SRQ_LIMIT), "ibv_modify_srq");
    n.call(fmt::format("ibv_modify_srq(srq, srq_limit={}, IBV_SRQ_LIMIT)", limit), "0");
    n.say(tr(M("why.limit"), limit, total, total - static_cast<int>(limit) + 1));
    (void)query_limit(n, srq);
  }

  // The senders take turns: round r posts one SEND on every sender QP.
  n.step(tr(M("step.send")));
  std::vector<ibv_sge> sges;
  sges.reserve(nq * static_cast<std::size_t>(msgs));
  for (int r = 0; r < msgs; ++r)
    for (std::size_t i = 0; i < nq; ++i) {
      const std::size_t slot = static_cast<std::size_t>(r) * nq + i;
      const auto m = message(static_cast<int>(i), r, o.size);
      std::memcpy(tx[0].buf() + slot * o.size, m.data(), o.size);
      sges.push_back(tx[0].sge(slot * o.size, o.size));
      ibv_send_wr wr{};
      wr.wr_id = 10 * (i + 1) + static_cast<std::uint64_t>(r);
      wr.sg_list = &sges.back();
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      ibv_send_wr* bad = nullptr;
      verbs::check_rc(tx[i].qp->post_send(&wr, &bad), "ibv_post_send");
      n.call(fmt::format("ibv_post_send({}, SEND {} bytes)", tx[i].role, o.size),
             fmt::format("wr_id {}", wr.wr_id));
    }

  // One CQ per side: the senders' completions, then the receivers'.
  n.step(tr(M("step.poll")));
  const auto n_msgs = nq * static_cast<std::size_t>(msgs);
  const auto tx_wcs = lab::poll_and_show(n, tx[0], n_msgs);
  const auto rx_wcs = o.empty_srq ? std::vector<ibv_wc>{} : lab::poll_and_show(n, rx[0], n_msgs);

  // Which receiver QP each completion came from, and which message its WQE holds.
  std::map<std::uint32_t, std::size_t> receiver_of;  // qp_num -> index
  for (std::size_t i = 0; i < nq; ++i) receiver_of[rx[i].qp->qpn()] = i;
  std::set<std::uint64_t> wr_ids;
  std::vector<int> rounds(nq, 0);  // per receiver QP: messages seen so far (RC keeps order)
  bool recv_ok = rx_wcs.size() == n_msgs;
  bool memory_ok = recv_ok;
  nlohmann::json jr = nlohmann::json::array();
  if (!rx_wcs.empty()) n.say(tr(M("table.head")));
  for (const auto& wc : rx_wcs) {
    const auto it = receiver_of.find(wc.qp_num);
    recv_ok = recv_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
              wc.byte_len == o.size && it != receiver_of.end() && wc.wr_id >= kFirstRecvWrId &&
              wc.wr_id < kFirstRecvWrId + static_cast<std::uint64_t>(total);
    wr_ids.insert(wc.wr_id);
    if (it == receiver_of.end() || wc.wr_id < kFirstRecvWrId ||
        wc.wr_id >= kFirstRecvWrId + static_cast<std::uint64_t>(total)) {
      memory_ok = false;
      continue;
    }
    const std::size_t q = it->second;
    const int r = rounds[q]++;
    const auto expect = message(static_cast<int>(q), r, o.size);
    const std::uint8_t* got = rx[0].buf() + (wc.wr_id - kFirstRecvWrId) * o.size;
    memory_ok = memory_ok && std::memcmp(got, expect.data(), o.size) == 0;
    const std::string text(reinterpret_cast<const char*>(got),
                           std::min<std::size_t>(o.size, fmt::format("QP{} msg{}", q, r).size()));
    n.say(tr(M("table.row"), wc.wr_id, lab::hex(wc.qp_num, 6), rx[q].role, text));
    auto j = lab::wc_json(rx[q].role, wc);
    j["qp_num"] = wc.qp_num;
    jr.push_back(j);
  }

  // The async event queue: one event, then nothing.
  std::vector<verbs::AsyncEvent> events;
  std::uint32_t limit_after = 0;
  if (!o.empty_srq) {
    n.step(tr(M("step.event")));
    n.say(tr(M("why.event")));
    for (auto ev = rx[0].ctx->get_async_event(std::chrono::seconds(2)); ev;
         ev = rx[0].ctx->get_async_event(std::chrono::milliseconds(200))) {
      n.call("ibv_get_async_event(ctx, &event)",
             fmt::format("{}{}", verbs::async_event_name(ev->type),
                         ev->srq == srq.get() ? "  element.srq = srq" : ""));
      n.call("ibv_ack_async_event(&event)", {});
      events.push_back(*ev);
    }
    if (events.empty()) n.say(tr(M("no_event")));
    limit_after = query_limit(n, srq);
    n.say(tr(M("why.rearm")));
  }

  n.step(tr(M("step.verify")));
  nlohmann::json wcs = nlohmann::json::array();
  for (const auto& wc : tx_wcs) {
    auto j = lab::wc_json("sender", wc);
    j["qp_num"] = wc.qp_num;
    wcs.push_back(j);
  }
  for (auto& j : jr) wcs.push_back(j);
  n.result()["completions"] = wcs;
  n.result()["qps"] = o.qps;
  n.result()["msgs"] = msgs;
  n.result()["size"] = o.size;
  n.result()["empty_srq"] = o.empty_srq;
  std::set<std::uint32_t> sender_qps;
  for (const auto& wc : tx_wcs) sender_qps.insert(wc.qp_num);
  if (o.empty_srq) {
    bool rnr = tx_wcs.size() == n_msgs;
    for (const auto& wc : tx_wcs) rnr = rnr && wc.status == IBV_WC_RNR_RETRY_EXC_ERR;
    n.check("rnr", tr(M("check.rnr")), rnr && sender_qps.size() == nq);
  } else {
    bool send_ok = tx_wcs.size() == n_msgs;
    for (const auto& wc : tx_wcs)
      send_ok = send_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
    n.check("send_ok", tr(M("check.send_ok")), send_ok && sender_qps.size() == nq);
    n.check("recv_ok", tr(M("check.recv_ok")), recv_ok);
    // Each receiver QP got the messages of its sender: msgs each.
    bool per_qp = true;
    for (const int r : rounds) per_qp = per_qp && r == msgs;
    n.check("per_qp", tr(M("check.per_qp"), msgs), per_qp);
    n.check("wqes", tr(M("check.wqes"), total), wr_ids.size() == static_cast<std::size_t>(total));
    n.check("bytes", tr(M("check.bytes")), memory_ok);
    std::size_t limit_events = 0;
    for (const auto& ev : events)
      if (ev.type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.srq == srq.get()) ++limit_events;
    n.result()["srq_limit"] = limit;
    n.result()["limit_events"] = limit_events;
    n.result()["srq_limit_after"] = limit_after;
    n.check("limit_event", tr(M("check.limit_event")),
            limit_events == 1 && events.size() == 1 && limit_after == 0);
  }

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // Per sender QP (the BTH's destination QP of what the receiver sends
    // back): ACKs, or with --empty-srq RNR NAKs.
    std::set<std::uint32_t> sends_to, acked, rnr_to;
    std::size_t sends = 0;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      // A SEND ends with SEND Only, or SEND Last when it spans packets.
      if (ib.bth.opcode == wire::opcode::kRcSendOnly ||
          ib.bth.opcode == wire::opcode::kRcSendLast) {
        ++sends;
        sends_to.insert(ib.bth.dest_qp);
      }
      if (ib.bth.opcode == wire::opcode::kRcAcknowledge && ib.aeth) {
        if (ib.aeth->kind() == wire::AckKind::RnrNak) rnr_to.insert(ib.bth.dest_qp);
        if (ib.aeth->kind() == wire::AckKind::Ack) acked.insert(ib.bth.dest_qp);
      }
    }
    if (o.empty_srq) {
      n.check("wire_rnr", tr(M("check.wire_rnr")), rnr_to == sender_qps && acked.empty());
    } else {
      n.check("wire_send", tr(M("check.wire_send"), total),
              sends == static_cast<std::size_t>(total) && sends_to.size() == nq &&
                  acked == sender_qps && rnr_to.empty());
    }
  }

  lab::suggest(n,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--qps", o.qps, tr(M("opt.qps")))
        ->check(lab::Range(1, 8))
        ->capture_default_str();
    app.add_option("-n,--msgs", o.msgs, tr(M("opt.msgs")))
        ->check(lab::Range(1, 64))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(16u, 4096u))
        ->capture_default_str();
    app.add_option("--limit", o.limit, tr(M("opt.limit")))->check(lab::Range(1, 512));
    app.add_flag("--empty-srq", o.empty_srq, tr(M("opt.empty_srq")));
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab14", "lab14-srq", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
