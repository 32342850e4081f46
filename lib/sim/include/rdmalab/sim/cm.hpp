// The simulated Communication Manager: rdma_cm's connection set-up on the
// simulated fabric, with real CM MADs (REQ, REP, RTU, REJ, DREQ, DREP) sent
// as UD SEND Only packets between the hosts' QP 1, so they appear in the
// capture exactly as they do on Soft-RoCE.
//
// The API follows librdmacm's asynchronous model with a QP the application
// manages itself (no rdma_create_qp): every call starts something and
// returns; what happened arrives later as an Event from the id's
// EventChannel. The application moves its QP through INIT, RTR and RTS with
// the attributes init_qp_attr() derives from the handshake (what
// rdma_init_qp_attr does), and the active side confirms with establish()
// (rdma_establish, which sends the RTU).
//
//   passive                                   active
//   id = create_id(); listen(port)            id = create_id()
//                                             resolve_addr(dst) -> ADDR_RESOLVED
//                                             resolve_route()   -> ROUTE_RESOLVED
//                                             create QP on id.device(); INIT
//                                             connect(param)    -> REQ on the wire
//   CONNECT_REQUEST (a new id)  <-
//   create QP; INIT, RTR, RTS
//   accept(param)               -> REP
//                                             CONNECT_RESPONSE; RTR, RTS
//                                             establish()       -> RTU
//   ESTABLISHED                 <-
//
// Where it differs from the kernel's CM: MADs lost on the wire are not sent
// again (the CM's own retries); the waiting side gets UNREACHABLE (status
// ETIMEDOUT) as soon as nothing else can happen, without virtual time passing.
//
// On an InfiniBand fabric (FabricConfig::link_layer) the hosts' IP addresses
// are their IPoIB addresses. rdma_resolve_addr finds the host that has one
// (what IPoIB's ARP does: its hardware address holds the port's GID);
// rdma_resolve_route takes the path a subnet administrator's path record
// would give inside one subnet: the peer's LID as DLID, SL 0, no GRH (hop
// limit 0). No SA query goes on the wire (the simulator has no SA); the REQ
// carries the path (both LIDs, both fe80:: GIDs, SL, subnet local) and the
// node GUID, and the MADs go to QP 1 as native IB UD packets by LID, on a
// data VL (VL = SL 0: only subnet management packets use VL 15).
// init_qp_attr's address vector for RTR is then that path: dlid, sl, not
// global.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "rdmalab/sim/device.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/frame.hpp"

namespace rdmalab::sim::cm {

enum class EventType {
  AddrResolved,
  RouteResolved,
  ConnectRequest,
  ConnectResponse,
  Established,
  Rejected,
  Unreachable,
  Disconnected,
};

/// librdmacm's name for an event type ("RDMA_CM_EVENT_ESTABLISHED").
[[nodiscard]] const char* event_name(EventType t) noexcept;

/// What rdma_conn_param carries: this side's offer, or (in an event) the
/// peer's. The codec's type, which the verbs wrapper's CmConnParam is too.
using ConnParam = wire::cm::ConnParam;

class Id;
class Manager;

struct Event {
  EventType type = EventType::AddrResolved;
  Id* id = nullptr;         // for CONNECT_REQUEST: the new id of the connection
  Id* listen_id = nullptr;  // for CONNECT_REQUEST: the listening id
  int status = 0;           // REJECTED: the reject reason; UNREACHABLE: -ETIMEDOUT
  ConnParam param;          // the peer's (CONNECT_REQUEST, CONNECT_RESPONSE, REJECTED)
};

class EventChannel {
 public:
  /// rdma_get_cm_event: the next event of this channel's ids. Lets the
  /// fabric run until one arrives; nullopt only when nothing can happen
  /// any more and no id of this channel waits for an answer.
  [[nodiscard]] std::optional<Event> get_event();
  /// rdma_create_id (RDMA_PS_TCP, an RC connection).
  [[nodiscard]] Id* create_id();

  EventChannel(Manager& m) noexcept : manager_(&m) {}

 private:
  friend class Manager;
  friend class Id;
  Manager* manager_;
  std::deque<Event> events_;
};

class Id {
 public:
  /// rdma_resolve_addr: 0 or an errno value (EADDRNOTAVAIL: no host has
  /// `dst`; EINVAL in the wrong state). Binds the id to the device of the
  /// source: `src`, or else the first host that is not `dst`, or `dst`
  /// itself when it is the only one (loopback). ADDR_RESOLVED follows.
  [[nodiscard]] int resolve_addr(const std::optional<wire::IpAddress>& src,
                                 const wire::IpAddress& dst, std::uint16_t port);
  /// rdma_resolve_route: ROUTE_RESOLVED follows.
  [[nodiscard]] int resolve_route();
  /// rdma_bind_addr + rdma_listen on the host with address `ip` (EADDRNOTAVAIL
  /// when none has it; EADDRINUSE when the port is taken there).
  [[nodiscard]] int listen(const wire::IpAddress& ip, std::uint16_t port);
  /// rdma_connect with conn_param.qp_num = the application's QP: sends the
  /// REQ. `param.qp_num` must be set.
  [[nodiscard]] int connect(const ConnParam& param);
  /// rdma_accept on the id of a CONNECT_REQUEST: sends the REP.
  [[nodiscard]] int accept(const ConnParam& param);
  /// rdma_reject: sends a REJ (reason 28, consumer reject).
  [[nodiscard]] int reject();
  /// rdma_establish on the active side after CONNECT_RESPONSE: sends the RTU.
  [[nodiscard]] int establish();
  /// rdma_disconnect. On a connection: sends a DREQ; the peer gets
  /// DISCONNECTED and answers with a DREP when it calls rdma_disconnect in
  /// turn; then this side gets DISCONNECTED. After DISCONNECTED (a DREQ
  /// received): sends the DREP.
  [[nodiscard]] int disconnect();
  /// rdma_init_qp_attr for attr.qp_state INIT, RTR or RTS: fills the
  /// attributes the handshake decided and the mask naming them.
  [[nodiscard]] int init_qp_attr(ibv_qp_attr& attr, int& mask) const;

  /// The device this id is bound to (nullptr before resolve/listen).
  [[nodiscard]] Device* device() const noexcept { return device_; }
  [[nodiscard]] const wire::IpAddress& local_ip() const noexcept { return local_ip_; }
  [[nodiscard]] const wire::IpAddress& remote_ip() const noexcept { return remote_ip_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  enum class State {
    Idle,
    AddrResolved,
    RouteResolved,
    Listening,
    ReqSent,
    ReqRcvd,
    RepSent,
    RepRcvd,
    Established,
    DreqSent,
    DreqRcvd,
    Disconnected,
    Rejected,
    Unreachable
  };
  [[nodiscard]] State state() const noexcept { return state_; }

  Id(Manager& m, EventChannel& ch) noexcept : manager_(&m), channel_(&ch) {}

 private:
  friend class Manager;
  friend class EventChannel;
  /// The REQ (connect) or REP (accept) announcing this side and `p`.
  template <class Msg>
  [[nodiscard]] Msg offer(const ConnParam& p);
  /// Takes in what the peer's REQ or REP announces; returns the peer's
  /// parameters for the event.
  template <class Msg>
  ConnParam learn(const Msg& m);

  Manager* manager_;
  EventChannel* channel_;
  State state_ = State::Idle;
  Device* device_ = nullptr;
  std::uint8_t hca_port_ = 1;  // the port of device_ it is bound to (its IP's)
  wire::IpAddress local_ip_, remote_ip_;
  ibv_gid remote_gid_{};
  std::uint16_t remote_lid_ = 0;  // InfiniBand: the peer port's LID (the path's DLID)
  std::uint8_t sl_ = 0;           // InfiniBand: the path's SL
  std::uint16_t port_ = 0;        // the service's port (listen or destination)
  std::uint16_t src_port_ = 0;    // the active side's own port
  std::uint64_t tid_ = 0;
  std::uint32_t local_comm_id_ = 0, remote_comm_id_ = 0;
  std::uint32_t qpn_ = 0, remote_qpn_ = 0;
  std::uint32_t rq_psn_ = 0;  // announced: what this side's QP expects first
  std::uint32_t sq_psn_ = 0;  // the peer's announcement: what this side sends first
  std::uint8_t path_mtu_ = IBV_MTU_1024;
  std::uint8_t responder_resources_ = 1, initiator_depth_ = 1;
  std::uint8_t retry_count_ = 7, rnr_retry_count_ = 7, ack_timeout_ = 19;
};

/// The CM of one simulated fabric: one agent (QP 1 and its buffers) per
/// host port. An id is bound to the port whose IP address it resolves or
/// listens on.
class Manager {
 public:
  /// `hosts`: the fabric's devices; `seed` picks comm IDs and starting PSNs.
  Manager(Fabric& fabric, std::vector<Device*> hosts, std::uint64_t seed = 1);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  /// rdma_create_event_channel.
  [[nodiscard]] EventChannel* create_event_channel();

 private:
  friend class EventChannel;
  friend class Id;
  struct Agent;
  Agent* agent(Device& d, std::uint8_t port);
  /// The host port with this IP address.
  [[nodiscard]] std::optional<DevicePort> host_with(const wire::IpAddress& ip) const;
  /// The fabric is InfiniBand: LIDs, no GRH (see the top of this file).
  [[nodiscard]] bool infiniband() const noexcept;
  void send(Id& from, const wire::cm::Mad& mad);
  /// Sends `mad` from the QP 1 of `from`'s port `port` to the QP 1 of the
  /// port with GID `to` (InfiniBand: by its LID `to_lid`).
  void send_to(Device& from, std::uint8_t port, const ibv_gid& to, std::uint16_t to_lid,
               const wire::cm::Mad& mad);
  /// Reads every MAD that arrived, turning them into events.
  void pump();
  void on_mad(Agent& a, std::span<const std::uint8_t> mad);
  Id* find(Device& d, std::uint32_t local_comm_id) const;
  std::uint32_t random24();

  Fabric* fabric_;
  std::vector<Device*> hosts_;
  std::uint64_t rng_;  // Rng's state: picks comm IDs, starting PSNs, source ports
  std::vector<std::unique_ptr<Agent>> agents_;
  std::vector<std::unique_ptr<EventChannel>> channels_;
  std::vector<std::unique_ptr<Id>> ids_;
};

}  // namespace rdmalab::sim::cm
