// Lab 01: SEND / RECEIVE over an RC queue pair.
//
// Read this file next to docs/en/03-lab01-send-recv.md. It is one linear
// program: open two devices (two simulated hosts, or one real device with two
// QPs), create PD, MR, CQ and QP on each side, connect the QPs, post a
// receive, post a SEND, poll both completion queues, check the bytes, and
// show what went on the wire.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "messages.hpp"
#include "rdmalab/cli/cli.hpp"
#include "rdmalab/lab/narrator.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/oob.hpp"
#include "rdmalab/verbs/sim_backend.hpp"

using namespace rdmalab;
using lab01::M;
using i18n::tr;

namespace {

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  int iters = 1;
  int mtu = 1024;
  bool no_recv = false;
  int rnr_retry = -1;  // -1: 7, or 1 with --no-recv (so the lab ends)
};

// One side of the connection. Members are declared in the order they are
// created, so they are destroyed in reverse: QP before CQ, MR before PD.
struct Side {
  std::string role;
  std::unique_ptr<verbs::Context> ctx;
  std::unique_ptr<verbs::ProtectionDomain> pd;
  std::unique_ptr<verbs::CompletionQueue> cq;
  std::unique_ptr<verbs::QueuePair> qp;
  std::vector<std::uint8_t> buf;
  std::unique_ptr<verbs::MemoryRegion> mr;
  int gid_index = 0;
  ibv_gid gid{};
  std::uint32_t first_psn = 0;
};

void open_side(lab::Narrator& n, verbs::Backend& backend, Side& s, const std::string& dev,
               const Options& o) {
  s.ctx = backend.open(dev);
  const auto port = s.ctx->query_port(static_cast<std::uint8_t>(o.common.ib_port));
  n.say(tr(M("say.port"), s.ctx->info().name, o.common.ib_port,
           port.state == IBV_PORT_ACTIVE ? "ACTIVE" : "not ACTIVE", verbs::mtu_bytes(port.active_mtu),
           port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand"));
  // On RoCE the GID is the IP address the packets carry; pick the RoCEv2 GID
  // of an IPv4 address unless -x says otherwise.
  const auto gids = s.ctx->gid_table(static_cast<std::uint8_t>(o.common.ib_port));
  const auto chosen = verbs::choose_gid(gids, o.common.gid_index);
  if (!chosen) throw verbs::UsageError(fmt::format("GID index not found on {}", s.ctx->info().name));
  s.gid_index = *chosen;
  for (const auto& g : gids)
    if (g.index == s.gid_index) {
      s.gid = g.gid;
      n.say(tr(M("say.gid"), s.ctx->info().name, g.index, g.to_string(), verbs::gid_type_name(g.type)));
    }
}

void create_resources(lab::Narrator& n, Side& s, const Options& o) {
  s.pd = s.ctx->alloc_pd();
  n.call(fmt::format("ibv_alloc_pd({})", s.ctx->info().name), tr(M("why.pd")));
  // The receiver's buffer must hold a whole message; the sender's holds what it sends.
  s.buf.assign(o.size, 0);
  s.mr = s.pd->reg_mr(s.buf.data(), s.buf.size(), IBV_ACCESS_LOCAL_WRITE);
  n.call(fmt::format("ibv_reg_mr(pd, buf, {}, IBV_ACCESS_LOCAL_WRITE)", o.size),
         fmt::format("lkey {} rkey {}", lab::hex(s.mr->lkey(), 8), lab::hex(s.mr->rkey(), 8)));
  n.say(tr(M("why.mr")));
  s.cq = s.ctx->create_cq(2 * o.iters + 2);
  n.call(fmt::format("ibv_create_cq(ctx, cqe={})", 2 * o.iters + 2), tr(M("why.cq")));
  verbs::QpInitAttrs init;
  init.type = IBV_QPT_RC;
  init.send_cq = s.cq.get();
  init.recv_cq = s.cq.get();
  init.max_send_wr = init.max_recv_wr = static_cast<std::uint32_t>(o.iters + 1);
  s.qp = s.pd->create_qp(init);
  n.call(fmt::format("ibv_create_qp(pd, qp_type=IBV_QPT_RC, max_send_wr={0}, max_recv_wr={0})", o.iters + 1),
         fmt::format("qp_num {}", lab::hex(s.qp->qpn(), 6)));
  n.say(tr(M("why.qp")));
}

void connect(lab::Narrator& n, Side& me, const Side& peer, const Options& o, std::uint8_t rnr_retry) {
  n.say(tr(M("say.transition"), me.role, lab::hex(me.qp->qpn(), 6)));
  n.block(me.qp->to_init(verbs::InitAttrs{static_cast<std::uint8_t>(o.common.ib_port)}).to_string());
  verbs::RtrAttrs rtr;
  rtr.remote.gid = peer.gid;
  rtr.remote.qpn = peer.qp->qpn();
  rtr.remote.psn = peer.first_psn;  // the PSN we expect first = the peer's first send PSN
  rtr.path_mtu = *verbs::mtu_from_bytes(o.mtu);
  rtr.port = static_cast<std::uint8_t>(o.common.ib_port);
  rtr.sgid_index = me.gid_index;
  rtr.min_rnr_timer = 14;  // 1.28 ms: how long a sender waits after our RNR NAK
  n.block(me.qp->to_rtr(rtr).to_string());
  verbs::RtsAttrs rts;
  rts.sq_psn = me.first_psn;
  rts.rnr_retry = rnr_retry;
  n.block(me.qp->to_rts(rts).to_string());
}

void show_wc(lab::Narrator& n, const std::string& who, const ibv_wc& wc) {
  n.say(tr(M("say.wc"), who, verbs::wc_status_name(wc.status), verbs::wc_opcode_name(wc.opcode), wc.wr_id,
           wc.byte_len, lab::hex(wc.qp_num, 6)));
  if (wc.status != IBV_WC_SUCCESS) n.block(verbs::describe_wc(wc));
}

}  // namespace

int main(int argc, char** argv) {
  i18n::init_from_args(argc, argv);
  Options o;
  CLI::App app{tr(M("desc")), "lab01-send-recv"};
  cli::localize(app);
  lab::add_common_options(app, o.common, "lab01");
  app.add_option("-s,--size", o.size, tr(M("opt.size")))->check(CLI::Range(1u, 1u << 24))->capture_default_str();
  app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("-m,--mtu", o.mtu, tr(M("opt.mtu")))
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}))->capture_default_str();
  app.add_flag("--no-recv", o.no_recv, tr(M("opt.no_recv")));
  app.add_option("--rnr-retry", o.rnr_retry, tr(M("opt.rnr_retry")))->check(CLI::Range(0, 7));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::exit_for(app, e);
  }
  const auto rnr_retry = static_cast<std::uint8_t>(o.rnr_retry >= 0 ? o.rnr_retry : (o.no_recv ? 1 : 7));
  lab::Narrator n(o.common, "lab01");

  try {
    // 1. Backend: a real device if there is one, else the simulated fabric,
    // whose wire is captured to a pcap file.
    n.step(tr(M("step.backend")));
    verbs::SimBackendOptions sim;
    sim.fabric.seed = o.common.seed;
    sim.capture_path = o.common.capture;
    if (const auto dir = std::filesystem::path(o.common.capture).parent_path(); !dir.empty())
      std::filesystem::create_directories(dir);
    std::string said;
    auto backend = verbs::choose_backend(*verbs::parse_backend_choice(o.common.backend), sim, &said);
    const bool simulated = backend->kind() == verbs::BackendKind::Sim;
    n.say(said);
    n.result()["backend"] = simulated ? "sim" : "verbs";

    // 2. Devices: on the simulator two hosts, sim1 sends to sim0; on real
    // verbs both QPs live on one device (-d) and rxe loops the packets back.
    n.step(tr(M("step.open")));
    Side tx, rx;
    tx.role = tr(M("sender"));
    rx.role = tr(M("receiver"));
    const std::string tx_dev = simulated ? "sim1" : o.common.device;
    const std::string rx_dev = simulated ? "sim0" : o.common.device;
    open_side(n, *backend, tx, tx_dev, o);
    open_side(n, *backend, rx, rx_dev, o);
    n.say(tr(M("say.sender_receiver"), tx.ctx->info().name, rx.ctx->info().name));

    // 3. Resources on each side.
    n.step(tr(M("step.resources")));
    create_resources(n, tx, o);
    create_resources(n, rx, o);

    // 4. What each side tells the other. Real programs pick random first
    // PSNs; fixed ones make the capture easy to read.
    n.step(tr(M("step.exchange")));
    tx.first_psn = 0x000100;
    rx.first_psn = 0x000200;
    n.say(tr(M("say.exchange")));
    for (const Side* s : {&tx, &rx}) {
      verbs::ConnInfo info;
      info.qpn = s->qp->qpn();
      info.psn = s->first_psn;
      info.gid = s->gid;
      info.mtu = o.mtu;
      n.block(verbs::format_conn_info(info));
    }

    // 5. Connect: each QP learns the other's QPN, PSN and GID at RTR.
    n.step(tr(M("step.connect")));
    connect(n, tx, rx, o, rnr_retry);
    connect(n, rx, tx, o, 7);

    // 6. The receiver posts its receive work requests BEFORE the sender sends.
    n.step(o.no_recv ? tr(M("step.no_recv")) : tr(M("step.recv")));
    n.say(o.no_recv ? tr(M("why.no_recv")) : tr(M("why.recv")));
    ibv_sge rx_sge{reinterpret_cast<std::uintptr_t>(rx.buf.data()), o.size, rx.mr->lkey()};
    for (int i = 0; i < o.iters && !o.no_recv; ++i) {
      ibv_recv_wr wr{};
      wr.wr_id = 1000 + static_cast<std::uint64_t>(i);
      wr.sg_list = &rx_sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      verbs::check_rc(rx.qp->post_recv(&wr, &bad), "ibv_post_recv");
      n.call("ibv_post_recv(qp, wr)", "0");
      n.field("wr_id", std::to_string(wr.wr_id));
      n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(rx_sge.addr), rx_sge.length,
                                        lab::hex(rx_sge.lkey, 8)));
    }

    // 7. The sender posts its SENDs.
    n.step(tr(M("step.send")));
    for (std::uint32_t i = 0; i < o.size; ++i) tx.buf[i] = static_cast<std::uint8_t>('A' + i % 26);
    ibv_sge tx_sge{reinterpret_cast<std::uintptr_t>(tx.buf.data()), o.size, tx.mr->lkey()};
    for (int i = 0; i < o.iters; ++i) {
      ibv_send_wr wr{};
      wr.wr_id = static_cast<std::uint64_t>(i + 1);
      wr.sg_list = &tx_sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      ibv_send_wr* bad = nullptr;
      verbs::check_rc(tx.qp->post_send(&wr, &bad), "ibv_post_send");
      n.call("ibv_post_send(qp, wr)", "0");
      n.field("wr_id", std::to_string(wr.wr_id));
      n.field("opcode", "IBV_WR_SEND");
      n.field("send_flags", "IBV_SEND_SIGNALED", tr(M("why.signaled")));
      n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(tx_sge.addr), tx_sge.length,
                                        lab::hex(tx_sge.lkey, 8)));
    }

    // 8. Poll. On the simulator, polling an empty CQ advances virtual time.
    n.step(tr(M("step.poll")));
    using namespace std::chrono_literals;
    const auto tx_wcs = tx.cq->wait(static_cast<std::size_t>(o.iters), 10s);
    const auto rx_wcs = o.no_recv ? std::vector<ibv_wc>{} : rx.cq->wait(static_cast<std::size_t>(o.iters), 10s);
    n.call(fmt::format("ibv_poll_cq({} cq)", tx.role), fmt::format("{} wc", tx_wcs.size()));
    for (const auto& wc : tx_wcs) show_wc(n, tx.role, wc);
    if (!o.no_recv) {
      n.call(fmt::format("ibv_poll_cq({} cq)", rx.role), fmt::format("{} wc", rx_wcs.size()));
      for (const auto& wc : rx_wcs) show_wc(n, rx.role, wc);
    }

    // 9. Verify what happened, from the completions and the memory.
    n.step(tr(M("step.verify")));
    nlohmann::json wcs = nlohmann::json::array();
    for (const auto& wc : tx_wcs)
      wcs.push_back({{"side", "sender"}, {"status", verbs::wc_status_name(wc.status)},
                     {"opcode", verbs::wc_opcode_name(wc.opcode)}, {"wr_id", wc.wr_id}});
    for (const auto& wc : rx_wcs)
      wcs.push_back({{"side", "receiver"}, {"status", verbs::wc_status_name(wc.status)},
                     {"opcode", verbs::wc_opcode_name(wc.opcode)}, {"wr_id", wc.wr_id}, {"byte_len", wc.byte_len}});
    n.result()["completions"] = wcs;
    n.result()["size"] = o.size;
    n.result()["iters"] = o.iters;
    n.result()["mtu"] = o.mtu;
    if (o.no_recv) {
      n.check("rnr", tr(M("check.rnr")), !tx_wcs.empty() && tx_wcs[0].status == IBV_WC_RNR_RETRY_EXC_ERR);
    } else {
      bool send_ok = tx_wcs.size() == static_cast<std::size_t>(o.iters);
      for (const auto& wc : tx_wcs) send_ok = send_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
      bool recv_ok = rx_wcs.size() == static_cast<std::size_t>(o.iters);
      for (const auto& wc : rx_wcs)
        recv_ok = recv_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == o.size;
      n.check("send_ok", tr(M("check.send_ok")), send_ok);
      n.check("recv_ok", tr(M("check.recv_ok")), recv_ok);
      n.check("bytes", tr(M("check.bytes")), rx.buf == tx.buf);
    }

    // 10. What went on the wire: the simulator captured every frame.
    if (auto* s = dynamic_cast<verbs::SimBackend*>(backend.get())) {
      s->fabric().stop_capture();
      const auto facts = lab::show_wire(n, o.common.capture);
      const auto count = [&](const char* op) {
        const auto it = facts.opcodes.find(op);
        return it == facts.opcodes.end() ? 0 : it->second;
      };
      if (o.no_recv) {
        n.check("wire_rnr", tr(M("check.wire_rnr")), facts.events.contains("rnr_nak"));
      } else {
        n.check("wire_send", tr(M("check.wire_send")),
                count("RC SEND Only") + count("RC SEND First") >= static_cast<std::uint64_t>(o.iters) &&
                    count("RC Acknowledge") >= 1);
      }
      n.check("icrc", tr(M("check.icrc")), facts.readable && facts.icrc_all_ok);
    } else {
      lab::explain_capture_on_verbs(n);
    }

    if (n.narrating()) {
      std::cout << "\n" << tr(M("try.title")) << "\n";
      for (const auto& line : {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)})
        std::cout << "  " << line << "\n";
    }
    return n.finish();
  } catch (const verbs::VerbsError& e) {
    std::cerr << e.report() << "\n";
    return cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return cli::kExitFailure;
  }
}
