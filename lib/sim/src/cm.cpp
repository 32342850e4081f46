// The simulated Communication Manager (see sim/cm.hpp). The rules for what
// each MAD carries and what each side derives from it follow the Linux CM as
// rdma_cm uses it over Soft-RoCE (tests/data/rping_cm.pcap):
//   - every MAD of one connection carries the active side's transaction ID;
//   - each side announces, as Starting PSN, the PSN its own receive queue
//     expects (its rq_psn, chosen at random when the id is created); the peer
//     starts sending there;
//   - a REQ's Responder Resources / Initiator Depth are the active side's;
//     the passive side reads them crosswise (what it may issue is what the
//     active side accepts), and the REP does the same the other way;
//   - the RNR retry count of a REQ is the one the passive side uses, the
//     REP's the one the active side uses; both use the REQ's retry count;
//   - a REQ for a port nobody listens on gets a REJ with reason 8 (invalid
//     service ID) and local communication ID 0.
#include "rdmalab/sim/cm.hpp"

#include <cerrno>
#include <cstring>

#include "engine.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/mtu.hpp"

namespace rdmalab::sim {

QueuePair* ProtectionDomain::create_gsi_qp(const ibv_qp_init_attr& attr, std::uint8_t port) {
  if (attr.qp_type != IBV_QPT_UD || !device_->has_port(port)) {
    errno = EINVAL;
    return nullptr;
  }
  if (device_->qp_at_port(wire::cm::kGsiQpn, port) != nullptr) {
    errno = EEXIST;
    return nullptr;
  }
  QueuePair* qp = create_qp(attr);
  if (qp == nullptr) return nullptr;
  QpImpl& q = qp->impl();
  device_->qps_[q.qpn] = nullptr;
  // Give the number back: the application's first QP keeps the number it
  // would have had without the CM.
  if (device_->next_qpn_ == q.qpn + 1) --device_->next_qpn_;
  q.qpn = wire::cm::kGsiQpn;
  device_->gsi_[port - 1U] = &q;
  return qp;
}

namespace cm {

namespace {

std::uint32_t ipv4(const wire::IpAddress& ip) noexcept {
  const auto b = ip.v4_bytes();
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         b[3];
}

/// The CA GUID a host announces: a locally administered prefix, then its
/// IPv4 address.
constexpr std::uint64_t kCaGuidPrefix = 0x0200000000000000ULL;
std::uint64_t ca_guid(const wire::IpAddress& ip) noexcept {
  return kCaGuidPrefix | ipv4(ip);
}

/// The Linux CM's communication IDs are an index XOR one random operand
/// drawn at boot, so they share their low bits (those of
/// tests/data/rping_cm.pcap all end in 0xb9); ours put 24 random bits above it.
constexpr std::uint32_t kCommIdLowByte = 0xB9;
/// The Linux CM's transaction IDs: its MAD agent's high TID (4 in
/// tests/data/rping_cm.pcap) over the active side's communication ID.
constexpr std::uint64_t kMadAgentHiTid = 4;
/// The active side's own port, as rdma_cm reports it: an ephemeral one.
constexpr std::uint16_t kEphemeralPortBit = 0x8000;

constexpr std::size_t kRecvSlots = 32;
constexpr std::size_t kSendSlots = 32;
constexpr std::size_t kGrh = 40;  // a UD receive buffer starts with the GRH
constexpr std::size_t kRecvSlotSize = kGrh + wire::cm::kMadSize;

}  // namespace

const char* event_name(EventType t) noexcept {
  switch (t) {
    case EventType::AddrResolved: return "RDMA_CM_EVENT_ADDR_RESOLVED";
    case EventType::RouteResolved: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
    case EventType::ConnectRequest: return "RDMA_CM_EVENT_CONNECT_REQUEST";
    case EventType::ConnectResponse: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
    case EventType::Established: return "RDMA_CM_EVENT_ESTABLISHED";
    case EventType::Rejected: return "RDMA_CM_EVENT_REJECTED";
    case EventType::Unreachable: return "RDMA_CM_EVENT_UNREACHABLE";
    case EventType::Disconnected: return "RDMA_CM_EVENT_DISCONNECTED";
  }
  return "?";
}

/// QP 1 of one host port and its buffers.
struct Manager::Agent {
  Device* device = nullptr;
  std::uint8_t port = 1;
  ProtectionDomain* pd = nullptr;
  CompletionQueue* cq = nullptr;
  QueuePair* qp = nullptr;
  std::vector<std::uint8_t> recv_buf = std::vector<std::uint8_t>(kRecvSlots * kRecvSlotSize);
  std::vector<std::uint8_t> send_buf = std::vector<std::uint8_t>(kSendSlots * wire::cm::kMadSize);
  MemoryRegion* recv_mr = nullptr;
  MemoryRegion* send_mr = nullptr;
  std::size_t next_send = 0;
  std::vector<std::pair<ibv_gid, AddressHandle*>> ahs;

  void post_recv(std::size_t slot) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(recv_buf.data() + slot * kRecvSlotSize),
                static_cast<std::uint32_t>(kRecvSlotSize), recv_mr->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    (void)qp->post_recv(&wr, &bad);
  }
};

Manager::Manager(Fabric& fabric, std::vector<Device*> hosts, std::uint64_t seed)
    : fabric_(&fabric), hosts_(std::move(hosts)), rng_(seed * 0x9E3779B97F4A7C15ULL + 0x5CA1AB1E) {
  // Every host port answers MADs from the start, as a real one's QP 1
  // does (a REQ to a service nobody listens on gets its REJ).
  for (Device* d : hosts_)
    for (std::uint8_t p = 1; p <= d->port_count(); ++p) (void)agent(*d, p);
}

Manager::~Manager() = default;

EventChannel* Manager::create_event_channel() {
  channels_.push_back(std::make_unique<EventChannel>(*this));
  return channels_.back().get();
}

std::uint32_t Manager::random24() {
  return static_cast<std::uint32_t>(Rng::next(rng_) & 0xFFFFFF);
}

std::optional<DevicePort> Manager::host_with(const wire::IpAddress& ip) const {
  for (Device* d : hosts_)
    for (std::uint8_t p = 1; p <= d->port_count(); ++p)
      if (d->ip(p) == ip) return DevicePort{d, p};
  return std::nullopt;
}

Manager::Agent* Manager::agent(Device& d, std::uint8_t port) {
  for (auto& a : agents_)
    if (a->device == &d && a->port == port) return a.get();
  auto a = std::make_unique<Agent>();
  a->device = &d;
  a->port = port;
  a->pd = d.alloc_pd();
  a->cq = d.create_cq(static_cast<int>(kRecvSlots + kSendSlots));
  ibv_qp_init_attr ia{};
  ia.qp_type = IBV_QPT_UD;
  ia.send_cq = a->cq->get();
  ia.recv_cq = a->cq->get();
  ia.cap.max_send_wr = kSendSlots;
  ia.cap.max_recv_wr = kRecvSlots;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  a->qp = a->pd->create_gsi_qp(ia, port);
  a->recv_mr = a->pd->reg_mr(a->recv_buf.data(), a->recv_buf.size(), IBV_ACCESS_LOCAL_WRITE);
  a->send_mr = a->pd->reg_mr(a->send_buf.data(), a->send_buf.size(), 0);
  if (a->qp == nullptr || a->recv_mr == nullptr || a->send_mr == nullptr) return nullptr;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port;
  attr.qkey = wire::cm::kGsiQkey;
  if (a->qp->modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0)
    return nullptr;
  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  if (a->qp->modify(attr, IBV_QP_STATE) != 0) return nullptr;
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  if (a->qp->modify(attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) return nullptr;
  for (std::size_t i = 0; i < kRecvSlots; ++i) a->post_recv(i);
  agents_.push_back(std::move(a));
  return agents_.back().get();
}

void Manager::send_to(Device& from, std::uint8_t port, const ibv_gid& to, std::uint16_t to_lid,
                      const wire::cm::Mad& mad) {
  Agent* a = agent(from, port);
  if (a == nullptr) return;
  AddressHandle* ah = nullptr;
  for (auto& [gid, h] : a->ahs)
    if (std::memcmp(gid.raw, to.raw, sizeof gid.raw) == 0) ah = h;
  if (ah == nullptr) {
    ibv_ah_attr attr{};
    attr.port_num = port;
    if (infiniband()) {
      // Inside the subnet: by LID, no GRH, SL 0.
      attr.dlid = to_lid;
    } else {
      attr.is_global = 1;
      attr.grh.dgid = to;
      attr.grh.sgid_index = 0;
      attr.grh.hop_limit = 64;
    }
    ah = a->pd->create_ah(attr);
    if (ah == nullptr) return;  // no host has that GID: the MAD goes nowhere
    a->ahs.emplace_back(to, ah);
  }
  const std::size_t slot = a->next_send++ % kSendSlots;
  std::uint8_t* buf = a->send_buf.data() + slot * wire::cm::kMadSize;
  std::memcpy(buf, mad.data(), mad.size());
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf), static_cast<std::uint32_t>(mad.size()),
              a->send_mr->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah->get();
  wr.wr.ud.remote_qpn = wire::cm::kGsiQpn;
  wr.wr.ud.remote_qkey = wire::cm::kGsiQkey;
  ibv_send_wr* bad = nullptr;
  (void)a->qp->post_send(&wr, &bad);
}

void Manager::send(Id& from, const wire::cm::Mad& mad) {
  send_to(*from.device_, from.hca_port_, from.remote_gid_, from.remote_lid_, mad);
}

bool Manager::infiniband() const noexcept {
  return fabric_->config().link_layer == wire::LinkLayer::Infiniband;
}

Id* Manager::find(Device& d, std::uint32_t local_comm_id) const {
  for (const auto& id : ids_)
    if (id->device_ == &d && id->local_comm_id_ == local_comm_id &&
        id->state_ != Id::State::Listening)
      return id.get();
  return nullptr;
}

void Manager::pump() {
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    Agent& a = *agents_[i];
    ibv_wc wcs[16];
    int n = 0;
    while ((n = a.cq->poll_now(16, wcs)) > 0) {
      for (int k = 0; k < n; ++k) {
        const ibv_wc& wc = wcs[k];
        if (wc.opcode != IBV_WC_RECV) continue;
        const std::size_t slot = wc.wr_id;
        if (wc.status == IBV_WC_SUCCESS && wc.byte_len >= kRecvSlotSize)
          on_mad(a, std::span<const std::uint8_t>(a.recv_buf.data() + slot * kRecvSlotSize + kGrh,
                                                  wire::cm::kMadSize));
        a.post_recv(slot);
      }
    }
  }
}

template <class Msg>
Msg Id::offer(const ConnParam& p) {
  qpn_ = p.qp_num;
  responder_resources_ = p.responder_resources;
  initiator_depth_ = p.initiator_depth;
  Msg m;
  m.transaction_id = tid_;
  m.local_comm_id = local_comm_id_;
  // InfiniBand: the HCA's node GUID (here its port's).
  m.ca_guid = manager_->infiniband() ? device_->port_guid() : ca_guid(local_ip_);
  m.qpn = qpn_;
  m.starting_psn = rq_psn_;
  m.responder_resources = p.responder_resources;
  m.initiator_depth = p.initiator_depth;
  m.rnr_retry_count = p.rnr_retry_count;
  m.private_data = p.private_data;
  return m;
}

template <class Msg>
ConnParam Id::learn(const Msg& m) {
  remote_comm_id_ = m.local_comm_id;
  remote_qpn_ = m.qpn;
  sq_psn_ = m.starting_psn;
  // What this side may issue is what the peer accepts, and the other way.
  initiator_depth_ = m.responder_resources;
  responder_resources_ = m.initiator_depth;
  rnr_retry_count_ = m.rnr_retry_count;
  ConnParam p;
  p.private_data.assign(m.private_data.begin(), m.private_data.end());
  p.responder_resources = m.responder_resources;
  p.initiator_depth = m.initiator_depth;
  if constexpr (requires { m.retry_count; }) p.retry_count = m.retry_count;
  p.rnr_retry_count = m.rnr_retry_count;
  p.qp_num = m.qpn;
  return p;
}

void Manager::on_mad(Agent& a, std::span<const std::uint8_t> bytes) {
  const auto mad = wire::cm::decode(bytes);
  if (!mad) return;
  Device& d = *a.device;
  const std::uint8_t hca_port = a.port;
  auto event = [](Id& id, EventType t) {
    Event e;
    e.type = t;
    e.id = &id;
    id.channel_->events_.push_back(e);
    return &id.channel_->events_.back();
  };
  using wire::cm::Attr;
  switch (wire::cm::attr_of(*mad)) {
    case Attr::Req: {
      const auto& m = std::get<wire::cm::Req>(*mad);
      Id* listener = nullptr;
      for (const auto& id : ids_)
        if (id->state_ == Id::State::Listening && id->device_ == &d && id->hca_port_ == hca_port &&
            (m.service_id & ~0xFFFFULL) == wire::cm::kServiceIdTcp &&
            id->port_ == (m.service_id & 0xFFFF))
          listener = id.get();
      if (listener == nullptr) {
        send_to(d, hca_port, m.local_gid, m.local_lid,
                wire::cm::encode(wire::cm::Rej{.transaction_id = m.transaction_id,
                                               .local_comm_id = 0,
                                               .remote_comm_id = m.local_comm_id,
                                               .message_rejected = 0,
                                               .reason = wire::cm::kRejInvalidServiceId,
                                               .private_data = {}}));
        return;
      }
      Id* id = listener->channel_->create_id();
      id->state_ = Id::State::ReqRcvd;
      id->device_ = &d;
      id->hca_port_ = hca_port;
      id->local_ip_ = d.ip(hca_port);
      id->remote_ip_ = wire::IpAddress::from_v4({static_cast<std::uint8_t>(m.ip.src_ip >> 24),
                                                 static_cast<std::uint8_t>(m.ip.src_ip >> 16),
                                                 static_cast<std::uint8_t>(m.ip.src_ip >> 8),
                                                 static_cast<std::uint8_t>(m.ip.src_ip)});
      id->remote_gid_ = m.local_gid;
      if (infiniband()) {
        // The path the REQ carries, seen from this side.
        id->remote_lid_ = m.local_lid;
        id->sl_ = m.sl;
      }
      id->port_ = listener->port_;
      id->tid_ = m.transaction_id;
      id->path_mtu_ = m.path_mtu;
      id->retry_count_ = m.retry_count;
      id->ack_timeout_ = m.local_ack_timeout;
      Event* e = event(*id, EventType::ConnectRequest);
      e->listen_id = listener;
      e->param = id->learn(m);
      return;
    }
    case Attr::Rep: {
      const auto& m = std::get<wire::cm::Rep>(*mad);
      Id* id = find(d, m.remote_comm_id);
      if (id == nullptr || id->state_ != Id::State::ReqSent) return;
      id->state_ = Id::State::RepRcvd;
      Event* e = event(*id, EventType::ConnectResponse);
      e->param = id->learn(m);
      return;
    }
    case Attr::Rtu: {
      const auto& m = std::get<wire::cm::Rtu>(*mad);
      Id* id = find(d, m.remote_comm_id);
      if (id == nullptr || id->state_ != Id::State::RepSent) return;
      id->state_ = Id::State::Established;
      event(*id, EventType::Established);
      return;
    }
    case Attr::Rej: {
      const auto& m = std::get<wire::cm::Rej>(*mad);
      Id* id = find(d, m.remote_comm_id);
      if (id == nullptr || (id->state_ != Id::State::ReqSent && id->state_ != Id::State::RepSent))
        return;
      id->state_ = Id::State::Rejected;
      Event* e = event(*id, EventType::Rejected);
      e->status = m.reason;
      e->param.private_data.assign(m.private_data.begin(), m.private_data.end());
      return;
    }
    case Attr::Dreq: {
      const auto& m = std::get<wire::cm::Dreq>(*mad);
      // DISCONNECTED for the application; the DREP waits for its own
      // rdma_disconnect, as the kernel's CM does (a peer that never calls it
      // leaves the DREQ's sender waiting for its timeout).
      Id* id = find(d, m.remote_comm_id);
      if (id == nullptr) return;
      if (id->state_ == Id::State::Established) {
        id->state_ = Id::State::DreqRcvd;
        event(*id, EventType::Disconnected);
      } else if (id->state_ == Id::State::DreqSent) {
        // Both sides disconnected at once: answer, and the DREP we get
        // back completes ours.
        send(*id, wire::cm::encode(wire::cm::Drep{.transaction_id = m.transaction_id,
                                                  .local_comm_id = id->local_comm_id_,
                                                  .remote_comm_id = id->remote_comm_id_,
                                                  .private_data = {}}));
      }
      return;
    }
    case Attr::Drep: {
      const auto& m = std::get<wire::cm::Drep>(*mad);
      Id* id = find(d, m.remote_comm_id);
      if (id == nullptr || id->state_ != Id::State::DreqSent) return;
      id->state_ = Id::State::Disconnected;
      event(*id, EventType::Disconnected);
      return;
    }
    case Attr::Mra: return;  // the peer's CM asks for more time: nothing to do here
  }
}

// ---- EventChannel ------------------------------------------------------------

Id* EventChannel::create_id() {
  manager_->ids_.push_back(std::make_unique<Id>(*manager_, *this));
  Id* id = manager_->ids_.back().get();
  // Chosen when the id is created, as the kernel does: the PSN this side's
  // receive queue will expect, and its communication ID.
  id->rq_psn_ = manager_->random24();
  id->local_comm_id_ = (manager_->random24() << 8) | kCommIdLowByte;
  return id;
}

std::optional<Event> EventChannel::get_event() {
  Fabric& fabric = *manager_->fabric_;
  for (;;) {
    manager_->pump();
    if (!events_.empty()) break;
    if (fabric.step()) continue;
    manager_->pump();
    if (!events_.empty()) break;
    // Nothing can happen any more: whoever waits for an answer of the
    // network will never get one.
    for (const auto& id : manager_->ids_) {
      if (id->channel_ != this) continue;
      if (id->state_ == Id::State::ReqSent || id->state_ == Id::State::RepSent) {
        id->state_ = Id::State::Unreachable;
        Event e;
        e.type = EventType::Unreachable;
        e.id = id.get();
        e.status = -ETIMEDOUT;
        events_.push_back(e);
      } else if (id->state_ == Id::State::DreqSent) {
        id->state_ = Id::State::Disconnected;  // the kernel gives up on the DREP too
        Event e;
        e.type = EventType::Disconnected;
        e.id = id.get();
        events_.push_back(e);
      }
    }
    if (events_.empty()) return std::nullopt;
    break;
  }
  Event e = std::move(events_.front());
  events_.pop_front();
  return e;
}

// ---- Id ----------------------------------------------------------------------

int Id::resolve_addr(const std::optional<wire::IpAddress>& src, const wire::IpAddress& dst,
                     std::uint16_t port) {
  if (state_ != State::Idle) return EINVAL;
  const auto to_port = manager_->host_with(dst);
  if (!to_port || !dst.v4) return EADDRNOTAVAIL;
  Device* to = to_port->device;
  Device* from = nullptr;
  std::uint8_t from_port = 1;
  if (src) {
    const auto s = manager_->host_with(*src);
    if (!s) return EADDRNOTAVAIL;
    from = s->device;
    from_port = s->port;
  } else {
    // The first other host, from its port of the same number as the
    // destination's when it has one (ports of a number share a subnet, as
    // the rails of a multi-rail cluster do), else from its port 1.
    for (Device* d : manager_->hosts_)
      if (d != to) {
        from = d;
        break;
      }
    if (from == nullptr) from = to;
    from_port = from->has_port(to_port->port) ? to_port->port : 1;
  }
  device_ = from;
  hca_port_ = from_port;
  local_ip_ = from->ip(from_port);
  remote_ip_ = dst;
  // On InfiniBand `dst` is an IPoIB address and the GID its port's fe80::
  // GID; the LID is what the path record will name (resolve_route).
  remote_gid_ = to->gid(0, to_port->port);
  remote_lid_ = to->lid(to_port->port);
  port_ = port;
  src_port_ = static_cast<std::uint16_t>(kEphemeralPortBit |
                                         (manager_->random24() & (kEphemeralPortBit - 1u)));
  path_mtu_ = wire::mtu_code_at_most(std::min(from->config().port_mtu, to->config().port_mtu));
  state_ = State::AddrResolved;
  Event e;
  e.type = EventType::AddrResolved;
  e.id = this;
  channel_->events_.push_back(e);
  return 0;
}

int Id::resolve_route() {
  if (state_ != State::AddrResolved) return EINVAL;
  // InfiniBand: the path inside the subnet (DLID remote_lid_, SL 0, no GRH)
  // a path record would give; nothing goes on the wire for it (no SA).
  sl_ = 0;
  state_ = State::RouteResolved;
  Event e;
  e.type = EventType::RouteResolved;
  e.id = this;
  channel_->events_.push_back(e);
  return 0;
}

int Id::listen(const wire::IpAddress& ip, std::uint16_t port) {
  if (state_ != State::Idle) return EINVAL;
  const auto at = manager_->host_with(ip);
  if (!at) return EADDRNOTAVAIL;
  for (const auto& id : manager_->ids_)
    if (id->state_ == State::Listening && id->device_ == at->device && id->hca_port_ == at->port &&
        id->port_ == port)
      return EADDRINUSE;
  device_ = at->device;
  hca_port_ = at->port;
  local_ip_ = ip;
  port_ = port;
  state_ = State::Listening;
  return manager_->agent(*at->device, at->port) != nullptr ? 0 : ENOMEM;
}

int Id::connect(const ConnParam& p) {
  if (state_ != State::RouteResolved || p.qp_num == 0) return EINVAL;
  retry_count_ = p.retry_count & 7u;
  tid_ = (kMadAgentHiTid << 32) | local_comm_id_;
  auto r = offer<wire::cm::Req>(p);
  r.service_id = wire::cm::kServiceIdTcp | port_;
  r.retry_count = retry_count_;
  r.path_mtu = path_mtu_;
  r.local_gid = device_->gid(0, hca_port_);
  r.remote_gid = remote_gid_;
  r.local_ack_timeout = ack_timeout_;
  if (manager_->infiniband()) {
    // The primary path by LIDs, inside one subnet (hop limit 0), as the
    // Linux CM fills it from a path record.
    r.local_lid = device_->lid(hca_port_);
    r.remote_lid = remote_lid_;
    r.hop_limit = 0;
    r.sl = sl_;
    r.subnet_local = 1;
  }
  r.ip = {src_port_, ipv4(local_ip_), ipv4(remote_ip_)};
  state_ = State::ReqSent;
  manager_->send(*this, wire::cm::encode(r));
  return 0;
}

int Id::accept(const ConnParam& p) {
  if (state_ != State::ReqRcvd || p.qp_num == 0) return EINVAL;
  auto r = offer<wire::cm::Rep>(p);
  r.remote_comm_id = remote_comm_id_;
  state_ = State::RepSent;
  manager_->send(*this, wire::cm::encode(r));
  return 0;
}

int Id::reject() {
  if (state_ != State::ReqRcvd) return EINVAL;
  state_ = State::Rejected;
  manager_->send(*this, wire::cm::encode(wire::cm::Rej{.transaction_id = tid_,
                                                       .local_comm_id = local_comm_id_,
                                                       .remote_comm_id = remote_comm_id_,
                                                       .message_rejected = 0,
                                                       .reason = wire::cm::kRejConsumer,
                                                       .private_data = {}}));
  return 0;
}

int Id::establish() {
  if (state_ != State::RepRcvd) return EINVAL;
  state_ = State::Established;
  manager_->send(*this, wire::cm::encode(wire::cm::Rtu{.transaction_id = tid_,
                                                       .local_comm_id = local_comm_id_,
                                                       .remote_comm_id = remote_comm_id_,
                                                       .private_data = {}}));
  return 0;
}

int Id::disconnect() {
  if (state_ == State::DreqRcvd) {
    state_ = State::Disconnected;
    manager_->send(*this, wire::cm::encode(wire::cm::Drep{.transaction_id = tid_,
                                                          .local_comm_id = local_comm_id_,
                                                          .remote_comm_id = remote_comm_id_,
                                                          .private_data = {}}));
    return 0;
  }
  if (state_ != State::Established) return EINVAL;
  state_ = State::DreqSent;
  manager_->send(*this, wire::cm::encode(wire::cm::Dreq{.transaction_id = tid_,
                                                        .local_comm_id = local_comm_id_,
                                                        .remote_comm_id = remote_comm_id_,
                                                        .remote_qpn = remote_qpn_,
                                                        .private_data = {}}));
  return 0;
}

int Id::init_qp_attr(ibv_qp_attr& attr, int& mask) const {
  const bool connected = state_ == State::ReqRcvd || state_ == State::RepSent ||
                         state_ == State::RepRcvd || state_ == State::Established;
  const ibv_qp_state want = attr.qp_state;
  attr = {};
  attr.qp_state = want;
  switch (want) {
    case IBV_QPS_INIT:
      if (device_ == nullptr) return EINVAL;
      mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      attr.pkey_index = 0;
      attr.port_num = hca_port_;
      attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
      if (responder_resources_ > 0)
        attr.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      return 0;
    case IBV_QPS_RTR:
      if (!connected) return EINVAL;
      mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
      attr.ah_attr.port_num = hca_port_;
      if (manager_->infiniband()) {
        // The path inside the subnet: by LID, without a GRH.
        attr.ah_attr.dlid = remote_lid_;
        attr.ah_attr.sl = sl_;
      } else {
        attr.ah_attr.is_global = 1;
        attr.ah_attr.grh.dgid = remote_gid_;
        attr.ah_attr.grh.sgid_index = 0;
        attr.ah_attr.grh.hop_limit = 64;
      }
      attr.path_mtu = static_cast<ibv_mtu>(path_mtu_);
      attr.dest_qp_num = remote_qpn_;
      attr.rq_psn = rq_psn_;
      attr.max_dest_rd_atomic = responder_resources_;
      attr.min_rnr_timer = 0;  // the kernel CM leaves it at 0 (655.36 ms)
      return 0;
    case IBV_QPS_RTS:
      if (!connected) return EINVAL;
      mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
             IBV_QP_MAX_QP_RD_ATOMIC;
      attr.sq_psn = sq_psn_;
      attr.timeout = ack_timeout_;
      attr.retry_cnt = retry_count_;
      attr.rnr_retry = rnr_retry_count_;
      attr.max_rd_atomic = initiator_depth_;
      return 0;
    default: return EINVAL;
  }
}

}  // namespace cm
}  // namespace rdmalab::sim
