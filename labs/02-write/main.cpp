// Lab 02: RDMA WRITE.
//
// Read this file next to docs/en/04-lab02-write.md. The writer puts bytes into
// the target's registered memory. The target has to register its buffer with
// IBV_ACCESS_REMOTE_WRITE and hand out its virtual address and rkey; after
// that, its CPU takes no part: no receive WQE, no completion.
#include <fmt/format.h>

#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab02::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 3072;
  int mtu = 1024;
  std::uint32_t offset = 256;
};

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  // The target's buffer is larger than the write, so that we can check the
  // bytes around the written range stay as they were.
  n.step(tr(M("step.resources")));
  lab::Endpoint wr, tg;
  wr.role = tr(M("writer"));
  tg.role = tr(M("target"));
  lab::EndpointSpec spec;
  spec.buffer = o.size;
  lab::EndpointSpec responder = spec;
  responder.buffer = o.offset + o.size + 256;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, wr, tg, spec, responder, o.common);
  n.say(tr(M("why.access")));

  // One-sided: the writer must know where to write. The line below is what
  // would travel over TCP between two hosts.
  n.step(tr(M("step.exchange")));
  wr.first_psn = 0x000100;
  tg.first_psn = 0x000200;
  n.say(tr(M("why.exchange")));

  n.step(tr(M("step.connect")));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::connect_pair(n, wr, tg, c, o.common, true);

  // The WRITE: a local SGE (what to send) and the remote address and rkey
  // (where it lands). The NIC splits it into packets of the path MTU.
  n.step(tr(M("step.write")));
  for (std::uint32_t i = 0; i < o.size; ++i) wr.buf()[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::memset(tg.buf(), 0xEE, tg.size());
  ibv_sge sge = wr.sge(0, o.size);
  ibv_send_wr swr{};
  swr.wr_id = 1;
  swr.sg_list = &sge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_RDMA_WRITE;
  swr.send_flags = IBV_SEND_SIGNALED;
  swr.wr.rdma.remote_addr = tg.mr->va() + o.offset;
  swr.wr.rdma.rkey = tg.mr->rkey();
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(wr.qp->post_send(&swr, &bad), "ibv_post_send");
  n.call("ibv_post_send(qp, wr)", "0");
  n.field("opcode", "IBV_WR_RDMA_WRITE");
  n.field("sg_list[0]", fmt::format("length {} lkey {}", sge.length, lab::hex(sge.lkey, 8)));
  n.field("wr.rdma.remote_addr", lab::hex(swr.wr.rdma.remote_addr), tr(M("why.remote")));
  n.field("wr.rdma.rkey", lab::hex(swr.wr.rdma.rkey, 8));

  n.step(tr(M("step.poll")));
  const auto wcs = lab::poll_and_show(n, wr, 1);
  ibv_wc none[1];
  const int target_wcs = tg.cq->poll(none);
  n.say(tr(M("target_cq"), target_wcs));
  n.say(tr(M("why.silent")));

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  for (const auto& wc : wcs) j.push_back(lab::wc_json("writer", wc));
  n.result()["completions"] = j;
  n.result()["size"] = o.size;
  n.result()["mtu"] = o.mtu;
  n.check("write_ok", tr(M("check.write_ok")),
          wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS && wcs[0].opcode == IBV_WC_RDMA_WRITE);
  n.check("bytes", tr(M("check.bytes")), std::memcmp(tg.buf() + o.offset, wr.buf(), o.size) == 0);
  bool untouched = true;
  for (std::size_t i = 0; i < tg.size(); ++i)
    if ((i < o.offset || i >= o.offset + o.size) && tg.buf()[i] != 0xEE) untouched = false;
  n.check("untouched", tr(M("check.untouched")), untouched);
  n.check("target_silent", tr(M("check.target_silent")), target_wcs == 0);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // The first packet of the message carries the RETH: the target's VA and rkey.
    bool reth_ok = false, acked = false;
    for (const auto& f : n.result()["wire"]["frames"]) {
      if (f["opcode"] == wire::opcode::kRcWriteFirst || f["opcode"] == wire::opcode::kRcWriteOnly)
        reth_ok = f.contains("reth_va") && f["reth_va"] == swr.wr.rdma.remote_addr &&
                  f["reth_rkey"] == swr.wr.rdma.rkey && f["reth_len"] == o.size;
      if (f["opcode"] == wire::opcode::kRcAcknowledge) acked = true;
    }
    n.check("wire", tr(M("check.wire")), reth_ok && acked);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"), o.common.capture), tr(M("try.3"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(CLI::Range(1u, 1u << 24))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("--offset", o.offset, tr(M("opt.offset")))
        ->check(CLI::Range(0u, 1u << 20))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab02", "lab02-write", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
