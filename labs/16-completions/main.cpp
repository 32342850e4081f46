// Lab 16: completions — which work requests produce one, and how a program
// learns that one is there without spinning.
//
// Read this file next to docs/en/23-lab16-completions.md. One process plays
// both sides: a sender with two RC QPs (one created with sq_sig_all = 1, one
// with sq_sig_all = 0) and a receiver with two RC QPs, each side with one CQ
// created on a completion channel. The lab shows, in turn:
//   - sq_sig_all = 1: every WR completes; sq_sig_all = 0: only those with
//     IBV_SEND_SIGNALED, here one in every --every;
//   - what happens when nothing is signalled and nothing has completed:
//     exactly max_send_wr posts succeed and the next fails with ENOMEM (the
//     receiver holds its receives back, so the SENDs get RNR NAKs and stay
//     in the queue);
//   - a completion channel: ibv_req_notify_cq arms a CQ for one event,
//     ibv_get_cq_event sleeps until it, ibv_ack_cq_events acknowledges it;
//   - the re-arm race: a completion that arrives before the arm fires no
//     event, so a program polls once more after arming, before sleeping;
//   - solicited events: a CQ armed with solicited_only wakes for a receive
//     whose message had the BTH's SE bit (IBV_SEND_SOLICITED) and not for
//     another;
//   - CQ moderation (ibv_modify_cq), which rxe (and the simulator, as rxe)
//     refuses with EOPNOTSUPP;
//   - every event acknowledged before the CQs are destroyed.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab16::M;

namespace {

// Sender QP 0 (sq_sig_all = 1) starts at PSN 0x000100, QP 1 at 0x000200;
// receiver QP 0 at 0x000800, QP 1 at 0x000900.
constexpr std::uint32_t kReceiverFirstPsn = 0x000800;
constexpr std::uint32_t kPsnStride = 0x100;
// wr_ids: WRITEs 1.., the unsignalled SENDs 101.., the signalled SEND after
// them 199, the channel's WRITEs 201 and 202, the two SENDs of the
// solicited step 301 and 302; receives 1001...
constexpr std::uint64_t kOverflowWrId = 101;
constexpr std::uint64_t kProofWrId = 199;
constexpr std::uint64_t kEventWrId = 201;
constexpr std::uint64_t kRaceWrId = 202;
constexpr std::uint64_t kUnsolicitedWrId = 301;
constexpr std::uint64_t kSolicitedWrId = 302;
constexpr std::uint64_t kFirstRecvWrId = 1001;
// How long to wait for an event that should come, and for one that should
// not (wall time on a real device; on the simulator virtual time, which ends
// sooner, as soon as the fabric is idle).
constexpr auto kEventWait = std::chrono::seconds(5);
constexpr auto kNoEventWait = std::chrono::milliseconds(200);

struct Options {
  lab::CommonOptions common;
  std::uint32_t depth = 15;
  int every = 4;
  int writes = 12;
  std::uint32_t size = 64;
  int mtu = 1024;
};

// Events read from a side's channel and acknowledged.
struct Tally {
  unsigned read = 0;
  unsigned acked = 0;
};

// One side's device, GID, PD, MR, completion channel and the CQ on it, in
// endpoint `e` (its QPs come later).
void open_side(lab::Narrator& n, lab::Environment& env, lab::Endpoint& e,
               std::unique_ptr<verbs::CompChannel>& channel, const std::string& device,
               std::size_t buffer, int cqe, const lab::CommonOptions& o) {
  e.ctx = env.backend->open(device);
  const std::string& dev = e.ctx->info().name;
  n.call(fmt::format("ibv_open_device({})", dev), {});
  lab::choose_gid(n, e, o);
  e.pd = e.ctx->alloc_pd();
  n.call("ibv_alloc_pd(ctx)", {});
  e.storage.assign((buffer + 7) / 8, 0);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  e.mr = e.pd->reg_mr(e.buf(), buffer, access);
  n.call(fmt::format("ibv_reg_mr(pd, buf, {}, IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE)",
                     buffer),
         fmt::format("lkey {}  rkey {}", lab::hex(e.mr->lkey(), 8), lab::hex(e.mr->rkey(), 8)));
  channel = e.ctx->create_comp_channel();
  n.call("ibv_create_comp_channel(ctx)", {});
  e.cq = e.ctx->create_cq(cqe, *channel);
  n.call(fmt::format("ibv_create_cq(ctx, cqe={}, NULL, channel, 0)", cqe), {});
}

// QP `i` of a side, on the objects of the side's endpoint 0.
void add_qp(lab::Narrator& n, std::vector<lab::Endpoint>& side, std::size_t i,
            const std::string& role, std::uint32_t max_send_wr, std::uint32_t max_recv_wr,
            bool sig_all) {
  lab::Endpoint& base = side[0];
  lab::Endpoint& e = side[i];
  e.role = role;
  e.same_port_as(base);
  verbs::QpInitAttrs init;
  init.send_cq = base.cq.get();
  init.recv_cq = base.cq.get();
  init.max_send_wr = max_send_wr;
  init.max_recv_wr = max_recv_wr;
  init.sq_sig_all = sig_all;
  e.qp = base.pd->create_qp(init);
  n.call(fmt::format("ibv_create_qp(pd, IBV_QPT_RC, max_send_wr={}, max_recv_wr={}, "
                     "sq_sig_all={})",
                     max_send_wr, max_recv_wr, sig_all ? 1 : 0),
         fmt::format("qp_num {}", lab::hex(e.qp->qpn(), 6)));
}

// A WRITE of `size` bytes from slot `slot` of the sender's buffer to the
// same slot of the receiver's.
int post_write(lab::Endpoint& from, lab::Endpoint& base, const lab::Endpoint& to_base,
               std::uint64_t wr_id, std::size_t slot, std::uint32_t size, unsigned flags) {
  ibv_sge sge = base.sge(slot * size, size);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to_base.mr->addr()) + slot * size;
  wr.wr.rdma.rkey = to_base.mr->rkey();
  ibv_send_wr* bad = nullptr;
  return from.qp->post_send(&wr, &bad);
}

int post_send(lab::Endpoint& from, lab::Endpoint& base, std::uint64_t wr_id, std::size_t slot,
              std::uint32_t size, unsigned flags) {
  ibv_sge sge = base.sge(slot * size, size);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = flags;
  ibv_send_wr* bad = nullptr;
  return from.qp->post_send(&wr, &bad);
}

void post_recv(lab::Endpoint& on, lab::Endpoint& base, std::uint64_t wr_id, std::size_t slot,
               std::uint32_t size) {
  ibv_sge sge = base.sge(slot * size, size);
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  verbs::check_rc(on.qp->post_recv(&wr, &bad), "ibv_post_recv");
}

// Lets the traffic in flight go on for `d` without polling: on the
// simulator the fabric runs until idle or for `d` of virtual time, on a real
// device the lab sleeps `d`. 100 ms is far longer than a message and its ACK
// take on one link.
void settle(const lab::Environment& env,
            std::chrono::milliseconds d = std::chrono::milliseconds(100)) {
  if (sim::Fabric* f = env.fabric()) {
    (void)f->run(f->now() + static_cast<sim::Time>(d.count()) * sim::kMillisecond);
    return;
  }
  std::this_thread::sleep_for(d);
}

// Polls without waiting: what the CQ holds now.
std::vector<ibv_wc> poll_now(verbs::CompletionQueue& cq) {
  std::vector<ibv_wc> out;
  ibv_wc batch[16];
  for (int got = cq.poll(batch); got > 0; got = cq.poll(batch))
    out.insert(out.end(), batch, batch + got);
  return out;
}

std::string errno_name(int err) {
  switch (err) {
    case ENOMEM: return "ENOMEM";
    case EINVAL: return "EINVAL";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EBUSY: return "EBUSY";
    default: return fmt::format("errno {}", err);
  }
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const std::uint32_t depth = o.depth;
  if ((depth & (depth + 1)) != 0 || depth < 3 || depth > 127)
    throw verbs::UsageError(tr(M("bad_depth"), depth));
  if (o.writes < o.every || o.writes > static_cast<int>(depth))
    throw verbs::UsageError(tr(M("bad_writes"), o.writes, o.every, depth));
  const auto every = static_cast<std::uint64_t>(o.every);
  const auto writes = static_cast<std::uint64_t>(o.writes);
  const std::uint64_t signalled = writes / every;

  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  // The channels outlive the CQs created on them: declared first, destroyed
  // last.
  std::unique_ptr<verbs::CompChannel> tx_channel, rx_channel;
  n.step(tr(M("step.resources")));
  std::vector<lab::Endpoint> tx(2), rx(2);
  // The QPs use endpoint 0's CQ and PD: they go first, before the vectors
  // destroy endpoint 0.
  struct Teardown {
    std::vector<lab::Endpoint>& rx;
    std::vector<lab::Endpoint>& tx;
    ~Teardown() {
      for (auto* side : {&rx, &tx})
        for (auto it = side->rbegin(); it != side->rend(); ++it) it->qp.reset();
    }
  } teardown{rx, tx};
  // Slots of `size` bytes: enough for every message the lab sends.
  const std::size_t slots = depth + 8;
  const std::size_t buffer = slots * o.size;
  // Completions that can be outstanding on a CQ: both QPs' send and receive
  // queues.
  const int cqe = static_cast<int>(4 * (depth + 2));
  const std::uint32_t max_recv_wr = depth + 2;
  open_side(n, env, tx[0], tx_channel, lab::requester_device(env, o.common), buffer, cqe, o.common);
  add_qp(n, tx, 0, tr(M("sender"), 0), depth, max_recv_wr, true);
  add_qp(n, tx, 1, tr(M("sender"), 1), depth, max_recv_wr, false);
  open_side(n, env, rx[0], rx_channel, lab::responder_device(env, o.common), buffer, cqe, o.common);
  add_qp(n, rx, 0, tr(M("receiver"), 0), depth, max_recv_wr, false);
  add_qp(n, rx, 1, tr(M("receiver"), 1), depth, max_recv_wr, false);
  n.say(tr(M("why.channel")));
  n.say(tr(M("why.depth"), depth));

  n.step(tr(M("step.connect")));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  for (std::size_t i = 0; i < 2; ++i) {
    tx[i].first_psn = lab::kRequesterFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    rx[i].first_psn = kReceiverFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    // Both sender QPs WRITE into the receiver's one MR (endpoint 0's, whose
    // VA and rkey the first exchange carries).
    lab::connect_pair(n, tx[i], rx[i], c, o.common, i == 0);
  }
  verbs::CompletionQueue& tx_cq = *tx[0].cq;
  verbs::CompletionQueue& rx_cq = *rx[0].cq;

  // 1. sq_sig_all = 1: `every` WRITEs with send_flags 0, each completes.
  n.step(tr(M("step.sig_all")));
  n.say(tr(M("why.sig_all")));
  for (std::uint64_t i = 1; i <= every; ++i) {
    verbs::check_rc(post_write(tx[0], tx[0], rx[0], i, i, o.size, 0), "ibv_post_send");
    n.call(fmt::format("ibv_post_send({}, RDMA WRITE, wr_id {}, send_flags 0)", tx[0].role, i),
           "0");
  }
  const auto all_wcs = lab::poll_and_show(n, tx[0], every);
  bool sig_all_ok = all_wcs.size() == every;
  for (std::size_t k = 0; k < all_wcs.size(); ++k)
    sig_all_ok = sig_all_ok && all_wcs[k].status == IBV_WC_SUCCESS && all_wcs[k].wr_id == k + 1 &&
                 all_wcs[k].opcode == IBV_WC_RDMA_WRITE;

  // 2. sq_sig_all = 0: only every `every`-th WRITE is signalled.
  n.step(tr(M("step.every"), every));
  for (std::uint64_t i = 1; i <= writes; ++i) {
    const unsigned flags = i % every == 0 ? IBV_SEND_SIGNALED : 0;
    verbs::check_rc(post_write(tx[1], tx[0], rx[0], i, i, o.size, flags), "ibv_post_send");
    n.call(fmt::format("ibv_post_send({}, RDMA WRITE, wr_id {}, send_flags {})", tx[1].role, i,
                       flags != 0 ? "IBV_SEND_SIGNALED" : "0"),
           "0");
  }
  n.say(tr(M("why.every"), writes, every, 2 * every, signalled));
  const auto every_wcs = lab::poll_and_show(n, tx[0], signalled);
  // Nothing else may come: wait a little longer for a completion that must not.
  const auto extra = tx_cq.wait(1, kNoEventWait);
  if (extra.empty()) n.say(tr(M("no_more")));
  bool every_ok = every_wcs.size() == signalled && extra.empty();
  for (std::size_t k = 0; k < every_wcs.size(); ++k)
    every_ok = every_ok && every_wcs[k].status == IBV_WC_SUCCESS &&
               every_wcs[k].wr_id == (k + 1) * every && every_wcs[k].qp_num == tx[1].qp->qpn();
  for (const auto& wc : extra) lab::show_wc(n, tx[0].role, wc);

  // 3. Nothing signalled, nothing completes: post until the queue is full.
  n.step(tr(M("step.overflow")));
  n.say(tr(M("why.gate"), rx[1].role));
  std::uint32_t accepted = 0;
  int post_rc = 0;
  for (std::uint32_t k = 0; k <= depth; ++k) {
    post_rc = post_send(tx[1], tx[0], kOverflowWrId + k, k, o.size, 0);
    if (post_rc != 0) break;
    ++accepted;
  }
  n.call(tr(M("posted"), accepted), "0");
  // Older releases of rdma-core's rxe provider return -ENOMEM, newer ones ENOMEM.
  const int post_err = post_rc < 0 ? -post_rc : post_rc;
  if (post_rc != 0)
    n.call(tr(M("post_failed"), accepted + 1, post_rc, errno_name(post_err)),
           verbs::hint_for("ibv_post_send", post_err));
  else
    n.say(tr(M("post_never_failed"), accepted));
  n.say(tr(M("why.overflow")));
  // A few ms with no receive: the first SEND's RNR NAKs (min_rnr_timer 14 is
  // 1.28 ms between tries), while the rest of the queue waits behind it.
  settle(env, std::chrono::milliseconds(5));
  const bool overflow_ok = accepted == depth && post_err == ENOMEM;

  // Release them: the receives, then one signalled SEND as the proof.
  n.say(tr(M("why.release"), accepted + 1));
  for (std::uint32_t k = 0; k <= accepted; ++k)
    post_recv(rx[1], rx[0], kFirstRecvWrId + k, k, o.size);
  n.call(fmt::format("ibv_post_recv({}) × {}", rx[1].role, accepted + 1), "0");
  const auto released = lab::poll_and_show(n, rx[0], accepted);
  settle(env);
  const auto unsignalled = poll_now(tx_cq);
  n.say(tr(M("cq_empty"), unsignalled.size()));
  verbs::check_rc(post_send(tx[1], tx[0], kProofWrId, accepted, o.size, IBV_SEND_SIGNALED),
                  "ibv_post_send");
  n.call(
      fmt::format("ibv_post_send({}, SEND, wr_id {}, IBV_SEND_SIGNALED)", tx[1].role, kProofWrId),
      "0");
  const auto proof = lab::poll_and_show(n, tx[0], 1);
  const auto proof_recv = lab::poll_and_show(n, rx[0], 1);
  bool release_ok = released.size() == accepted && unsignalled.empty() && proof.size() == 1 &&
                    proof[0].wr_id == kProofWrId && proof[0].status == IBV_WC_SUCCESS &&
                    proof_recv.size() == 1 && proof_recv[0].status == IBV_WC_SUCCESS;
  for (const auto& wc : released) release_ok = release_ok && wc.status == IBV_WC_SUCCESS;

  Tally tx_tally, rx_tally;
  const auto side_of = [&](const verbs::CompletionQueue* cq) {
    return tr(M("cq_of"), tr(cq == &tx_cq ? M("sender_side") : M("receiver_side")));
  };

  // 4. A completion channel: arm, let a completion come, sleep until its event.
  n.step(tr(M("step.event")));
  verbs::check_rc(tx_cq.req_notify(false), "ibv_req_notify_cq");
  n.call("ibv_req_notify_cq(tx_cq, 0)", "0");
  n.say(tr(M("why.arm")));
  verbs::check_rc(post_write(tx[0], tx[0], rx[0], kEventWrId, 1, o.size, 0), "ibv_post_send");
  n.call(fmt::format("ibv_post_send({}, RDMA WRITE, wr_id {})", tx[0].role, kEventWrId), "0");
  verbs::CompletionQueue& woke = tx_channel->wait_event(kEventWait);
  ++tx_tally.read;
  n.call("ibv_get_cq_event(tx_channel, &cq, &ctx)", tr(M("event_for"), side_of(&woke)));
  woke.ack_events(1);
  ++tx_tally.acked;
  n.call("ibv_ack_cq_events(cq, 1)", {});
  n.say(tr(M("why.ack")));
  const auto event_wcs = lab::poll_and_show(n, tx[0], 1);
  const bool event_ok = &woke == &tx_cq && event_wcs.size() == 1 &&
                        event_wcs[0].wr_id == kEventWrId && event_wcs[0].status == IBV_WC_SUCCESS;

  // 5. The re-arm race.
  n.step(tr(M("step.race")));
  n.say(tr(M("why.race_wrong")));
  const auto before = poll_now(tx_cq);
  n.call("ibv_poll_cq(tx_cq)", fmt::format("{}", before.size()));
  verbs::check_rc(post_write(tx[0], tx[0], rx[0], kRaceWrId, 2, o.size, 0), "ibv_post_send");
  n.call(fmt::format("ibv_post_send({}, RDMA WRITE, wr_id {})", tx[0].role, kRaceWrId), "0");
  settle(env);  // it completes now, unseen
  verbs::check_rc(tx_cq.req_notify(false), "ibv_req_notify_cq");
  n.call("ibv_req_notify_cq(tx_cq, 0)", "0");
  verbs::CompletionQueue* missed = tx_channel->get_event(kNoEventWait);
  if (missed != nullptr) {
    ++tx_tally.read;
    n.call("ibv_get_cq_event(tx_channel, &cq, &ctx)", tr(M("event_for"), side_of(missed)));
    missed->ack_events(1);
    ++tx_tally.acked;
  } else {
    n.call("ibv_get_cq_event(tx_channel, &cq, &ctx)", tr(M("no_event"), kNoEventWait.count()));
    n.say(tr(M("why.race_missed")));
  }
  n.say(tr(M("why.race_right")));
  const auto found = poll_now(tx_cq);
  n.call("ibv_poll_cq(tx_cq)", fmt::format("{}", found.size()));
  for (const auto& wc : found) lab::show_wc(n, tx[0].role, wc);
  const bool race_ok = before.empty() && missed == nullptr && found.size() == 1 &&
                       found[0].wr_id == kRaceWrId && found[0].status == IBV_WC_SUCCESS;
  // The sender's CQ stays armed: the next completion on it (the SENDs below)
  // fires an event, read and acknowledged at the end.

  // 6. Solicited events.
  n.step(tr(M("step.solicited")));
  post_recv(rx[0], rx[0], kFirstRecvWrId + 100, depth + 2, o.size);
  post_recv(rx[0], rx[0], kFirstRecvWrId + 101, depth + 3, o.size);
  n.call(fmt::format("ibv_post_recv({}) × 2", rx[0].role), "0");
  verbs::check_rc(rx_cq.req_notify(true), "ibv_req_notify_cq");
  n.call("ibv_req_notify_cq(rx_cq, 1)", "0");
  n.say(tr(M("why.solicited_arm")));
  verbs::check_rc(post_send(tx[0], tx[0], kUnsolicitedWrId, depth + 2, o.size, 0), "ibv_post_send");
  n.call(
      fmt::format("ibv_post_send({}, SEND, wr_id {}, send_flags 0)", tx[0].role, kUnsolicitedWrId),
      "0");
  settle(env);
  verbs::CompletionQueue* unsolicited_event = rx_channel->get_event(kNoEventWait);
  if (unsolicited_event != nullptr) {
    ++rx_tally.read;
    n.call("ibv_get_cq_event(rx_channel, &cq, &ctx)",
           tr(M("event_for"), side_of(unsolicited_event)));
    unsolicited_event->ack_events(1);
    ++rx_tally.acked;
  } else {
    n.call("ibv_get_cq_event(rx_channel, &cq, &ctx)", tr(M("no_event"), kNoEventWait.count()));
  }
  // Counted without taking them out: the CQ is polled after the second SEND.
  n.say(tr(M("why.unsolicited")));
  verbs::check_rc(post_send(tx[0], tx[0], kSolicitedWrId, depth + 3, o.size, IBV_SEND_SOLICITED),
                  "ibv_post_send");
  n.call(fmt::format("ibv_post_send({}, SEND, wr_id {}, IBV_SEND_SOLICITED)", tx[0].role,
                     kSolicitedWrId),
         "0");
  verbs::CompletionQueue& rx_woke = rx_channel->wait_event(kEventWait);
  ++rx_tally.read;
  n.call("ibv_get_cq_event(rx_channel, &cq, &ctx)", tr(M("event_for"), side_of(&rx_woke)));
  rx_woke.ack_events(1);
  ++rx_tally.acked;
  n.call("ibv_ack_cq_events(cq, 1)", {});
  const auto solicited_wcs = lab::poll_and_show(n, rx[0], 2);
  n.say(tr(M("receiver_cq_holds"), solicited_wcs.size()));
  n.say(tr(M("why.solicited")));
  const auto send_wcs = lab::poll_and_show(n, tx[0], 2);
  bool solicited_ok = unsolicited_event == nullptr && &rx_woke == &rx_cq &&
                      solicited_wcs.size() == 2 && send_wcs.size() == 2;
  for (const auto& wc : solicited_wcs)
    solicited_ok = solicited_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
  for (const auto& wc : send_wcs) solicited_ok = solicited_ok && wc.status == IBV_WC_SUCCESS;

  // 7. CQ moderation.
  n.step(tr(M("step.moderation")));
  const verbs::DeviceAttrs attrs = tx[0].ctx->query_device();
  n.call("ibv_query_device_ex(ctx)",
         tr(M("device_caps"), tx[0].ctx->info().name, attrs.max_cq_count, attrs.max_cq_period));
  const int mod_rc = tx_cq.moderate(4, 100);
  const int mod_err = mod_rc < 0 ? -mod_rc : mod_rc;
  n.call("ibv_modify_cq(tx_cq, {IBV_CQ_ATTR_MODERATE, cq_count 4, cq_period 100})",
         mod_rc == 0 ? std::string("0")
                     : fmt::format("{} ({})", errno_name(mod_err), std::strerror(mod_err)));
  const bool can_moderate = attrs.max_cq_count > 0;
  n.say(can_moderate ? tr(M("why.moderation"), 4, 100) : tr(M("why.moderation_none")));
  const bool moderation_ok =
      can_moderate ? mod_rc == 0 : (mod_err == EOPNOTSUPP || mod_err == ENOTSUP);

  // 8. Every event read is acknowledged; then the CQs and channels may go.
  n.step(tr(M("step.ack")));
  for (auto* side : {&tx_channel, &rx_channel}) {
    Tally& t = side == &tx_channel ? tx_tally : rx_tally;
    while (verbs::CompletionQueue* cq = (*side)->get_event(kNoEventWait)) {
      ++t.read;
      n.call(fmt::format("ibv_get_cq_event({}, &cq, &ctx)",
                         side == &tx_channel ? "tx_channel" : "rx_channel"),
             tr(M("event_for"), side_of(cq)));
      cq->ack_events(1);
      ++t.acked;
      n.call("ibv_ack_cq_events(cq, 1)", {});
    }
  }
  n.say(tr(M("tally"), side_of(&tx_cq), tx_tally.read, tx_tally.acked));
  n.say(tr(M("tally"), side_of(&rx_cq), rx_tally.read, rx_tally.acked));
  n.say(tr(M("why.destroy")));

  n.step(tr(M("step.verify")));
  nlohmann::json wcs = nlohmann::json::array();
  for (const auto* list : {&all_wcs, &every_wcs, &proof, &event_wcs, &found, &send_wcs})
    for (const auto& wc : *list) {
      auto j = lab::wc_json("sender", wc);
      j["qp_num"] = wc.qp_num;
      wcs.push_back(j);
    }
  for (const auto* list : {&released, &proof_recv, &solicited_wcs})
    for (const auto& wc : *list) {
      auto j = lab::wc_json("receiver", wc);
      j["qp_num"] = wc.qp_num;
      wcs.push_back(j);
    }
  n.result()["completions"] = wcs;
  n.result()["depth"] = depth;
  n.result()["every"] = every;
  n.result()["writes"] = writes;
  n.result()["signalled_completions"] = every_wcs.size();
  n.result()["posted_before_enomem"] = accepted;
  n.result()["post_errno"] = post_err;
  n.result()["unsignalled_completions"] = unsignalled.size();
  n.result()["events"] = {{"sender_read", tx_tally.read},
                          {"sender_acked", tx_tally.acked},
                          {"receiver_read", rx_tally.read},
                          {"receiver_acked", rx_tally.acked}};
  n.result()["moderation"] = {{"max_cq_count", attrs.max_cq_count},
                              {"max_cq_period", attrs.max_cq_period},
                              {"errno", mod_err}};
  n.check("sig_all", tr(M("check.sig_all"), every), sig_all_ok);
  n.check("every", tr(M("check.every"), writes, every, signalled), every_ok);
  n.check("overflow", tr(M("check.overflow"), depth), overflow_ok,
          fmt::format("{} posted, then {}", accepted, post_rc == 0 ? "0" : errno_name(post_err)));
  n.check("release", tr(M("check.release")), release_ok);
  n.check("event", tr(M("check.event")), event_ok);
  n.check("race", tr(M("check.race")), race_ok);
  n.check("solicited", tr(M("check.solicited")), solicited_ok);
  n.check("moderation", tr(M("check.moderation")), moderation_ok);
  // The sender's CQ: the event of step 4, and the one its re-arm in step 5
  // left for the SENDs of step 6; the receiver's: the solicited one.
  n.check("acked", tr(M("check.acked")),
          tx_tally.read == tx_tally.acked && rx_tally.read == rx_tally.acked &&
              tx_tally.read == 2 && rx_tally.read == 1);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // SEND packets (Only, or Last of a longer one) and their SE bits; RNR
    // NAKs to the sender QP whose receiver held its receives back.
    std::size_t se_set = 0;
    bool se_right = false;
    bool rnr_seen = false;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      if (ib.bth.opcode == wire::opcode::kRcSendOnly ||
          ib.bth.opcode == wire::opcode::kRcSendLast) {
        if (ib.bth.solicited) {
          ++se_set;
          se_right = ib.bth.dest_qp == rx[0].qp->qpn();
        }
      }
      if (ib.bth.opcode == wire::opcode::kRcAcknowledge && ib.aeth &&
          ib.aeth->kind() == wire::AckKind::RnrNak && ib.bth.dest_qp == tx[1].qp->qpn())
        rnr_seen = true;
    }
    n.check("wire_se", tr(M("check.wire_se")), se_set == 1 && se_right);
    n.check("wire_rnr", tr(M("check.wire_rnr")), rnr_seen);
  }

  lab::suggest(n,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--depth", o.depth, tr(M("opt.depth")))->capture_default_str();
    app.add_option("--every", o.every, tr(M("opt.every")))
        ->check(lab::Range(1, 127))
        ->capture_default_str();
    app.add_option("--writes", o.writes, tr(M("opt.writes")))
        ->check(lab::Range(1, 127))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(16u, 4096u))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab16", "lab16-completions", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
