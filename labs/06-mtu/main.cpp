// Lab 06: path MTU and segmentation.
//
// Read this file next to docs/en/08-lab06-mtu.md. The classic example: a
// 3072-byte RDMA WRITE at path MTU 1024 leaves as WRITE First, Middle, Last
// with three consecutive PSNs; the RETH rides on the First only, the AckReq
// bit on the Last only.
//
// One process plays both sides by default. With --listen PORT it is the
// target alone, with --connect HOST:PORT the writer alone, on two hosts: the
// target's VA, rkey and length then travel in the out-of-band message, or,
// with --cm, in a SEND right after the in-band connection (as rping does).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/setup.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/psn.hpp"

using namespace rdmalab;
using i18n::tr;
using lab06::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 3072;
  int mtu = 1024;
  int iters = 2;
  bool cm = false;  // connect in band with rdma_cm instead of out of band
};

std::uint32_t packets_for(std::uint32_t size, int mtu) {
  const auto m = static_cast<std::uint32_t>(mtu);
  return size == 0 ? 1 : (size + m - 1) / m;
}

void run_lab(lab::Narrator& n, const Options& o) {
  const auto iters = static_cast<std::uint32_t>(o.iters);
  const std::size_t total = std::size_t{o.size} * iters;
  // Both sides in one process, or the writer (--connect) or the target
  // (--listen) alone; connected out of band, or with --cm by rdma_cm.
  lab::SetupSpec spec;
  // No exchange step of its own: the connection messages are shown in the
  // connect step.
  spec.steps = {
      tr(M("step.backend")), tr(M("step.resources")), tr(M("step.cm")), tr(M("step.info")), {},
      tr(M("step.connect"))};
  spec.info_note = tr(M("why.info"));
  spec.active_role = tr(M("writer"));
  spec.passive_role = tr(M("target"));
  spec.active.buffer = total;
  // Room for every WR of the chain (and the buffer message with --cm) in
  // the send queue and the CQ: -n goes up to 64.
  spec.active.max_wr = std::max<std::uint32_t>(spec.active.max_wr, iters + 1);
  spec.active.cqe = std::max(spec.active.cqe, static_cast<int>(iters) + 2);
  spec.passive = spec.active;
  spec.passive.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  spec.connect.mtu = o.mtu;
  spec.active_first_psn =
      0x000000;  // as in the course's example: PSNs 0..5 for two 3072-byte writes
  spec.cm = o.cm;
  spec.one_sided = true;
  // The target's QP is at RTR before the writer may write.
  spec.ready_after_connect = true;
  spec.after_environment = [&](lab::Setup&) {
    n.step(tr(M("step.plan")));
    for (int mtu : {256, 512, 1024, 2048, 4096})
      n.say(tr(M("plan.row"), mtu, packets_for(o.size, mtu),
               mtu == o.mtu && !o.cm ? tr(M("plan.chosen")) : ""));
    n.say(tr(M("why.mtu")));
  };
  // The CM chooses the path MTU itself, so -m does not apply there: rdma_cm
  // takes it from the port (the netdev's MTU on RoCE).
  int path_mtu = o.mtu;
  spec.after_cm = [&](lab::Setup& s) {
    path_mtu = verbs::mtu_bytes(
        s.mine().ctx->query_port(static_cast<std::uint8_t>(o.common.ib_port)).active_mtu);
    n.say(tr(M("cm_mtu"), path_mtu, packets_for(o.size, path_mtu)));
  };
  lab::Setup s(n, o.common, spec);
  lab::Endpoint& wr = s.active;
  lab::Endpoint& tg = s.passive;
  const bool writes = s.plays_active();
  const bool targets = s.plays_passive();
  const verbs::ConnInfo& remote = s.remote;
  if (writes && remote.len < total) throw verbs::UsageError(tr(M("too_small"), remote.len, total));

  // The bytes are a pattern both sides know, so that a target on another
  // host can check them.
  n.step(tr(M("step.write")));
  std::vector<std::uint8_t> expected(total);
  for (std::size_t i = 0; i < total; ++i) expected[i] = static_cast<std::uint8_t>(i * 31 + 7);
  if (writes) {
    for (std::size_t i = 0; i < wr.size(); ++i) wr.buf()[i] = static_cast<std::uint8_t>(i * 31 + 7);
    lab::WrChain writes_chain(wr, iters, o.size, IBV_WR_RDMA_WRITE, remote.va, remote.rkey);
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(wr.qp->post_send(writes_chain.head(), &bad), "ibv_post_send");
    n.call(tr(M("call.post_chain"), iters, o.size), "0");
  }

  // The target learns that the writer is done only from the writer: the
  // word "done" over TCP, or with --cm its disconnect (CM DREQ).
  n.step(tr(M("step.poll")));
  const auto wcs = writes ? lab::poll_and_show(n, wr, iters) : std::vector<ibv_wc>{};
  if (!s.one_process()) {
    if (targets) n.say(tr(M("wait_done")));
    s.say_done();
    s.disconnect();
  }

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  bool ok = wcs.size() == iters;
  for (const auto& wc : wcs) {
    j.push_back(lab::wc_json("writer", wc));
    ok = ok && wc.status == IBV_WC_SUCCESS;
  }
  n.result()["completions"] = j;
  n.result()["size"] = o.size;
  n.result()["mtu"] = path_mtu;
  n.result()["packets_per_message"] = packets_for(o.size, path_mtu);
  if (writes) n.check("write_ok", tr(M("check.write_ok")), ok);
  if (targets)
    n.check("bytes", tr(M("check.bytes")), std::memcmp(tg.buf(), expected.data(), total) == 0);
  if (s.one_process()) s.disconnect();

  if (const auto facts = lab::finish_wire(n, s.env, o.common.capture)) {
    // Walk the requests: positions must run First, Middle..., Last per message.
    std::vector<const wire::OpcodeInfo*> ops;
    std::vector<std::uint32_t> psns, lens;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      const auto* info = wire::find_opcode(ib.bth.opcode);
      if (info == nullptr || info->operation != wire::Operation::Write) continue;
      ops.push_back(info);
      psns.push_back(ib.bth.psn);
      lens.push_back(static_cast<std::uint32_t>(ib.payload_length));
    }
    const std::uint32_t per = packets_for(o.size, path_mtu);
    bool seg_ok = ops.size() == std::size_t{per} * iters, pay_ok = seg_ok, psn_ok = seg_ok;
    // With --cm the CM chose the writer's first PSN.
    const std::uint32_t first = o.cm && !psns.empty() ? psns[0] : wr.first_psn;
    std::array<int, 4> counts{};
    for (std::size_t k = 0; seg_ok && k < ops.size(); ++k) {
      const std::size_t idx = k % per;
      const wire::Position want = per == 1         ? wire::Position::Only
                                  : idx == 0       ? wire::Position::First
                                  : idx == per - 1 ? wire::Position::Last
                                                   : wire::Position::Middle;
      seg_ok = ops[k]->position == want;
      ++counts[static_cast<std::size_t>(ops[k]->position)];
      if (idx + 1 < per) pay_ok = pay_ok && lens[k] == static_cast<std::uint32_t>(path_mtu);
      psn_ok = psn_ok && psns[k] == wire::psn_add(first, static_cast<std::int64_t>(k));
    }
    n.say(tr(M("count"), o.common.capture, counts[0], counts[1], counts[2], counts[3]));
    n.check("segments", tr(M("check.segments")), seg_ok);
    n.check("payload", tr(M("check.payload")), pay_ok);
    n.check("psn", tr(M("check.psn")), psn_ok);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 24))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1, 64))
        ->capture_default_str();
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab06", "lab06-mtu", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
