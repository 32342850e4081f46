// In-band connection set-up with the RDMA Communication Manager (librdmacm),
// over real devices or the simulated fabric, behind one interface.
//
// The model is librdmacm's asynchronous one with a QP the application owns
// (created with this wrapper, not rdma_create_qp): every call starts an
// operation and returns; its outcome arrives as a CmEvent from the channel.
// The application walks its QP through INIT, RTR and RTS with the attributes
// init_qp_attr() returns (rdma_init_qp_attr: what the CM learnt from the
// handshake), and the active side completes with establish() (rdma_establish,
// which sends the RTU).
//
//   passive: listen -> CONNECT_REQUEST (a new CmId) -> QP to RTS -> accept
//            -> ESTABLISHED
//   active:  resolve_addr -> ADDR_RESOLVED -> resolve_route -> ROUTE_RESOLVED
//            -> create the QP on device_name() -> connect -> CONNECT_RESPONSE
//            -> QP to RTS -> establish
//
// On the wire (the simulator writes it to its capture; on Soft-RoCE tcpdump
// sees it): CM REQ, REP and RTU MADs as UD SEND Only packets to QP 1.
//
// Lifetime: a CmChannel outlives the CmIds it created or delivered.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/wire/cm.hpp"

namespace rdmalab::verbs {

enum class CmEventType {
  AddrResolved,
  RouteResolved,
  ConnectRequest,
  ConnectResponse,
  Established,
  Rejected,
  Unreachable,
  Disconnected,
  Error,  // any other librdmacm event (ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, ...)
};

/// rdma_conn_param: this side's offer, or in an event the peer's. The CM
/// codec's type, which the simulator's CM takes as it is.
using CmConnParam = wire::cm::ConnParam;

class CmId;

struct CmEvent {
  CmEventType type = CmEventType::Error;
  std::string name;  // librdmacm's: "RDMA_CM_EVENT_ESTABLISHED"
  int status = 0;    // REJECTED: the reject reason; errors: a negative errno
  CmConnParam param;
  /// CONNECT_REQUEST: the id of the new connection (the listener stays).
  std::unique_ptr<CmId> new_id;
};

class CmId {
 public:
  virtual ~CmId() = default;
  CmId(const CmId&) = delete;
  CmId& operator=(const CmId&) = delete;

  /// rdma_resolve_addr (from `src` when given). Throws VerbsError.
  virtual void resolve_addr(const std::optional<std::string>& src, const std::string& dst,
                            std::uint16_t port, std::chrono::milliseconds timeout) = 0;
  /// rdma_resolve_route.
  virtual void resolve_route(std::chrono::milliseconds timeout) = 0;
  /// rdma_bind_addr + rdma_listen.
  virtual void listen(const std::string& ip, std::uint16_t port) = 0;
  /// rdma_connect; param.qp_num names the application's QP.
  virtual void connect(const CmConnParam& param) = 0;
  /// rdma_accept on the id of a CONNECT_REQUEST.
  virtual void accept(const CmConnParam& param) = 0;
  /// rdma_reject.
  virtual void reject() = 0;
  /// rdma_establish (active side, after CONNECT_RESPONSE): sends the RTU.
  virtual void establish() = 0;
  /// rdma_disconnect: sends a DREQ; or, after DISCONNECTED arrived (the
  /// peer's DREQ), the DREP the peer waits for. Both sides call it.
  virtual void disconnect() = 0;
  /// rdma_init_qp_attr for INIT, RTR or RTS: the attributes and their mask.
  [[nodiscard]] virtual ibv_qp_attr init_qp_attr(ibv_qp_state state, int& mask) const = 0;
  /// The RDMA device this id is bound to ("rxe0", "sim1"); empty before.
  [[nodiscard]] virtual std::string device_name() const = 0;

 protected:
  CmId() = default;
};

class CmChannel {
 public:
  virtual ~CmChannel() = default;
  CmChannel(const CmChannel&) = delete;
  CmChannel& operator=(const CmChannel&) = delete;

  /// rdma_create_id(RDMA_PS_TCP). Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<CmId> create_id() = 0;
  /// rdma_get_cm_event (+ rdma_ack_cm_event): the next event, or nullopt
  /// when none came within `timeout` (on the simulator: when nothing more
  /// can happen, without waiting).
  [[nodiscard]] virtual std::optional<CmEvent> get_event(std::chrono::milliseconds timeout) = 0;

 protected:
  CmChannel() = default;
};

/// The librdmacm implementation. Throws VerbsError (rdma_create_event_channel).
[[nodiscard]] std::unique_ptr<CmChannel> make_rdmacm_channel();

}  // namespace rdmalab::verbs
