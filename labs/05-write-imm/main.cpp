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
using lab05::M;

namespace {

// The writer's WRITE with immediate, and the receive its immediate consumes.
constexpr std::uint64_t kWriteWrId = 1;
constexpr std::uint64_t kImmRecvWrId = 500;

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  std::uint32_t imm = 0xC0DE0001;
  int mtu = 1024;
  bool cm = false;  // connect in band with rdma_cm instead of out of band
};

void run_lab(lab::Narrator& n, const Options& o) {
  // Both sides in one process, or the writer (--connect) or the target
  // (--listen) alone; connected out of band, or with --cm by rdma_cm.
  lab::SetupSpec spec;
  spec.steps = {tr(M("step.backend")), tr(M("step.resources")), tr(M("step.cm")),
                tr(M("step.info")),    tr(M("step.exchange")),  tr(M("step.connect"))};
  spec.info_note = tr(M("why.info"));
  spec.active_role = tr(M("writer"));
  spec.passive_role = tr(M("target"));
  spec.active.buffer = o.size;
  spec.passive = spec.active;
  spec.passive.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  spec.connect.mtu = o.mtu;
  spec.cm = o.cm;
  spec.one_sided = true;
  // On another host the writer may answer before the completion of the
  // buffer SEND is polled: the target then finds it next to the immediate's.
  spec.leave_info_completion = true;

  // The receive WQE the immediate will consume: no SGE at all. Posted in
  // its own step, or with --cm --listen before the accept.
  bool posted = false;
  const auto post_receive = [&](lab::Endpoint& tg) {
    ibv_recv_wr rwr{};
    rwr.wr_id = kImmRecvWrId;
    rwr.sg_list = nullptr;
    rwr.num_sge = 0;
    ibv_recv_wr* rbad = nullptr;
    verbs::check_rc(tg.qp->post_recv(&rwr, &rbad), "ibv_post_recv");
    n.call(fmt::format("ibv_post_recv(qp, wr{{wr_id={}, num_sge=0}})", kImmRecvWrId), "0");
    n.say(tr(M("why.recv")));
    posted = true;
  };
  spec.before_accept = [&](lab::Setup& s) { post_receive(s.passive); };
  lab::Setup s(n, o.common, spec);
  lab::Endpoint& wr = s.active;
  lab::Endpoint& tg = s.passive;
  const bool writes = s.plays_active();
  const bool targets = s.plays_passive();
  const verbs::ConnInfo& remote = s.remote;
  // The target's SEND completion, not polled yet.
  const std::size_t info_pending = o.cm && s.role == lab::Role::Passive ? 1 : 0;
  if (writes && remote.len < o.size)
    throw verbs::UsageError(tr(M("too_small"), remote.len, o.size));

  n.step(tr(M("step.recv")));
  if (targets && !posted) post_receive(tg);
  // Between two hosts the target says "ready" once its QP is at RTR and the
  // receive is posted.
  s.say_ready();

  // The bytes are a pattern both sides know, so that a target on another
  // host can check them.
  n.step(tr(M("step.write")));
  std::vector<std::uint8_t> expected(o.size);
  for (std::uint32_t i = 0; i < o.size; ++i) expected[i] = static_cast<std::uint8_t>(0x30 + i % 64);
  ibv_send_wr swr{};
  if (writes) {
    std::memcpy(wr.buf(), expected.data(), o.size);
    ibv_sge sge = wr.sge(0, o.size);
    swr.wr_id = kWriteWrId;
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
  if (!s.one_process()) {
    s.say_done();
    s.disconnect();
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
                rwcs[0].byte_len == o.size && rwcs[0].wr_id == kImmRecvWrId);
    n.check("bytes", tr(M("check.bytes")), std::memcmp(tg.buf(), expected.data(), o.size) == 0);
  }
  if (s.one_process()) s.disconnect();

  if (const auto facts = lab::finish_wire(n, s.env, o.common.capture)) {
    bool imm_ok = false;
    for (const dissect::PacketRecord* rec : facts->roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      if ((ib.bth.opcode == wire::opcode::kRcWriteOnlyImm ||
           ib.bth.opcode == wire::opcode::kRcWriteLastImm) &&
          ib.immdt)
        imm_ok = *ib.immdt == o.imm;
    }
    n.check("wire", tr(M("check.wire")), imm_ok);
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 24))
        ->capture_default_str();
    app.add_option("--imm", o.imm, tr(M("opt.imm")))->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab05", "lab05-write-imm", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
