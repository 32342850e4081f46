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
#include <endian.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "messages.hpp"
#include "rdmalab/lab/buffer_info.hpp"
#include "rdmalab/lab/cm_connect.hpp"
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
  bool cm = false;  // connect in band with rdma_cm instead of out of band
};

void run_lab(lab::Narrator& n, const Options& o) {
  // Which side(s) this process plays: both, or the writer (--connect) or the
  // target (--listen) alone.
  const lab::Role role = lab::role_of(o.common);
  const bool writes = role != lab::Role::Passive;
  const bool targets = role != lab::Role::Active;
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  std::optional<verbs::OobChannel> peer =
      o.cm ? std::optional<verbs::OobChannel>{} : lab::open_peer(n, o.common);

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
  if (role == lab::Role::Both) {
    lab::open_pair(n, env, wr, tg, spec, responder, o.common);
  } else {
    spec.device = responder.device = o.common.device;
    lab::open_endpoint(n, env, writes ? wr : tg, writes ? spec : responder, o.common);
  }
  n.say(tr(M("why.access")));

  // Where the writer writes: the target's buffer, as the target announced it.
  verbs::ConnInfo remote;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::BufferInfo info_in, info_out;
  if (o.cm) {
    n.step(tr(M("step.cm")));
    if (writes) lab::expect_buffer_info(n, wr, info_in, o.common, tr(M("target")));
    if (role == lab::Role::Both) {
      lab::connect_pair_cm(n, env, wr, tg, c);
    } else if (targets) {
      std::memset(tg.buf(), 0xEE, tg.size());  // before the writer can write
      lab::accept_cm(n, env, tg, *o.common.listen, {}, c);
    } else {
      const auto [host, port] = *verbs::parse_host_port(o.common.connect);
      lab::connect_cm(n, env, wr, host, port, c);
    }
    n.step(tr(M("step.info")));
    n.say(tr(M("why.info")));
    if (targets) lab::send_buffer_info(n, tg, info_out);
    if (writes) remote = lab::take_buffer_info(n, wr, info_in, tr(M("target")));
    if (targets) (void)lab::poll_and_show(n, tg, 1);
  } else {
    // One-sided: the writer must know where to write. Between two hosts the
    // target's VA, rkey and length travel over TCP in the connection message.
    n.step(tr(M("step.exchange")));
    wr.first_psn = 0x000100;
    tg.first_psn = 0x000200;
    n.say(tr(M("why.exchange")));
    if (peer) remote = lab::exchange_with_peer(n, *peer, writes ? wr : tg, o.mtu, targets);

    n.step(tr(M("step.connect")));
    if (!peer) {
      lab::connect_pair(n, wr, tg, c, o.common, true);
    } else {
      lab::connect_rc(n, writes ? wr : tg, remote, c, o.common);
      // The target's QP is at RTR and its buffer filled before the writer
      // may write.
      if (targets) {
        std::memset(tg.buf(), 0xEE, tg.size());
        lab::tell_peer(*peer, "ready");
      }
      if (writes) lab::await_peer(*peer, "ready");
    }
  }
  if (role == lab::Role::Both) {
    remote.va = tg.mr->va();
    remote.rkey = tg.mr->rkey();
    remote.len = tg.mr->length();
  }
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
  if (role == lab::Role::Both) std::memset(tg.buf(), 0xEE, tg.size());
  ibv_send_wr swr{};
  if (writes) {
    ibv_sge sge = wr.sge(0, o.size);
    swr.wr_id = 1;
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
  if (role != lab::Role::Both) {
    if (targets) n.say(tr(M("wait_done")));
    if (peer && writes) lab::tell_peer(*peer, "done");
    if (peer && targets) lab::await_peer(*peer, "done");
    if (o.cm && writes) lab::disconnect_cm(n, env, wr);
    if (o.cm && targets) lab::await_disconnect_cm(n, env, tg);
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
      if ((i < o.offset || i >= o.offset + o.size) && tg.buf()[i] != 0xEE) untouched = false;
    n.check("untouched", tr(M("check.untouched")), untouched);
    n.check("target_silent", tr(M("check.target_silent")), target_wcs == 0);
  }
  if (o.cm && role == lab::Role::Both) lab::disconnect_cm(n, env, wr);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // The first packet of the message carries the RETH: the target's VA and rkey.
    bool reth_ok = false, acked = false;
    for (const auto& f : n.result()["wire"]["frames"]) {
      if (f["opcode"] == wire::opcode::kRcWriteFirst || f["opcode"] == wire::opcode::kRcWriteOnly)
        reth_ok = f.contains("reth") && f["reth"]["va"] == swr.wr.rdma.remote_addr &&
                  f["reth"]["rkey"] == swr.wr.rdma.rkey && f["reth"]["len"] == o.size;
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
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab02", "lab02-write", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
