// Lab 02: RDMA WRITE.
//
// Read this file next to docs/en/04-lab02-write.md. The writer puts bytes into
// the target's registered memory. The target has to register its buffer with
// IBV_ACCESS_REMOTE_WRITE and hand out its virtual address and rkey; after
// that, its CPU takes no part: no receive WQE, no completion.
//
// One process plays both sides by default. With --listen PORT it is the
// target alone, with --connect HOST:PORT the writer alone, on two hosts: the
// target's VA, rkey and length then travel in the out-of-band message, or,
// with --cm, in a SEND right after the in-band connection (as rping does).
#include <fmt/format.h>

#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/setup.hpp"
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
  bool cm = false;  // connect in band with rdma_cm instead of out of band
};

// The writer's one work request.
constexpr std::uint64_t kWriteWrId = 1;

void run_lab(lab::Narrator& n, const Options& o) {
  // Both sides in one process, or the writer (--connect) or the target
  // (--listen) alone; connected out of band, or with --cm by rdma_cm. The
  // target's buffer is larger than the write, so that we can check the bytes
  // around the written range stay as they were.
  lab::SetupSpec spec;
  spec.steps = {tr(M("step.backend")), tr(M("step.resources")), tr(M("step.cm")),
                tr(M("step.info")),    tr(M("step.exchange")),  tr(M("step.connect"))};
  spec.info_note = tr(M("why.info"));
  // One-sided: the writer must know where to write. Between two hosts the
  // target's VA, rkey and length travel over TCP in the connection message.
  spec.exchange_note = tr(M("why.exchange"));
  spec.active_role = tr(M("writer"));
  spec.passive_role = tr(M("target"));
  spec.active.buffer = o.size;
  spec.passive.buffer = o.offset + o.size + 256;
  spec.passive.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  spec.connect.mtu = o.mtu;
  spec.cm = o.cm;
  spec.one_sided = true;
  // The target's QP is at RTR and its buffer filled before the writer may write.
  spec.ready_after_connect = true;
  spec.after_open = [&](lab::Setup& s) {
    n.say(tr(M("why.access")));
    if (s.plays_passive()) std::memset(s.passive.buf(), lab::kUntouchedFill, s.passive.size());
  };
  lab::Setup s(n, o.common, spec);
  lab::Endpoint& wr = s.active;
  lab::Endpoint& tg = s.passive;
  const bool writes = s.plays_active();
  const bool targets = s.plays_passive();
  const verbs::ConnInfo& remote = s.remote;
  if (writes && remote.len < std::uint64_t{o.offset} + o.size)
    throw verbs::UsageError(tr(M("too_small"), remote.len, o.offset + o.size));

  // The WRITE: a local SGE (what to send) and the remote address and rkey
  // (where it lands). The NIC splits it into packets of the path MTU. The
  // bytes are a pattern both sides know, so a target on another host can
  // check them.
  n.step(tr(M("step.write")));
  std::vector<std::uint8_t> expected(o.size);
  for (std::uint32_t i = 0; i < o.size; ++i) expected[i] = static_cast<std::uint8_t>(i * 7 + 1);
  if (writes) std::memcpy(wr.buf(), expected.data(), o.size);
  ibv_send_wr swr{};
  if (writes) {
    ibv_sge sge = wr.sge(0, o.size);
    swr.wr_id = kWriteWrId;
    swr.sg_list = &sge;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_RDMA_WRITE;
    swr.send_flags = IBV_SEND_SIGNALED;
    swr.wr.rdma.remote_addr = remote.va + o.offset;
    swr.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(wr.qp->post_send(&swr, &bad), "ibv_post_send");
    n.call("ibv_post_send(qp, wr)", "0");
    n.field("opcode", "IBV_WR_RDMA_WRITE");
    n.field("sg_list[0]", fmt::format("length {} lkey {}", sge.length, lab::hex(sge.lkey, 8)));
    n.field("wr.rdma.remote_addr", lab::hex(swr.wr.rdma.remote_addr), tr(M("why.remote")));
    n.field("wr.rdma.rkey", lab::hex(swr.wr.rdma.rkey, 8));
  }

  // The target learns that the writer is done only from the writer: the
  // word "done" over TCP, or with --cm its disconnect (CM DREQ).
  n.step(tr(M("step.poll")));
  const auto wcs = writes ? lab::poll_and_show(n, wr, 1) : std::vector<ibv_wc>{};
  if (!s.one_process()) {
    if (targets) n.say(tr(M("wait_done")));
    s.say_done();
    s.disconnect();
  }
  int target_wcs = 0;
  if (targets) {
    ibv_wc none[1];
    target_wcs = tg.cq->poll(none);
    n.say(tr(M("target_cq"), target_wcs));
    n.say(tr(M("why.silent")));
  }

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  for (const auto& wc : wcs) j.push_back(lab::wc_json("writer", wc));
  n.result()["completions"] = j;
  n.result()["size"] = o.size;
  n.result()["mtu"] = o.mtu;
  if (writes)
    n.check(
        "write_ok", tr(M("check.write_ok")),
        wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS && wcs[0].opcode == IBV_WC_RDMA_WRITE);
  if (targets) {
    n.check("bytes", tr(M("check.bytes")),
            std::memcmp(tg.buf() + o.offset, expected.data(), o.size) == 0);
    bool untouched = true;
    for (std::size_t i = 0; i < tg.size(); ++i)
      if ((i < o.offset || i >= o.offset + o.size) && tg.buf()[i] != lab::kUntouchedFill)
        untouched = false;
    n.check("untouched", tr(M("check.untouched")), untouched);
    n.check("target_silent", tr(M("check.target_silent")), target_wcs == 0);
  }
  if (s.one_process()) s.disconnect();

  if (const auto facts = lab::finish_wire(n, s.env, o.common.capture)) {
    // The first packet of the message carries the RETH: the target's VA and rkey.
    bool reth_ok = false, acked = false;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      const std::uint8_t op = ib.bth.opcode;
      if (op == wire::opcode::kRcWriteFirst || op == wire::opcode::kRcWriteOnly)
        reth_ok = ib.reth && ib.reth->va == swr.wr.rdma.remote_addr &&
                  ib.reth->rkey == swr.wr.rdma.rkey && ib.reth->dma_len == o.size;
      if (op == wire::opcode::kRcAcknowledge) acked = true;
    }
    n.check("wire", tr(M("check.wire")), reth_ok && acked);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"), o.common.capture), tr(M("try.3"))});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 24))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("--offset", o.offset, tr(M("opt.offset")))
        ->check(lab::Range(0u, 1u << 20))
        ->capture_default_str();
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab02", "lab02-write", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
