// connect_pair_cm: the rdma_cm way of connecting two endpoints, narrated.
#include "rdmalab/lab/cm_connect.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <functional>
#include <stdexcept>

#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/sim_backend.hpp"

namespace rdmalab::lab {

namespace {

using i18n::Message;
using i18n::tr;

constexpr std::array kCatalog{
    Message{"cm.intro",
            "in band: no TCP side channel. The CM (rdma_cm) exchanges QPN, first PSN, path and "
            "limits in REQ/REP/RTU messages on QP 1 of each port, and hands each side the QP "
            "attributes to apply",
            "带内建连：不需要 TCP 旁路通道。连接管理器（rdma_cm）在各端口的 QP 1 上用 REQ/REP/RTU "
            "消息交换 QPN、起始 PSN、路径和各项上限，并把要设置的 QP 属性交给双方"},
    Message{"cm.listen", "the {} listens for connections on {}:{}", "{}在 {}:{} 上监听连接"},
    Message{"cm.resolve", "the {} resolves {} to an RDMA device and a route",
            "{}把 {} 解析为 RDMA 设备和路由"},
    Message{"cm.bound", "bound to device {}", "绑定到设备 {}"},
    Message{"cm.event", "event {}", "事件 {}"},
    Message{"cm.connect", "the {} sends a CM REQ naming its QP 0x{:06x}",
            "{}发送 CM REQ，其中写明自己的 QP 0x{:06x}"},
    Message{"cm.request", "the {} gets the request of QP 0x{:06x}; private data {} bytes",
            "{}收到 QP 0x{:06x} 的连接请求；私有数据 {} 字节"},
    Message{"cm.attrs", "the {} moves QP 0x{:06x} with the attributes rdma_init_qp_attr returns",
            "{}按 rdma_init_qp_attr 返回的属性迁移 QP 0x{:06x}"},
    Message{"cm.psn_note",
            "rq_psn is the PSN this side announced in its REQ/REP; sq_psn is the one the peer "
            "announced: each side sends from where the other expects",
            "rq_psn 是本端在 REQ/REP 中通告的 PSN；sq_psn 是对端通告的 PSN：每一端都从对方期望的"
            "位置开始发送"},
    Message{"cm.accept", "the {} accepts: a CM REP names QP 0x{:06x}",
            "{}接受连接：CM REP 写明 QP 0x{:06x}"},
    Message{"cm.establish", "the {} confirms with rdma_establish: a CM RTU",
            "{}用 rdma_establish 确认：发送 CM RTU"},
    Message{"cm.failed", "the connection was not established: {} (status {})",
            "连接没有建立：{}（状态 {}）"},
    Message{"cm.no_event", "no CM event within {} s while waiting for {}",
            "在 {} 秒内没有等到 CM 事件 {}"},
    Message{"cm.wrong_device",
            "rdma_cm bound the connection to device {} but this side opened {}: give -d the "
            "device that carries the address",
            "rdma_cm 把连接绑定到设备 {}，而本端打开的是 {}：请用 -d 指定承载该地址的设备"},
    Message{"cm.answer_disconnect",
            "the {} was told DISCONNECTED and calls rdma_disconnect: the CM DREP",
            "{}收到 DISCONNECTED 事件，调用 rdma_disconnect：发送 CM DREP"},
    Message{"cm.peer", "receiver", "接收端"},
    Message{
        "cm.no_ipoib",
        "device {} is an InfiniBand port: rdma_cm needs its IPoIB address, which this lab "
        "finds on the simulator only (use the out-of-band exchange, without --cm)",
        "设备 {} 是 InfiniBand 端口：rdma_cm 需要它的 IPoIB 地址，而本实验只能在模拟器上找到这个"
        "地址（请使用带外交换，不加 --cm）"},
    Message{"cm.no_ipv4", "device {} has no IPv4 RoCEv2 GID: rdma_cm needs an IP address",
            "设备 {} 没有 IPv4 RoCEv2 GID：rdma_cm 需要 IP 地址"},
    Message{
        "cm.disconnect",
        "the {} disconnects: CM DREQ; the peer, told DISCONNECTED, calls rdma_disconnect "
        "too, which sends the DREP",
        "{}断开连接：发送 CM DREQ；对端收到 DISCONNECTED 事件后也调用 rdma_disconnect，由此发出 "
        "DREP"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

struct CmState {
  std::unique_ptr<verbs::CmChannel> passive_ch, active_ch;
  std::unique_ptr<verbs::CmId> listener, active, accepted;
};

// The IP address rdma_cm resolves for e's port: on RoCE the IPv4 address its
// GID holds; on InfiniBand its IPoIB address, which the simulator's host
// configuration gives (a real port's is on its IPoIB interface).
std::string ipv4_of(const Environment& env, const Endpoint& e) {
  if (e.infiniband) {
    auto* sim = dynamic_cast<verbs::SimBackend*>(env.backend.get());
    const sim::Device* host = sim != nullptr ? sim->device(e.ctx->info().name) : nullptr;
    if (host == nullptr) throw std::runtime_error(tr(M("cm.no_ipoib"), e.ctx->info().name));
    return host->config().ip.to_string();
  }
  const bool mapped =
      std::all_of(e.gid.raw, e.gid.raw + 10, [](std::uint8_t b) { return b == 0; }) &&
      e.gid.raw[10] == 0xFF && e.gid.raw[11] == 0xFF;
  if (!mapped) throw std::runtime_error(tr(M("cm.no_ipv4"), e.ctx->info().name));
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, e.gid.raw + 12, text, sizeof text);
  return text;
}

verbs::CmEvent wait_for(Narrator& n, verbs::CmChannel& ch, verbs::CmEventType want,
                        std::string_view want_name,
                        std::chrono::seconds within = std::chrono::seconds(10)) {
  auto e = ch.get_event(within);
  if (!e) throw std::runtime_error(tr(M("cm.no_event"), within.count(), want_name));
  n.call("rdma_get_cm_event(channel)", tr(M("cm.event"), e->name));
  if (e->type != want) throw std::runtime_error(tr(M("cm.failed"), e->name, e->status));
  return std::move(*e);
}

void apply(Narrator& n, Endpoint& e, const verbs::CmId& id) {
  n.say(tr(M("cm.attrs"), e.role, e.qp->qpn()));
  for (ibv_qp_state s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
    int mask = 0;
    ibv_qp_attr a = id.init_qp_attr(s, mask);
    verbs::check_rc(
        e.qp->modify(a, mask), "ibv_modify_qp",
        verbs::ErrorContext{e.ctx->info().name, 1, e.qp->qpn(), verbs::qp_attr_mask_names(mask)});
    n.call(fmt::format("rdma_init_qp_attr(id, {}) + ibv_modify_qp", verbs::qp_state_name(s)),
           verbs::qp_attr_mask_names(mask));
    switch (s) {
      case IBV_QPS_INIT:
        n.field("qp_access_flags", verbs::access_flag_names(a.qp_access_flags));
        break;
      case IBV_QPS_RTR:
        n.field("dest_qp_num", hex(a.dest_qp_num, 6));
        n.field("rq_psn", hex(a.rq_psn, 6));
        n.field("path_mtu", std::to_string(verbs::mtu_bytes(a.path_mtu)));
        n.field("max_dest_rd_atomic", std::to_string(a.max_dest_rd_atomic));
        n.field("min_rnr_timer", std::to_string(a.min_rnr_timer));
        break;
      default:
        n.field("sq_psn", hex(a.sq_psn, 6));
        n.field("timeout", std::to_string(a.timeout));
        n.field("retry_cnt", std::to_string(a.retry_cnt));
        n.field("rnr_retry", std::to_string(a.rnr_retry));
        n.field("max_rd_atomic", std::to_string(a.max_rd_atomic));
        break;
    }
  }
}

/// The passive half: listen on the endpoint's address.
void listen_on(Narrator& n, CmState& st, Environment& env, Endpoint& passive, std::uint16_t port) {
  const std::string passive_ip = ipv4_of(env, passive);
  if (!st.passive_ch) st.passive_ch = env.backend->create_cm_channel();
  n.say(tr(M("cm.listen"), passive.role, passive_ip, port));
  st.listener = st.passive_ch->create_id();
  st.listener->listen(passive_ip, port);
  n.call(fmt::format("rdma_create_id(RDMA_PS_TCP); rdma_bind_addr({}:{}); rdma_listen", passive_ip,
                     port),
         "0");
}

/// Then wait for the request, QP to RTS, `before_accept`, accept.
void accept_request(Narrator& n, CmState& st, Endpoint& passive, std::chrono::seconds wait_request,
                    const std::function<void()>& before_accept, const ConnectSpec& c) {
  verbs::CmEvent req = wait_for(n, *st.passive_ch, verbs::CmEventType::ConnectRequest,
                                "CONNECT_REQUEST", wait_request);
  st.accepted = std::move(req.new_id);
  if (st.accepted->device_name() != passive.ctx->info().name)
    throw std::runtime_error(
        tr(M("cm.wrong_device"), st.accepted->device_name(), passive.ctx->info().name));
  n.say(tr(M("cm.request"), passive.role, req.param.qp_num, req.param.private_data.size()));
  apply(n, passive, *st.accepted);
  if (before_accept) before_accept();
  verbs::CmConnParam answer;
  answer.qp_num = passive.qp->qpn();
  answer.rnr_retry_count = c.rnr_retry;  // the REP's RNR retry count is the active side's
  n.say(tr(M("cm.accept"), passive.role, answer.qp_num));
  st.accepted->accept(answer);
  n.call(fmt::format("rdma_accept(id, {{qp_num {}, rnr_retry_count {}}})", hex(answer.qp_num, 6),
                     c.rnr_retry),
         "0");
}

/// The active half up to the REQ.
void resolve_and_connect(Narrator& n, CmState& st, Environment& env, Endpoint& active,
                         const std::string& host, std::uint16_t port, const ConnectSpec& c) {
  const std::string active_ip = ipv4_of(env, active);
  if (!st.active_ch) st.active_ch = env.backend->create_cm_channel();
  n.say(tr(M("cm.resolve"), active.role, host));
  st.active = st.active_ch->create_id();
  st.active->resolve_addr(active_ip, host, port, std::chrono::milliseconds(2000));
  n.call(fmt::format("rdma_resolve_addr(src {}, dst {}:{}, 2000 ms)", active_ip, host, port), "0");
  (void)wait_for(n, *st.active_ch, verbs::CmEventType::AddrResolved, "ADDR_RESOLVED");
  st.active->resolve_route(std::chrono::milliseconds(2000));
  n.call("rdma_resolve_route(2000 ms)", "0");
  (void)wait_for(n, *st.active_ch, verbs::CmEventType::RouteResolved, "ROUTE_RESOLVED");
  n.say(tr(M("cm.bound"), st.active->device_name()));
  if (st.active->device_name() != active.ctx->info().name)
    throw std::runtime_error(
        tr(M("cm.wrong_device"), st.active->device_name(), active.ctx->info().name));

  verbs::CmConnParam offer;
  offer.qp_num = active.qp->qpn();
  offer.retry_count = c.retry_cnt;
  n.say(tr(M("cm.connect"), active.role, offer.qp_num));
  st.active->connect(offer);
  n.call(fmt::format("rdma_connect(id, {{qp_num {}, responder_resources 1, initiator_depth 1, "
                     "retry_count {}, rnr_retry_count 7}})",
                     hex(offer.qp_num, 6), c.retry_cnt),
         "0");
}

/// The active half after the REP.
void establish(Narrator& n, CmState& st, Endpoint& active) {
  (void)wait_for(n, *st.active_ch, verbs::CmEventType::ConnectResponse, "CONNECT_RESPONSE");
  apply(n, active, *st.active);
  n.say(tr(M("cm.establish"), active.role));
  st.active->establish();
  n.call("rdma_establish(id)", "0");
}

std::shared_ptr<CmState> state_of(Environment& env) {
  if (!env.cm) env.cm = std::make_shared<CmState>();
  return std::static_pointer_cast<CmState>(env.cm);
}

}  // namespace

void connect_pair_cm(Narrator& n, Environment& env, Endpoint& active, Endpoint& passive,
                     const ConnectSpec& c) {
  n.say(tr(M("cm.intro")));
  auto st = state_of(env);
  listen_on(n, *st, env, passive, kCmPort);
  resolve_and_connect(n, *st, env, active, ipv4_of(env, passive), kCmPort, c);
  accept_request(n, *st, passive, std::chrono::seconds(10), {}, c);
  establish(n, *st, active);
  (void)wait_for(n, *st->passive_ch, verbs::CmEventType::Established, "ESTABLISHED");
  n.say(tr(M("cm.psn_note")));
}

void accept_cm(Narrator& n, Environment& env, Endpoint& passive, std::uint16_t port,
               const std::function<void()>& before_accept, const ConnectSpec& c) {
  n.say(tr(M("cm.intro")));
  auto st = state_of(env);
  listen_on(n, *st, env, passive, port);
  accept_request(n, *st, passive, std::chrono::seconds(120), before_accept, c);
  (void)wait_for(n, *st->passive_ch, verbs::CmEventType::Established, "ESTABLISHED");
  n.say(tr(M("cm.psn_note")));
}

void connect_cm(Narrator& n, Environment& env, Endpoint& active, const std::string& host,
                std::uint16_t port, const ConnectSpec& c) {
  n.say(tr(M("cm.intro")));
  auto st = state_of(env);
  resolve_and_connect(n, *st, env, active, host, port, c);
  establish(n, *st, active);
  n.say(tr(M("cm.psn_note")));
}

void await_disconnect_cm(Narrator& n, Environment& env, const Endpoint& passive) {
  auto st = std::static_pointer_cast<CmState>(env.cm);
  if (!st || !st->accepted) return;
  (void)wait_for(n, *st->passive_ch, verbs::CmEventType::Disconnected, "DISCONNECTED",
                 std::chrono::seconds(60));
  n.say(tr(M("cm.answer_disconnect"), passive.role));
  st->accepted->disconnect();
  n.call("rdma_disconnect(id)", "0");
}

void disconnect_cm(Narrator& n, Environment& env, const Endpoint& active) {
  auto st = std::static_pointer_cast<CmState>(env.cm);
  if (!st || !st->active) return;
  n.say(tr(M("cm.disconnect"), active.role));
  st->active->disconnect();
  n.call("rdma_disconnect(id)", "0");
  if (st->accepted) {  // both sides in this process: the passive side answers
    (void)wait_for(n, *st->passive_ch, verbs::CmEventType::Disconnected, "DISCONNECTED");
    n.say(tr(M("cm.answer_disconnect"), tr(M("cm.peer"))));
    st->accepted->disconnect();
    n.call("rdma_disconnect(id)", "0");
  }
  (void)wait_for(n, *st->active_ch, verbs::CmEventType::Disconnected, "DISCONNECTED",
                 std::chrono::seconds(30));
}

std::span<const i18n::Message> cm_connect_catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab
