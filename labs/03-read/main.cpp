// Lab 03: RDMA READ.
//
// Read this file next to docs/en/05-lab03-read.md. The reader pulls bytes from
// the source's registered memory. On the wire one READ Request (BTH + RETH, no
// payload) is answered by READ Response packets (First/Middle/Last or Only,
// with an AETH on the First, Last and Only).
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
using lab03::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 512;
  int iters = 2;
  int mtu = 1024;
  int rd_atomic = 1;
};

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const auto iters = static_cast<std::uint32_t>(o.iters);
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  n.step(tr(M("step.resources")));
  lab::Endpoint rd, src;
  rd.role = tr(M("reader"));
  src.role = tr(M("source"));
  lab::EndpointSpec spec;
  spec.buffer = std::size_t{o.size} * iters;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  lab::open_pair(n, env, rd, src, spec, responder, o.common);

  n.step(tr(M("step.exchange")));
  rd.first_psn = 0x000100;
  src.first_psn = 0x000200;

  // The READ resources: how many READs the reader keeps in flight, and how
  // many the source serves at once.
  n.step(tr(M("step.connect")));
  n.say(tr(M("why.resources")));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  c.max_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  c.max_dest_rd_atomic = static_cast<std::uint8_t>(o.rd_atomic);
  lab::connect_pair(n, rd, src, c, o.common, true);

  n.step(tr(M("step.read")));
  for (std::size_t i = 0; i < src.size(); ++i) src.buf()[i] = static_cast<std::uint8_t>(i * 13 + 5);
  // Each READ fills its own slice of the reader's buffer from the same slice
  // of the source's.
  lab::WrChain reads(rd, iters, o.size, IBV_WR_RDMA_READ, src.mr->va(), src.mr->rkey());
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(rd.qp->post_send(reads.head(), &bad), "ibv_post_send");
  n.call(fmt::format("ibv_post_send(qp, {} chained READ WRs)", iters), "0");
  n.field("opcode", "IBV_WR_RDMA_READ");
  n.field("wr.rdma.remote_addr", lab::hex(reads.wrs[0].wr.rdma.remote_addr));
  n.field("wr.rdma.rkey", lab::hex(reads.wrs[0].wr.rdma.rkey, 8));
  n.say(tr(M("why.psn")));

  n.step(tr(M("step.poll")));
  const auto wcs = lab::poll_and_show(n, rd, iters);

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
  n.check("read_ok", tr(M("check.read_ok")), ok);
  n.check("bytes", tr(M("check.bytes")),
          std::memcmp(rd.buf(), src.buf(), std::size_t{o.size} * iters) == 0);
  ibv_wc none[1];
  n.check("source_silent", tr(M("check.source_silent")), src.cq->poll(none) == 0);

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
    for (std::size_t i = 0; psn_ok && i < req_psns.size(); ++i)
      psn_ok = req_psns[i] == wire::psn_add(rd.first_psn, static_cast<std::int64_t>(i * per_read));
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
  };
  return lab::run(argc, argv, "lab03", "lab03-read", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
