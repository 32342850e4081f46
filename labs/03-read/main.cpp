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
#include <fmt/format.h>

#include <algorithm>
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
  const auto iters = static_cast<std::uint32_t>(o.iters);
  const std::size_t total = std::size_t{o.size} * iters;
  // Both sides in one process, or the reader (--connect) or the source
  // (--listen) alone; connected out of band, or with --cm by rdma_cm.
  lab::SetupSpec spec;
  spec.steps = {tr(M("step.backend")), tr(M("step.resources")), tr(M("step.cm")),
                tr(M("step.info")),    tr(M("step.exchange")),  tr(M("step.connect"))};
  spec.info_note = tr(M("why.info"));
  spec.connect_note = tr(M("why.resources"));
  spec.active_role = tr(M("reader"));
  spec.passive_role = tr(M("source"));
  spec.active.buffer = total;
  // Room for every WR of the chain (and the buffer message with --cm) in
  // the send queue and the CQ: -n goes up to 64.
  spec.active.max_wr = std::max<std::uint32_t>(spec.active.max_wr, iters + 1);
  spec.active.cqe = std::max(spec.active.cqe, static_cast<int>(iters) + 2);
  spec.passive = spec.active;
  spec.passive.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  // The READ resources: how many READs the reader keeps in flight, and how
  // many the source serves at once.
  spec.connect.mtu = o.mtu;
  spec.connect.max_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  spec.connect.max_dest_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  spec.cm = o.cm;
  spec.one_sided = true;
  // The source's QP is at RTR and its buffer filled before the reader may read.
  spec.ready_after_connect = true;
  // The bytes the source holds: a pattern both sides know, so that a reader
  // on another host can check what it read.
  spec.after_open = [&](lab::Setup& s) {
    for (std::size_t i = 0; s.plays_passive() && i < s.passive.size(); ++i)
      s.passive.buf()[i] = static_cast<std::uint8_t>(i * 13 + 5);
  };
  lab::Setup s(n, o.common, spec);
  lab::Endpoint& rd = s.active;
  lab::Endpoint& src = s.passive;
  const bool reads = s.plays_active();
  const bool serves = s.plays_passive();
  const verbs::ConnInfo& remote = s.remote;
  if (reads && remote.len < total) throw verbs::UsageError(tr(M("too_small"), remote.len, total));
  std::vector<std::uint8_t> pattern(total);
  for (std::size_t i = 0; i < total; ++i) pattern[i] = static_cast<std::uint8_t>(i * 13 + 5);

  n.step(tr(M("step.read")));
  // Each READ fills its own slice of the reader's buffer from the same slice
  // of the source's.
  std::optional<lab::WrChain> reads_chain;
  if (reads) {
    reads_chain.emplace(rd, iters, o.size, IBV_WR_RDMA_READ, remote.va, remote.rkey);
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(rd.qp->post_send(reads_chain->head(), &bad), "ibv_post_send");
    n.call(tr(M("call.post_chain"), iters), "0");
    n.field("opcode", "IBV_WR_RDMA_READ");
    n.field("wr.rdma.remote_addr", lab::hex(reads_chain->wrs[0].wr.rdma.remote_addr));
    n.field("wr.rdma.rkey", lab::hex(reads_chain->wrs[0].wr.rdma.rkey, 8));
    n.say(tr(M("why.psn")));
  }

  // The source learns that the reader is done only from the reader: the
  // word "done" over TCP, or with --cm its disconnect (CM DREQ).
  n.step(tr(M("step.poll")));
  const auto wcs = reads ? lab::poll_and_show(n, rd, iters) : std::vector<ibv_wc>{};
  if (!s.one_process()) {
    if (serves) n.say(tr(M("wait_done")));
    s.say_done();
    s.disconnect();
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
  if (s.one_process()) s.disconnect();

  if (const auto facts = lab::finish_wire(n, s.env, o.common.capture)) {
    // READ Requests advance the PSN by the number of responses each expects.
    const std::uint32_t per_read =
        (o.size + static_cast<std::uint32_t>(o.mtu) - 1) / static_cast<std::uint32_t>(o.mtu);
    std::vector<std::uint32_t> req_psns;
    std::uint64_t responses = 0;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::Bth& bth = rec->decoded.ib->bth;
      if (bth.opcode == wire::opcode::kRcReadRequest) req_psns.push_back(bth.psn);
      if (bth.opcode >= wire::opcode::kRcReadResponseFirst &&
          bth.opcode <= wire::opcode::kRcReadResponseOnly)
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
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 22))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1, 64))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("--rd-atomic", o.rd_atomic, tr(M("opt.rd_atomic")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab03", "lab03-read", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
