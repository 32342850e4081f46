// A queue pair (ibv_create_qp / ibv_modify_qp / ibv_post_send / ibv_post_recv).
//
// The state machine is spelled out: to_init(), to_rtr() and to_rts() each take
// a struct with named fields, build the ibv_qp_attr and the attribute mask the
// IBTA requires for that transition and QP type (`man ibv_modify_qp`), apply
// it, and return a printable record of exactly what was applied. A rejected
// transition throws VerbsError naming the states and the mask.
//
// post_send() and post_recv() are data-plane verbs: they return the errno
// value as libibverbs does and never throw (check_rc() outside the loop).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rdmalab::verbs {

class CompletionQueue;
class Srq;

/// RESET -> INIT.
struct InitAttrs {
  std::uint8_t port = 1;
  std::uint16_t pkey_index = 0;
  /// What the peer may do to this QP's memory (RC/UC).
  unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                    IBV_ACCESS_REMOTE_ATOMIC;
  /// UD only: the Q_Key datagrams must carry.
  std::uint32_t qkey = 0x11111111;
};

/// What one side learns about the other to connect (RC/UC).
struct RemoteEndpoint {
  ibv_gid gid{};
  std::uint16_t lid = 0;  // InfiniBand only; 0 on RoCE
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;  // the peer's first send PSN = our expected receive PSN
};

/// INIT -> RTR.
struct RtrAttrs {
  RemoteEndpoint remote;
  ibv_mtu path_mtu = IBV_MTU_1024;
  std::uint8_t port = 1;
  int sgid_index = 0;  // our GID table entry used as source
  /// true: a global address vector (ah_attr.is_global 1): the packets carry
  /// a GRH with the GIDs, as RoCE always does. false: a local one, on
  /// InfiniBand within a subnet: the LRH's LIDs alone (dlid from `remote`).
  bool global = true;
  std::uint8_t hop_limit = 64;
  std::uint8_t traffic_class = 0;
  /// ah_attr.sl: the service level. On InfiniBand the LRH carries it and
  /// each port maps it to a virtual lane; 0 by default.
  std::uint8_t sl = 0;
  std::uint8_t max_dest_rd_atomic = 1;  // RC: READ/atomics we accept in flight
  std::uint8_t min_rnr_timer = 12;      // RC: RNR NAK timer code we advertise (0.64 ms)
};

/// RTR -> RTS.
struct RtsAttrs {
  std::uint32_t sq_psn = 0;
  std::uint8_t timeout = 14;       // RC: local ACK timeout, 4.096 us * 2^timeout
  std::uint8_t retry_cnt = 7;      // RC
  std::uint8_t rnr_retry = 7;      // RC: 7 = retry forever
  std::uint8_t max_rd_atomic = 1;  // RC: READ/atomics we keep in flight
};

/// What a transition applied, for narration.
struct AppliedTransition {
  ibv_qp_state from = IBV_QPS_RESET;
  ibv_qp_state to = IBV_QPS_RESET;
  int mask = 0;
  std::vector<std::pair<std::string, std::string>> fields;  // name, value
  /// "INIT -> RTR  mask STATE|AV|...\n  path_mtu = 1024\n ..."
  [[nodiscard]] std::string to_string() const;
};

class QueuePair {
 public:
  virtual ~QueuePair() = default;
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  [[nodiscard]] virtual std::uint32_t qpn() const noexcept = 0;
  [[nodiscard]] virtual ibv_qp_type type() const noexcept = 0;
  /// The state as the device reports it now (an error completion moves a QP
  /// to ERR behind the caller's back).
  [[nodiscard]] virtual ibv_qp_state state() const = 0;
  /// ibv_modify_qp: 0 or the errno value.
  [[nodiscard]] virtual int modify(ibv_qp_attr& attr, int mask) noexcept = 0;
  /// ibv_post_send / ibv_post_recv: 0 or the errno value, *bad set on failure.
  [[nodiscard]] virtual int post_send(ibv_send_wr* wr, ibv_send_wr** bad) noexcept = 0;
  [[nodiscard]] virtual int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept = 0;
  /// ibv_bind_mw (type 1 windows): 0 or the errno value. Posts a bind work
  /// request and sets mw->rkey to the new key at once; the bind's completion
  /// (IBV_WC_BIND_MW) says whether it took effect.
  [[nodiscard]] virtual int bind_mw(ibv_mw* mw, ibv_mw_bind& bind) noexcept = 0;
  /// The device's name, for error reports.
  [[nodiscard]] virtual std::string device_name() const = 0;

  AppliedTransition to_init(const InitAttrs& a);
  AppliedTransition to_rtr(const RtrAttrs& a);
  AppliedTransition to_rts(const RtsAttrs& a);
  /// Moves the QP to ERR (flushes outstanding work) or RESET.
  AppliedTransition to_error();
  AppliedTransition to_reset();

 protected:
  QueuePair() = default;

 private:
  AppliedTransition apply(ibv_qp_attr& attr, int mask, ibv_qp_state to,
                          std::vector<std::pair<std::string, std::string>> fields);
};

/// What create_qp needs.
struct QpInitAttrs {
  ibv_qp_type type = IBV_QPT_RC;
  CompletionQueue* send_cq = nullptr;
  CompletionQueue* recv_cq = nullptr;
  std::uint32_t max_send_wr = 64;
  std::uint32_t max_recv_wr = 64;
  std::uint32_t max_send_sge = 1;
  std::uint32_t max_recv_sge = 1;
  std::uint32_t max_inline_data = 64;
  /// Every send WR generates a completion (else only IBV_SEND_SIGNALED ones).
  bool sq_sig_all = false;
  /// Receives come from this shared receive queue (max_recv_wr and
  /// max_recv_sge are then ignored, and post_recv on the QP fails).
  Srq* srq = nullptr;
};

}  // namespace rdmalab::verbs
