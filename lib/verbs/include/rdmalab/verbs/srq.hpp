// A shared receive queue (ibv_create_srq / ibv_post_srq_recv / ibv_modify_srq
// / ibv_query_srq / ibv_destroy_srq) and the device's asynchronous events
// (ibv_get_async_event / ibv_ack_async_event), which is how the SRQ's limit
// reaches the program.
//
// post_recv(), modify() and query() return the errno value as libibverbs
// does and never throw.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace rdmalab::verbs {

/// What create_srq needs (ibv_srq_init_attr::attr).
struct SrqInitAttrs {
  std::uint32_t max_wr = 64;
  std::uint32_t max_sge = 1;
  /// 0: no limit. rxe arms a non-zero value at once; other devices may
  /// ignore it (man ibv_create_srq): arm it with modify(IBV_SRQ_LIMIT).
  std::uint32_t srq_limit = 0;
};

/// Owned through std::unique_ptr from ProtectionDomain::create_srq; the
/// destructor calls ibv_destroy_srq (which fails while a QP uses it: destroy
/// the QPs first).
class Srq {
 public:
  virtual ~Srq() = default;
  Srq(const Srq&) = delete;
  Srq& operator=(const Srq&) = delete;

  /// ibv_post_srq_recv: 0 or the errno value, *bad set on failure.
  [[nodiscard]] virtual int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept = 0;
  /// ibv_modify_srq with IBV_SRQ_LIMIT and/or IBV_SRQ_MAX_WR: 0 or the errno
  /// value.
  [[nodiscard]] virtual int modify(ibv_srq_attr& attr, int mask) noexcept = 0;
  /// ibv_query_srq: 0 or the errno value.
  [[nodiscard]] virtual int query(ibv_srq_attr& attr) noexcept = 0;
  /// The verbs handle: what ibv_qp_init_attr::srq and an async event's
  /// element.srq name.
  [[nodiscard]] virtual ibv_srq* get() const noexcept = 0;

 protected:
  Srq() = default;
};

/// One asynchronous event, copied out of ibv_async_event (and acknowledged
/// already): which event and the object it is about.
struct AsyncEvent {
  ibv_event_type type = IBV_EVENT_DEVICE_FATAL;
  ibv_srq* srq = nullptr;    // SRQ events
  ibv_cq* cq = nullptr;      // IBV_EVENT_CQ_ERR
  std::uint32_t qp_num = 0;  // QP events
  int port = 0;              // port events
};

/// "IBV_EVENT_SRQ_LIMIT_REACHED" (ibv_event_type_str spells it
/// "SRQ limit reached"; the labs print the C name).
[[nodiscard]] std::string async_event_name(ibv_event_type type);

/// The fields of an ibv_async_event that name its object, by event type.
[[nodiscard]] AsyncEvent to_async_event(const ibv_async_event& ev) noexcept;

}  // namespace rdmalab::verbs
