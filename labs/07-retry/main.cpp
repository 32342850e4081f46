// Lab 07: timeouts and retries.
//
// Read this file next to docs/en/09-lab07-retry.md. The requester keeps every
// unacknowledged packet until an ACK covers it. What happens when the wire
// misbehaves depends on what the responder can see:
//   - a request packet lost in the middle: the next one arrives out of
//     sequence, the responder NAKs (PSN sequence error) and the requester
//     goes back to the NAKed PSN (go-back-N);
//   - the ACK lost, the last packet lost, or the peer gone: nobody can NAK, so
//     the requester waits its local ACK timeout, resends, and after retry_cnt
//     resends gives up with IBV_WC_RETRY_EXC_ERR and moves the QP to ERR;
//   - no receive posted for a SEND: RNR NAK, wait min_rnr_timer, retry up to
//     rnr_retry times (7 = forever), then IBV_WC_RNR_RETRY_EXC_ERR.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/psn.hpp"
#include "rdmalab/wire/timers.hpp"

using namespace rdmalab;
using i18n::tr;
using lab07::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::string scenario = "acks";
  int timeout = 14;
  int retry_cnt = 3;
  int rnr_retry = 3;
  int min_rnr_timer = 14;
  double loss = 0.05;
  std::uint32_t psn_off = 1;
  std::uint32_t size = 3072;
  int iters = 4;
  int mtu = 1024;
  bool rxe_compat = false;
};

std::string seconds_text(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} ms", s * 1e3);
}

// The timeout arithmetic a student should be able to do by hand.
void show_timers(lab::Narrator& n, const Options& o) {
  if (const auto t = wire::ack_timeout_seconds(static_cast<unsigned>(o.timeout))) {
    const int tries = o.retry_cnt + 1;
    n.say(tr(M("table.timeout"), o.timeout, seconds_text(*t), o.retry_cnt, tries,
             seconds_text(*t * tries)));
  } else {
    n.say(tr(M("table.infinite")));
  }
  const double t18 = *wire::ack_timeout_seconds(18);
  n.say(tr(M("table.nccl"), seconds_text(t18), seconds_text(t18 * 8)));
  n.say(tr(M("table.perftest"), seconds_text(*wire::ack_timeout_seconds(14))));
  n.say(tr(M("table.rnr"), o.min_rnr_timer,
           *wire::rnr_timer_ms(static_cast<unsigned>(o.min_rnr_timer)), o.rnr_retry));
}

// Breaks the simulated wire as the scenario asks (requests go sim1 -> sim0,
// responses sim0 -> sim1). False when the wire cannot be broken (real verbs).
bool break_wire(lab::Narrator& n, const lab::Environment& env, const Options& o,
                std::uint32_t first_psn, std::uint32_t packets_per_message) {
  sim::LinkConfig* req = env.link("sim1", "sim0");
  sim::LinkConfig* resp = env.link("sim0", "sim1");
  if (req == nullptr || resp == nullptr) {
    n.say(tr(M("break.verbs")));
    return false;
  }
  if (o.scenario == "acks") {
    resp->drops.push_back(sim::DropRule::responses());
    n.say(tr(M("break.acks")));
  } else if (o.scenario == "psn") {
    const std::uint32_t psn = wire::psn_add(first_psn, o.psn_off);
    req->drops.push_back(sim::DropRule::psn(psn, 1));
    n.say(tr(M("break.psn"), lab::hex(psn, 6)));
  } else if (o.scenario == "dead") {
    req->drops.push_back(sim::DropRule::after(2 * packets_per_message));
    n.say(tr(M("break.dead")));
  } else if (o.scenario == "loss") {
    req->loss = resp->loss = o.loss;
    n.say(tr(M("break.loss"), o.loss));
  } else if (o.scenario == "rnr") {
    n.say(tr(M("break.rnr")));
  } else {
    n.say(tr(M("break.none")));
  }
  return true;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const bool rnr = o.scenario == "rnr";
  // One SEND in the RNR case: with several in flight, the responder also
  // NAKs the later ones as out of sequence, and those NAKs count against
  // retry_cnt, not rnr_retry (as in Soft-RoCE) — a separate lesson.
  const auto iters = rnr ? 1u : static_cast<std::uint32_t>(o.iters);
  const std::uint32_t per_msg =
      (o.size + static_cast<std::uint32_t>(o.mtu) - 1) / static_cast<std::uint32_t>(o.mtu);
  const bool forever = o.rxe_compat && o.retry_cnt == 7;

  n.step(tr(M("step.backend")));
  verbs::SimBackendOptions sim_opts;
  sim_opts.fabric.rxe.retry_cnt_7_infinite = o.rxe_compat;
  lab::Environment env = lab::open_environment(n, o.common, sim_opts);

  n.step(tr(M("step.table")));
  show_timers(n, o);

  n.step(tr(M("step.resources")));
  lab::Endpoint rq, rs;
  rq.role = tr(M("requester"));
  rs.role = tr(M("responder"));
  lab::EndpointSpec spec;
  spec.buffer = std::size_t{o.size} * iters;
  spec.cqe = 2 * o.iters + 2;
  spec.max_wr = iters + 1;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, rq, rs, spec, responder, o.common);
  rq.first_psn = 0x000000;
  rs.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  c.timeout = static_cast<std::uint8_t>(o.timeout);
  c.retry_cnt = static_cast<std::uint8_t>(o.retry_cnt);
  c.rnr_retry = static_cast<std::uint8_t>(o.rnr_retry);
  c.min_rnr_timer = static_cast<std::uint8_t>(o.min_rnr_timer);
  lab::connect_pair(n, rq, rs, c, o.common, true);

  n.step(tr(M("step.break")));
  // On real verbs the lab cannot break the wire: every scenario but rnr
  // (which needs no help from the wire) then runs as "none".
  const bool broken = break_wire(n, env, o, rq.first_psn, per_msg);
  const std::string scenario = broken || rnr ? o.scenario : "none";

  // WRITEs (or SENDs, for the RNR case), all posted at once.
  n.step(tr(M("step.post")));
  for (std::size_t i = 0; i < std::size_t{o.size} * iters; ++i)
    rq.buf()[i] = static_cast<std::uint8_t>(i * 3 + 1);
  lab::WrChain chain(rq, iters, o.size, rnr ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, rs.mr->va(),
                     rs.mr->rkey());
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(rq.qp->post_send(chain.head(), &bad), "ibv_post_send");
  n.call(tr(M("call.post_chain"), iters, rnr ? "SEND" : "WRITE", o.size), "0");

  // Which status the rules predict for the first completion that is not a success.
  std::string expected = "IBV_WC_SUCCESS";
  if ((scenario == "acks" || scenario == "dead") && o.timeout != 0 && !forever)
    expected = "IBV_WC_RETRY_EXC_ERR";
  if (rnr && o.rnr_retry != 7) expected = "IBV_WC_RNR_RETRY_EXC_ERR";

  n.step(tr(M("step.poll")));
  std::vector<ibv_wc> wcs;
  if (forever || o.timeout == 0 || (rnr && o.rnr_retry == 7)) {
    // Retrying forever: let 30 tries' worth of virtual time pass, then look.
    if (sim::Fabric* f = env.fabric()) {
      const double t = wire::ack_timeout_seconds(static_cast<unsigned>(o.timeout)).value_or(1.0);
      f->run_for(static_cast<sim::Time>(30 * t * 1e9));
    }
    ibv_wc batch[16];
    const int got = rq.cq->poll(batch);
    wcs.assign(batch, batch + std::max(got, 0));
    expected = "(none: still retrying)";
  } else {
    wcs = lab::poll_and_show(n, rq, iters);
  }
  n.say(tr(M("expected"), expected));

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  for (const auto& wc : wcs) j.push_back(lab::wc_json("requester", wc));
  n.result()["completions"] = j;
  n.result()["scenario"] = scenario;
  n.result()["expected"] = expected;
  const ibv_wc* first_bad = nullptr;
  for (const auto& wc : wcs)
    if (wc.status != IBV_WC_SUCCESS) {
      first_bad = &wc;
      break;
    }
  if (forever || (rnr && o.rnr_retry == 7) || o.timeout == 0) {
    // Still retrying: whatever completed before the wire broke succeeded,
    // and nothing has failed.
    n.check("status", tr(M("check.status")), first_bad == nullptr && wcs.size() < iters);
  } else if (scenario == "loss") {
    // Random loss: either every message got through, or the transport gave up.
    n.check("status", tr(M("check.status")),
            first_bad == nullptr ? wcs.size() == iters : first_bad->status == IBV_WC_RETRY_EXC_ERR);
  } else {
    const std::string got = first_bad != nullptr
                                ? std::string(verbs::wc_status_name(first_bad->status))
                                : (wcs.size() == iters ? "IBV_WC_SUCCESS" : "(missing)");
    n.check("status", tr(M("check.status")), got == expected, got);
  }
  if (first_bad != nullptr) {
    bool flushed = true;
    for (const ibv_wc* w = first_bad + 1; w < wcs.data() + wcs.size(); ++w)
      flushed = flushed && w->status == IBV_WC_WR_FLUSH_ERR;
    n.check("flush", tr(M("check.flush")), flushed && wcs.size() == iters);
  }
  if (expected == "IBV_WC_SUCCESS" && first_bad == nullptr)
    n.check("bytes", tr(M("check.bytes")),
            std::memcmp(rs.buf(), rq.buf(), std::size_t{o.size} * iters) == 0);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    const auto count = [&](const char* e) {
      const auto it = facts->events.find(e);
      return it == facts->events.end() ? std::uint64_t{0} : it->second;
    };
    if (expected == "IBV_WC_RETRY_EXC_ERR") {
      n.check("timeouts", tr(M("check.timeouts")),
              count("timeout") == static_cast<std::uint64_t>(o.retry_cnt));
      bool gap_ok = count("timeout") > 0;
      for (const dissect::PacketRecord* rec : facts->roce())
        for (const dissect::Event& e : rec->events)
          if (e.type == dissect::EventType::Timeout) gap_ok = gap_ok && e.code == o.timeout;
      n.check("gap", tr(M("check.gap")), gap_ok);
    }
    if (scenario == "psn" && o.psn_off + 1 < per_msg * iters)
      n.check("nak", tr(M("check.nak")), count("nak_psn_sequence") >= 1 && count("go_back_n") >= 1);
    if (rnr) {
      // One RNR NAK per try: the first, then rnr_retry resends (7: no end).
      const auto retries = static_cast<std::uint64_t>(o.rnr_retry);
      const bool seen = o.rnr_retry == 7
                            ? count("rnr_nak") >= 1 && count("retransmission") >= 1
                            : count("rnr_nak") == retries + 1 && count("retransmission") >= retries;
      n.check("rnr_wire", tr(M("check.rnr_wire")), seen);
    }
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--scenario", o.scenario, tr(M("opt.scenario")))
        ->check(lab::IsMember({"acks", "psn", "dead", "loss", "rnr", "none"}))
        ->capture_default_str();
    app.add_option("--timeout", o.timeout, tr(M("opt.timeout")))
        ->check(lab::Range(0, 31))
        ->capture_default_str();
    app.add_option("--retry-cnt", o.retry_cnt, tr(M("opt.retry_cnt")))
        ->check(lab::Range(0, 7))
        ->capture_default_str();
    app.add_option("--rnr-retry", o.rnr_retry, tr(M("opt.rnr_retry")))
        ->check(lab::Range(0, 7))
        ->capture_default_str();
    app.add_option("--min-rnr-timer", o.min_rnr_timer, tr(M("opt.min_rnr_timer")))
        ->check(lab::Range(0, 31))
        ->capture_default_str();
    app.add_option("--loss", o.loss, tr(M("opt.loss")))
        ->check(lab::Range(0.0, 0.5))
        ->capture_default_str();
    app.add_option("--psn", o.psn_off, tr(M("opt.psn_off")))
        ->check(lab::Range(0u, 1000u))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 20))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1, 64))
        ->capture_default_str();
    app.add_flag("--rxe-compat", o.rxe_compat, tr(M("opt.rxe")));
  };
  return lab::run(argc, argv, "lab07", "lab07-retry", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
