// The names and fields of asynchronous events (srq.hpp).
#include "rdmalab/verbs/srq.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace rdmalab::verbs {
namespace {

// The event types of ibv_event_type, by their C names.
constexpr std::array<std::pair<ibv_event_type, const char*>, 20> kEventNames{{
    {IBV_EVENT_CQ_ERR, "IBV_EVENT_CQ_ERR"},
    {IBV_EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL"},
    {IBV_EVENT_QP_REQ_ERR, "IBV_EVENT_QP_REQ_ERR"},
    {IBV_EVENT_QP_ACCESS_ERR, "IBV_EVENT_QP_ACCESS_ERR"},
    {IBV_EVENT_COMM_EST, "IBV_EVENT_COMM_EST"},
    {IBV_EVENT_SQ_DRAINED, "IBV_EVENT_SQ_DRAINED"},
    {IBV_EVENT_PATH_MIG, "IBV_EVENT_PATH_MIG"},
    {IBV_EVENT_PATH_MIG_ERR, "IBV_EVENT_PATH_MIG_ERR"},
    {IBV_EVENT_DEVICE_FATAL, "IBV_EVENT_DEVICE_FATAL"},
    {IBV_EVENT_PORT_ACTIVE, "IBV_EVENT_PORT_ACTIVE"},
    {IBV_EVENT_PORT_ERR, "IBV_EVENT_PORT_ERR"},
    {IBV_EVENT_LID_CHANGE, "IBV_EVENT_LID_CHANGE"},
    {IBV_EVENT_PKEY_CHANGE, "IBV_EVENT_PKEY_CHANGE"},
    {IBV_EVENT_SM_CHANGE, "IBV_EVENT_SM_CHANGE"},
    {IBV_EVENT_SRQ_ERR, "IBV_EVENT_SRQ_ERR"},
    {IBV_EVENT_SRQ_LIMIT_REACHED, "IBV_EVENT_SRQ_LIMIT_REACHED"},
    {IBV_EVENT_QP_LAST_WQE_REACHED, "IBV_EVENT_QP_LAST_WQE_REACHED"},
    {IBV_EVENT_CLIENT_REREGISTER, "IBV_EVENT_CLIENT_REREGISTER"},
    {IBV_EVENT_GID_CHANGE, "IBV_EVENT_GID_CHANGE"},
    {IBV_EVENT_WQ_FATAL, "IBV_EVENT_WQ_FATAL"},
}};

}  // namespace

std::string async_event_name(ibv_event_type type) {
  for (const auto& [t, name] : kEventNames)
    if (t == type) return name;
  return fmt::format("ibv_event_type {}", static_cast<int>(type));
}

AsyncEvent to_async_event(const ibv_async_event& ev) noexcept {
  AsyncEvent a;
  a.type = ev.event_type;
  switch (ev.event_type) {
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: a.srq = ev.element.srq; break;
    case IBV_EVENT_CQ_ERR: a.cq = ev.element.cq; break;
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE: a.port = ev.element.port_num; break;
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_WQ_FATAL: break;
    default:
      // The QP events (fatal, request and access errors, COMM_EST,
      // SQ_DRAINED, path migration, last WQE reached).
      if (ev.element.qp != nullptr) a.qp_num = ev.element.qp->qp_num;
      break;
  }
  return a;
}

}  // namespace rdmalab::verbs
