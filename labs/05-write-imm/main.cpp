// Lab 05: RDMA WRITE with immediate.
//
// Read this file next to docs/en/07-lab05-write-imm.md. A WRITE that also
// tells the target: the data goes where the RETH points, and the immediate
// value consumes a receive WQE so the target's CQ reports
// IBV_WC_RECV_RDMA_WITH_IMM. NCCL uses exactly this to say "your data is here".
#include <arpa/inet.h>
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
using lab05::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  std::uint32_t imm = 0xC0DE0001;
  int mtu = 1024;
};

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  n.step(tr(M("step.resources")));
  lab::Endpoint wr, tg;
  wr.role = tr(M("writer"));
  tg.role = tr(M("target"));
  lab::EndpointSpec spec;
  spec.buffer = o.size;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, wr, tg, spec, responder, o.common);

  n.step(tr(M("step.exchange")));
  wr.first_psn = 0x000100;
  tg.first_psn = 0x000200;

  n.step(tr(M("step.connect")));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::connect_pair(n, wr, tg, c, o.common, true);

  // The receive WQE the immediate will consume: no SGE at all.
  n.step(tr(M("step.recv")));
  ibv_recv_wr rwr{};
  rwr.wr_id = 500;
  rwr.sg_list = nullptr;
  rwr.num_sge = 0;
  ibv_recv_wr* rbad = nullptr;
  verbs::check_rc(tg.qp->post_recv(&rwr, &rbad), "ibv_post_recv");
  n.call("ibv_post_recv(qp, wr{wr_id=500, num_sge=0})", "0");
  n.say(tr(M("why.recv")));

  n.step(tr(M("step.write")));
  for (std::uint32_t i = 0; i < o.size; ++i) wr.buf()[i] = static_cast<std::uint8_t>(0x30 + i % 64);
  ibv_sge sge = wr.sge(0, o.size);
  ibv_send_wr swr{};
  swr.wr_id = 1;
  swr.sg_list = &sge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  swr.send_flags = IBV_SEND_SIGNALED;
  swr.imm_data = htonl(o.imm);
  swr.wr.rdma.remote_addr = tg.mr->va();
  swr.wr.rdma.rkey = tg.mr->rkey();
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(wr.qp->post_send(&swr, &bad), "ibv_post_send");
  n.call("ibv_post_send(qp, wr)", "0");
  n.field("opcode", "IBV_WR_RDMA_WRITE_WITH_IMM");
  n.field("imm_data", fmt::format("htonl({})", lab::hex(o.imm, 8)), tr(M("why.imm")));
  n.field("wr.rdma.remote_addr", lab::hex(swr.wr.rdma.remote_addr));
  n.field("wr.rdma.rkey", lab::hex(swr.wr.rdma.rkey, 8));

  n.step(tr(M("step.poll")));
  const auto wcs = lab::poll_and_show(n, wr, 1);
  const auto rwcs = lab::poll_and_show(n, tg, 1);
  if (!rwcs.empty())
    n.say(tr(M("imm_got"), lab::hex(ntohl(rwcs[0].imm_data), 8), rwcs[0].byte_len));

  n.step(tr(M("step.verify")));
  nlohmann::json j = nlohmann::json::array();
  for (const auto& wc : wcs) j.push_back(lab::wc_json("writer", wc));
  for (const auto& wc : rwcs) j.push_back(lab::wc_json("target", wc));
  n.result()["completions"] = j;
  n.check("write_ok", tr(M("check.write_ok")),
          wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS && wcs[0].opcode == IBV_WC_RDMA_WRITE);
  n.check("recv_imm", tr(M("check.recv_imm")),
          rwcs.size() == 1 && rwcs[0].status == IBV_WC_SUCCESS &&
              rwcs[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
              (rwcs[0].wc_flags & IBV_WC_WITH_IMM) != 0 && ntohl(rwcs[0].imm_data) == o.imm &&
              rwcs[0].byte_len == o.size && rwcs[0].wr_id == 500);
  n.check("bytes", tr(M("check.bytes")), std::memcmp(tg.buf(), wr.buf(), o.size) == 0);

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
  };
  return lab::run(argc, argv, "lab05", "lab05-write-imm", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
