// In-band connection set-up through the wrapper's CM interface, compiled once
// per backend like the conformance suite: on the simulator between its two
// hosts, on real verbs between the IPv4 addresses of the devices' RoCEv2
// GIDs (RDMALAB_DEVICES="rxe0,rxe1": rxe1 connects to rxe0 across the wire;
// one device: to itself). The QPs are the application's own; their
// attributes come from rdma_init_qp_attr.
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "conformance_backend.hpp"
#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using namespace rdmalab::verbs;
using namespace std::chrono_literals;

namespace {

std::pair<std::string, std::string> device_names(Backend& b) {
  if (const char* env = std::getenv("RDMALAB_DEVICES"); env != nullptr && *env != '\0') {
    const std::string s(env);
    const auto comma = s.find(',');
    if (comma == std::string::npos) return {s, s};
    return {s.substr(0, comma), s.substr(comma + 1)};
  }
  const auto devs = b.devices();
  REQUIRE_FALSE(devs.empty());
  return {devs.front().name, devs.size() > 1 ? devs[1].name : devs.front().name};
}

/// The IPv4 address behind a device's first IPv4-mapped RoCEv2 GID.
std::string ipv4_of(Backend& b, const std::string& device) {
  auto ctx = b.open(device);
  for (const auto& g : ctx->gid_table(1))
    if (g.type == GidType::RoceV2 && g.is_ipv4_mapped()) {
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, g.gid.raw + 12, text, sizeof text);
      return text;
    }
  FAIL("device " << device << " has no IPv4 RoCEv2 GID");
  return {};
}

CmEvent expect(CmChannel& ch, CmEventType type) {
  auto e = ch.get_event(5s);
  REQUIRE_MESSAGE(e.has_value(),
                  "no CM event while waiting for event type " << static_cast<int>(type));
  INFO("got " << e->name << " status " << e->status);
  REQUIRE(e->type == type);
  return std::move(*e);
}

struct Side {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<ProtectionDomain> pd;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<QueuePair> qp;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  std::unique_ptr<MemoryRegion> mr;
  ibv_qp_attr rtr{}, rts{};

  void open(Backend& b, const std::string& device) {
    ctx = b.open(device);
    pd = ctx->alloc_pd();
    cq = ctx->create_cq(16);
    QpInitAttrs init;
    init.send_cq = cq.get();
    init.recv_cq = cq.get();
    qp = pd->create_qp(init);
    mr = pd->reg_mr(buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  }
  /// INIT, RTR, RTS with the connection manager's attributes.
  void to_rts(const CmId& id) {
    for (ibv_qp_state s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
      int mask = 0;
      ibv_qp_attr a = id.init_qp_attr(s, mask);
      CHECK((mask & IBV_QP_STATE) != 0);
      check_rc(qp->modify(a, mask), "ibv_modify_qp");
      if (s == IBV_QPS_RTR) rtr = a;
      if (s == IBV_QPS_RTS) rts = a;
    }
    CHECK(qp->state() == IBV_QPS_RTS);
  }
  std::optional<ibv_wc> poll() {
    const auto wcs = cq->wait(1, 5s);
    if (wcs.empty()) return std::nullopt;
    return wcs.front();
  }
};

}  // namespace

TEST_CASE("rdma_cm: listen, resolve, connect, accept, establish; SEND; disconnect") {
  auto backend = conformance::make_backend();
  const auto [passive_dev, active_dev] = device_names(*backend);
  const std::string passive_ip = ipv4_of(*backend, passive_dev);
  const std::string active_ip = ipv4_of(*backend, active_dev);
  constexpr std::uint16_t kPort = 7471;

  auto passive_ch = backend->create_cm_channel();
  auto active_ch = backend->create_cm_channel();
  auto listener = passive_ch->create_id();
  listener->listen(passive_ip, kPort);

  auto active = active_ch->create_id();
  active->resolve_addr(active_ip, passive_ip, kPort, 2000ms);
  (void)expect(*active_ch, CmEventType::AddrResolved);
  active->resolve_route(2000ms);
  (void)expect(*active_ch, CmEventType::RouteResolved);
  CHECK(active->device_name() == active_dev);

  Side a, p;
  a.open(*backend, active->device_name());
  CmConnParam offer;
  offer.private_data = {'h', 'e', 'l', 'l', 'o'};
  offer.qp_num = a.qp->qpn();
  active->connect(offer);

  CmEvent req = expect(*passive_ch, CmEventType::ConnectRequest);
  REQUIRE(req.new_id != nullptr);
  CHECK(req.param.qp_num == a.qp->qpn());
  REQUIRE(req.param.private_data.size() >= 5);
  CHECK(std::memcmp(req.param.private_data.data(), "hello", 5) == 0);
  CHECK(req.new_id->device_name() == passive_dev);
  p.open(*backend, req.new_id->device_name());
  p.to_rts(*req.new_id);
  ibv_sge rsge{reinterpret_cast<std::uintptr_t>(p.buf.data()), 64, p.mr->lkey()};
  ibv_recv_wr rwr{};
  rwr.wr_id = 7;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  check_rc(p.qp->post_recv(&rwr, &rbad), "ibv_post_recv");
  CmConnParam answer;
  answer.qp_num = p.qp->qpn();
  req.new_id->accept(answer);

  const CmEvent rep = expect(*active_ch, CmEventType::ConnectResponse);
  CHECK(rep.param.qp_num == p.qp->qpn());
  a.to_rts(*active);
  active->establish();
  (void)expect(*passive_ch, CmEventType::Established);

  // The handshake wired the two QPs to each other: each sends from the PSN
  // the other's receive queue expects.
  CHECK(a.rtr.dest_qp_num == p.qp->qpn());
  CHECK(p.rtr.dest_qp_num == a.qp->qpn());
  CHECK(a.rts.sq_psn == p.rtr.rq_psn);
  CHECK(p.rts.sq_psn == a.rtr.rq_psn);
  CHECK((a.rtr.path_mtu >= IBV_MTU_256 && a.rtr.path_mtu <= IBV_MTU_4096));

  std::memcpy(a.buf.data(), "in-band connected", 18);
  ibv_sge ssge{reinterpret_cast<std::uintptr_t>(a.buf.data()), 18, a.mr->lkey()};
  ibv_send_wr swr{};
  swr.wr_id = 1;
  swr.sg_list = &ssge;
  swr.num_sge = 1;
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* sbad = nullptr;
  check_rc(a.qp->post_send(&swr, &sbad), "ibv_post_send");
  const auto swc = a.poll();
  REQUIRE(swc.has_value());
  CHECK(swc->status == IBV_WC_SUCCESS);
  const auto rwc = p.poll();
  REQUIRE(rwc.has_value());
  CHECK(rwc->status == IBV_WC_SUCCESS);
  CHECK(rwc->byte_len == 18);
  CHECK(std::memcmp(p.buf.data(), "in-band connected", 18) == 0);

  // Both sides disconnect: the DREQ tells the passive side, whose own
  // rdma_disconnect sends the DREP the active side waits for.
  active->disconnect();
  (void)expect(*passive_ch, CmEventType::Disconnected);
  req.new_id->disconnect();
  (void)expect(*active_ch, CmEventType::Disconnected);
}

TEST_CASE("rdma_cm: a REQ to a port nobody listens on is rejected with reason 8") {
  auto backend = conformance::make_backend();
  const auto [passive_dev, active_dev] = device_names(*backend);
  const std::string passive_ip = ipv4_of(*backend, passive_dev);
  const std::string active_ip = ipv4_of(*backend, active_dev);
  auto ch = backend->create_cm_channel();
  auto id = ch->create_id();
  id->resolve_addr(active_ip, passive_ip, 7999, 2000ms);
  (void)expect(*ch, CmEventType::AddrResolved);
  id->resolve_route(2000ms);
  (void)expect(*ch, CmEventType::RouteResolved);
  Side a;
  a.open(*backend, id->device_name());
  CmConnParam offer;
  offer.qp_num = a.qp->qpn();
  id->connect(offer);
  const CmEvent e = expect(*ch, CmEventType::Rejected);
  CHECK(e.status == 8);  // invalid service ID
}

TEST_CASE("rdma_cm: wrong use is refused with the verb named") {
  auto backend = conformance::make_backend();
  auto ch = backend->create_cm_channel();
  auto id = ch->create_id();
  // No QP attributes before a connection exists.
  int mask = 0;
  CHECK_THROWS_AS((void)id->init_qp_attr(IBV_QPS_RTR, mask), VerbsError);
  // An address no RDMA device has.
  try {
    id->resolve_addr(std::nullopt, "192.0.2.77", 7471, 500ms);
    // librdmacm may accept the call and report the failure as an event.
    const auto e = ch->get_event(3s);
    REQUIRE(e.has_value());
    CHECK(e->type != CmEventType::AddrResolved);
  } catch (const VerbsError& err) {
    CHECK(err.verb() == "rdma_resolve_addr");
    CHECK_FALSE(err.hint().empty());
  }
}
