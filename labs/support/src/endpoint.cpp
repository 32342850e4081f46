#include "rdmalab/lab/endpoint.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/oob.hpp"

namespace rdmalab::lab {
namespace {

using i18n::Message;
using i18n::tr;
constexpr std::array kCatalog{
    Message{"peer_dev_sim",
            "--peer-dev names a real device for the responder; on the simulator the requester is "
            "always host sim1 and the responder sim0 (use --backend verbs)",
            "--peer-dev 为响应端指定一个真实设备；在模拟器上请求端总是主机 sim1、响应端总是 "
            "sim0（请使用 --backend verbs）"},
    Message{"port", "{0}: port {1} {2}, active MTU {3}, link layer {4}",
            "{0}：端口 {1} {2}，当前 MTU {3}，链路层 {4}"},
    Message{"gid", "{0}: GID index {1} = {2} ({3}) is the source address of its packets",
            "{0}：GID 索引 {1} = {2}（{3}），作为其报文的源地址"},
    Message{"no_gid", "GID index not found on {}", "{} 上找不到该 GID 索引"},
    Message{"lid",
            "{0}: LID {1}, given by the subnet manager at LID {2}, is the address of its port: "
            "packets carry it in the LRH. GID index {3} = {4} goes into a GRH only when one is "
            "asked for (-g)",
            "{0}：LID {1} 由 LID {2} 上的子网管理器分配，是其端口的地址，报文的 LRH 中携带它。"
            "GID 索引 {3} = {4} 只在要求使用 GRH（-g）时才放进 GRH"},
    Message{"link_layer_verbs",
            "--link-layer is for the simulator: on real verbs the device's port decides it "
            "(ibv_devinfo shows link_layer)",
            "--link-layer 只用于模拟器：在真实 verbs 上由设备端口决定链路层（ibv_devinfo 会显示 "
            "link_layer）"},
    Message{"why.pd",
            "the protection domain groups MRs and QPs: a QP may only use MRs of its own PD",
            "保护域把 MR 和 QP 归为一组：QP 只能使用同一保护域中的 MR"},
    Message{"why.mr",
            "registration pins the buffer and gives the NIC its address translation; the lkey goes "
            "into our own SGEs, the rkey lets a peer reach this memory (if the access flags allow)",
            "内存注册会锁定缓冲区并把地址映射交给网卡；lkey 填在本地 SGE 中，rkey "
            "让对端可以访问这块内存"
            "（前提是访问标志允许）"},
    Message{"why.cq", "the work completions of both queues of the QP land here",
            "QP 两个队列的工作完成都会放到这里"},
    Message{"why.qp", "its number goes into the destination QP field of every packet sent to it",
            "它的编号会写进发往它的每个报文 BTH 中的目的 QP 字段"},
    Message{"exchange", "{0} tells its peer (out of band, e.g. over TCP):",
            "{0}通过带外方式（例如 TCP）告诉对端："},
    Message{"transition", "{0}, QP {1}:", "{0}，QP {1}："},
    Message{"wc", "{0} completion: status {1}, opcode {2}, wr_id {3}, byte_len {4}, qp_num {5}",
            "{0}的 WC：status {1}，opcode {2}，wr_id {3}，byte_len {4}，qp_num {5}"},
    Message{"poll", "ibv_poll_cq({0} CQ) until {1} completion(s)",
            "ibv_poll_cq（{0}的 CQ），直到收到 {1} 个工作完成"},
    Message{"got", "{} completion(s)", "{} 个工作完成"},
    Message{"try", "Things to try:", "可以尝试："},
    Message{"active", "ACTIVE", "ACTIVE（活动）"},
    Message{"inactive", "not ACTIVE", "非 ACTIVE"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> endpoint_catalog() noexcept {
  return kCatalog;
}

ibv_sge Endpoint::sge(std::size_t offset, std::uint32_t len) noexcept {
  return ibv_sge{reinterpret_cast<std::uintptr_t>(buf() + offset), len, mr->lkey()};
}

sim::Fabric* Environment::fabric() const noexcept {
  auto* s = dynamic_cast<verbs::SimBackend*>(backend.get());
  return s != nullptr ? &s->fabric() : nullptr;
}

sim::LinkConfig* Environment::link(std::string_view from, std::string_view to) const {
  auto* s = dynamic_cast<verbs::SimBackend*>(backend.get());
  if (s == nullptr) return nullptr;
  sim::Device* a = s->device(from);
  sim::Device* b = s->device(to);
  if (a == nullptr || b == nullptr) return nullptr;
  return &s->fabric().link(*a, *b);
}

Environment open_environment(Narrator& n, const CommonOptions& o, verbs::SimBackendOptions sim) {
  sim.fabric.seed = o.seed;
  sim.capture_path = o.capture;
  if (o.port_mtu) sim.port_mtu = static_cast<std::uint32_t>(*o.port_mtu);
  if (o.link_layer == "ib") sim.fabric.link_layer = wire::LinkLayer::Infiniband;
  // Two processes can only meet over real verbs.
  auto choice = *verbs::parse_backend_choice(o.backend);
  if (choice == verbs::BackendChoice::Auto && (o.listen || !o.connect.empty()))
    choice = verbs::BackendChoice::Verbs;
  // Only the simulator writes a capture: create its folder for it alone (a
  // run on real verbs may well sit in a read-only directory).
  const bool simulated =
      choice == verbs::BackendChoice::Sim ||
      (choice == verbs::BackendChoice::Auto && verbs::count_verbs_devices() == 0);
  if (const auto dir = std::filesystem::path(o.capture).parent_path(); simulated && !dir.empty())
    std::filesystem::create_directories(dir);
  std::string said;
  Environment env;
  env.backend = verbs::choose_backend(choice, std::move(sim), &said);
  env.simulated = env.backend->kind() == verbs::BackendKind::Sim;
  if (env.simulated && !o.peer_device.empty()) throw verbs::UsageError(tr(M("peer_dev_sim")));
  if (!env.simulated && o.link_layer != "roce") throw verbs::UsageError(tr(M("link_layer_verbs")));
  n.say(said);
  n.result()["backend"] = env.simulated ? "sim" : "verbs";
  return env;
}

std::string wire_address(const Endpoint& e) {
  if (e.infiniband) return wire::IpAddress::from_lid(e.lid).to_string();
  // A RoCEv2 GID of an IPv4 address (::ffff:a.b.c.d) travels as IPv4.
  static constexpr std::array<std::uint8_t, 12> kV4Mapped = {0, 0, 0, 0, 0,    0,
                                                             0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(e.gid.raw, kV4Mapped.data(), kV4Mapped.size()) == 0)
    return wire::IpAddress::from_v4({e.gid.raw[12], e.gid.raw[13], e.gid.raw[14], e.gid.raw[15]})
        .to_string();
  std::array<std::uint8_t, 16> raw{};
  std::memcpy(raw.data(), e.gid.raw, raw.size());
  return wire::IpAddress::from_v6(raw).to_string();
}

void choose_gid(Narrator& n, Endpoint& e, const CommonOptions& o) {
  // On RoCE the GID is the IP address the packets carry: the RoCEv2 GID of
  // an IPv4 address unless -x says otherwise.
  // On InfiniBand the port's LID, from the subnet manager, is its address.
  const std::string& dev = e.ctx->info().name;
  const verbs::PortInfo port = e.ctx->query_port(static_cast<std::uint8_t>(o.ib_port));
  e.infiniband = port.link_layer == IBV_LINK_LAYER_INFINIBAND;
  e.lid = port.lid;
  e.sm_lid = port.sm_lid;
  const auto gids = e.ctx->gid_table(static_cast<std::uint8_t>(o.ib_port));
  const auto chosen = verbs::choose_gid(gids, o.gid_index);
  if (!chosen) throw verbs::UsageError(tr(M("no_gid"), dev));
  e.gid_index = *chosen;
  for (const auto& g : gids)
    if (g.index == e.gid_index) {
      e.gid = g.gid;
      if (e.infiniband)
        n.say(tr(M("lid"), dev, e.lid, e.sm_lid, g.index, g.to_string()));
      else
        n.say(tr(M("gid"), dev, g.index, g.to_string(), verbs::gid_type_name(g.type)));
    }
}

void open_endpoint(Narrator& n, Environment& env, Endpoint& e, const EndpointSpec& spec,
                   const CommonOptions& o) {
  const auto port_no = static_cast<std::uint8_t>(o.ib_port);
  e.ctx = env.backend->open(spec.device);
  const std::string& dev = e.ctx->info().name;
  n.call(fmt::format("ibv_open_device({})", dev), {});
  const auto port = e.ctx->query_port(port_no);
  n.say(tr(M("port"), dev, o.ib_port,
           port.state == IBV_PORT_ACTIVE ? tr(M("active")) : tr(M("inactive")),
           verbs::mtu_bytes(port.active_mtu),
           port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand"));
  choose_gid(n, e, o);

  e.pd = e.ctx->alloc_pd();
  n.call("ibv_alloc_pd(ctx)", tr(M("why.pd")));
  e.storage.assign((spec.buffer + 7) / 8, 0);
  e.mr = e.pd->reg_mr(e.buf(), spec.buffer, spec.access);
  // Printed as the flags are spelled in C: IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_...
  std::string access = "IBV_ACCESS_" + verbs::access_flag_names(static_cast<unsigned>(spec.access));
  for (std::size_t at = access.find('|'); at != std::string::npos; at = access.find('|', at + 1))
    access.insert(at + 1, "IBV_ACCESS_");
  n.call(fmt::format("ibv_reg_mr(pd, buf, {}, {})", spec.buffer, access),
         fmt::format("lkey {}  rkey {}", hex(e.mr->lkey(), 8), hex(e.mr->rkey(), 8)));
  n.say(tr(M("why.mr")));
  e.cq = e.ctx->create_cq(spec.cqe);
  n.call(fmt::format("ibv_create_cq(ctx, cqe={})", spec.cqe), tr(M("why.cq")));
  verbs::QpInitAttrs init;
  init.type = spec.type;
  init.send_cq = e.cq.get();
  init.recv_cq = e.cq.get();
  init.max_send_wr = init.max_recv_wr = spec.max_wr;
  e.qp = e.pd->create_qp(init);
  n.call(fmt::format("ibv_create_qp(pd, qp_type={}, max_send_wr={}, max_recv_wr={})",
                     spec.type == IBV_QPT_RC   ? "IBV_QPT_RC"
                     : spec.type == IBV_QPT_UC ? "IBV_QPT_UC"
                                               : "IBV_QPT_UD",
                     spec.max_wr, spec.max_wr),
         fmt::format("qp_num {}", hex(e.qp->qpn(), 6)));
  n.say(tr(M("why.qp")));
}

std::string requester_device(const Environment& env, const CommonOptions& o) {
  return env.simulated ? "sim1" : o.device;
}

std::string responder_device(const Environment& env, const CommonOptions& o) {
  if (env.simulated) return "sim0";
  return o.peer_device.empty() ? o.device : o.peer_device;
}

void open_pair(Narrator& n, Environment& env, Endpoint& requester, Endpoint& responder,
               EndpointSpec requester_spec, EndpointSpec responder_spec, const CommonOptions& o) {
  requester_spec.device = requester_device(env, o);
  responder_spec.device = responder_device(env, o);
  open_endpoint(n, env, requester, requester_spec, o);
  open_endpoint(n, env, responder, responder_spec, o);
}

verbs::ConnInfo conn_info(const Endpoint& e, int mtu, bool one_sided) {
  verbs::ConnInfo info;
  info.qpn = e.qp->qpn();
  info.psn = e.first_psn;
  info.gid = e.gid;
  info.lid = e.lid;
  info.mtu = mtu;
  if (one_sided) {
    info.va = e.mr->va();
    info.rkey = e.mr->rkey();
    info.len = e.mr->length();
  }
  return info;
}

verbs::ConnInfo show_exchange(Narrator& n, const Endpoint& e, int mtu, bool one_sided) {
  const verbs::ConnInfo info = conn_info(e, mtu, one_sided);
  n.say(tr(M("exchange"), e.role));
  n.block(verbs::format_conn_info(info));
  return info;
}

void connect_pair(Narrator& n, Endpoint& a, Endpoint& b, const ConnectSpec& c,
                  const CommonOptions& o, bool b_one_sided) {
  const verbs::ConnInfo from_a = show_exchange(n, a, c.mtu, false);
  const verbs::ConnInfo from_b = show_exchange(n, b, c.mtu, b_one_sided);
  connect_rc(n, a, from_b, c, o);
  connect_rc(n, b, from_a, c, o);
}

void connect_rc(Narrator& n, Endpoint& me, const verbs::ConnInfo& peer, const ConnectSpec& c,
                const CommonOptions& o) {
  n.say(tr(M("transition"), me.role, hex(me.qp->qpn(), 6)));
  verbs::InitAttrs init;
  init.port = static_cast<std::uint8_t>(o.ib_port);
  n.block(me.qp->to_init(init).to_string());
  verbs::RtrAttrs rtr;
  rtr.remote.gid = peer.gid;
  rtr.remote.lid = peer.lid;
  rtr.remote.qpn = peer.qpn;
  rtr.remote.psn = peer.psn;  // what we expect first = the peer's first send PSN
  rtr.path_mtu = *verbs::mtu_from_bytes(c.mtu);
  rtr.port = static_cast<std::uint8_t>(o.ib_port);
  rtr.sgid_index = me.gid_index;
  // InfiniBand within a subnet: a local address vector unless -g asks for
  // a GRH (RoCE always has one).
  rtr.global = !me.infiniband || o.gid_index.has_value();
  rtr.min_rnr_timer = c.min_rnr_timer;
  rtr.max_dest_rd_atomic = c.max_dest_rd_atomic;
  rtr.traffic_class = c.traffic_class;
  rtr.sl = c.sl;
  n.block(me.qp->to_rtr(rtr).to_string());
  verbs::RtsAttrs rts;
  rts.sq_psn = me.first_psn;
  rts.timeout = c.timeout;
  rts.retry_cnt = c.retry_cnt;
  rts.rnr_retry = c.rnr_retry;
  rts.max_rd_atomic = c.max_rd_atomic;
  n.block(me.qp->to_rts(rts).to_string());
}

WrChain::WrChain(Endpoint& local, std::uint32_t count, std::uint32_t size, ibv_wr_opcode op,
                 std::uint64_t remote_va, std::uint32_t rkey)
    : sges(count), wrs(count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    sges[i] = local.sge(std::size_t{i} * size, size);
    wrs[i].wr_id = i + 1;
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].opcode = op;
    wrs[i].send_flags = IBV_SEND_SIGNALED;
    wrs[i].wr.rdma.remote_addr = remote_va + std::uint64_t{i} * size;
    wrs[i].wr.rdma.rkey = rkey;
    wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
  }
}

void show_wc(Narrator& n, const std::string& who, const ibv_wc& wc) {
  n.say(tr(M("wc"), who, verbs::wc_status_name(wc.status), verbs::wc_opcode_name(wc.opcode),
           wc.wr_id, wc.byte_len, hex(wc.qp_num, 6)));
  if (wc.status != IBV_WC_SUCCESS) n.block(verbs::describe_wc(wc));
}

std::vector<ibv_wc> poll_and_show(Narrator& n, Endpoint& e, std::size_t count,
                                  std::chrono::milliseconds timeout) {
  // On the simulator, polling an empty CQ is what moves virtual time on.
  auto wcs = e.cq->wait(count, timeout);
  n.call(tr(M("poll"), e.role, count), tr(M("got"), wcs.size()));
  for (const auto& wc : wcs) show_wc(n, e.role, wc);
  return wcs;
}

nlohmann::json wc_json(const std::string& side, const ibv_wc& wc) {
  nlohmann::json j{{"side", side},
                   {"status", verbs::wc_status_name(wc.status)},
                   {"opcode", verbs::wc_opcode_name(wc.opcode)},
                   {"wr_id", wc.wr_id},
                   {"byte_len", wc.byte_len}};
  if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) j["imm_data"] = ntohl(wc.imm_data);
  return j;
}

void suggest(Narrator& n, const std::vector<std::string>& lines) {
  if (!n.narrating()) return;
  std::cout << "\n" << tr(M("try")) << "\n";
  for (const auto& l : lines) std::cout << "  " << l << "\n";
}

}  // namespace rdmalab::lab
