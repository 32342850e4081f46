// Internal: the event loop, the links and the queue-pair engine.
//
// Not installed, not part of the API: the public classes in
// include/rdmalab/sim/ are thin handles over these structures.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <unordered_map>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/sim/dcqcn.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/psn.hpp"

namespace rdmalab::sim {

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and the same numbers on
/// every platform, unlike std::uniform_*_distribution.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) noexcept : state_(seed) {}
  std::uint64_t next() noexcept { return next(state_); }
  /// The same step on a state kept elsewhere (the CM's Manager keeps its
  /// own, in a public class that cannot hold an Rng).
  static std::uint64_t next(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// True with probability p, decided on 53 random bits.
  bool chance(double p) noexcept {
    if (p <= 0.0) return false;
    return static_cast<double>(next() >> 11) * 0x1.0p-53 < p;
  }
  /// Uniform in [0, n] (n >= 0).
  std::int64_t upto(std::int64_t n) noexcept {
    if (n <= 0) return 0;
    return static_cast<std::int64_t>(next() % (static_cast<std::uint64_t>(n) + 1));
  }

 private:
  std::uint64_t state_;
};

/// LinkHead stands in the heap for the oldest arrival waiting in a link's
/// FIFO (see Engine::schedule_arrival).
enum class EventKind : std::uint8_t {
  Arrival,
  QpTx,
  AckTimer,
  RnrTimer,
  AckFlush,
  ArTimer,
  LinkHead,
  SwitchTx,      // a = switch port, b = its tx_gen: try to start its next frame
  PfcRefresh,    // a = switch port, b = generation << 8 | priority: renew a pause
  HostPfc,       // a = host port (host_ports): its next storm pause (HostConfig::pfc_storm)
  CreditReturn,  // a = switch port, b = VL << 32 | blocks: credits reach its upstream
};

struct Event {
  Event() = default;
  // Spelled out (an aggregate would do for GCC) so emplace_back(args...)
  // builds it in place with every compiler: clang 14, which clang-tidy
  // uses, has no parenthesised aggregate initialisation.
  Event(Time t, std::uint64_t s, EventKind k, std::uint32_t a_in, std::uint64_t b_in) noexcept
      : time(t), seq(s), kind(k), a(a_in), b(b_in) {}
  Time time;
  std::uint64_t seq;  // FIFO among events of the same time: determinism
  EventKind kind;
  std::uint32_t a;  // QP id, buffer index for Arrival, link index for LinkHead
  // Generation; (device << 32 | length) for Arrival; for LinkHead the buffer
  // of the FIFO's oldest arrival, so that its frame can be asked for before
  // the FIFO is read.
  std::uint64_t b;
};

/// `i` modulo `size` for i < 2 * size, without a division: ring slots are
/// computed for every packet and every completion.
[[nodiscard]] constexpr std::size_t ring_slot(std::size_t i, std::size_t size) noexcept {
  return i >= size ? i - size : i;
}

/// A Link's `to` (and an arrival's destination) with this bit set names a
/// switch port (its index in Engine::sw_ports), not a device.
inline constexpr std::uint32_t kSwitchNode = 0x80000000U;

/// The PFC state of one priority at a sending port: no frame of it may start
/// before `until`. `from` is when the current paused interval began (`on`).
struct PauseTrack {
  Time until = 0;
  Time from = 0;
  bool on = false;
};

/// One direction of a link with its state. What every frame on the link
/// reads or writes (when the link is free, the serialisation time, the
/// counters, the random stream, where it leads) comes first, in one cache
/// line; then the arrivals in flight, then the configuration, whose first
/// line (rate, delay, loss, jitter) is read with them.
struct alignas(64) Link {
  Time busy_until = 0;
  /// The serialisation time of the last frame size seen, and that size.
  std::size_t ser_bytes = 0;
  double ser_rate = 0;
  Time ser_ns = 0;
  std::uint64_t offered = 0;  // packets offered so far (for DropRule::Nth)
  Rng rng;
  std::uint32_t to = 0;     // receiving host port (Engine::host_ports) or switch port
  std::uint32_t index = 0;  // in Engine::link_list
  /// InfiniBand's credit-based flow control governs this link (`credits`
  /// below).
  bool credited = false;
  /// Arrivals scheduled in (time, seq) order: all of them on a link without
  /// jitter, reordering or multiple paths (see Engine::schedule_arrival).
  std::deque<Event> arrivals;
  LinkConfig cfg;
  /// PFC: pauses the far end sent to this link's sender, per priority, and
  /// the QPs (ids) that wait for one to end, or (InfiniBand) for credits.
  /// Only on a switched fabric.
  std::array<PauseTrack, kTrafficClasses> pause{};
  std::vector<std::uint32_t> pause_waiters;
  /// InfiniBand's credit-based flow control, on a link into a switch port of
  /// an IB fabric (`credited`): the 64-byte blocks the receiving port has
  /// told the sender it has room for, per VL. A packet of a VL starts only
  /// with credits for all its blocks, which it takes. `credit_need` is what
  /// the sender waits for (0: it does not wait), since `credit_wait_from`;
  /// `credit_wait_ns` sums the time waited (IB's PortXmitWait).
  std::array<std::int64_t, kTrafficClasses> credits{};
  std::array<std::uint32_t, kTrafficClasses> credit_need{};
  std::array<Time, kTrafficClasses> credit_wait_from{};
  std::array<Time, kTrafficClasses> credit_wait_ns{};
};

/// A send work request as the requester keeps it.
struct SendWqe {
  std::uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_SEND;
  unsigned flags = 0;
  std::uint32_t imm = 0;  // network order as given, or the rkey to invalidate
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  AddressHandle* ah = nullptr;
  std::uint32_t remote_qpn = 0;
  std::uint32_t remote_qkey = 0;
  int num_sge = 0;         // SGEs in this slot's SGE area (0 for inline)
  bool is_inline = false;  // payload copied into this slot's inline area
  std::uint32_t length = 0;
  /// IBV_WR_BIND_MW: the keys and range as the request carried them.
  struct Bind {
    std::uint32_t mw_rkey = 0;  // the window's key as the caller's ibv_mw held it
    std::uint32_t rkey = 0;     // the new key (its low byte is used)
    std::uint32_t mr_lkey = 0;
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    int access = 0;
  } bind;
  // Transmission state.
  bool started = false;        // PSNs assigned, local SGEs checked
  bool done = false;           // READ data / atomic result arrived
  std::uint32_t psn = 0;       // first PSN
  std::uint32_t npkts = 1;     // PSNs it takes
  std::uint32_t received = 0;  // READ: response packets placed in order
  bool regap = false;          // READ: re-requested from regap_psn already
  std::uint32_t regap_psn = 0;
  // NIC cost model (HostConfig::doorbell_ns ...): the first packet leaves
  // no earlier than this (0 with the model off).
  Time ready_at = 0;

  /// `*this = SendWqe{}`, member by member: post_send clears a slot for
  /// every request, and GCC clears the whole size for the assignment with
  /// one long string store, slower than the members. A new member must be
  /// cleared here too.
  void clear() noexcept {
    wr_id = 0;
    opcode = IBV_WR_SEND;
    flags = 0;
    imm = 0;
    remote_addr = 0;
    rkey = 0;
    compare_add = 0;
    swap = 0;
    ah = nullptr;
    remote_qpn = 0;
    remote_qkey = 0;
    num_sge = 0;
    is_inline = false;
    length = 0;
    bind = Bind{};
    started = false;
    done = false;
    psn = 0;
    npkts = 1;
    ready_at = 0;
    received = 0;
    regap = false;
    regap_psn = 0;
  }
};

struct RecvWqe {
  std::uint64_t wr_id = 0;
  int num_sge = 0;
  std::uint64_t length = 0;  // total bytes the SGEs hold
  bool valid = true;         // every SGE inside an MR with local write
};

struct Engine;

/// Fills a receive WQE from a posted request (ibv_post_recv,
/// ibv_post_srq_recv): its SGEs go to `sges` as host addresses; an SGE
/// outside an MR of `pd` with local write makes the WQE invalid (the
/// receive fails when a message uses it).
void fill_recv_wqe(Engine& e, const Device& d, const ProtectionDomain* pd, const ibv_recv_wr& wr,
                   RecvWqe& r, ibv_sge* sges) noexcept;

/// The state of one shared receive queue (SharedReceiveQueue): a ring of
/// max_wr receive WQEs, each with room for max_sge SGEs, and the limit.
struct SrqImpl {
  Device* device = nullptr;
  ProtectionDomain* pd = nullptr;
  SharedReceiveQueue* handle = nullptr;
  ibv_srq raw{};
  std::uint32_t max_sge = 1;
  std::uint32_t limit = 0;  // 0: disarmed
  std::vector<RecvWqe> ring;
  std::vector<ibv_sge> sge;
  std::size_t head = 0;
  std::size_t count = 0;
  int users = 0;  // QPs taking their receives from it

  /// Moves the WQE at the head into `wqe` and its SGEs into `sges` (resized
  /// to max_sge); false when the SRQ is empty. Fires the limit event when the
  /// WQEs left fall below an armed limit (rxe's get_srq_wqe()).
  bool take(RecvWqe& wqe, std::vector<ibv_sge>& sges);
};

/// Something the responder side has to put on the wire.
struct RespItem {
  enum class Kind : std::uint8_t { Ack, AtomicAck, ReadResponse } kind = Kind::Ack;
  std::uint32_t psn = 0;
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;
  std::uint64_t orig = 0;  // atomic
  // READ response stream.
  std::uint64_t va = 0;
  std::uint32_t length = 0;  // bytes left to send
  std::uint32_t total = 0;
  bool first = true;
};

/// Responder resources for one READ or atomic (IBTA 9.7.5.1.4: kept so
/// that a duplicate request is answered again).
struct RdAtomicResource {
  bool atomic = false;
  std::uint32_t psn = 0;
  std::uint32_t npkts = 1;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;
  std::uint64_t orig = 0;
};

/// The flags of one slot of the adaptive-routing window (QpImpl::ar_seen):
/// 0 while the PSN has not arrived.
struct ArSlot {
  static constexpr std::uint8_t kPlaced = 1;  // its data is in memory already
  static constexpr std::uint8_t kAckReq = 2;  // its BTH asked for an ACK
};

struct Engine;

/// The state of one QP: requester and responder.
struct QpImpl {
  Engine* engine = nullptr;
  Device* device = nullptr;
  ProtectionDomain* pd = nullptr;
  QueuePair* handle = nullptr;
  std::uint32_t id = 0;  // index in Engine::qps
  std::uint32_t qpn = 0;
  ibv_qp_type type = IBV_QPT_RC;
  ibv_qp_state state = IBV_QPS_RESET;
  CompletionQueue* send_cq = nullptr;
  CompletionQueue* recv_cq = nullptr;
  ibv_qp_cap cap{};
  bool sig_all = false;
  /// The port the QP belongs to (ibv_qp_attr::port_num at INIT): it sends
  /// from that port, and only packets arriving there reach it. And the
  /// port of its RC/UC destination `peer`. (Here, in padding the layout
  /// had anyway.)
  std::uint8_t port = 1;
  std::uint8_t peer_port = 1;
  QueuePair::Options options;
  QueuePair::Stats stats;

  // Attributes from modify().
  ibv_qp_attr attr{};
  std::uint32_t mtu = 1024;
  Device* peer = nullptr;  // RC/UC destination
  Link* link = nullptr;    // RC/UC egress link
  /// The frame template: RC/UC fill in the connection at RTR; UD addresses
  /// it anew for every packet, from the work request's address handle.
  wire::FrameSpec spec;

  // Send queue: a ring of cap.max_send_wr slots, each with room for
  // max_send_sge SGEs and max_inline_data bytes.
  std::vector<SendWqe> sq;
  std::vector<ibv_sge> sq_sge;
  std::vector<std::uint8_t> sq_inline;
  std::size_t sq_head = 0;   // oldest WQE not completed
  std::size_t sq_count = 0;  // WQEs in the ring
  std::size_t tx_index = 0;  // WQE to transmit next, counted from sq_head
  std::uint32_t tx_pkt = 0;  // packet of that WQE to transmit next
  std::size_t started = 0;   // WQEs with PSNs assigned, counted from sq_head

  // Requester PSN state.
  std::uint32_t next_psn = 0;  // first PSN of the next new WQE
  std::uint32_t una = 0;       // oldest PSN not acknowledged
  std::uint32_t sent_hw = 0;   // one past the highest PSN sent so far
  int retry_left = 0;
  int rnr_left = 0;
  bool rnr_wait = false;
  bool ack_armed = false;         // the local ACK timer runs
  bool ack_event_queued = false;  // one AckTimer event is in the queue
  Time ack_deadline = 0;
  std::uint64_t rnr_gen = 0;
  int rd_atomic_outstanding = 0;
  bool reread = false;  // re-request the READ starting at reread_psn
  std::uint32_t reread_psn = 0;

  // Receive queue.
  std::vector<RecvWqe> rq;
  std::vector<ibv_sge> rq_sge;
  std::size_t rq_head = 0;
  std::size_t rq_count = 0;
  // Shared receive queue (nullptr: the QP's own receive queue above). The
  // WQE a message took from it is kept here until the message completes.
  SrqImpl* srq = nullptr;
  RecvWqe srq_wqe;
  std::vector<ibv_sge> srq_sge;
  bool srq_taken = false;

  // Responder state.
  std::uint32_t epsn = 0;
  std::uint32_t msn = 0;
  bool nak_sent = false;
  bool in_send = false;   // a multi-packet SEND is in progress
  bool in_write = false;  // a multi-packet WRITE is in progress
  std::uint64_t recv_offset = 0;
  std::uint64_t write_va = 0;
  std::uint32_t write_left = 0;
  std::uint32_t write_total = 0;
  MemoryRegion* write_mr = nullptr;
  bool uc_drop = false;  // UC: discard packets until the next First/Only
  std::vector<RdAtomicResource> resources;
  std::size_t resource_next = 0;
  std::deque<RespItem> resp;
  bool ack_pending = false;  // coalesced ACK waiting in `pending_ack`
  RespItem pending_ack;
  // Adaptive routing: the frames of request packets that arrived ahead of
  // epsn, in a ring of options.ar_window slots by offset from epsn (an empty
  // slot: not arrived). They execute in PSN order as the holes fill.
  std::vector<std::vector<std::uint8_t>> ar_held;
  std::size_t ar_held_count = 0;
  std::size_t ar_base = 0;  // ring index of epsn
  bool ar_running = false;  // run_ar_held is executing held packets
  bool ar_armed = false;
  bool ar_event_queued = false;
  Time ar_deadline = 0;

  /// InfiniBand: the SLID and SL of the last packet received, for the
  /// receive completions (ibv_wc::slid, sl).
  std::uint16_t rx_slid = 0;
  std::uint8_t rx_sl = 0;

  bool tx_scheduled = false;
  /// The QpTx event that counts (an XON schedules an earlier one than the
  /// pump had; the later one is then stale and ignored).
  std::uint64_t tx_gen = 0;
  bool pause_wait = false;  // in its link's pause_waiters (a pause or credits)
  Time next_tx = 0;
  // NIC cost model: when this QP's send engine is next free.
  Time nic_free = 0;

  // --- DCQCN (dcqcn_nic.cpp), only with FabricConfig::dcqcn ---
  std::unique_ptr<DcqcnRp> rp;  // reaction point, created on first use
  std::optional<DcqcnNp> np;    // notification point's CNP pacing
  // The last paced packet (request, READ response): when it started and its
  // bits on the wire. The next one starts that many bits at the current rate
  // later, so a rate change re-times a packet that is already waiting.
  Time rp_last_start = 0;
  std::uint64_t rp_last_bits = 0;
  /// The reaction point (created at the egress link's rate); nullptr when
  /// DCQCN is off, for UD, or before RTR.
  DcqcnRp* dcqcn_rp();
  /// A frame for this QP arrived: a CNP goes to the reaction point (true:
  /// nothing else to do); a CE-marked request or READ response may make the
  /// NP send a CNP.
  bool dcqcn_receive(const wire::Frame& f);
  /// Sends the data packet in `spec` (a request, or a READ response: the
  /// packets that carry a QP's data) ECN-capable on `ln`, and paces this
  /// QP's next one at the reaction point's rate.
  void dcqcn_transmit(Link& ln);
  /// When the next paced packet may start at the reaction point's current
  /// rate (timers due by now run first).
  Time dcqcn_next_tx();

  /// What the responder decided about a request at the expected PSN.
  enum class Verdict : std::uint8_t {
    Ok,
    Rnr,             // no receive WQE: RNR NAK
    InvalidRequest,  // NAK invalid request, then the error state
    RemoteAccess,    // NAK remote access error, then the error state
    BadInvalidate,   // SEND with Invalidate of a key it may not revoke: ACK, then error
  };

  // --- qp.cpp: what both sides share ---
  void pump();
  void receive(const wire::Frame& frame, wire::Bytes bytes);
  void fail_tx_wqe(ibv_wc_status status);
  void enter_error(ibv_wc_status first_status);
  void flush_all(ibv_wc_status first_status);
  void reset_queues();
  [[nodiscard]] Time ack_timeout_ns() const noexcept;

  // --- requester.cpp: sending requests, handling their responses ---
  bool requester_can_send() const noexcept;
  void send_request_packet();
  bool find_reread(std::size_t& index, std::uint32_t& pkt) const noexcept;
  bool start_wqe(SendWqe& w, std::size_t slot);
  void address_ud(const SendWqe& w);
  const wire::OpcodeInfo* build_request(const SendWqe& w, std::size_t slot, std::uint32_t pkt,
                                        std::uint32_t& npkts);
  void count_sent(std::uint32_t psn, std::uint32_t npkts);
  void after_request(const SendWqe& w, std::uint32_t npkts, bool rereading);
  bool check_local(SendWqe& w, std::size_t slot);
  std::size_t gather(std::size_t slot, const SendWqe& w, std::uint64_t offset, std::uint32_t len,
                     const std::uint8_t*& out);
  /// The host address of a started WQE's payload at `offset` and the bytes
  /// from there to the end of its SGE; {0, 0} for inline data (already in
  /// the cache) or an offset past the WQE's SGEs.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> payload_piece(
      std::size_t slot, const SendWqe& w, std::uint64_t offset) const noexcept;
  void on_response(const wire::IbPacket& p);
  void on_ack(std::uint32_t psn);
  void on_rnr_nak(std::uint32_t psn, wire::Aeth aeth);
  void on_nak(std::uint32_t psn, wire::Aeth aeth);
  void on_atomic_ack(const wire::IbPacket& p);
  void on_read_response(const wire::IbPacket& p);
  void complete_send(SendWqe& w, ibv_wc_status status);
  void retire();
  void ack_upto(std::uint32_t psn);
  void restart_from(std::uint32_t psn);
  void go_back_n(std::uint32_t psn);
  void arm_ack_timer();
  void rearm_ack_timer();
  void on_ack_timer(std::uint64_t gen);
  void on_rnr_timer(std::uint64_t gen);

  // --- responder.cpp: executing requests, sending responses ---
  void on_request(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes);
  bool uc_in_sequence(const wire::OpcodeInfo& info, std::uint32_t psn);
  bool rc_in_sequence(const wire::IbPacket& p, const wire::OpcodeInfo& info, wire::Bytes bytes);
  void nak_sequence_error();
  void on_duplicate(const wire::OpcodeInfo& info, std::uint32_t psn);
  void reexecute_read(std::uint32_t psn);
  void replay_atomic(std::uint32_t psn);
  Verdict execute(const wire::IbPacket& p, const wire::OpcodeInfo& info);
  Verdict execute_send(const wire::IbPacket& p, const wire::OpcodeInfo& info);
  Verdict execute_write(const wire::IbPacket& p, const wire::OpcodeInfo& info);
  Verdict execute_read_atomic(const wire::IbPacket& p, const wire::OpcodeInfo& info);
  void answer(const wire::IbPacket& p, const wire::OpcodeInfo& info, Verdict v);
  void send_response_item();
  void queue_ack(std::uint32_t psn, std::uint8_t syndrome, bool coalesce);
  void flush_ack();
  /// A receive WQE for the message that starts now: with an SRQ one is
  /// taken from it (SrqImpl::take); false when none is posted.
  bool take_recv();
  bool scatter_recv(std::uint64_t offset, wire::Bytes data);
  /// `solicited`: the message's last packet had the BTH's SE bit (a flushed
  /// receive counts as solicited, as rxe posts it), for a CQ armed for
  /// solicited completions only.
  void complete_recv(ibv_wc_status status, std::uint32_t byte_len, ibv_wc_opcode op, unsigned flags,
                     std::uint32_t imm, std::uint32_t src_qp, bool solicited);
  MemoryRegion* remote_mr(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, int need) const;
  MemoryRegion* window_mr(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, int need) const;
  void ud_receive(const wire::IbPacket& p, const wire::Frame& f, wire::Bytes bytes);
  void ar_accept_early(std::size_t ahead, wire::Bytes bytes);
  void ar_skip(std::uint32_t n);
  void run_ar_held();
  void arm_ar_timer();
  void on_ar_timer(std::uint64_t gen);

  // --- local_ops.cpp: memory window bind, local invalidate ---
  void run_local_ops();
  ibv_wc_status execute_bind(const SendWqe& w);
  int invalidate_rkey(std::uint32_t rkey);

  /// The link a WQE's packets leave on: the connection's, or for UD the one
  /// to the address handle's device.
  [[nodiscard]] Link& egress_link(const SendWqe& w);
  [[nodiscard]] SendWqe& wqe_at(std::size_t from_head) noexcept { return sq[slot_at(from_head)]; }
  /// from_head <= sq.size().
  [[nodiscard]] std::size_t slot_at(std::size_t from_head) const noexcept {
    return ring_slot(sq_head + from_head, sq.size());
  }
  [[nodiscard]] std::uint32_t last_psn(const SendWqe& w) const noexcept {
    return wire::psn_add(w.psn, static_cast<std::int64_t>(w.npkts) - 1);
  }
  /// Bind and local invalidate: executed by the NIC itself, nothing on the wire.
  [[nodiscard]] static bool is_local(const SendWqe& w) noexcept {
    return w.opcode == IBV_WR_BIND_MW || w.opcode == IBV_WR_LOCAL_INV;
  }
  [[nodiscard]] bool is_rd_atomic(const SendWqe& w) const noexcept {
    return w.opcode == IBV_WR_RDMA_READ || w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
           w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
  }
};

/// InfiniBand: addresses `f` as `av` says, from port `port` of `self`:
/// link layer InfiniBand, DLID, SLID, SL and VL (= SL), and the GRH when the
/// AV is global (verbs.cpp).
void address_ib(wire::FrameSpec& f, const Device& self, std::uint8_t port,
                const ibv_ah_attr& av) noexcept;

/// InfiniBand's linear forwarding table: the one of the equal-cost egress
/// ports `ports` (not empty) that packets to `dlid` take (switch.cpp).
[[nodiscard]] std::uint32_t lft_choice(const std::vector<std::uint32_t>& ports,
                                       std::uint16_t dlid) noexcept;

/// Sets CE in a frame's IP header (IPv4 checksum recomputed; see fabric.cpp).
void mark_ce(std::uint8_t* frame, std::size_t ip_off, bool v4) noexcept;

/// A frame waiting in a switch's egress queue.
struct QueuedFrame {
  std::uint32_t buffer;
  std::uint32_t length;
  std::uint32_t in_port;  // the switch port it arrived on (global index)
  std::uint8_t prio;
  /// The offset of its IP header when the frame is ECN-capable and not yet
  /// marked (ECT(0) or ECT(1)), else 0; and whether that header is IPv4.
  /// Noted on arrival, so that deciding whether to mark it does not read a
  /// frame that has waited in a deep queue, out of the cache, once more.
  std::uint8_t ect_ip = 0;
  bool v4 = true;
};

/// One port of a switch: its egress queues and link, and the PFC state of
/// what arrives on it. What every frame through the port reads (the
/// switch, the links, which classes have frames queued, the transmit event,
/// the pause state, whether it is captured) comes first and fills one cache
/// line: a fabric has hundreds of ports, and a port's eight queues alone
/// span ten lines.
struct alignas(64) SwitchPort {
  std::uint32_t sw = 0;     // the switch (index in Engine::switches)
  std::uint32_t local = 0;  // port number on that switch
  Link* out = nullptr;      // egress: this port -> its peer
  Link* in = nullptr;       // ingress: its peer -> this port
  /// The peer: a host port (Engine::host_ports), or kSwitchNode | the peer switch's port.
  std::uint32_t peer = 0;
  /// Bit c set: q[c] holds a frame. Kept with q's pushes and pops, so that
  /// finding the classes with something to send reads one byte, not the
  /// eight queues.
  std::uint8_t queued = 0;
  std::uint8_t dwrr_next = 0;
  bool tx_pending = false;  // a SwitchTx event is scheduled, for tx_at
  Time tx_at = 0;
  /// The SwitchTx event that counts: an earlier kick (an XON, a frame of a
  /// class that is not paused) supersedes a later one.
  std::uint64_t tx_gen = 0;
  /// Whether this port has paused its upstream, per priority.
  std::array<bool, kTrafficClasses> xoff{};
  /// A capture of this port's frames, both ways (Fabric::start_port_capture).
  std::unique_ptr<capture::PcapWriter> tap;
  std::array<std::deque<QueuedFrame>, kTrafficClasses> q;
  /// Bytes in the switch's buffer that arrived on this port, per priority.
  std::array<std::uint64_t, kTrafficClasses> ingress_bytes{};
  /// Counts the pause frames sent per priority: a PfcRefresh event for an
  /// older one is stale.
  std::array<std::uint32_t, kTrafficClasses> pfc_gen{};
  std::array<std::int64_t, kTrafficClasses> deficit{};
  SwitchPortStats stats;
};

struct SwitchImpl {
  SwitchConfig cfg;
  std::vector<std::uint32_t> ports;  // global port indices, by local number
  std::uint64_t used = 0;            // bytes in the shared buffer
  Rng rng;
  std::uint64_t hash_seed = 0;
  /// Equal-cost egress ports (local numbers) towards each host port (by its number in
  /// Engine::host_ports).
  std::vector<std::vector<std::uint32_t>> routes;
};

struct Engine {
  explicit Engine(FabricConfig c)
      : cfg(std::move(c)), ib(cfg.link_layer == wire::LinkLayer::Infiniband) {}

  FabricConfig cfg;
  /// The fabric is InfiniBand (FabricConfig::link_layer): native IB packets.
  bool ib;
  Time now = 0;
  std::uint64_t seq = 0;
  /// The events, in two binary heaps by (time, seq); step() takes the
  /// earlier of their first events, so they run in one (time, seq) order.
  /// `timers` holds the ACK and RNR timers: a QP's ACK timer event stays
  /// queued until its deadline (restarting the timer only moves the
  /// deadline), tens of milliseconds ahead, so on a fabric of thousands of
  /// QPs they would outnumber the rest several times over and deepen every
  /// push and pop of the packets' events.
  std::vector<Event> heap;
  std::vector<Event> timers;
  std::vector<std::unique_ptr<Device>> devices;
  /// Every host's ports, numbered in the order the hosts joined, each
  /// host's ports in turn (Device::node_ is its port 1's number): links,
  /// switch routes and arrivals name a host's port by this number. With one
  /// port per host it is the device's index.
  std::vector<DevicePort> host_ports;
  std::unordered_map<std::uint64_t, std::unique_ptr<Link>> links;
  std::vector<Link*> link_list;  // by Link::index
  std::vector<QpImpl*> qps;      // by id; nullptr once destroyed
  /// Frame buffers of kFrameBuffer bytes, each on a page boundary: glibc's
  /// memcpy of a few KiB (rep movsb) runs four times slower when the
  /// destination is 1-31 bytes past the source modulo 4096, so where the heap
  /// put a buffer would decide the speed of every payload copy in and out of
  /// it. Page-aligned, it depends on the application's buffers only.
  static constexpr std::size_t kFrameBuffer = 4096 + 256;  // the largest frame fits
  static constexpr std::align_val_t kPage{4096};
  struct PageDelete {
    void operator()(std::uint8_t* p) const noexcept { ::operator delete[](p, kPage); }
  };
  /// Frames of at most kSmallBuffer bytes (ACKs, CNPs, pause frames, the
  /// packets of a small MTU) take a small buffer instead, eight to a page: a
  /// switch queue of ten thousand 300-byte frames then spans 5 MB of memory,
  /// not 43 MB, and each frame it forwards is likelier to be in the cache.
  static constexpr std::size_t kSmallBuffer = 512;
  std::vector<std::unique_ptr<std::uint8_t[], PageDelete>> pages;  // owns them all
  std::vector<std::uint8_t*> buffers;                              // by index
  std::vector<bool> small_buffer;                                  // by index
  std::vector<std::uint32_t> free_buffers;
  std::vector<std::uint32_t> free_small;
  std::unique_ptr<capture::PcapWriter> pcap;
  /// A direct-mapped cache in front of the devices' MR hash maps: the data
  /// path looks up an MR for every WQE, and a hash map lookup (a division, a
  /// node) costs more than the rest of a small packet's bookkeeping. Entries
  /// are dropped with their MRs. (QPs need none: Device keeps them in a table
  /// indexed by QP number.)
  struct MrSlot {
    const Device* device = nullptr;
    std::uint32_t key = 0;
    MemoryRegion* mr = nullptr;
  };
  std::array<MrSlot, 64> mr_cache{};
  /// Frames built ahead of their transmit time wait here so that the
  /// capture stays in timestamp order (see capture_frame()). Of each frame
  /// only the bytes within the snap length are kept, in a block of
  /// cap_blocks; the block's bytes past them are stale, and the writer never
  /// stores them.
  struct PendingFrame {
    Time time;
    std::size_t length;   // of the whole frame
    std::uint32_t block;  // index in cap_blocks
  };
  std::deque<PendingFrame> cap_pending;  // sorted by time
  std::vector<std::vector<std::uint8_t>> cap_blocks;
  std::vector<std::uint32_t> cap_free;  // blocks not in cap_pending
  FabricStats stats;
  /// Where a packet whose payload spans several SGEs is gathered
  /// (QpImpl::gather). One for the whole fabric, not one per QP: a packet is
  /// encoded as soon as it is gathered, and a fabric of 30,000 QPs would
  /// otherwise hold 120 MiB of them.
  std::vector<std::uint8_t> gather_buf;
  std::uint16_t ip_id = 0;
  wire::Frame rx_frame;  // the frame deliver() is handling

  // --- The switched fabric (switch.cpp); all empty back to back. ---
  std::vector<SwitchImpl> switches;
  std::vector<SwitchPort> sw_ports;
  std::vector<std::unique_ptr<Link>> port_links;  // switch egress links
  /// A host port's link to its switch (nullptr: back to back), by its
  /// number in host_ports.
  std::vector<Link*> host_uplink;
  std::vector<HostPortStats> host_stats;
  bool routes_ready = false;
  /// Host ports (numbers in host_ports) by IPv4 address (host order) and,
  /// for IPv6, by all 16 bytes; built with the routes.
  std::unordered_map<std::uint32_t, std::uint32_t> dev_by_v4;
  std::vector<std::pair<std::array<std::uint8_t, 16>, std::uint32_t>> dev_by_v6;
  std::function<void(const QueueSample&)> queue_probe;
  /// The priority a NIC gives a frame: from its DSCP, trusted as switches do.
  std::array<std::uint8_t, 64> nic_dscp_to_prio = SwitchConfig::default_dscp_map();

  [[nodiscard]] bool switched() const noexcept { return !switches.empty(); }
  Link& new_port_link(const LinkConfig& c, std::uint32_t to, std::uint64_t stream);
  std::uint32_t add_switch_port(std::uint32_t sw, const LinkConfig& c, std::uint32_t peer);
  void compute_routes();
  /// The host port with this address; ~0 when none.
  std::uint32_t node_of_ip(const std::uint8_t* ip, bool v4) const noexcept;
  /// A frame arrived whole at switch port `port`.
  void switch_receive(std::uint32_t port, std::uint32_t buffer, std::size_t length);
  /// switch_receive() on an InfiniBand fabric: by DLID.
  void switch_receive_ib(std::uint32_t port, std::uint32_t buffer, std::size_t length);
  /// Queues a frame that arrived on `port` for the egress port `local` of
  /// that switch, in class `tc`, or drops it when the buffer is full.
  /// `in_class`: the class it arrived in, when not `tc` (an IB switch's
  /// SL-to-VL table moved it): its ingress accounting and credits.
  void switch_enqueue(std::uint32_t port, std::uint32_t buffer, std::size_t length,
                      std::uint32_t local, std::uint8_t tc, std::uint8_t ect_ip = 0, bool v4 = true,
                      std::uint8_t in_class = 0xFF);
  /// Routing::Adaptive: the port of `choice` with the least queued in `tc`.
  std::uint32_t adaptive_choice(SwitchImpl& sw, const std::vector<std::uint32_t>& choice,
                                std::uint8_t tc);
  /// Drops an IB packet that arrived on `port`, its credits returned.
  void drop_ib(std::uint32_t port, std::uint32_t buffer, std::size_t length);
  void switch_tx(std::uint32_t port, std::uint64_t gen);
  void kick_port(std::uint32_t port, Time at);
  void send_pfc(std::uint32_t port, std::uint8_t prio, std::uint16_t quanta);
  /// `what`: the priority, and above bit 8 the pfc_gen of the pause renewed.
  void pfc_refresh(std::uint32_t port, std::uint64_t what);
  /// HostConfig::pfc_storm at host port `node`: sends its next pause (an
  /// XON at the storm's end) and schedules the renewal.
  void host_pfc(std::uint32_t node);
  /// A pause frame reached the sender of `ln` (a host's port or a switch's).
  void apply_pause(Link& ln, wire::Bytes frame, std::array<std::uint64_t, kTrafficClasses>& count,
                   std::array<Time, kTrafficClasses>& duration);
  /// InfiniBand credits (Link::credited): the sender of `ln` waits for
  /// `need` blocks of VL `vl`; the blocks of a packet; `blocks` freed at
  /// switch port `port`, whose upstream hears of them a propagation delay
  /// after `at`; and their arrival there (EventKind::CreditReturn).
  void grant_credits(Link& ln, const SwitchConfig& receiver);
  void credit_wait(Link& ln, std::uint8_t vl, std::uint32_t need);
  /// The most bytes a native IB packet has besides its payload: LRH 8, GRH
  /// 40, BTH 12, RETH 16 and ImmDt 4 (the largest with a payload), ICRC 4,
  /// VCRC 2. A packet of a 4096-byte MTU takes at most 66 blocks.
  static constexpr std::size_t kIbMaxHeaderBytes = 86;
  [[nodiscard]] static std::uint32_t ib_blocks(std::size_t bytes) noexcept {
    return static_cast<std::uint32_t>((bytes + kIbCreditBlock - 1) / kIbCreditBlock);
  }
  void return_credits(std::uint32_t port, std::uint8_t vl, std::uint32_t blocks, Time at);
  /// A packet of `bytes` on VL `vl` lost on `ln` (its receiver never holds
  /// it): on a credited link its blocks come back at once (switch.hpp).
  void lost_on_link(const Link& ln, std::uint8_t vl, std::size_t bytes);
  void credit_return(std::uint32_t port, std::uint64_t what);
  /// Wakes the QPs in `ln`'s pause_waiters (an XON, or credits).
  void wake_waiters(Link& ln);
  /// Puts a frame already in a buffer on a link: serialisation from
  /// max(now, busy), propagation, loss, jitter; schedules its arrival.
  void launch(Link& ln, std::uint32_t buffer, std::size_t length);

  static void push_event(std::vector<Event>& q, Time t, std::uint64_t s, EventKind kind,
                         std::uint32_t a, std::uint64_t b);
  /// Replaces the first event of the heap `q` (not empty) by a new one.
  static void replace_top(std::vector<Event>& q, Time t, std::uint64_t s, EventKind kind,
                          std::uint32_t a, std::uint64_t b);
  [[nodiscard]] bool idle() const noexcept { return heap.empty() && timers.empty(); }
  /// The time of the next event; not idle().
  [[nodiscard]] Time next_time() const noexcept;
  void schedule(Time t, EventKind kind, std::uint32_t a, std::uint64_t b);
  /// Schedules the arrival of a frame sent on `link`: the same order as
  /// schedule() gives, at a fraction of the cost (see fabric.cpp).
  void schedule_arrival(Link& link, Time t, std::uint32_t buffer, std::uint64_t meta);
  bool step();
  Link& link(std::uint32_t from, std::uint32_t to);
  /// A buffer for a frame of `bytes` (at most kFrameBuffer).
  std::uint32_t take_buffer(std::size_t bytes);
  void release_buffer(std::uint32_t index) {
    (small_buffer[index] ? free_small : free_buffers).push_back(index);
  }
  [[nodiscard]] std::size_t buffer_size(std::uint32_t index) const noexcept {
    return small_buffer[index] ? kSmallBuffer : kFrameBuffer;
  }
  /// Encodes `spec` and offers it to `link`: capture, drop rules, loss,
  /// serialisation, path and arrival event.
  void transmit(Link& link, wire::FrameSpec& spec);
  /// A frame arrived whole at host port `node` (or, with kSwitchNode, at a
  /// switch port).
  void deliver(std::uint32_t buffer, std::uint32_t node, std::size_t length);
  /// deliver() on an InfiniBand fabric.
  void deliver_ib(std::uint32_t buffer, std::uint32_t node, wire::Bytes bytes);
  /// Hands a packet that arrived at host port `node` to the QP it names,
  /// when that QP belongs to the port.
  void to_qp(std::uint32_t node, const wire::Frame& f, wire::Bytes bytes);
  void capture_frame(Time time, wire::Bytes frame);
  /// Writes the pending frames stamped up to `until` to the capture.
  void flush_capture(Time until);
  /// The host port whose GID (index 0) is `gid`; ~0 when none.
  std::uint32_t node_by_gid(const ibv_gid& gid) const noexcept;
  /// InfiniBand: the host port with LID `lid` (LID n is host port n - 1);
  /// ~0 when none.
  std::uint32_t node_by_lid(std::uint16_t lid) const noexcept {
    return lid >= 1 && lid <= host_ports.size() ? lid - 1U : ~0U;
  }
  /// The link type frames are read with: Ethernet, or a bare IB packet.
  [[nodiscard]] wire::LinkType wire_link() const noexcept {
    return ib ? wire::LinkType::Infiniband : wire::LinkType::Ethernet;
  }
  /// The per-packet bytes a link serialises besides the frame's own.
  [[nodiscard]] std::size_t wire_overhead() const noexcept {
    return ib ? kIbWireOverhead : kEthernetWireOverhead;
  }
  /// Device::mrs_ lookups (nullptr when absent).
  MemoryRegion* find_mr(const Device& d, std::uint32_t key) noexcept;
  /// To be called when an MR leaves its device's map.
  void forget_mr(const MemoryRegion* mr) noexcept;
  /// The number (in host_ports) of a device's port.
  static std::uint32_t node_of(const Device& d, std::uint8_t port = 1) noexcept;
};

inline void Engine::to_qp(std::uint32_t node, const wire::Frame& f, wire::Bytes bytes) {
  const DevicePort& hp = host_ports[node];
  QpImpl* qp = hp.device->qp_at_port(f.ib->bth.dest_qp, hp.port);
  if (qp != nullptr && qp->port != hp.port) {
    ++stats.wrong_port;
    return;
  }
  ++stats.packets_delivered;
  if (qp != nullptr) qp->receive(f, bytes);
}

inline Link& QpImpl::egress_link(const SendWqe& w) {
  if (type != IBV_QPT_UD) return *link;
  return engine->link(Engine::node_of(*device, port),
                      Engine::node_of(w.ah->destination(), w.ah->destination_port()));
}

/// Removes and destroys the object `p` owned by `v`; false when `v` does not
/// own it (the verbs' destroy calls answer EINVAL then).
template <class T>
bool erase_owned(std::vector<std::unique_ptr<T>>& v, const T* p) {
  const auto it = std::find_if(v.begin(), v.end(), [p](const auto& o) { return o.get() == p; });
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}

}  // namespace rdmalab::sim
