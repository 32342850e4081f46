// Lab 04: atomics (FetchAdd, CmpSwap).
//
// Read this file next to docs/en/06-lab04-atomics.md. Two clients each own an
// RC QP connected to its own QP on the counter's owner; all of the owner's
// QPs share one PD, so both can use the rkey of the one registered counter.
// The owner's NIC executes the atomics one at a time: increments never get
// lost, and CmpSwap tells success by returning the value it found.
//
// One process plays every side by default. With --listen PORT it is the
// counter's owner alone, with --connect HOST:PORT the two clients alone, on
// two hosts: one TCP connection carries both QP pairs' connection messages
// (the first with the counter's VA and rkey). There is no --cm: in band it
// would take two CM connections, one per QP pair, on each side.
#include <fmt/format.h>

#include <algorithm>
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
using lab04::M;

namespace {

// The FetchAdds of round k are wr_id k on both clients; the CmpSwaps are 99.
constexpr std::uint64_t kCmpSwapWrId = 99;
// The clients' QPs start at PSN 0x000100 and 0x000200, the owner's at these.
constexpr std::uint32_t kOwnerFirstPsn = 0x000800;
constexpr std::uint32_t kPsnStride = 0x100;

struct Options {
  lab::CommonOptions common;
  int iters = 5;
  std::uint64_t add = 1;
};

// One atomic work request on `qp`: its result lands in the 8 bytes of `result`.
void post_atomic(lab::Endpoint& client, ibv_wr_opcode op, std::uint64_t remote_va,
                 std::uint32_t rkey, std::uint64_t compare_add, std::uint64_t swap,
                 std::uint64_t wr_id) {
  ibv_sge sge = client.sge(0, 8);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = remote_va;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = compare_add;
  wr.wr.atomic.swap = swap;
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(client.qp->post_send(&wr, &bad), "ibv_post_send");
}

// The race: the clients take turns posting, and their requests interleave on
// the owner's NIC. Each completion goes into `wcs_json`; the original values
// the FetchAdds returned come back.
struct Race {
  std::vector<std::uint64_t> originals;
  bool ok = true;  // every FetchAdd completed with IBV_WC_SUCCESS
};
Race fetch_add_race(lab::Narrator& n, std::array<lab::Endpoint, 2>& clients, std::uint64_t va,
                    std::uint32_t rkey, const Options& o, nlohmann::json& wcs_json) {
  Race r;
  for (int k = 0; k < o.iters; ++k) {
    for (std::size_t i = 0; i < 2; ++i)
      post_atomic(clients[i], IBV_WR_ATOMIC_FETCH_AND_ADD, va, rkey, o.add, 0,
                  static_cast<std::uint64_t>(k));
    for (std::size_t i = 0; i < 2; ++i) {
      const auto wcs = clients[i].cq->wait(1, std::chrono::seconds(30));
      r.ok = r.ok && wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS &&
             wcs[0].opcode == IBV_WC_FETCH_ADD;
      if (!wcs.empty()) {
        lab::show_wc(n, clients[i].role, wcs[0]);
        wcs_json.push_back(lab::wc_json(clients[i].role, wcs[0]));
      }
      r.originals.push_back(clients[i].storage[0]);
      n.field("original", std::to_string(clients[i].storage[0]));
    }
  }
  return r;
}

// Two CmpSwaps from one client, both expecting `expect` and swapping in 1000:
// each returns the value it found, which is how the client knows whether it
// swapped. Completions go into `wcs_json`, the outcomes into `cas_json`.
struct CmpSwaps {
  std::array<std::uint64_t, 2> found{};
  bool completed = true;  // both completed with IBV_WC_SUCCESS
};
CmpSwaps cmp_swap_twice(lab::Narrator& n, lab::Endpoint& client, std::uint64_t va,
                        std::uint32_t rkey, std::uint64_t expect, nlohmann::json& wcs_json,
                        nlohmann::json& cas_json) {
  CmpSwaps c;
  for (std::size_t k = 0; k < 2; ++k) {
    post_atomic(client, IBV_WR_ATOMIC_CMP_AND_SWP, va, rkey, expect, 1000, kCmpSwapWrId);
    const auto wcs = lab::poll_and_show(n, client, 1);
    for (const auto& wc : wcs) wcs_json.push_back(lab::wc_json(client.role, wc));
    c.found[k] = client.storage[0];
    const bool swapped = c.found[k] == expect;
    n.say(tr(M("cas_result"), expect, 1000, c.found[k],
             swapped ? tr(M("swapped")) : tr(M("not_swapped"))));
    c.completed = c.completed && wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS;
    cas_json.push_back({{"compare", expect}, {"found", c.found[k]}, {"swapped", swapped}});
  }
  return c;
}

// The owner's second QP reuses the first one's device, PD and counter: a QP
// may use any MR of its PD.
void add_owner_qp(lab::Narrator& n, std::array<lab::Endpoint, 2>& owner) {
  owner[1].role = tr(M("server_for"), 2);
  owner[1].same_port_as(owner[0]);
  owner[1].cq = owner[0].ctx->create_cq(16);
  verbs::QpInitAttrs init;
  init.send_cq = owner[1].cq.get();
  init.recv_cq = owner[1].cq.get();
  owner[1].qp = owner[0].pd->create_qp(init);
  n.call("ibv_create_qp(pd, IBV_QPT_RC)",
         fmt::format("qp_num {}", lab::hex(owner[1].qp->qpn(), 6)));
}

// The same lab as two processes: the clients (--connect) race and check
// what their atomics returned; the owner (--listen) serves them without its
// CPU and reads the counter in its own memory when the clients say so.
void run_two_process(lab::Narrator& n, const Options& o, lab::Role role) {
  const bool owns = role == lab::Role::Passive;
  const std::uint64_t total = 2 * static_cast<std::uint64_t>(o.iters) * o.add;
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  std::optional<verbs::OobChannel> peer = lab::open_peer(n, o.common);

  n.step(tr(M("step.resources")));
  std::array<lab::Endpoint, 2> clients;
  std::array<lab::Endpoint, 2> owner;
  lab::EndpointSpec spec;
  spec.buffer = 8;
  spec.device = o.common.device;
  if (owns) {
    spec.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
    owner[0].role = tr(M("server_for"), 1);
    lab::open_endpoint(n, env, owner[0], spec, o.common);
    add_owner_qp(n, owner);
    owner[0].storage[0] = 0;
  } else {
    for (std::size_t i = 0; i < 2; ++i) {
      clients[i].role = tr(M("client"), i + 1);
      lab::open_endpoint(n, env, clients[i], spec, o.common);
    }
  }
  n.say(tr(M("why.align")));

  // One TCP connection, two connection messages: the first pair's carries
  // the counter's VA, rkey and length (the second QP uses the same rkey).
  n.step(tr(M("step.exchange")));
  n.say(tr(M("why.two_process")));
  std::array<verbs::ConnInfo, 2> remote;
  lab::ConnectSpec c;
  c.max_rd_atomic = c.max_dest_rd_atomic = 4;
  for (std::size_t i = 0; i < 2; ++i) {
    lab::Endpoint& me = owns ? owner[i] : clients[i];
    me.first_psn = (owns ? kOwnerFirstPsn : lab::kRequesterFirstPsn) +
                   kPsnStride * static_cast<std::uint32_t>(i);
    remote[i] = lab::exchange_with_peer(n, *peer, me, c.mtu, owns && i == 0);
  }
  n.step(tr(M("step.connect")));
  for (std::size_t i = 0; i < 2; ++i)
    lab::connect_rc(n, owns ? owner[i] : clients[i], remote[i], c, o.common);
  if (!owns && remote[0].len < 8) throw verbs::UsageError(tr(M("too_small"), remote[0].len));

  nlohmann::json j = nlohmann::json::array();
  if (owns) {
    // Both QPs are at RTS and the counter is 0: the clients may start.
    lab::tell_peer(*peer, "ready");
    n.step(tr(M("step.fetch_add")));
    n.say(tr(M("owner_waits")));
    lab::await_peer(*peer, "raced");
    const std::uint64_t after_race = owner[0].storage[0];
    n.say(tr(M("counter"), after_race));
    n.result()["counter_after_race"] = after_race;
    n.check("total", tr(M("check.total")), after_race == total,
            after_race == total ? "" : tr(M("same_options"), after_race, total));
    lab::tell_peer(*peer, "counted");

    n.step(tr(M("step.cmp_swap")));
    n.say(tr(M("owner_waits")));
    lab::await_peer(*peer, "done");
    const std::uint64_t final_value = owner[0].storage[0];
    n.say(tr(M("counter"), final_value));
    n.result()["counter_final"] = final_value;

    n.step(tr(M("step.verify")));
    // None: an atomic completes at the requester only (the check below).
    n.result()["completions"] = nlohmann::json::array();
    n.check("final", tr(M("check.final")), final_value == 1000);
    ibv_wc none[1];
    n.check("owner_silent", tr(M("check.owner_silent")),
            owner[0].cq->poll(none) == 0 && owner[1].cq->poll(none) == 0);
    return;
  }

  lab::await_peer(*peer, "ready");
  n.step(tr(M("step.fetch_add")));
  n.say(tr(M("why.fetch_add")));
  const Race race = fetch_add_race(n, clients, remote[0].va, remote[0].rkey, o, j);
  const std::vector<std::uint64_t>& originals = race.originals;
  // The clients cannot read the counter: the last increment's original
  // value plus the increment is what they expect it to hold now.
  const std::uint64_t guess = *std::max_element(originals.begin(), originals.end()) + o.add;
  n.say(tr(M("guess"), guess));
  lab::tell_peer(*peer, "raced");
  lab::await_peer(*peer, "counted");

  n.step(tr(M("step.cmp_swap")));
  n.say(tr(M("why.cmp_swap")));
  nlohmann::json cas = nlohmann::json::array();
  const CmpSwaps swaps = cmp_swap_twice(n, clients[0], remote[0].va, remote[0].rkey, guess, j, cas);
  const std::array<std::uint64_t, 2>& found = swaps.found;
  // The first CmpSwap returned what the counter held after the race (and
  // swapped); the second found the value the first one swapped in.
  const bool cas_ok = swaps.completed && found[0] == guess && found[1] != guess && found[1] == 1000;
  lab::tell_peer(*peer, "done");

  n.step(tr(M("step.verify")));
  n.result()["completions"] = j;
  n.result()["cmp_swap"] = cas;
  n.result()["counter_after_race"] = found[0];
  n.check("fa_ok", tr(M("check.fa_ok")), race.ok);
  n.check("total", tr(M("check.total")), found[0] == total,
          found[0] == total ? "" : tr(M("same_options"), found[0], total));
  n.check("unique", tr(M("check.unique")),
          std::set<std::uint64_t>(originals.begin(), originals.end()).size() == originals.size());
  n.check("cas", tr(M("check.cas")), cas_ok);
}

void run_lab(lab::Narrator& n, const Options& o) {
  if (const lab::Role role = lab::role_of(o.common); role != lab::Role::Both) {
    run_two_process(n, o, role);
    lab::suggest(n, {tr(M("try.1")), tr(M("try.3"))});
    return;
  }
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  // The owner registers the counter once; each client gets its own QP there.
  n.step(tr(M("step.resources")));
  std::array<lab::Endpoint, 2> clients;
  std::array<lab::Endpoint, 2> owner;
  lab::EndpointSpec spec;
  spec.buffer = 8;
  spec.device = lab::requester_device(env, o.common);
  for (int i = 0; i < 2; ++i) {
    clients[static_cast<std::size_t>(i)].role = tr(M("client"), i + 1);
    lab::open_endpoint(n, env, clients[static_cast<std::size_t>(i)], spec, o.common);
  }
  spec.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  spec.device = lab::responder_device(env, o.common);
  owner[0].role = tr(M("server_for"), 1);
  lab::open_endpoint(n, env, owner[0], spec, o.common);
  add_owner_qp(n, owner);
  n.say(tr(M("why.align")));
  const std::uint64_t counter_va = owner[0].mr->va();
  const std::uint32_t counter_rkey = owner[0].mr->rkey();
  owner[0].storage[0] = 0;

  n.step(tr(M("step.connect")));
  for (std::size_t i = 0; i < 2; ++i) {
    clients[i].first_psn = lab::kRequesterFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    owner[i].first_psn = kOwnerFirstPsn + kPsnStride * static_cast<std::uint32_t>(i);
    lab::ConnectSpec c;
    c.max_rd_atomic = c.max_dest_rd_atomic = 4;
    // Only the first owner QP's endpoint holds the counter's MR; both use its rkey.
    lab::connect_pair(n, clients[i], owner[i], c, o.common, i == 0);
  }

  // The race: the clients take turns posting, and their requests interleave
  // on the owner's NIC.
  n.step(tr(M("step.fetch_add")));
  n.say(tr(M("why.fetch_add")));
  nlohmann::json j = nlohmann::json::array();
  const Race race = fetch_add_race(n, clients, counter_va, counter_rkey, o, j);
  const std::vector<std::uint64_t>& originals = race.originals;
  const std::uint64_t after_race = owner[0].storage[0];
  n.say(tr(M("counter"), after_race));

  // CmpSwap twice from client 1: once with the right expectation, once with a stale one.
  n.step(tr(M("step.cmp_swap")));
  n.say(tr(M("why.cmp_swap")));
  nlohmann::json cas = nlohmann::json::array();
  const CmpSwaps swaps =
      cmp_swap_twice(n, clients[0], counter_va, counter_rkey, after_race, j, cas);
  // After a successful swap the counter is 1000, so the second CmpSwap,
  // still expecting the pre-swap value, must have failed.
  const bool cas_ok = swaps.completed && owner[0].storage[0] == 1000;
  n.say(tr(M("counter"), owner[0].storage[0]));

  n.step(tr(M("step.verify")));
  n.result()["completions"] = j;
  n.result()["cmp_swap"] = cas;
  n.result()["counter_after_race"] = after_race;
  n.check("fa_ok", tr(M("check.fa_ok")), race.ok);
  n.check("total", tr(M("check.total")),
          after_race == 2 * static_cast<std::uint64_t>(o.iters) * o.add);
  n.check("unique", tr(M("check.unique")),
          std::set<std::uint64_t>(originals.begin(), originals.end()).size() == originals.size());
  n.check("cas", tr(M("check.cas")), cas_ok);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    std::size_t requests = 0, acks_with_orig = 0;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      if (ib.bth.opcode == wire::opcode::kRcFetchAdd ||
          ib.bth.opcode == wire::opcode::kRcCompareSwap)
        ++requests;
      if (ib.bth.opcode == wire::opcode::kRcAtomicAcknowledge && ib.atomic_ack_eth)
        ++acks_with_orig;
    }
    const std::size_t total = 2 * static_cast<std::size_t>(o.iters) + 2;
    n.check("wire", tr(M("check.wire")), requests == total && acks_with_orig == total);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1, 10000))
        ->capture_default_str();
    app.add_option("--add", o.add, tr(M("opt.add")))
        ->check(lab::Range(1, 1 << 20))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab04", "lab04-atomics", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
