// Lab 13: the scope of a memory registration.
//
// Read this file next to docs/en/20-lab13-mr-scope.md. A server offers its
// memory to a client over two RC connections, a control QP and a data QP,
// three ways:
//
//   shared        one PD, one MR: the same rkey works on both QPs;
//   per-endpoint  a PD and an MR per endpoint (what libfabric providers with
//                 FI_MR_ENDPOINT require): each QP accepts its own key only;
//   window        one PD, one MR, and a type 2 memory window bound to the data
//                 QP: the window's rkey works there and nowhere else, until a
//                 SEND with Invalidate (or a local invalidate) revokes it.
//
// Every use of a key on the wrong QP is answered on the wire by a NAK
// (remote access error) and completes with IBV_WC_REM_ACCESS_ERR.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <vector>

#include "messages.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab13::M;

namespace {

struct Options {
  lab::CommonOptions common;
  std::string scenario = "all";
  std::string invalidate = "send";
  bool no_misuse = false;
  std::uint32_t size = 64;
};

constexpr std::size_t kBuffer = 4096;
constexpr std::size_t kHalf = kBuffer / 2;
constexpr int kRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

// One side of the lab: a device, its PD(s), one CQ, a buffer with its MR(s),
// perhaps a window, and two QPs. Declared in creation order, destroyed in
// reverse: QPs first, then the window (before the MR it is bound to), the
// MRs, the CQ and the PDs.
struct Host {
  std::string role;
  std::unique_ptr<verbs::Context> ctx;
  std::unique_ptr<verbs::ProtectionDomain> pd;       // shared, or the control QP's
  std::unique_ptr<verbs::ProtectionDomain> pd_data;  // per-endpoint: the data QP's
  std::unique_ptr<verbs::CompletionQueue> cq;
  std::vector<std::uint64_t> storage = std::vector<std::uint64_t>(kBuffer / 8);
  std::unique_ptr<verbs::MemoryRegion> mr;       // shared, or the control endpoint's
  std::unique_ptr<verbs::MemoryRegion> mr_data;  // per-endpoint: the data endpoint's
  std::unique_ptr<verbs::MemoryWindow> mw;
  std::unique_ptr<verbs::QueuePair> ctrl;
  std::unique_ptr<verbs::QueuePair> data;
  int gid_index = 0;
  ibv_gid gid{};
  bool infiniband = false;  // the port's link layer: addressed by its LID
  std::uint16_t lid = 0;

  std::uint8_t* buf() noexcept { return reinterpret_cast<std::uint8_t*>(storage.data()); }
  std::uint64_t va(std::size_t off) noexcept {
    return reinterpret_cast<std::uintptr_t>(buf() + off);
  }
};

// What a scenario expects to see on the wire, checked after the capture is
// closed: requests to a server QP with an rkey, and the answer (ACK, or NAK
// with remote access error) to the client QP.
struct Expect {
  std::uint32_t server_qpn = 0;
  std::uint32_t client_qpn = 0;
  std::uint8_t opcode = wire::opcode::kRcWriteOnly;
  std::uint32_t key = 0;  // RETH rkey, or IETH for a SEND with Invalidate
  bool nak = false;
};

struct Scenario {
  std::string name;
  std::string check_id;  // "wire.shared", ...
  std::vector<Expect> expects;
};

void open_host(lab::Narrator& n, lab::Environment& env, const Options& o, Host& h,
               const std::string& device) {
  h.ctx = env.backend->open(device);
  n.say(tr(M("open"), h.role, h.ctx->info().name));
  const auto port = static_cast<std::uint8_t>(o.common.ib_port);
  const auto gids = h.ctx->gid_table(port);
  const auto chosen = verbs::choose_gid(gids, o.common.gid_index);
  if (!chosen) throw verbs::UsageError(tr(M("no_gid"), h.ctx->info().name));
  h.gid_index = *chosen;
  for (const auto& g : gids)
    if (g.index == h.gid_index) h.gid = g.gid;
  const verbs::PortInfo info = h.ctx->query_port(port);
  h.infiniband = info.link_layer == IBV_LINK_LAYER_INFINIBAND;
  h.lid = info.lid;
  h.cq = h.ctx->create_cq(32);
}

std::string pd_name(const Host& h, const verbs::ProtectionDomain& pd) {
  return &pd == h.pd_data.get() ? "pd_data" : (h.pd_data ? "pd_ctrl" : "pd");
}

std::unique_ptr<verbs::QueuePair> make_qp(lab::Narrator& n, Host& h, verbs::ProtectionDomain& pd,
                                          const std::string& what) {
  verbs::QpInitAttrs init;
  init.send_cq = h.cq.get();
  init.recv_cq = h.cq.get();
  init.max_send_wr = init.max_recv_wr = 8;
  auto qp = pd.create_qp(init);
  n.call(h.role, fmt::format("ibv_create_qp({}, IBV_QPT_RC) [{}]", pd_name(h, pd), what),
         fmt::format("qp_num {}", lab::hex(qp->qpn(), 6)));
  return qp;
}

std::unique_ptr<verbs::MemoryRegion> make_mr(lab::Narrator& n, Host& h, verbs::ProtectionDomain& pd,
                                             std::size_t off, std::size_t len, int access,
                                             const std::string& access_text) {
  auto mr = pd.reg_mr(h.buf() + off, len, access);
  n.call(h.role,
         fmt::format("ibv_reg_mr({}, buf+{}, {}, {})", pd_name(h, pd), off, len, access_text),
         fmt::format("lkey {}  rkey {}", lab::hex(mr->lkey(), 8), lab::hex(mr->rkey(), 8)));
  return mr;
}

void connect(lab::Narrator& n, const Options& o, Host& me, verbs::QueuePair& qp,
             const std::string& what, std::uint32_t my_psn, Host& peer, verbs::QueuePair& peer_qp,
             std::uint32_t peer_psn) {
  verbs::InitAttrs init;
  init.port = static_cast<std::uint8_t>(o.common.ib_port);
  (void)qp.to_init(init);
  verbs::RtrAttrs rtr;
  rtr.remote.gid = peer.gid;
  rtr.remote.lid = peer.lid;
  rtr.global = !me.infiniband || o.common.gid_index.has_value();
  rtr.remote.qpn = peer_qp.qpn();
  rtr.remote.psn = peer_psn;
  rtr.port = init.port;
  rtr.sgid_index = me.gid_index;
  (void)qp.to_rtr(rtr);
  verbs::RtsAttrs rts;
  rts.sq_psn = my_psn;
  (void)qp.to_rts(rts);
  n.say(tr(M("connected"), me.role, what, lab::hex(qp.qpn(), 6), peer.role, what,
           lab::hex(peer_qp.qpn(), 6)));
}

// Connects the client's control and data QPs to the server's.
void connect_all(lab::Narrator& n, const Options& o, Host& c, Host& s) {
  const std::string ctrl = tr(M("ctrl"));
  const std::string data = tr(M("data"));
  // Each QP's first PSN: the client's in 0x0001xx-0x0002xx, the server's in
  // 0x000Axx-0x000Bxx, so that a capture tells them apart.
  constexpr std::uint32_t kClientCtrl = 0x000100, kServerCtrl = 0x000A00;
  constexpr std::uint32_t kClientData = 0x000200, kServerData = 0x000B00;
  connect(n, o, c, *c.ctrl, ctrl, kClientCtrl, s, *s.ctrl, kServerCtrl);
  connect(n, o, s, *s.ctrl, ctrl, kServerCtrl, c, *c.ctrl, kClientCtrl);
  connect(n, o, c, *c.data, data, kClientData, s, *s.data, kServerData);
  connect(n, o, s, *s.data, data, kServerData, c, *c.data, kClientData);
}

// What the server tells the client about one of its QPs, out of band.
void show_offer(lab::Narrator& n, Host& s, verbs::QueuePair& qp, const std::string& what,
                std::uint64_t va, std::uint32_t rkey, std::uint64_t len, std::uint32_t psn) {
  verbs::ConnInfo info;
  info.qpn = qp.qpn();
  info.psn = psn;
  info.gid = s.gid;
  info.lid = s.lid;
  info.va = va;
  info.rkey = rkey;
  info.len = len;
  n.say(tr(M("sees"), s.role, tr(M("client")), what, lab::hex(qp.qpn(), 6), lab::hex(rkey, 8)));
  n.block(verbs::format_conn_info(info));
}

ibv_wc wait_one(lab::Narrator& n, Host& h) {
  auto wcs = h.cq->wait(1, std::chrono::seconds(30));
  if (wcs.empty()) {
    ibv_wc none{};
    none.status = IBV_WC_GENERAL_ERR;
    return none;
  }
  lab::show_wc(n, h.role, wcs.front());
  return wcs.front();
}

// A WRITE of `size` bytes from the client's buffer at `local_off` on one of
// its QPs; returns its completion.
ibv_wc write(lab::Narrator& n, Host& c, verbs::QueuePair& qp, const std::string& what,
             std::size_t local_off, std::uint32_t size, std::uint64_t remote_va, std::uint32_t rkey,
             std::uint64_t wr_id) {
  ibv_sge sge{c.va(local_off), size, c.mr->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_va;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(qp.post_send(&wr, &bad), "ibv_post_send");
  n.say(tr(M("write"), c.role, size, what, lab::hex(rkey, 8)));
  return wait_one(n, c);
}

void fill(Host& h, std::size_t off, std::uint32_t size, std::uint8_t seed) {
  for (std::uint32_t i = 0; i < size; ++i) h.buf()[off + i] = static_cast<std::uint8_t>(seed + i);
}

bool landed(Host& c, std::size_t c_off, Host& s, std::size_t s_off, std::uint32_t size) {
  return std::memcmp(c.buf() + c_off, s.buf() + s_off, size) == 0;
}

bool untouched(Host& s, std::size_t s_off, std::uint32_t size) {
  for (std::uint32_t i = 0; i < size; ++i)
    if (s.buf()[s_off + i] != 0) return false;
  return true;
}

void show_state(lab::Narrator& n, Host& h, verbs::QueuePair& qp, const std::string& what) {
  n.say(tr(M("state"), h.role, what, lab::hex(qp.qpn(), 6), verbs::qp_state_name(qp.state())));
}

// Client and server with their devices open, the client's single PD and MR
// and its two QPs; the server's objects are made by each scenario.
void open_client(lab::Narrator& n, lab::Environment& env, const Options& o, Host& c,
                 const std::string& device) {
  c.role = tr(M("client"));
  open_host(n, env, o, c, device);
  c.pd = c.ctx->alloc_pd();
  c.mr = c.pd->reg_mr(c.buf(), kBuffer, IBV_ACCESS_LOCAL_WRITE);
  c.ctrl = make_qp(n, c, *c.pd, tr(M("ctrl")));
  c.data = make_qp(n, c, *c.pd, tr(M("data")));
}

// The server answers (the responder's device), the client asks.
std::string server_device(const lab::Environment& env, const Options& o) {
  return lab::responder_device(env, o.common);
}
std::string client_device(const lab::Environment& env, const Options& o) {
  return lab::requester_device(env, o.common);
}

// --- shared: one PD, one MR, two QPs ----------------------------------------------------
Scenario run_shared(lab::Narrator& n, lab::Environment& env, const Options& o) {
  n.step(tr(M("step.shared")));
  Host c, s;
  s.role = tr(M("server"));
  open_host(n, env, o, s, server_device(env, o));
  s.pd = s.ctx->alloc_pd();
  n.call(s.role, "ibv_alloc_pd(ctx)", "pd");
  s.mr = make_mr(n, s, *s.pd, 0, kBuffer, kRemote,
                 "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_REMOTE_READ");
  s.ctrl = make_qp(n, s, *s.pd, tr(M("ctrl")));
  s.data = make_qp(n, s, *s.pd, tr(M("data")));
  n.say(tr(M("why.shared")));
  open_client(n, env, o, c, client_device(env, o));
  connect_all(n, o, c, s);
  show_offer(n, s, *s.ctrl, tr(M("ctrl")), s.va(0), s.mr->rkey(), kBuffer, 0x000A00);
  show_offer(n, s, *s.data, tr(M("data")), s.va(0), s.mr->rkey(), kBuffer, 0x000B00);

  fill(c, 0, o.size, 0x10);
  fill(c, 256, o.size, 0x40);
  const ibv_wc w1 = write(n, c, *c.ctrl, tr(M("ctrl")), 0, o.size, s.va(0), s.mr->rkey(), 101);
  const ibv_wc w2 = write(n, c, *c.data, tr(M("data")), 256, o.size, s.va(256), s.mr->rkey(), 102);

  n.result()["scenarios"]["shared"] = {
      {"rkey_ctrl", s.mr->rkey()},
      {"rkey_data", s.mr->rkey()},
      {"writes", {lab::wc_json("ctrl", w1), lab::wc_json("data", w2)}}};
  n.check("shared.both", tr(M("check.shared.both")),
          w1.status == IBV_WC_SUCCESS && w2.status == IBV_WC_SUCCESS &&
              landed(c, 0, s, 0, o.size) && landed(c, 256, s, 256, o.size));

  Scenario sc{"shared", "wire.shared", {}};
  sc.expects.push_back(
      {s.ctrl->qpn(), c.ctrl->qpn(), wire::opcode::kRcWriteOnly, s.mr->rkey(), false});
  sc.expects.push_back(
      {s.data->qpn(), c.data->qpn(), wire::opcode::kRcWriteOnly, s.mr->rkey(), false});
  return sc;
}

// --- per-endpoint: a PD and an MR per endpoint --------------------------------------------
Scenario run_per_endpoint(lab::Narrator& n, lab::Environment& env, const Options& o) {
  n.step(tr(M("step.per_ep")));
  Host c, s;
  s.role = tr(M("server"));
  open_host(n, env, o, s, server_device(env, o));
  s.pd = s.ctx->alloc_pd();
  n.call(s.role, "ibv_alloc_pd(ctx)", "pd_ctrl");
  s.pd_data = s.ctx->alloc_pd();
  n.call(s.role, "ibv_alloc_pd(ctx)", "pd_data");
  const std::string acc = "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_REMOTE_READ";
  s.mr = make_mr(n, s, *s.pd, 0, kHalf, kRemote, acc);
  s.mr_data = make_mr(n, s, *s.pd_data, kHalf, kHalf, kRemote, acc);
  s.ctrl = make_qp(n, s, *s.pd, tr(M("ctrl")));
  s.data = make_qp(n, s, *s.pd_data, tr(M("data")));
  n.say(tr(M("why.per_ep")));
  n.say(tr(M("why.fi_mr_endpoint")));
  open_client(n, env, o, c, client_device(env, o));
  connect_all(n, o, c, s);
  show_offer(n, s, *s.ctrl, tr(M("ctrl")), s.va(0), s.mr->rkey(), kHalf, 0x000A00);
  show_offer(n, s, *s.data, tr(M("data")), s.va(kHalf), s.mr_data->rkey(), kHalf, 0x000B00);

  fill(c, 0, o.size, 0x20);
  const ibv_wc own =
      write(n, c, *c.data, tr(M("data")), 0, o.size, s.va(kHalf), s.mr_data->rkey(), 201);
  nlohmann::json writes = nlohmann::json::array({lab::wc_json("data", own)});
  n.check("per_ep.distinct", tr(M("check.per_ep.distinct")), s.mr->rkey() != s.mr_data->rkey());
  n.check("per_ep.own", tr(M("check.per_ep.own")),
          own.status == IBV_WC_SUCCESS && landed(c, 0, s, kHalf, o.size));

  Scenario sc{"per-endpoint", "wire.per_ep", {}};
  sc.expects.push_back(
      {s.data->qpn(), c.data->qpn(), wire::opcode::kRcWriteOnly, s.mr_data->rkey(), false});
  if (!o.no_misuse) {
    // The data MR's key, toward a valid address of the data MR, but on the
    // control QP: the control QP's PD does not hold that MR.
    fill(c, 512, o.size, 0x60);
    const ibv_wc wrong =
        write(n, c, *c.ctrl, tr(M("ctrl")), 512, o.size, s.va(kHalf + 512), s.mr_data->rkey(), 202);
    n.say(tr(M("why.wrong_key")));
    show_state(n, s, *s.ctrl, tr(M("ctrl")));
    show_state(n, s, *s.data, tr(M("data")));
    writes.push_back(lab::wc_json("ctrl", wrong));
    n.check("per_ep.wrong", tr(M("check.per_ep.wrong")),
            wrong.status == IBV_WC_REM_ACCESS_ERR && untouched(s, kHalf + 512, o.size) &&
                s.ctrl->state() == IBV_QPS_ERR && s.data->state() == IBV_QPS_RTS);
    sc.expects.push_back(
        {s.ctrl->qpn(), c.ctrl->qpn(), wire::opcode::kRcWriteOnly, s.mr_data->rkey(), true});
  }
  n.result()["scenarios"]["per-endpoint"] = {
      {"rkey_ctrl", s.mr->rkey()}, {"rkey_data", s.mr_data->rkey()}, {"writes", writes}};
  return sc;
}

// --- window: a type 2 memory window bound to the data QP ---------------------------------
Scenario run_window(lab::Narrator& n, lab::Environment& env, const Options& o) {
  n.step(tr(M("step.window")));
  Host c, s;
  s.role = tr(M("server"));
  open_host(n, env, o, s, server_device(env, o));
  s.pd = s.ctx->alloc_pd();
  n.call(s.role, "ibv_alloc_pd(ctx)", "pd");
  s.mr = make_mr(n, s, *s.pd, 0, kBuffer, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
                 "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_MW_BIND");
  n.say(tr(M("why.mw_bind")));
  s.ctrl = make_qp(n, s, *s.pd, tr(M("ctrl")));
  s.data = make_qp(n, s, *s.pd, tr(M("data")));
  s.mw = s.pd->alloc_mw(IBV_MW_TYPE_2);
  n.call(s.role, "ibv_alloc_mw(pd, IBV_MW_TYPE_2)",
         fmt::format("rkey {}", lab::hex(s.mw->rkey(), 8)));
  open_client(n, env, o, c, client_device(env, o));
  connect_all(n, o, c, s);

  // The bind: a work request on the data QP.
  const std::size_t win_off = 1024;
  const std::uint32_t win_len = 256;
  const std::uint32_t old_key = s.mw->rkey();
  ibv_send_wr bw{};
  bw.wr_id = 300;
  bw.opcode = IBV_WR_BIND_MW;
  bw.send_flags = IBV_SEND_SIGNALED;
  bw.bind_mw.mw = s.mw->get();
  bw.bind_mw.rkey = ibv_inc_rkey(s.mw->rkey());
  bw.bind_mw.bind_info.mr = s.mr->get();
  bw.bind_mw.bind_info.addr = s.va(win_off);
  bw.bind_mw.bind_info.length = win_len;
  bw.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(s.data->post_send(&bw, &bad), "ibv_post_send");
  n.call(s.role, "ibv_post_send(data_qp, IBV_WR_BIND_MW)", "0");
  n.field("bind_mw.mw", lab::hex(old_key, 8));
  n.field("bind_mw.rkey",
          fmt::format("ibv_inc_rkey({}) = {}", lab::hex(old_key, 8), lab::hex(bw.bind_mw.rkey, 8)),
          tr(M("why.inc_rkey")));
  n.field("bind_info.mr", lab::hex(s.mr->lkey(), 8));
  n.field("bind_info.addr", lab::hex(bw.bind_mw.bind_info.addr));
  n.field("bind_info.length", std::to_string(win_len));
  n.field("mw_access_flags", "IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_REMOTE_READ");
  const ibv_wc bwc = wait_one(n, s);
  const bool bound = bwc.status == IBV_WC_SUCCESS && bwc.opcode == IBV_WC_BIND_MW;
  if (bound) {
    s.mw->set_rkey(bw.bind_mw.rkey);
    n.say(tr(M("why.set_rkey")));
  }
  const std::uint32_t key = s.mw->rkey();
  n.say(
      tr(M("bound"), lab::hex(old_key, 8), lab::hex(key, 8), lab::hex(s.data->qpn(), 6), win_len));
  n.say(tr(M("why.window")));
  n.check("window.bind", tr(M("check.window.bind")),
          bound && key == ibv_inc_rkey(old_key) && (key >> 8) == (old_key >> 8));
  show_offer(n, s, *s.data, tr(M("data")), s.va(win_off), key, win_len, 0x000B00);

  nlohmann::json writes = nlohmann::json::array();
  Scenario sc{"window", "wire.window", {}};
  fill(c, 0, o.size, 0x30);
  const ibv_wc ok = write(n, c, *c.data, tr(M("data")), 0, o.size, s.va(win_off), key, 301);
  writes.push_back(lab::wc_json("data", ok));
  n.check("window.data", tr(M("check.window.data")),
          ok.status == IBV_WC_SUCCESS && landed(c, 0, s, win_off, o.size));
  sc.expects.push_back({s.data->qpn(), c.data->qpn(), wire::opcode::kRcWriteOnly, key, false});

  const std::size_t probe = win_off + win_len - o.size;  // inside the window, not yet written
  if (!o.no_misuse) {
    fill(c, 512, o.size, 0x70);
    const ibv_wc wrong = write(n, c, *c.ctrl, tr(M("ctrl")), 512, o.size, s.va(probe), key, 302);
    n.say(tr(M("why.wrong_key")));
    show_state(n, s, *s.ctrl, tr(M("ctrl")));
    writes.push_back(lab::wc_json("ctrl", wrong));
    n.check("window.ctrl", tr(M("check.window.ctrl")),
            wrong.status == IBV_WC_REM_ACCESS_ERR && untouched(s, probe, o.size) &&
                s.ctrl->state() == IBV_QPS_ERR);
    sc.expects.push_back({s.ctrl->qpn(), c.ctrl->qpn(), wire::opcode::kRcWriteOnly, key, true});
  }

  // Revoke the window.
  bool invalidated = false;
  nlohmann::json inv;
  if (o.invalidate == "send") {
    ibv_sge rsge{s.va(3072), 64, s.mr->lkey()};
    ibv_recv_wr rwr{};
    rwr.wr_id = 310;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    ibv_recv_wr* rbad = nullptr;
    verbs::check_rc(s.data->post_recv(&rwr, &rbad), "ibv_post_recv");
    n.call(s.role, "ibv_post_recv(data_qp, wr{sge.length=64})", "0");
    ibv_sge ssge{c.va(1024), 16, c.mr->lkey()};
    std::memcpy(c.buf() + 1024, "done, revoke it", 16);
    ibv_send_wr sw{};
    sw.wr_id = 311;
    sw.sg_list = &ssge;
    sw.num_sge = 1;
    sw.opcode = IBV_WR_SEND_WITH_INV;
    sw.send_flags = IBV_SEND_SIGNALED;
    sw.invalidate_rkey = key;
    verbs::check_rc(c.data->post_send(&sw, &bad), "ibv_post_send");
    n.call(c.role, "ibv_post_send(data_qp, IBV_WR_SEND_WITH_INV)", "0");
    n.field("invalidate_rkey", lab::hex(key, 8), tr(M("why.send_inv")));
    const ibv_wc sent = wait_one(n, c);
    const ibv_wc got = wait_one(n, s);
    invalidated = sent.status == IBV_WC_SUCCESS && got.status == IBV_WC_SUCCESS &&
                  got.opcode == IBV_WC_RECV && verbs::wc_with_invalidate(got, !env.simulated) &&
                  got.invalidated_rkey == key;
    inv = lab::wc_json("server", got);
    inv["invalidated_rkey"] = got.invalidated_rkey;
    sc.expects.push_back({s.data->qpn(), c.data->qpn(), wire::opcode::kRcSendOnlyInv, key, false});
  } else {
    ibv_send_wr lw{};
    lw.wr_id = 312;
    lw.opcode = IBV_WR_LOCAL_INV;
    lw.send_flags = IBV_SEND_SIGNALED;
    lw.invalidate_rkey = key;
    verbs::check_rc(s.data->post_send(&lw, &bad), "ibv_post_send");
    n.call(s.role, "ibv_post_send(data_qp, IBV_WR_LOCAL_INV)", "0");
    n.field("invalidate_rkey", lab::hex(key, 8), tr(M("why.local_inv")));
    const ibv_wc got = wait_one(n, s);
    invalidated = got.status == IBV_WC_SUCCESS && got.opcode == IBV_WC_LOCAL_INV;
    inv = lab::wc_json("server", got);
  }
  n.check("window.invalidated", tr(M("check.window.invalidated")), invalidated);

  // The same key, the same QP, the same address: refused now.
  fill(c, 768, o.size, 0x50);
  const ibv_wc after = write(n, c, *c.data, tr(M("data")), 768, o.size, s.va(probe), key, 303);
  show_state(n, s, *s.data, tr(M("data")));
  writes.push_back(lab::wc_json("data", after));
  n.check("window.revoked", tr(M("check.window.revoked")),
          after.status == IBV_WC_REM_ACCESS_ERR && untouched(s, probe, o.size));
  sc.expects.push_back({s.data->qpn(), c.data->qpn(), wire::opcode::kRcWriteOnly, key, true});
  n.say(tr(M("why.rxe_range")));

  n.result()["scenarios"]["window"] = {{"rkey_mr", s.mr->rkey()}, {"rkey_before_bind", old_key},
                                       {"rkey_window", key},      {"invalidate", o.invalidate},
                                       {"invalidation", inv},     {"writes", writes}};
  return sc;
}

// --- the wire ------------------------------------------------------------------------------

struct Packet {
  std::uint32_t dest_qp = 0;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::optional<std::uint32_t> rkey;  // RETH
  std::optional<std::uint32_t> ieth;
  std::optional<std::uint8_t> syndrome;
};

std::vector<Packet> read_packets(const lab::WireFacts& facts) {
  std::vector<Packet> out;
  for (const dissect::PacketRecord* r : facts.roce()) {
    const dissect::PacketRecord& rec = *r;
    const wire::IbPacket& ib = *rec.decoded.ib;
    Packet p;
    p.dest_qp = ib.bth.dest_qp;
    p.opcode = ib.bth.opcode;
    p.psn = ib.bth.psn;
    if (ib.reth) p.rkey = ib.reth->rkey;
    p.ieth = ib.ieth;
    if (ib.aeth) p.syndrome = ib.aeth->syndrome;
    out.push_back(p);
  }
  return out;
}

// Each expected request is on the wire toward its server QP with its key, and
// the next packet toward the client QP is the ACK or the NAK expected.
bool wire_matches(const std::vector<Packet>& pkts, const Scenario& sc, nlohmann::json& shown) {
  const std::uint8_t nak = wire::Aeth::nak(wire::NakCode::RemoteAccessError);
  std::size_t from = 0;
  bool ok = true;
  for (const Expect& e : sc.expects) {
    bool found = false;
    for (std::size_t i = from; i < pkts.size() && !found; ++i) {
      const Packet& p = pkts[i];
      const std::optional<std::uint32_t> key =
          e.opcode == wire::opcode::kRcSendOnlyInv ? p.ieth : p.rkey;
      if (p.dest_qp != e.server_qpn || p.opcode != e.opcode || key != e.key) continue;
      for (std::size_t k = i + 1; k < pkts.size(); ++k) {
        const Packet& a = pkts[k];
        if (a.dest_qp != e.client_qpn || a.opcode != wire::opcode::kRcAcknowledge) continue;
        const bool is_nak = a.syndrome == nak;
        const bool is_ack = a.syndrome && wire::Aeth{*a.syndrome, 0}.kind() == wire::AckKind::Ack;
        found = e.nak ? is_nak : is_ack;
        shown.push_back({{"request_psn", p.psn},
                         {"dest_qp", p.dest_qp},
                         {"opcode", p.opcode},
                         {"key", *key},
                         {"answer_syndrome", a.syndrome.value_or(0)}});
        from = k + 1;
        break;
      }
    }
    ok = ok && found;
  }
  return ok;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  if (o.scenario != "shared" && o.scenario != "per-endpoint" && o.scenario != "window" &&
      o.scenario != "all")
    throw verbs::UsageError(tr(M("bad.scenario"), o.scenario));
  if (o.invalidate != "send" && o.invalidate != "local")
    throw verbs::UsageError(tr(M("bad.invalidate"), o.invalidate));
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  n.result()["scenarios"] = nlohmann::json::object();

  std::vector<Scenario> done;
  const bool all = o.scenario == "all";
  if (all || o.scenario == "shared") done.push_back(run_shared(n, env, o));
  if (all || o.scenario == "per-endpoint") done.push_back(run_per_endpoint(n, env, o));
  if (all || o.scenario == "window") done.push_back(run_window(n, env, o));

  n.step(tr(M("step.wire")));
  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    const auto pkts = read_packets(*facts);
    nlohmann::json jw = nlohmann::json::object();
    for (const Scenario& sc : done) {
      nlohmann::json shown = nlohmann::json::array();
      const bool ok = wire_matches(pkts, sc, shown);
      for (const auto& r : shown) {
        const std::uint8_t syn = r.at("answer_syndrome").get<std::uint8_t>();
        const std::uint8_t op = r.at("opcode").get<std::uint8_t>();
        n.say(tr(M("wire.line"), sc.name, lab::hex(r.at("dest_qp").get<std::uint32_t>(), 6),
                 op == wire::opcode::kRcSendOnlyInv ? "SEND Only with Invalidate, IETH"
                                                    : "WRITE Only, RETH rkey",
                 lab::hex(r.at("key").get<std::uint32_t>(), 8),
                 wire::Aeth{syn, 0}.kind() == wire::AckKind::Ack ? "ACK" : "NAK",
                 lab::hex(syn, 2)));
      }
      n.check(sc.check_id, tr(M("check.wire"), sc.name), ok);
      jw[sc.name] = shown;
    }
    n.result()["wire_checks"] = jw;
  }
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--scenario", o.scenario, tr(M("opt.scenario")))->capture_default_str();
    app.add_option("--invalidate", o.invalidate, tr(M("opt.invalidate")))->capture_default_str();
    app.add_flag("--no-misuse", o.no_misuse, tr(M("opt.no_misuse")));
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 128u))
        ->capture_default_str();
  };
  return lab::run(argc, argv, "lab13", "lab13-mr-scope", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}
