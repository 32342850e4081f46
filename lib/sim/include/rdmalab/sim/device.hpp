// The verbs objects of one simulated NIC: device, protection domain, memory
// region, completion queue, address handle and queue pair.
//
// The API mirrors libibverbs so that code written against it reads like verbs
// code and a backend interface can put real verbs and this simulator behind
// one facade. It takes and returns the rdma-core structs themselves
// (ibv_qp_init_attr, ibv_qp_attr, ibv_send_wr, ibv_recv_wr, ibv_sge, ibv_wc,
// ibv_ah_attr, ibv_port_attr) and keeps the three return conventions of
// libibverbs, each documented on the function:
//   - create/alloc/reg return a pointer, or nullptr with errno set;
//   - modify/post/destroy/dealloc/dereg return 0 or an errno value
//     (post_* also set *bad_wr to the first work request not posted);
//   - poll returns the number of completions (never negative here).
//
// Ownership: every object is owned by its parent (the fabric owns devices, a
// device its PDs and CQs, a PD its MRs, MWs, QPs and AHs) and keeps its address
// until it is destroyed. Destroying a parent whose children are alive fails
// with EBUSY, as in verbs: dealloc_pd() with a live MR or QP, destroy_cq()
// while a QP uses the CQ. Whatever is left is released with the fabric.
//
// Where the CQs, QPs and AHs of a request are named by pointer, the pointers
// are the ones verbs would use: CompletionQueue::get() gives the ibv_cq* to
// put in ibv_qp_init_attr::send_cq, AddressHandle::get() the ibv_ah* for
// ibv_send_wr::wr.ud.ah. Pointers that this device did not hand out are
// rejected with EINVAL.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rdmalab/sim/fabric.hpp"

namespace rdmalab::sim {

class Device;
class ProtectionDomain;
class QueuePair;
struct QpImpl;
struct SrqImpl;

/// A registered memory region (ibv_reg_mr): a window of the caller's memory
/// that the NIC may read and write. lkey == rkey, as mlx5 and rxe do.
class MemoryRegion {
 public:
  /// The ibv_mr a verbs program would hold (addr, length, lkey, rkey, pd):
  /// what it puts in ibv_mw_bind_info::mr to bind a memory window.
  [[nodiscard]] ibv_mr* get() noexcept { return &raw_; }
  /// Memory windows currently bound to this region (deregistration fails
  /// with EINVAL while there are any, as in rxe).
  [[nodiscard]] int bound_windows() const noexcept { return windows_; }
  [[nodiscard]] std::uint32_t lkey() const noexcept { return key_; }
  [[nodiscard]] std::uint32_t rkey() const noexcept { return key_; }
  [[nodiscard]] void* addr() const noexcept { return addr_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  /// IBV_ACCESS_* flags given at registration.
  [[nodiscard]] int access() const noexcept { return access_; }
  [[nodiscard]] ProtectionDomain& pd() const noexcept { return *pd_; }

  /// The I/O virtual address of the first byte: the address SGEs and remote
  /// requests use for this region. The user address for reg_mr(), the chosen
  /// value for reg_mr_iova().
  [[nodiscard]] std::uint64_t iova() const noexcept { return iova_; }

  /// True when [va, va + len) lies inside the region (VA in IOVA space).
  [[nodiscard]] bool contains(std::uint64_t va, std::uint64_t len) const noexcept;
  /// The host address of the byte at `va` (which must be inside).
  [[nodiscard]] std::uint8_t* host(std::uint64_t va) const noexcept {
    return static_cast<std::uint8_t*>(addr_) + (va - iova_);
  }

  MemoryRegion(ProtectionDomain& pd, void* addr, std::size_t length, std::uint64_t iova, int access,
               std::uint32_t key) noexcept;

 private:
  friend class MemoryWindow;
  void add_window() noexcept { ++windows_; }
  void remove_window() noexcept { --windows_; }

  ProtectionDomain* pd_;
  void* addr_;
  std::size_t length_;
  std::uint64_t iova_;
  int access_;
  std::uint32_t key_;
  ibv_mr raw_{};
  int windows_ = 0;
};

/// A memory window (ibv_alloc_mw, IBTA 10.6.7): a second, narrower rkey over
/// part of a registered region, bound and revoked through the send queue
/// without re-registering.
///
/// Type 1 windows are bound with QueuePair::bind_mw (ibv_bind_mw) and stay
/// valid for every QP of the PD until re-bound. Type 2 windows are bound by an
/// IBV_WR_BIND_MW work request, are then valid only for requests arriving on
/// that QP, and are revoked by IBV_WR_LOCAL_INV or by the peer's
/// IBV_WR_SEND_WITH_INV. The rules follow rdma_rxe (drivers/infiniband/sw/rxe/
/// rxe_mw.c), including where it is laxer than the IBTA; see local_ops.cpp.
class MemoryWindow {
 public:
  enum class State : std::uint8_t { Free, Valid };

  /// The ibv_mw a verbs program would hold: put it in
  /// ibv_send_wr::bind_mw.mw. Its rkey field is the program's copy; after a
  /// type 2 bind the program stores the new rkey there itself.
  [[nodiscard]] ibv_mw* get() noexcept { return &raw_; }
  [[nodiscard]] ibv_mw_type type() const noexcept { return raw_.type; }
  /// The key the NIC accepts now (index in the upper 24 bits, the key byte
  /// chosen by the last bind below).
  [[nodiscard]] std::uint32_t rkey() const noexcept { return key_; }
  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] ProtectionDomain& pd() const noexcept { return *pd_; }
  /// The region, range and rights of the current binding (nullptr/0 when free).
  [[nodiscard]] MemoryRegion* mr() const noexcept { return mr_; }
  [[nodiscard]] std::uint64_t addr() const noexcept { return addr_; }
  [[nodiscard]] std::uint64_t length() const noexcept { return length_; }
  [[nodiscard]] int access() const noexcept { return access_; }
  /// Type 2: the QP it is bound to (nullptr when free or that QP is gone).
  [[nodiscard]] QueuePair* qp() const noexcept;

  MemoryWindow(ProtectionDomain& pd, ibv_mw_type type, std::uint32_t key) noexcept;

 private:
  friend class Device;
  friend class ProtectionDomain;
  friend class QueuePair;
  friend struct QpImpl;
  /// A bind that passed its checks (QpImpl::execute_bind): the key byte of
  /// `rkey`, the range and the rights; a non-empty range counts as a window
  /// of `mr`, and a type 2 window belongs to `qp` from now on.
  void bind(std::uint32_t rkey, MemoryRegion* mr, std::uint64_t addr, std::uint64_t length,
            int access, QpImpl* qp) noexcept;
  void unbind() noexcept;
  /// Type 2: bound to `qp` (the QP a request arrived on).
  [[nodiscard]] bool bound_to(const QpImpl* qp) const noexcept { return qp_ == qp; }
  /// `qp` is being destroyed: a window bound to it stays bound to no QP.
  void forget_qp(const QpImpl* qp) noexcept {
    if (qp_ == qp) qp_ = nullptr;
  }

  ProtectionDomain* pd_;
  ibv_mw raw_{};
  std::uint32_t key_;
  State state_;
  MemoryRegion* mr_ = nullptr;
  std::uint64_t addr_ = 0;
  std::uint64_t length_ = 0;
  int access_ = 0;
  QpImpl* qp_ = nullptr;
};

class CompletionQueue;

/// A completion channel (ibv_create_comp_channel): where the completion
/// events of the CQs created on it queue up, in the order they fired. The
/// rules are rdma_rxe's and uverbs' (rxe_cq_post() in
/// drivers/infiniband/sw/rxe/rxe_cq.c, ib_uverbs_comp_handler() and
/// ib_uverbs_event_read() in drivers/infiniband/core/uverbs_main.c):
///   - a CQ fires one event per arm (CompletionQueue::req_notify): the event
///     disarms it, and a completion on an unarmed CQ fires nothing;
///   - armed for solicited completions only, it fires on a receive
///     completion whose message carried the BTH's SE bit, and on a flushed
///     receive; send completions never count as solicited (rxe posts them
///     with solicited 0);
///   - arming does not look at what the CQ holds already: a completion that
///     came before the arm fires nothing (the re-arm race);
///   - a completion lost to a full CQ fires nothing.
class CompletionChannel {
 public:
  /// ibv_get_cq_event without blocking: the CQ of the oldest event, counted
  /// as read on that CQ (CompletionQueue::events_read), or nullptr when no
  /// event waits. Blocking is the caller's: advance the fabric and ask again.
  [[nodiscard]] CompletionQueue* get_event() noexcept;
  /// Events fired and not yet read.
  [[nodiscard]] std::size_t pending() const noexcept { return events_.size(); }
  /// The handle a verbs program would pass to ibv_create_cq.
  [[nodiscard]] ibv_comp_channel* get() noexcept { return &raw_; }
  /// CQs created on this channel and not destroyed.
  [[nodiscard]] int users() const noexcept { return users_; }

  explicit CompletionChannel(Device& device) noexcept : device_(&device) {}

 private:
  friend class CompletionQueue;
  friend class Device;
  void fire(CompletionQueue* cq) { events_.push_back(cq); }
  /// The CQ is being destroyed: its events not read yet go with it (as
  /// uverbs drops them from the channel's queue).
  void forget(const CompletionQueue* cq) noexcept;

  Device* device_;
  ibv_comp_channel raw_{};
  std::deque<CompletionQueue*> events_;
  int users_ = 0;
};

/// A completion queue (ibv_create_cq) holding up to capacity() completions,
/// optionally on a completion channel (CompletionChannel).
class CompletionQueue {
 public:
  /// ibv_poll_cq: moves up to n completions into wc and returns how many.
  ///
  /// When the CQ is empty, poll() first advances the fabric, event by event,
  /// until a completion arrives here or the fabric is idle, so that the usual
  /// busy-polling loop `while (cq.poll(1, &wc) == 0) {}` makes virtual time
  /// pass. It returns 0 only when nothing is left to happen: a real program
  /// would spin forever at that point, so treat 0 as "hung".
  [[nodiscard]] int poll(int n, ibv_wc* wc);
  /// Like poll() but never advances the fabric (what ibv_poll_cq does on an
  /// empty CQ of a real device).
  [[nodiscard]] int poll_now(int n, ibv_wc* wc) noexcept;

  /// The handle to name this CQ in ibv_qp_init_attr.
  [[nodiscard]] ibv_cq* get() noexcept { return &raw_; }
  [[nodiscard]] int capacity() const noexcept { return static_cast<int>(ring_.size()); }
  /// Completions waiting to be polled.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(count_); }
  /// True once a completion was lost because the CQ was full (a CQ overrun:
  /// on a real device, IBV_EVENT_CQ_ERR).
  [[nodiscard]] bool overrun() const noexcept { return overrun_; }

  /// ibv_req_notify_cq: arms the CQ for its next completion
  /// (solicited_only false) or its next solicited one (true); one event,
  /// then it is disarmed. Arming for any completion wins over a pending
  /// solicited-only arm, as in rxe. Returns 0 (a CQ without a channel may be
  /// armed: its event goes nowhere, as in uverbs).
  [[nodiscard]] int req_notify(bool solicited_only) noexcept;
  /// ibv_ack_cq_events: acknowledges `n` events read from the channel.
  /// EINVAL when that would acknowledge more than were read.
  [[nodiscard]] int ack_events(unsigned n) noexcept;
  /// ibv_modify_cq (CQ moderation): EOPNOTSUPP, as rxe answers. The
  /// simulator has no moderation model; each armed completion fires at once.
  [[nodiscard]] int modify_moderation(std::uint16_t count, std::uint16_t period_us) noexcept;
  /// The channel the CQ was created on (nullptr: none).
  [[nodiscard]] CompletionChannel* channel() const noexcept { return channel_; }
  /// True while an arm waits for its completion.
  [[nodiscard]] bool armed() const noexcept { return notify_ != Notify::None; }
  /// Events read from the channel (ibv_get_cq_event) and acknowledged.
  [[nodiscard]] std::uint64_t events_read() const noexcept { return events_read_; }
  [[nodiscard]] std::uint64_t events_acked() const noexcept { return events_acked_; }

  CompletionQueue(Device& device, int cqe, CompletionChannel* channel = nullptr);

 private:
  friend struct Engine;
  friend struct QpImpl;
  friend class Device;
  friend class ProtectionDomain;
  friend class CompletionChannel;
  /// The next completion's slot, cleared, to be filled in place (filled on
  /// the stack and copied in, it would be read back before its stores
  /// land); nullptr when the CQ is full, which sets overrun(). An armed CQ
  /// fires its event here (`solicited`: the completion counts for a
  /// solicited-only arm).
  [[nodiscard]] ibv_wc* push(bool solicited) noexcept;
  void add_user() noexcept { ++users_; }
  void remove_user() noexcept { --users_; }

  enum class Notify : std::uint8_t { None, Solicited, Next };

  Device* device_;
  CompletionChannel* channel_;
  Notify notify_ = Notify::None;
  std::uint64_t events_read_ = 0;
  std::uint64_t events_acked_ = 0;
  ibv_cq raw_{};
  std::vector<ibv_wc> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool overrun_ = false;
  int users_ = 0;  // QPs using this CQ
};

/// An address handle (ibv_create_ah) naming a UD destination by its GID
/// (RoCE), or by its LID (InfiniBand).
/// One port of a host's NIC.
struct DevicePort {
  Device* device = nullptr;
  std::uint8_t port = 1;
};

class AddressHandle {
 public:
  [[nodiscard]] ibv_ah* get() noexcept { return &raw_; }
  [[nodiscard]] const ibv_ah_attr& attr() const noexcept { return attr_; }
  /// The device that has the destination GID (InfiniBand: the DLID), and
  /// which of its ports.
  [[nodiscard]] Device& destination() const noexcept { return *dest_.device; }
  [[nodiscard]] std::uint8_t destination_port() const noexcept { return dest_.port; }
  AddressHandle(const ibv_ah_attr& attr, DevicePort dest) noexcept : attr_(attr), dest_(dest) {}

 private:
  friend struct Engine;
  friend struct QpImpl;
  ibv_ah raw_{};
  ibv_ah_attr attr_;
  DevicePort dest_;
};

/// A shared receive queue (ibv_create_srq): one pool of receive WQEs that
/// every QP created with ibv_qp_init_attr::srq pointing at it takes its
/// receives from, in posting order, whichever QP a message arrives on. The
/// rules are rdma_rxe's (drivers/infiniband/sw/rxe/rxe_srq.c, get_srq_wqe()
/// in rxe_resp.c):
///   - a QP takes the WQE at the head of the SRQ when the first packet of a
///     message that needs one arrives (SEND First/Only, WRITE with
///     immediate), keeps its own copy until the message completes, and
///     answers RNR NAK when the SRQ is empty;
///   - srq_limit 0 means disarmed; a limit > 0 (given at creation, as rxe
///     keeps it, or by modify() with IBV_SRQ_LIMIT) is armed: when taking a
///     WQE leaves fewer than srq_limit WQEs posted, the limit goes back to 0
///     and the device queues one IBV_EVENT_SRQ_LIMIT_REACHED async event
///     (Device::get_async_event); it fires again only when armed again;
///   - the completion goes to the taking QP's receive CQ, with wc.qp_num that
///     QP's number.
class SharedReceiveQueue {
 public:
  /// ibv_post_srq_recv: 0 or EINVAL (too many SGEs), ENOMEM (the SRQ is
  /// full); *bad_wr names the first request not posted.
  [[nodiscard]] int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  /// ibv_modify_srq: IBV_SRQ_LIMIT arms (> 0) or disarms (0) the limit;
  /// IBV_SRQ_MAX_WR resizes. EINVAL: a limit above max_wr, max_wr 0 or above
  /// the device's max_srq_wr, max_wr below the armed limit or below the WQEs
  /// posted now, any other mask bit.
  [[nodiscard]] int modify(const ibv_srq_attr& attr, int mask);
  /// ibv_query_srq: max_wr, max_sge and the current srq_limit (0 once the
  /// event fired).
  [[nodiscard]] int query(ibv_srq_attr& attr) const noexcept;
  /// Receive WQEs posted and not yet taken by a QP.
  [[nodiscard]] std::size_t posted() const noexcept;
  /// The handle to put in ibv_qp_init_attr::srq.
  [[nodiscard]] ibv_srq* get() noexcept;
  [[nodiscard]] ProtectionDomain& pd() const noexcept;

  explicit SharedReceiveQueue(std::unique_ptr<SrqImpl> impl);
  ~SharedReceiveQueue();
  SharedReceiveQueue(const SharedReceiveQueue&) = delete;
  SharedReceiveQueue& operator=(const SharedReceiveQueue&) = delete;

  /// The engine's state of this SRQ (internal to the simulator).
  [[nodiscard]] SrqImpl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<SrqImpl> impl_;
};

/// A queue pair (ibv_create_qp) of type IBV_QPT_RC, IBV_QPT_UC or IBV_QPT_UD.
class QueuePair {
 public:
  [[nodiscard]] std::uint32_t qp_num() const noexcept;
  [[nodiscard]] ibv_qp_type qp_type() const noexcept;
  [[nodiscard]] ibv_qp_state state() const noexcept;

  /// ibv_modify_qp: returns 0 or an errno value. EINVAL when the transition
  /// is not allowed from the current state, a required attribute of the
  /// transition is missing from `mask`, an attribute not allowed in it is
  /// present, or a value is out of range (path MTU above the port MTU,
  /// timeout > 31, retry_cnt or rnr_retry > 7, unknown destination GID).
  /// Required attributes (man ibv_modify_qp):
  ///   RESET->INIT  RC/UC: PKEY_INDEX, PORT, ACCESS_FLAGS;  UD: PKEY_INDEX, PORT, QKEY
  ///   INIT->RTR    RC: AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER
  ///                UC: AV, PATH_MTU, DEST_QPN, RQ_PSN;  UD: none
  ///   RTR->RTS     RC: SQ_PSN, TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC
  ///                UC/UD: SQ_PSN
  /// Any state -> RESET or ERR is always allowed; RESET empties both queues
  /// without completions, ERR flushes them (IBV_WC_WR_FLUSH_ERR).
  [[nodiscard]] int modify(const ibv_qp_attr& attr, int mask);
  /// ibv_query_qp: fills the attributes (all of them, whatever the mask).
  [[nodiscard]] int query(ibv_qp_attr& attr, int mask, ibv_qp_init_attr& init) const;

  /// ibv_post_send: returns 0 or an errno value and sets *bad_wr to the
  /// first work request not posted. EINVAL: QP in RESET, INIT or RTR, an
  /// opcode the QP type does not support, too many SGEs, inline data larger
  /// than max_inline_data, a UD message larger than the path MTU, an unknown
  /// AH. ENOMEM: the send queue is full. A bad lkey or an SGE outside its MR
  /// is not a post error: as on real NICs the request completes with
  /// IBV_WC_LOC_PROT_ERR and the QP goes to the error state. In ERR the
  /// request is accepted and flushed (IBV_WC_WR_FLUSH_ERR).
  [[nodiscard]] int post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr);
  /// ibv_post_recv: EINVAL in RESET or with too many SGEs, ENOMEM when the
  /// receive queue is full.
  [[nodiscard]] int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  /// ibv_bind_mw (type 1 windows): posts an IBV_WR_BIND_MW request with
  /// rkey ibv_inc_rkey(mw->rkey) and, once posted, stores that rkey in
  /// mw->rkey (as libibverbs does; a failed bind completes with
  /// IBV_WC_MW_BIND_ERR and the caller must undo it). EINVAL: no MR with a
  /// range, zero-based access, a window this device did not hand out;
  /// EPERM: MR and window of different PDs; then what post_send returns.
  [[nodiscard]] int bind_mw(ibv_mw* mw, const ibv_mw_bind& bind);

  /// Simulator-only knobs of a QP.
  struct Options {
    /// Adaptive-routing mode of recent NICs (a model of vendor behaviour,
    /// not IBTA): the responder accepts request packets up to `ar_window`
    /// PSNs ahead of the expected one instead of NAKing them, holds them,
    /// and executes them in PSN order as the holes before them fill; it
    /// sends a sequence-error NAK only when a hole stays open for
    /// `ar_nak_timeout_ns`. Messages stay whole on the wire (First, Middle,
    /// Last; one RETH per WRITE), so the verbs see what they see without
    /// AR: one MSN and one completion per message, byte_len its length.
    /// Hardware with out-of-order data placement writes each payload on
    /// arrival; here it reaches memory when the holes before it fill, a
    /// difference no completion can show. The requester sends as always.
    bool adaptive_routing = false;
    std::uint32_t ar_window = 256;
    Time ar_nak_timeout_ns = 20 * kMicrosecond;
  };
  /// Any time; the adaptive-routing window changes while it holds nothing.
  void set_options(const Options& options);
  [[nodiscard]] const Options& options() const noexcept;

  /// Counters of this QP, for labs and tests.
  struct Stats {
    std::uint64_t packets_sent = 0;
    std::uint64_t retransmitted_packets = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t naks_sent = 0;
    std::uint64_t naks_received = 0;
    std::uint64_t seq_err_naks_received = 0;  // of naks_received: PSN sequence errors acted on
    std::uint64_t rnr_naks_sent = 0;
    std::uint64_t rnr_naks_received = 0;
    std::uint64_t acks_sent = 0;
    std::uint64_t duplicates_received = 0;
    std::uint64_t out_of_sequence_dropped = 0;
    /// Responder in adaptive-routing mode (Options::adaptive_routing):
    /// request packets that arrived ahead of the expected PSN, inside the
    /// window, and were held for their turn instead of NAKed (a copy of one
    /// already held is not counted again).
    std::uint64_t out_of_order_held = 0;
    std::uint64_t retries_exceeded = 0;  // transport retries spent: IBV_WC_RETRY_EXC_ERR
    // DCQCN, named as the mlx5 hardware counters (`ethtool -S`, `rdma
    // statistic`), here per QP:
    std::uint64_t np_ecn_marked_roce_packets = 0;  // CE-marked requests received
    std::uint64_t np_cnp_sent = 0;                 // CNPs sent for them
    std::uint64_t rp_cnp_handled = 0;              // CNPs received and acted on
    // CNPs received with no reaction point to act on them (HostConfig::dcqcn_rp).
    std::uint64_t rp_cnp_ignored = 0;
  };
  [[nodiscard]] const Stats& stats() const noexcept;

  /// The DCQCN reaction point of this RC or UC QP (its rate, alpha, an
  /// observer for their time series); nullptr when FabricConfig::dcqcn is
  /// off, for UD, or before RTR. Created on first use at the egress link's
  /// rate; valid until the QP is destroyed or moved to RESET.
  [[nodiscard]] DcqcnRp* dcqcn();

  explicit QueuePair(std::unique_ptr<QpImpl> impl);
  ~QueuePair();
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  /// The engine's state of this QP (internal to the simulator).
  [[nodiscard]] QpImpl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<QpImpl> impl_;
};

/// A protection domain (ibv_alloc_pd): MRs and QPs of one PD only see each
/// other.
class ProtectionDomain {
 public:
  /// ibv_reg_mr: nullptr with errno EINVAL on a null address, zero length,
  /// or REMOTE_WRITE/REMOTE_ATOMIC without LOCAL_WRITE (as verbs requires).
  [[nodiscard]] MemoryRegion* reg_mr(void* addr, std::size_t length, int access);
  /// ibv_reg_mr_iova: the region is addressed as [iova, iova + length) by
  /// SGEs and remote requests. Fixed IOVAs make captures independent of
  /// where the heap put the buffers (byte-identical pcaps across runs).
  [[nodiscard]] MemoryRegion* reg_mr_iova(void* addr, std::size_t length, std::uint64_t iova,
                                          int access);
  /// ibv_dereg_mr: 0, or EINVAL for an MR of another PD or one that memory
  /// windows are bound to.
  [[nodiscard]] int dereg_mr(MemoryRegion* mr);

  /// ibv_alloc_mw: a free type 2 window or a valid, unbound type 1 window;
  /// nullptr with errno EINVAL for another type.
  [[nodiscard]] MemoryWindow* alloc_mw(ibv_mw_type type);
  /// ibv_dealloc_mw: 0 (a bound window is unbound first), or EINVAL for a
  /// window of another PD.
  [[nodiscard]] int dealloc_mw(MemoryWindow* mw);

  /// ibv_create_qp: nullptr with errno EINVAL (unknown CQ, unsupported type,
  /// zero-sized queue, caps above the device limits).
  [[nodiscard]] QueuePair* create_qp(const ibv_qp_init_attr& attr);
  /// QP 1 of port `port`, the General Services Interface QP (a UD QP) that
  /// carries the simulated Communication Manager's MADs (sim/cm.hpp), to be
  /// taken to INIT on that port; nullptr with errno EEXIST when the port has
  /// one already, EINVAL for a port the device does not have. Not a verbs
  /// call: on a real device the kernel's MAD layer owns each port's QP 1.
  [[nodiscard]] QueuePair* create_gsi_qp(const ibv_qp_init_attr& attr, std::uint8_t port = 1);
  /// ibv_destroy_qp: 0, or EINVAL for a QP of another PD.
  [[nodiscard]] int destroy_qp(QueuePair* qp);

  /// ibv_create_srq: nullptr with errno EINVAL when max_wr is 0 or above
  /// max_srq_wr, max_sge above max_srq_sge, or srq_limit above max_wr.
  /// srq_limit > 0 arms the limit at once (rxe keeps the creation value).
  [[nodiscard]] SharedReceiveQueue* create_srq(const ibv_srq_init_attr& attr);
  /// ibv_destroy_srq: 0, EBUSY while a QP uses it, EINVAL if not this PD's.
  [[nodiscard]] int destroy_srq(SharedReceiveQueue* srq);

  /// ibv_create_ah: nullptr with errno EINVAL when no host has the GID, or
  /// on RoCE when the AH is not global. On InfiniBand the destination is the
  /// host whose LID is attr.dlid, the GRH optional (is_global: its dgid must
  /// be that host's GID); EINVAL for a DLID no host has or an SL above 7.
  [[nodiscard]] AddressHandle* create_ah(const ibv_ah_attr& attr);
  [[nodiscard]] int destroy_ah(AddressHandle* ah);

  [[nodiscard]] Device& device() const noexcept { return *device_; }
  [[nodiscard]] ibv_pd* get() noexcept { return &raw_; }

  explicit ProtectionDomain(Device& device) noexcept : device_(&device) {}

 private:
  friend class Device;
  friend struct Engine;
  Device* device_;
  ibv_pd raw_{};
  std::vector<std::unique_ptr<MemoryRegion>> mrs_;
  std::vector<std::unique_ptr<MemoryWindow>> mws_;
  std::vector<std::unique_ptr<QueuePair>> qps_;
  std::vector<std::unique_ptr<AddressHandle>> ahs_;
  std::vector<std::unique_ptr<SharedReceiveQueue>> srqs_;
};

/// Limits of the simulated device (ibv_query_device).
struct DeviceLimits {
  int max_qp_wr = 16384;
  int max_sge = 32;
  int max_cqe = 1 << 20;
  std::uint32_t max_inline_data = 256;
  std::uint8_t max_qp_rd_atom = 16;
  std::uint32_t max_msg_sz = 1u << 31;
  /// Shared receive queues the device holds at once (ibv_create_srq fails
  /// with ENOMEM past it); a choice of the simulator's, rxe allows 917503.
  int max_srq = 1024;
  int max_srq_wr = 16384;
  int max_srq_sge = 32;
};

/// One simulated NIC: port 1, and one more port for each of
/// HostConfig::more_ports, each port with one GID (index 0).
class Device {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return config_.name; }
  [[nodiscard]] const HostConfig& config() const noexcept { return config_; }
  [[nodiscard]] const DeviceLimits& limits() const noexcept { return limits_; }
  [[nodiscard]] Fabric& fabric() const noexcept { return *fabric_; }

  /// ibv_query_device's phys_port_cnt: 1 + HostConfig::more_ports.size().
  [[nodiscard]] std::uint8_t port_count() const noexcept {
    return static_cast<std::uint8_t>(1 + config_.more_ports.size());
  }
  /// True for a port number the device has (1 .. port_count()).
  [[nodiscard]] bool has_port(std::uint32_t port) const noexcept {
    return port >= 1 && port <= port_count();
  }
  /// A port's MAC and IP address (port 1: HostConfig::mac and ip; others
  /// from HostConfig::more_ports). Port numbers the device does not have
  /// give port 1's.
  [[nodiscard]] const wire::MacAddress& mac(std::uint8_t port = 1) const noexcept;
  [[nodiscard]] const wire::IpAddress& ip(std::uint8_t port = 1) const noexcept;

  /// ibv_query_port: state ACTIVE, max_mtu and active_mtu from the port MTU,
  /// gid_tbl_len 1, link layer Ethernet. On InfiniBand: link layer
  /// InfiniBand, the port's LID, sm_lid 1 (the first host runs the subnet
  /// manager, and its port 1 says so with IBV_PORT_SM in port_cap_flags),
  /// LMC 0, sm_sl 0. All zero (state IBV_PORT_NOP) for a port the device
  /// does not have.
  [[nodiscard]] ibv_port_attr query_port(std::uint8_t port = 1) const noexcept;
  /// ibv_query_gid: index 0 is the port's IP as a RoCEv2 GID (IPv4-mapped
  /// for IPv4); on InfiniBand, fe80::<port GUID>. Any other index, or a
  /// port the device does not have, gives an all-zero GID.
  [[nodiscard]] ibv_gid gid(int index = 0, std::uint8_t port = 1) const noexcept;
  /// InfiniBand: the LID the fabric's subnet manager gave the port (ports
  /// numbered from 1 in the order their hosts joined). 0 on Ethernet, or
  /// for a port the device does not have.
  [[nodiscard]] std::uint16_t lid(std::uint8_t port = 1) const noexcept;
  /// The port GUID: the port's MAC as a modified EUI-64 (02:00:00:00:00:02
  /// gives 0x000000fffe000002), in host order. Port 1's is also the node
  /// GUID.
  [[nodiscard]] std::uint64_t port_guid(std::uint8_t port = 1) const noexcept;

  /// ibv_alloc_pd.
  [[nodiscard]] ProtectionDomain* alloc_pd();
  /// ibv_dealloc_pd: 0, EBUSY while MRs, MWs, QPs or AHs of the PD exist,
  /// EINVAL for a PD of another device.
  [[nodiscard]] int dealloc_pd(ProtectionDomain* pd);
  /// ibv_get_async_event without blocking: moves the oldest asynchronous
  /// event (IBV_EVENT_SRQ_LIMIT_REACHED, ...) into `event` and returns true,
  /// or returns false when there is none. Nothing to acknowledge: the event
  /// is a copy (ibv_ack_async_event has nothing to release here).
  [[nodiscard]] bool get_async_event(ibv_async_event& event);
  /// Asynchronous events waiting to be read.
  [[nodiscard]] std::size_t async_events() const noexcept { return async_events_.size(); }

  /// ibv_create_cq: nullptr with errno EINVAL when cqe < 1 or too large,
  /// or `channel` is not one of this device's.
  [[nodiscard]] CompletionQueue* create_cq(int cqe, CompletionChannel* channel = nullptr);
  /// ibv_destroy_cq: 0, EBUSY while a QP uses it, EINVAL if not ours.
  /// EBUSY too while events read from its channel are not acknowledged:
  /// there libibverbs' ibv_destroy_cq waits for ibv_ack_cq_events, forever
  /// when the program never acknowledges; the simulator refuses instead of
  /// hanging.
  [[nodiscard]] int destroy_cq(CompletionQueue* cq);
  /// ibv_create_comp_channel.
  [[nodiscard]] CompletionChannel* create_comp_channel();
  /// ibv_destroy_comp_channel: 0, EBUSY while a CQ uses it, EINVAL if not
  /// ours.
  [[nodiscard]] int destroy_comp_channel(CompletionChannel* channel);

  /// The port's transport counters, named as mlx5 names them (`ethtool -S`,
  /// `rdma statistic`, /sys/class/infiniband/DEV/ports/1/hw_counters), so a
  /// lab's figures read beside a real NIC's. Like the hardware's they count
  /// for every QP the device ever had, destroyed ones included. rxe counts the
  /// same events under its own names, given after each.
  struct Counters {
    /// Responder: RC requests that arrived after a PSN gap and were dropped
    /// (one NAK answers the first of them). rxe: out_of_seq_request.
    std::uint64_t out_of_sequence = 0;
    /// Responder: requests seen again after they were executed (answered,
    /// never executed twice). rxe: duplicate_request.
    std::uint64_t duplicate_request = 0;
    /// Requester: PSN-sequence-error NAKs that made it resend. rxe:
    /// rcvd_seq_err.
    std::uint64_t packet_seq_err = 0;
    /// Requester: expiries of the ACK timer with PSNs outstanding, the last
    /// one of a QP whose retries ran out included (mlx5 counts that one under
    /// req_transport_retries_exceeded instead; here it is also in
    /// retry_exceeded_err).
    std::uint64_t local_ack_timeout_err = 0;
    /// Requester: QPs that spent their retry_cnt (IBV_WC_RETRY_EXC_ERR).
    /// mlx5: req_transport_retries_exceeded; rxe: retry_exceeded_err.
    std::uint64_t retry_exceeded_err = 0;
    /// Requester: RNR NAKs received. rxe: rcvd_rnr_err.
    std::uint64_t rnr_nak_retry_err = 0;
    /// DCQCN (mlx5 only; rxe has no congestion control).
    std::uint64_t np_ecn_marked_roce_packets = 0;
    std::uint64_t np_cnp_sent = 0;
    std::uint64_t rp_cnp_handled = 0;
    /// CNPs received and not acted on (mlx5: rp_cnp_ignored; here with
    /// HostConfig::dcqcn_rp off).
    std::uint64_t rp_cnp_ignored = 0;
  };
  [[nodiscard]] Counters counters() const noexcept;

  /// `node`: the fabric's number of its port 1 (its other ports follow).
  Device(Fabric& fabric, HostConfig config, std::uint32_t node);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

 private:
  /// The memory window an rkey names by its index (upper 24 bits), whatever
  /// its key byte; nullptr when none.
  [[nodiscard]] MemoryWindow* window_of(std::uint32_t rkey) const noexcept {
    const auto it = mws_.find(rkey >> 8);
    return it == mws_.end() ? nullptr : it->second;
  }
  /// The address handle behind a verbs handle of this device; nullptr when none.
  [[nodiscard]] AddressHandle* find_ah(const ibv_ah* ah) const noexcept {
    const auto it = ahs_.find(ah);
    return it == ahs_.end() ? nullptr : it->second;
  }
  // Numbers and keys for new objects, and the maps the data path looks them
  // up in (ProtectionDomain creates and destroys the objects).
  [[nodiscard]] std::uint32_t take_key_index() noexcept { return next_key_++; }
  [[nodiscard]] std::uint32_t take_qpn() noexcept { return next_qpn_++; }
  void add_mr(MemoryRegion* mr) { mrs_[mr->lkey()] = mr; }
  void remove_mr(const MemoryRegion* mr) noexcept { mrs_.erase(mr->lkey()); }
  void add_mw(MemoryWindow* mw) { mws_[mw->rkey() >> 8] = mw; }
  void remove_mw(const MemoryWindow* mw) noexcept { mws_.erase(mw->rkey() >> 8); }
  void add_qp(std::uint32_t qpn, QpImpl* qp) {
    if (qpn >= qps_.size()) qps_.resize(std::size_t{qpn} + 1, nullptr);
    qps_[qpn] = qp;
  }
  /// The QP leaves the table; a type 2 window bound to it stays bound (rxe
  /// keeps a reference) but can no longer match any QP.
  void remove_qp(std::uint32_t qpn, const QpImpl* qp) noexcept {
    retire_counters(*qp);
    if (qpn < qps_.size() && qps_[qpn] == qp) qps_[qpn] = nullptr;
    for (QpImpl*& g : gsi_)
      if (g == qp) g = nullptr;
    for (auto& [index, mw] : mws_) mw->forget_qp(qp);
  }
  /// The QP a packet arriving at `port` with destination QP `qpn` is for
  /// (nullptr when there is none): QP1 is that port's GSI QP, every other
  /// number the device's.
  [[nodiscard]] QpImpl* qp_at_port(std::uint32_t qpn, std::uint8_t port) const noexcept {
    if (qpn == 1) return gsi_[port - 1U];
    return qpn < qps_.size() ? qps_[qpn] : nullptr;
  }
  void add_ah(AddressHandle* ah) { ahs_[ah->get()] = ah; }
  /// False when the handle is not this device's.
  bool remove_ah(AddressHandle* ah) noexcept { return ahs_.erase(ah->get()) != 0; }

  friend struct Engine;
  friend struct QpImpl;
  friend struct SrqImpl;
  friend class ProtectionDomain;
  friend class QueuePair;
  /// A destroyed QP's counts stay in counters().
  void retire_counters(const QpImpl& qp) noexcept;
  /// Queues an asynchronous event for get_async_event().
  void post_async_event(const ibv_async_event& event) { async_events_.push_back(event); }
  Fabric* fabric_;
  HostConfig config_;
  DeviceLimits limits_;
  std::uint32_t node_;             // the fabric's number of port 1; port p is node_ + p - 1
  std::uint32_t next_qpn_ = 0x11;  // rxe starts its QP numbers at 0x11
  std::uint32_t next_key_ = 1;
  std::vector<std::unique_ptr<ProtectionDomain>> pds_;
  std::vector<std::unique_ptr<CompletionQueue>> cqs_;
  std::vector<std::unique_ptr<CompletionChannel>> channels_;
  /// By QP number: numbers are handed out in sequence from 0x11 (and 1 for
  /// the CM's QP), so a table indexed by the number is dense, and the data
  /// path finds a frame's QP with one load however many QPs there are.
  std::vector<QpImpl*> qps_;
  std::unordered_map<std::uint32_t, MemoryRegion*> mrs_;   // by key
  std::unordered_map<std::uint32_t, MemoryWindow*> mws_;   // by key index (key >> 8)
  std::unordered_map<const ibv_ah*, AddressHandle*> ahs_;  // by handle
  std::deque<ibv_async_event> async_events_;
  Counters retired_;  // of the QPs destroyed so far
  /// Shared receive queues alive on this device (DeviceLimits::max_srq).
  int srqs_alive_ = 0;
  /// The GSI QPs (QP1), one per port, by port - 1.
  std::array<QpImpl*, kMaxHostPorts> gsi_{};
};

/// Bytes of payload per packet for an ibv_mtu value (IBV_MTU_1024 -> 1024),
/// 0 for an invalid value.
[[nodiscard]] std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept;

}  // namespace rdmalab::sim
