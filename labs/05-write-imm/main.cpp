// Lab 05: RDMA WRITE with immediate.
//
// Read this file next to docs/en/07-lab05-write-imm.md. A WRITE that also
// tells the target: the data goes where the RETH points, and the immediate
// value consumes a receive WQE so the target's CQ reports
// IBV_WC_RECV_RDMA_WITH_IMM. NCCL uses exactly this to say "your data is here".
//
// One process plays both sides by default. With --listen PORT it is the
// target alone, with --connect HOST:PORT the writer alone, on two hosts: the
// target's VA, rkey and length then travel in the out-of-band message, or,
// with --cm, in a SEND right after the in-band connection (as rping does).
#include <arpa/inet.h>
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
using lab05::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  std::uint32_t imm = 0xC0DE0001;
  int mtu = 1024;
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

  n.step(tr(M("step.resources")));
  lab::Endpoint wr, tg;
  wr.role = tr(M("writer"));
  tg.role = tr(M("target"));
  lab::EndpointSpec spec;
  spec.buffer = o.size;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (role == lab::Role::Both) {
    lab::open_pair(n, env, wr, tg, spec, responder, o.common);
  } else {
    spec.device = responder.device = o.common.device;
    lab::open_endpoint(n, env, writes ? wr : tg, writes ? spec : responder, o.common);
  }

  // The receive WQE the immediate will consume: no SGE at all. Posted in
  // its own step, or with --cm --listen before the accept.
  bool posted = false;
  const auto post_receive = [&] {
    ibv_recv_wr rwr{};
    rwr.wr_id = 500;
    rwr.sg_list = nullptr;
    rwr.num_sge = 0;
    ibv_recv_wr* rbad = nullptr;
    verbs::check_rc(tg.qp->post_recv(&rwr, &rbad), "ibv_post_recv");
    n.call("ibv_post_recv(qp, wr{wr_id=500, num_sge=0})", "0");
    n.say(tr(M("why.recv")));
    posted = true;
  };

  verbs::ConnInfo remote;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::BufferInfo info_in, info_out;
  std::size_t info_pending = 0;  // the target's SEND completion, not polled yet
  if (o.cm) {
    n.step(tr(M("step.cm")));
    if (writes) lab::expect_buffer_info(n, wr, info_in, o.common, tr(M("target")));
    if (role == lab::Role::Both) {
      lab::connect_pair_cm(n, env, wr, tg, c);
    } else if (targets) {
      lab::accept_cm(n, env, tg, *o.common.listen, post_receive, c);
    } else {
      const auto [host, port] = *verbs::parse_host_port(o.common.connect);
      lab::connect_cm(n, env, wr, host, port, c);
    }
    n.step(tr(M("step.info")));
    n.say(tr(M("why.info")));
    if (targets) lab::send_buffer_info(n, tg, info_out);
    if (writes) remote = lab::take_buffer_info(n, wr, info_in, tr(M("target")));
    // On another host the writer may answer before this completion is
    // polled: the target then finds it next to the immediate's.
    if (role == lab::Role::Both) (void)lab::poll_and_show(n, tg, 1);
    if (role == lab::Role::Passive) info_pending = 1;
  } else {
    n.step(tr(M("step.exchange")));
    wr.first_psn = 0x000100;
    tg.first_psn = 0x000200;
    if (peer) remote = lab::exchange_with_peer(n, *peer, writes ? wr : tg, o.mtu, targets);

    n.step(tr(M("step.connect")));
    if (!peer)
      lab::connect_pair(n, wr, tg, c, o.common, true);
    else
      lab::connect_rc(n, writes ? wr : tg, remote, c, o.common);
  }
  if (role == lab::Role::Both) {
    remote.va = tg.mr->va();
    remote.rkey = tg.mr->rkey();
    remote.len = tg.mr->length();
  }
  if (writes && remote.len < o.size)
    throw verbs::UsageError(tr(M("too_small"), remote.len, o.size));

  n.step(tr(M("step.recv")));
  if (targets && !posted) post_receive();
  // Between two hosts the target says "ready" once its QP is at RTR and the
  // receive is posted.
  if (peer && targets) lab::tell_peer(*peer, "ready");
  if (peer && writes) lab::await_peer(*peer, "ready");

  // The bytes are a pattern both sides know, so that a target on another
  // host can check them.
  n.step(tr(M("step.write")));
  std::vector<std::uint8_t> expected(o.size);
  for (std::uint32_t i = 0; i < o.size; ++i) expected[i] = static_cast<std::uint8_t>(0x30 + i % 64);
  ibv_send_wr swr{};
  if (writes) {
    std::memcpy(wr.buf(), expected.data(), o.size);
    ibv_sge sge = wr.sge(0, o.size);
    swr.wr_id = 1;
    swr.sg_list = &sge;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    swr.send_flags = IBV_SEND_SIGNALED;
    swr.imm_data = htonl(o.imm);
    swr.wr.rdma.remote_addr = remote.va;
    swr.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(wr.qp->post_send(&swr, &bad), "ibv_post_send");
    n.call("ibv_post_send(qp, wr)", "0");
    n.field("opcode", "IBV_WR_RDMA_WRITE_WITH_IMM");
    n.field("imm_data", fmt::format("htonl({})", lab::hex(o.imm, 8)), tr(M("why.imm")));
    n.field("wr.rdma.remote_addr", lab::hex(swr.wr.rdma.remote_addr));
    n.field("wr.rdma.rkey", lab::hex(swr.wr.rdma.rkey, 8));
  }

  // The target learns from its own CQ that the data is there; the writer
  // still says "done" (or disconnects, with --cm) so that neither side
  // tears down its QP while the other needs it.
  n.step(tr(M("step.poll")));
  const auto wcs = writes ? lab::poll_and_show(n, wr, 1) : std::vector<ibv_wc>{};
  std::vector<ibv_wc> rwcs;
  if (targets)
    for (const auto& wc : lab::poll_and_show(n, tg, 1 + info_pending))
      if (wc.wr_id != lab::kBufferInfoWrId) rwcs.push_back(wc);
  if (!rwcs.empty())
    n.say(tr(M("imm_got"), lab::hex(ntohl(rwcs[0].imm_data), 8), rwcs[0].byte_len));
  if (role != lab::Role::Both) {
    if (peer && writes) lab::tell_peer(*peer, "done");
    if (peer && targets) lab::await_peer(*peer, "done");
    if (o.cm && writes) lab::disconnect_cm(n, env, wr);
    if (o.cm && targets) lab::await_disconnect_cm(n, env, tg);
  }

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  for (const auto& wc : wcs) j.push_back(lab::wc_json("writer", wc));
  for (const auto& wc : rwcs) j.push_back(lab::wc_json("target", wc));
  n.result()["completions"] = j;
  if (writes)
    n.check(
        "write_ok", tr(M("check.write_ok")),
        wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS && wcs[0].opcode == IBV_WC_RDMA_WRITE);
  if (targets) {
    n.check("recv_imm", tr(M("check.recv_imm")),
            rwcs.size() == 1 && rwcs[0].status == IBV_WC_SUCCESS &&
                rwcs[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
                (rwcs[0].wc_flags & IBV_WC_WITH_IMM) != 0 && ntohl(rwcs[0].imm_data) == o.imm &&
                rwcs[0].byte_len == o.size && rwcs[0].wr_id == 500);
    n.check("bytes", tr(M("check.bytes")), std::memcmp(tg.buf(), expected.data(), o.size) == 0);
  }
  if (o.cm && role == lab::Role::Both) lab::disconnect_cm(n, env, wr);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    bool imm_ok = false;
    for (const auto& f : n.result()["wire"]["frames"])
      if ((f["opcode"] == wire::opcode::kRcWriteOnlyImm ||
           f["opcode"] == wire::opcode::kRcWriteLastImm) &&
          f.contains("immdt"))
        imm_ok = f["immdt"] == o.imm;
    n.check("wire", tr(M("check.wire")), imm_ok);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(CLI::Range(1u, 1u << 24))
        ->capture_default_str();
    app.add_option("--imm", o.imm, tr(M("opt.imm")))->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab05", "lab05-write-imm", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
