// Lab 06: path MTU and segmentation.
//
// Read this file next to docs/en/08-lab06-mtu.md. The classic example: a
// 3072-byte RDMA WRITE at path MTU 1024 leaves as WRITE First, Middle, Last
// with three consecutive PSNs; the RETH rides on the First only, the AckReq
// bit on the Last only.
#include <fmt/format.h>

#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
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
};

std::uint32_t packets_for(std::uint32_t size, int mtu) {
  const auto m = static_cast<std::uint32_t>(mtu);
  return size == 0 ? 1 : (size + m - 1) / m;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const auto iters = static_cast<std::uint32_t>(o.iters);
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  n.step(tr(M("step.plan")));
  for (int mtu : {256, 512, 1024, 2048, 4096})
    n.say(
        tr(M("plan.row"), mtu, packets_for(o.size, mtu), mtu == o.mtu ? tr(M("plan.chosen")) : ""));
  n.say(tr(M("why.mtu")));

  n.step(tr(M("step.resources")));
  lab::Endpoint wr, tg;
  wr.role = tr(M("writer"));
  tg.role = tr(M("target"));
  lab::EndpointSpec spec;
  spec.buffer = std::size_t{o.size} * iters;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, wr, tg, spec, responder, o.common);

  n.step(tr(M("step.connect")));
  wr.first_psn = 0x000000;  // as in the course's example: PSNs 0..5 for two 3072-byte writes
  tg.first_psn = 0x000200;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::connect_pair(n, wr, tg, c, o.common, true);

  n.step(tr(M("step.write")));
  for (std::size_t i = 0; i < wr.size(); ++i) wr.buf()[i] = static_cast<std::uint8_t>(i * 31 + 7);
  lab::WrChain writes(wr, iters, o.size, IBV_WR_RDMA_WRITE, tg.mr->va(), tg.mr->rkey());
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(wr.qp->post_send(writes.head(), &bad), "ibv_post_send");
  n.call(fmt::format("ibv_post_send(qp, {} chained WRITE WRs of {} bytes)", iters, o.size), "0");

  n.step(tr(M("step.poll")));
  const auto wcs = lab::poll_and_show(n, wr, iters);

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  bool ok = wcs.size() == iters;
  for (const auto& wc : wcs) {
    j.push_back(lab::wc_json("writer", wc));
    ok = ok && wc.status == IBV_WC_SUCCESS;
  }
  n.result()["completions"] = j;
  n.result()["size"] = o.size;
  n.result()["mtu"] = o.mtu;
  n.result()["packets_per_message"] = packets_for(o.size, o.mtu);
  n.check("write_ok", tr(M("check.write_ok")), ok);
  n.check("bytes", tr(M("check.bytes")),
          std::memcmp(tg.buf(), wr.buf(), std::size_t{o.size} * iters) == 0);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // Walk the requests: positions must run First, Middle..., Last per message.
    std::vector<const wire::OpcodeInfo*> ops;
    std::vector<std::uint32_t> psns, lens;
    for (const auto& f : n.result()["wire"]["frames"]) {
      const auto* info = wire::find_opcode(f["opcode"].get<std::uint8_t>());
      if (info == nullptr || info->operation != wire::Operation::Write) continue;
      ops.push_back(info);
      psns.push_back(f["psn"]);
      lens.push_back(f["payload_len"]);
    }
    const std::uint32_t per = packets_for(o.size, o.mtu);
    bool seg_ok = ops.size() == std::size_t{per} * iters, pay_ok = seg_ok, psn_ok = seg_ok;
    std::array<int, 4> counts{};
    for (std::size_t k = 0; seg_ok && k < ops.size(); ++k) {
      const std::size_t idx = k % per;
      const wire::Position want = per == 1         ? wire::Position::Only
                                  : idx == 0       ? wire::Position::First
                                  : idx == per - 1 ? wire::Position::Last
                                                   : wire::Position::Middle;
      seg_ok = ops[k]->position == want;
      ++counts[static_cast<std::size_t>(ops[k]->position)];
      if (idx + 1 < per) pay_ok = pay_ok && lens[k] == static_cast<std::uint32_t>(o.mtu);
      psn_ok = psn_ok && psns[k] == wire::psn_add(wr.first_psn, static_cast<std::int64_t>(k));
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
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(CLI::Range(1u, 1u << 24))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab06", "lab06-mtu", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
