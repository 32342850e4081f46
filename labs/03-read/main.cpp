// Lab 03: RDMA READ.
//
// Read this file next to docs/en/05-lab03-read.md. The reader pulls bytes from
// the source's registered memory. On the wire one READ Request (BTH + RETH, no
// payload) is answered by READ Response packets (First/Middle/Last or Only,
// with an AETH on the First, Last and Only).
//
// One process plays both sides by default. With --listen PORT it is the
// source alone, with --connect HOST:PORT the reader alone, on two hosts: the
// source's VA, rkey and length then travel in the out-of-band message, or,
// with --cm, in a SEND right after the in-band connection (as rping does).
#include <endian.h>
#include <fmt/format.h>

#include <algorithm>
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
#include "rdmalab/wire/psn.hpp"

using namespace rdmalab;
using i18n::tr;
using lab03::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 512;
  int iters = 2;
  int mtu = 1024;
  int rd_atomic = 1;
  bool cm = false;  // connect in band with rdma_cm instead of out of band
};

void run_lab(lab::Narrator& n, const Options& o) {
  // Which side(s) this process plays: both, or the reader (--connect) or the
  // source (--listen) alone.
  const lab::Role role = lab::role_of(o.common);
  const bool reads = role != lab::Role::Passive;
  const bool serves = role != lab::Role::Active;
  const auto iters = static_cast<std::uint32_t>(o.iters);
  const std::size_t total = std::size_t{o.size} * iters;
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  std::optional<verbs::OobChannel> peer =
      o.cm ? std::optional<verbs::OobChannel>{} : lab::open_peer(n, o.common);

  n.step(tr(M("step.resources")));
  lab::Endpoint rd, src;
  rd.role = tr(M("reader"));
  src.role = tr(M("source"));
  lab::EndpointSpec spec;
  spec.buffer = total;
  // Room for every WR of the chain (and the buffer message with --cm) in
  // the send queue and the CQ: -n goes up to 64.
  spec.max_wr = std::max<std::uint32_t>(spec.max_wr, iters + 1);
  spec.cqe = std::max(spec.cqe, static_cast<int>(iters) + 2);
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  if (role == lab::Role::Both) {
    lab::open_pair(n, env, rd, src, spec, responder, o.common);
  } else {
    spec.device = responder.device = o.common.device;
    lab::open_endpoint(n, env, reads ? rd : src, reads ? spec : responder, o.common);
  }

  // The bytes the source holds: a pattern both sides know, so that a reader
  // on another host can check what it read.
  std::vector<std::uint8_t> pattern(total);
  for (std::size_t i = 0; i < total; ++i) pattern[i] = static_cast<std::uint8_t>(i * 13 + 5);
  const auto fill_source = [&] {
    for (std::size_t i = 0; i < src.size(); ++i)
      src.buf()[i] = static_cast<std::uint8_t>(i * 13 + 5);
  };

  // The READ resources: how many READs the reader keeps in flight, and how
  // many the source serves at once.
  verbs::ConnInfo remote;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  c.max_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  c.max_dest_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  lab::BufferInfo info_in, info_out;
  if (o.cm) {
    n.step(tr(M("step.cm")));
    if (reads) lab::expect_buffer_info(n, rd, info_in, o.common, tr(M("source")));
    if (role == lab::Role::Both) {
      lab::connect_pair_cm(n, env, rd, src, c);
    } else if (serves) {
      fill_source();  // before the reader can read
      lab::accept_cm(n, env, src, *o.common.listen, {}, c);
    } else {
      const auto [host, port] = *verbs::parse_host_port(o.common.connect);
      lab::connect_cm(n, env, rd, host, port, c);
    }
    n.step(tr(M("step.info")));
    n.say(tr(M("why.info")));
    if (serves) lab::send_buffer_info(n, src, info_out);
    if (reads) remote = lab::take_buffer_info(n, rd, info_in, tr(M("source")));
    if (serves) (void)lab::poll_and_show(n, src, 1);
  } else {
    n.step(tr(M("step.exchange")));
    rd.first_psn = 0x000100;
    src.first_psn = 0x000200;
    if (peer) remote = lab::exchange_with_peer(n, *peer, reads ? rd : src, o.mtu, serves);

    n.step(tr(M("step.connect")));
    n.say(tr(M("why.resources")));
    if (!peer) {
      lab::connect_pair(n, rd, src, c, o.common, true);
    } else {
      lab::connect_rc(n, reads ? rd : src, remote, c, o.common);
      // The source's QP is at RTR and its buffer filled before the reader
      // may read.
      if (serves) {
        fill_source();
        lab::tell_peer(*peer, "ready");
      }
      if (reads) lab::await_peer(*peer, "ready");
    }
  }
  if (role == lab::Role::Both) {
    remote.va = src.mr->va();
    remote.rkey = src.mr->rkey();
    remote.len = src.mr->length();
  }
  if (reads && remote.len < total) throw verbs::UsageError(tr(M("too_small"), remote.len, total));

  n.step(tr(M("step.read")));
  if (role == lab::Role::Both) fill_source();
  // Each READ fills its own slice of the reader's buffer from the same slice
  // of the source's.
  std::optional<lab::WrChain> reads_chain;
  if (reads) {
    reads_chain.emplace(rd, iters, o.size, IBV_WR_RDMA_READ, remote.va, remote.rkey);
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(rd.qp->post_send(reads_chain->head(), &bad), "ibv_post_send");
    n.call(fmt::format("ibv_post_send(qp, {} chained READ WRs)", iters), "0");
    n.field("opcode", "IBV_WR_RDMA_READ");
    n.field("wr.rdma.remote_addr", lab::hex(reads_chain->wrs[0].wr.rdma.remote_addr));
    n.field("wr.rdma.rkey", lab::hex(reads_chain->wrs[0].wr.rdma.rkey, 8));
    n.say(tr(M("why.psn")));
  }

  // The source learns that the reader is done only from the reader: the
  // word "done" over TCP, or with --cm its disconnect (CM DREQ).
  n.step(tr(M("step.poll")));
  const auto wcs = reads ? lab::poll_and_show(n, rd, iters) : std::vector<ibv_wc>{};
  if (role != lab::Role::Both) {
    if (serves) n.say(tr(M("wait_done")));
    if (peer && reads) lab::tell_peer(*peer, "done");
    if (peer && serves) lab::await_peer(*peer, "done");
    if (o.cm && reads) lab::disconnect_cm(n, env, rd);
    if (o.cm && serves) lab::await_disconnect_cm(n, env, src);
  }

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  bool ok = wcs.size() == iters;
  for (const auto& wc : wcs) {
    j.push_back(lab::wc_json("reader", wc));
    ok =
        ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == o.size;
  }
  n.result()["completions"] = j;
  n.result()["size"] = o.size;
  n.result()["mtu"] = o.mtu;
  if (reads) {
    n.check("read_ok", tr(M("check.read_ok")), ok);
    n.check("bytes", tr(M("check.bytes")), std::memcmp(rd.buf(), pattern.data(), total) == 0);
  }
  if (serves) {
    ibv_wc none[1];
    n.check("source_silent", tr(M("check.source_silent")), src.cq->poll(none) == 0);
  }
  if (o.cm && role == lab::Role::Both) lab::disconnect_cm(n, env, rd);

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    // READ Requests advance the PSN by the number of responses each expects.
    const std::uint32_t per_read =
        (o.size + static_cast<std::uint32_t>(o.mtu) - 1) / static_cast<std::uint32_t>(o.mtu);
    std::vector<std::uint32_t> req_psns;
    std::uint64_t responses = 0;
    for (const auto& f : n.result()["wire"]["frames"]) {
      if (f["opcode"] == wire::opcode::kRcReadRequest) req_psns.push_back(f["psn"]);
      const int op = f["opcode"];
      if (op >= wire::opcode::kRcReadResponseFirst && op <= wire::opcode::kRcReadResponseOnly)
        ++responses;
    }
    bool psn_ok = req_psns.size() == iters;
    // With --cm the CM chose the reader's first PSN: the spacing counts.
    const std::uint32_t first = o.cm && !req_psns.empty() ? req_psns[0] : rd.first_psn;
    for (std::size_t i = 0; psn_ok && i < req_psns.size(); ++i)
      psn_ok = req_psns[i] == wire::psn_add(first, static_cast<std::int64_t>(i * per_read));
    n.check("psn", tr(M("check.psn")), psn_ok);
    n.check("wire", tr(M("check.wire")),
            req_psns.size() == iters && responses == std::uint64_t{per_read} * iters);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(CLI::Range(1u, 1u << 22))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("--rd-atomic", o.rd_atomic, tr(M("opt.rd_atomic")))
        ->check(CLI::Range(1, 16))
        ->capture_default_str();
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab03", "lab03-read", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
