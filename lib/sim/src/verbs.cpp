// The control plane of the simulated NIC: object creation and destruction,
// ibv_modify_qp's state machine and the checks done when a request is posted.
#include <array>
#include <cerrno>
#include <cstring>

#include "engine.hpp"
#include "rdmalab/wire/mtu.hpp"
#include "rdmalab/wire/udp_port.hpp"

namespace rdmalab::sim {

static_assert(IBV_MTU_256 == 1 && IBV_MTU_4096 == 5, "ibv_mtu values are IBTA MTU codes");
std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept {
  return wire::mtu_bytes(static_cast<std::uint8_t>(mtu));
}

namespace {

/// The LID of the subnet manager's port: the first host's (fabric.hpp).
constexpr std::uint16_t kSmLid = 1;
/// The ports' data VLs are 0-7 and the SL-to-VL table the identity: an SL
/// above this has no VL (fabric.hpp).
constexpr std::uint8_t kMaxSl = 7;

ibv_mtu mtu_enum(std::uint32_t bytes) noexcept {
  if (bytes >= 4096) return IBV_MTU_4096;
  if (bytes >= 2048) return IBV_MTU_2048;
  if (bytes >= 1024) return IBV_MTU_1024;
  if (bytes >= 512) return IBV_MTU_512;
  return IBV_MTU_256;
}

}  // namespace

// --- MemoryRegion, CompletionQueue -------------------------------------------

MemoryRegion::MemoryRegion(ProtectionDomain& pd, void* addr, std::size_t length, std::uint64_t iova,
                           int access, std::uint32_t key) noexcept
    : pd_(&pd), addr_(addr), length_(length), iova_(iova), access_(access), key_(key) {
  raw_.pd = pd.get();
  raw_.addr = addr;
  raw_.length = length;
  raw_.handle = key >> 8;
  raw_.lkey = key;
  raw_.rkey = key;
}

MemoryWindow::MemoryWindow(ProtectionDomain& pd, ibv_mw_type type, std::uint32_t key) noexcept
    : pd_(&pd), key_(key), state_(type == IBV_MW_TYPE_2 ? State::Free : State::Valid) {
  raw_.pd = pd.get();
  raw_.rkey = key;
  raw_.handle = key >> 8;
  raw_.type = type;
}

QueuePair* MemoryWindow::qp() const noexcept {
  return qp_ != nullptr ? qp_->handle : nullptr;
}

void MemoryWindow::bind(std::uint32_t rkey, MemoryRegion* mr, std::uint64_t addr,
                        std::uint64_t length, int access, QpImpl* qp) noexcept {
  unbind();
  key_ = (key_ & ~0xFFu) | (rkey & 0xFFu);
  state_ = State::Valid;
  access_ = access;
  addr_ = addr;
  length_ = length;
  if (length_ != 0) {
    mr_ = mr;
    mr_->add_window();
  }
  if (type() == IBV_MW_TYPE_2) qp_ = qp;
}

void MemoryWindow::unbind() noexcept {
  if (mr_ != nullptr) mr_->remove_window();
  mr_ = nullptr;
  qp_ = nullptr;
  addr_ = 0;
  length_ = 0;
  access_ = 0;
  state_ = State::Free;
}

bool MemoryRegion::contains(std::uint64_t va, std::uint64_t len) const noexcept {
  return va >= iova_ && len <= length_ && va - iova_ <= length_ - len;
}

CompletionQueue::CompletionQueue(Device& device, int cqe, CompletionChannel* channel)
    : device_(&device), channel_(channel), ring_(static_cast<std::size_t>(cqe)) {
  raw_.cqe = cqe;
  raw_.channel = channel != nullptr ? channel->get() : nullptr;
}

ibv_wc* CompletionQueue::push(bool solicited) noexcept {
  if (count_ == ring_.size()) {
    overrun_ = true;  // rxe raises IB_EVENT_CQ_ERR and fires no completion event
    return nullptr;
  }
  ibv_wc& wc = ring_[ring_slot(head_ + count_, ring_.size())];  // count_ < size
  ++count_;
  wc = ibv_wc{};
  // rxe_cq_post(): an arm for the next completion, or for a solicited one
  // and this one is, fires one event and disarms.
  if (notify_ == Notify::Next || (notify_ == Notify::Solicited && solicited)) {
    notify_ = Notify::None;
    if (channel_ != nullptr) channel_->fire(this);
  }
  return &wc;
}

int CompletionQueue::req_notify(bool solicited_only) noexcept {
  // rxe_req_notify_cq(): a pending "next completion" arm is not narrowed
  // to solicited ones.
  if (notify_ != Notify::Next) notify_ = solicited_only ? Notify::Solicited : Notify::Next;
  return 0;
}

int CompletionQueue::ack_events(unsigned n) noexcept {
  if (events_acked_ + n > events_read_) return EINVAL;
  events_acked_ += n;
  return 0;
}

int CompletionQueue::modify_moderation(std::uint16_t /*count*/,
                                       std::uint16_t /*period_us*/) noexcept {
  return EOPNOTSUPP;
}

CompletionQueue* CompletionChannel::get_event() noexcept {
  if (events_.empty()) return nullptr;
  CompletionQueue* cq = events_.front();
  events_.pop_front();
  ++cq->events_read_;
  return cq;
}

void CompletionChannel::forget(const CompletionQueue* cq) noexcept {
  std::erase(events_, cq);
}

int CompletionQueue::poll_now(int n, ibv_wc* wc) noexcept {
  int got = 0;
  while (got < n && count_ > 0) {
    wc[got++] = ring_[head_];
    if (++head_ == ring_.size()) head_ = 0;
    --count_;
  }
  return got;
}

int CompletionQueue::poll(int n, ibv_wc* wc) {
  Engine& e = device_->fabric().engine();
  while (count_ == 0 && e.step()) {
  }
  return poll_now(n, wc);
}

// --- Device -------------------------------------------------------------------

Device::Device(Fabric& fabric, HostConfig config, std::uint32_t node)
    : fabric_(&fabric), config_(std::move(config)), node_(node) {}
Device::~Device() = default;

const wire::MacAddress& Device::mac(std::uint8_t port) const noexcept {
  return has_port(port) && port > 1 ? config_.more_ports[port - 2U].mac : config_.mac;
}

const wire::IpAddress& Device::ip(std::uint8_t port) const noexcept {
  return has_port(port) && port > 1 ? config_.more_ports[port - 2U].ip : config_.ip;
}

ibv_port_attr Device::query_port(std::uint8_t port) const noexcept {
  ibv_port_attr a{};
  if (!has_port(port)) return a;
  a.state = IBV_PORT_ACTIVE;
  a.max_mtu = mtu_enum(config_.port_mtu);
  a.active_mtu = mtu_enum(config_.port_mtu);
  a.gid_tbl_len = 1;
  a.pkey_tbl_len = 1;
  a.max_msg_sz = limits_.max_msg_sz;
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  a.phys_state = 5;  // LinkUp
  if (fabric_->engine().ib) {
    // The trivial subnet manager's assignment (fabric.hpp): ACTIVE with a
    // LID, LMC 0, the SM on the first host's port (LID 1), which says so.
    a.link_layer = IBV_LINK_LAYER_INFINIBAND;
    a.lid = lid(port);
    a.sm_lid = kSmLid;
    a.lmc = 0;
    a.sm_sl = 0;
    if (a.lid == kSmLid) a.port_cap_flags |= IBV_PORT_SM;
  }
  return a;
}

ibv_gid Device::gid(int index, std::uint8_t port) const noexcept {
  ibv_gid g{};
  if (index != 0 || !has_port(port)) return g;
  if (fabric_->engine().ib) {
    // fe80::<port GUID>: the link-local subnet prefix and the port GUID.
    g.raw[0] = 0xFE;
    g.raw[1] = 0x80;
    const std::uint64_t guid = port_guid(port);
    for (int i = 0; i < 8; ++i) g.raw[8 + i] = static_cast<std::uint8_t>(guid >> (56 - 8 * i));
  } else {
    std::memcpy(g.raw, ip(port).bytes.data(), sizeof g.raw);
  }
  return g;
}

std::uint16_t Device::lid(std::uint8_t port) const noexcept {
  // Ports get LIDs in the order their hosts join (a real SM's sweep may
  // number them otherwise); 4096 hosts of a few ports stay far below the
  // multicast LIDs.
  if (!fabric_->engine().ib || !has_port(port)) return 0;
  return static_cast<std::uint16_t>(Engine::node_of(*this, port) + 1);
}

std::uint64_t Device::port_guid(std::uint8_t port) const noexcept {
  // Modified EUI-64 (RFC 4291, appendix A): the MAC's two halves around
  // FF:FE, the universal/local bit (bit 1 of the first byte) inverted.
  const wire::MacAddress& m = mac(port);
  const std::array<std::uint8_t, 8> b = {
      static_cast<std::uint8_t>(m[0] ^ 0x02), m[1], m[2], 0xFF, 0xFE, m[3], m[4], m[5]};
  std::uint64_t guid = 0;
  for (const std::uint8_t x : b) guid = (guid << 8) | x;
  return guid;
}

ProtectionDomain* Device::alloc_pd() {
  pds_.push_back(std::make_unique<ProtectionDomain>(*this));
  return pds_.back().get();
}

int Device::dealloc_pd(ProtectionDomain* pd) {
  if (pd == nullptr || &pd->device() != this) return EINVAL;
  if (!pd->mrs_.empty() || !pd->mws_.empty() || !pd->qps_.empty() || !pd->ahs_.empty() ||
      !pd->srqs_.empty())
    return EBUSY;
  return erase_owned(pds_, pd) ? 0 : EINVAL;
}

CompletionQueue* Device::create_cq(int cqe, CompletionChannel* channel) {
  if (cqe < 1 || cqe > limits_.max_cqe || (channel != nullptr && channel->device_ != this)) {
    errno = EINVAL;
    return nullptr;
  }
  cqs_.push_back(std::make_unique<CompletionQueue>(*this, cqe, channel));
  if (channel != nullptr) ++channel->users_;
  return cqs_.back().get();
}

int Device::destroy_cq(CompletionQueue* cq) {
  if (cq == nullptr || cq->device_ != this) return EINVAL;
  if (cq->users_ > 0 || cq->events_acked_ != cq->events_read_) return EBUSY;
  CompletionChannel* channel = cq->channel_;
  if (!erase_owned(cqs_, cq)) return EINVAL;
  if (channel != nullptr) {
    channel->forget(cq);
    --channel->users_;
  }
  return 0;
}

CompletionChannel* Device::create_comp_channel() {
  channels_.push_back(std::make_unique<CompletionChannel>(*this));
  return channels_.back().get();
}

int Device::destroy_comp_channel(CompletionChannel* channel) {
  if (channel == nullptr || channel->device_ != this) return EINVAL;
  if (channel->users_ > 0) return EBUSY;
  return erase_owned(channels_, channel) ? 0 : EINVAL;
}

// --- ProtectionDomain -----------------------------------------------------------

MemoryRegion* ProtectionDomain::reg_mr(void* addr, std::size_t length, int access) {
  return reg_mr_iova(addr, length, reinterpret_cast<std::uintptr_t>(addr), access);
}

MemoryRegion* ProtectionDomain::reg_mr_iova(void* addr, std::size_t length, std::uint64_t iova,
                                            int access) {
  // Remote write and remote atomic need local write (man ibv_reg_mr).
  const bool needs_local_write =
      (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0;
  if (addr == nullptr || length == 0 ||
      (needs_local_write && (access & IBV_ACCESS_LOCAL_WRITE) == 0)) {
    errno = EINVAL;
    return nullptr;
  }
  // Keys: an index in the upper 24 bits and a variant byte below, as
  // hardware does; never 0.
  const std::uint32_t key = (device_->take_key_index() << 8) | 0x5A;
  mrs_.push_back(std::make_unique<MemoryRegion>(*this, addr, length, iova, access, key));
  device_->add_mr(mrs_.back().get());
  return mrs_.back().get();
}

int ProtectionDomain::dereg_mr(MemoryRegion* mr) {
  if (mr == nullptr || &mr->pd() != this) return EINVAL;
  // rxe refuses while windows are bound to the region (rxe_dereg_mr).
  if (mr->bound_windows() > 0) return EINVAL;
  device_->remove_mr(mr);
  device_->fabric().engine().forget_mr(mr);
  return erase_owned(mrs_, mr) ? 0 : EINVAL;
}

MemoryWindow* ProtectionDomain::alloc_mw(ibv_mw_type type) {
  if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
    errno = EINVAL;
    return nullptr;
  }
  // Windows take their index from the same space as regions, so an rkey
  // names one or the other. The key byte starts at 0 (rxe picks a random
  // one); every bind chooses the next with ibv_inc_rkey.
  const std::uint32_t key = device_->take_key_index() << 8;
  mws_.push_back(std::make_unique<MemoryWindow>(*this, type, key));
  device_->add_mw(mws_.back().get());
  return mws_.back().get();
}

int ProtectionDomain::dealloc_mw(MemoryWindow* mw) {
  if (mw == nullptr || &mw->pd() != this) return EINVAL;
  mw->unbind();
  device_->remove_mw(mw);
  return erase_owned(mws_, mw) ? 0 : EINVAL;
}

QueuePair* ProtectionDomain::create_qp(const ibv_qp_init_attr& ia) {
  CompletionQueue* scq = nullptr;
  CompletionQueue* rcq = nullptr;
  for (auto& cq : device_->cqs_) {
    if (cq->get() == ia.send_cq) scq = cq.get();
    if (cq->get() == ia.recv_cq) rcq = cq.get();
  }
  // With an SRQ the QP has no receive queue of its own: max_recv_wr and
  // max_recv_sge are ignored (man ibv_create_qp).
  SrqImpl* srq = nullptr;
  if (ia.srq != nullptr) {
    for (auto& x : srqs_)
      if (x->get() == ia.srq) srq = &x->impl();
    if (srq == nullptr) {
      errno = EINVAL;
      return nullptr;
    }
  }
  const std::uint32_t max_recv_wr = srq != nullptr ? 1 : ia.cap.max_recv_wr;
  const std::uint32_t max_recv_sge = srq != nullptr ? 1 : ia.cap.max_recv_sge;
  const DeviceLimits& lim = device_->limits();
  const bool type_ok =
      ia.qp_type == IBV_QPT_RC || ia.qp_type == IBV_QPT_UC || ia.qp_type == IBV_QPT_UD;
  const bool caps_ok = ia.cap.max_send_wr >= 1 && max_recv_wr >= 1 &&
                       ia.cap.max_send_wr <= static_cast<std::uint32_t>(lim.max_qp_wr) &&
                       max_recv_wr <= static_cast<std::uint32_t>(lim.max_qp_wr) &&
                       ia.cap.max_send_sge <= static_cast<std::uint32_t>(lim.max_sge) &&
                       max_recv_sge <= static_cast<std::uint32_t>(lim.max_sge) &&
                       ia.cap.max_inline_data <= lim.max_inline_data;
  if (scq == nullptr || rcq == nullptr || !type_ok || !caps_ok) {
    errno = EINVAL;
    return nullptr;
  }
  auto impl = std::make_unique<QpImpl>();
  Engine& e = device_->fabric().engine();
  impl->engine = &e;
  impl->device = device_;
  impl->pd = this;
  impl->id = static_cast<std::uint32_t>(e.qps.size());
  impl->qpn = device_->take_qpn();
  impl->type = ia.qp_type;
  impl->send_cq = scq;
  impl->recv_cq = rcq;
  impl->cap = ia.cap;
  impl->cap.max_send_sge = std::max(1u, ia.cap.max_send_sge);
  impl->cap.max_recv_wr = srq != nullptr ? 0 : max_recv_wr;
  impl->cap.max_recv_sge = std::max(1u, max_recv_sge);
  impl->srq = srq;
  impl->sig_all = ia.sq_sig_all != 0;
  impl->sq.resize(ia.cap.max_send_wr);
  impl->sq_sge.resize(std::size_t{ia.cap.max_send_wr} * impl->cap.max_send_sge);
  impl->sq_inline.resize(std::size_t{ia.cap.max_send_wr} * ia.cap.max_inline_data);
  impl->rq.resize(impl->cap.max_recv_wr);
  impl->rq_sge.resize(std::size_t{impl->cap.max_recv_wr} * impl->cap.max_recv_sge);
  if (srq != nullptr) ++srq->users;
  QpImpl* raw = impl.get();
  qps_.push_back(std::make_unique<QueuePair>(std::move(impl)));
  raw->handle = qps_.back().get();
  e.qps.push_back(raw);
  device_->add_qp(raw->qpn, raw);
  scq->add_user();
  rcq->add_user();
  return qps_.back().get();
}

int ProtectionDomain::destroy_qp(QueuePair* qp) {
  if (qp == nullptr || qp->impl().pd != this) return EINVAL;
  QpImpl& q = qp->impl();
  q.engine->qps[q.id] = nullptr;  // pending events for it are ignored
  device_->remove_qp(q.qpn, &q);
  q.send_cq->remove_user();
  q.recv_cq->remove_user();
  if (q.srq != nullptr) --q.srq->users;
  return erase_owned(qps_, qp) ? 0 : EINVAL;
}

namespace {

/// The host port an address vector leads to, or nullptr when it names none.
/// On RoCE the GRH's destination GID names it (an AV without a GRH has no
/// destination). On InfiniBand the DLID names it; a GRH is optional, and when
/// there its destination GID must be that port's; the SL must have a VL.
const DevicePort* av_destination(const Engine& e, const ibv_ah_attr& av) noexcept {
  std::uint32_t node = ~0U;
  if (!e.ib) {
    if (av.is_global != 0) node = e.node_by_gid(av.grh.dgid);
  } else {
    node = e.node_by_lid(av.dlid);
    if (av.sl > kMaxSl || (av.is_global != 0 && e.node_by_gid(av.grh.dgid) != node)) node = ~0U;
  }
  return node < e.host_ports.size() ? &e.host_ports[node] : nullptr;
}

}  // namespace

void address_ib(wire::FrameSpec& f, const Device& self, std::uint8_t port,
                const ibv_ah_attr& av) noexcept {
  f.link_layer = wire::LinkLayer::Infiniband;
  f.dlid = av.dlid;
  f.slid = self.lid(port);
  f.sl = av.sl;
  f.vl = av.sl;  // the identity SL-to-VL table of the model (fabric.hpp)
  f.ib_global = av.is_global != 0;
  if (f.ib_global) {
    // The GRH: the port's one GID (whatever sgid_index says: the table has
    // one entry) and the AV's, traffic class, flow label and hop limit as
    // given.
    const ibv_gid sgid = self.gid(0, port);
    std::array<std::uint8_t, 16> src{};
    std::array<std::uint8_t, 16> dst{};
    std::memcpy(src.data(), sgid.raw, src.size());
    std::memcpy(dst.data(), av.grh.dgid.raw, dst.size());
    f.src_ip = wire::IpAddress::from_v6(src);
    f.dst_ip = wire::IpAddress::from_v6(dst);
    f.traffic_class = av.grh.traffic_class;
    f.flow_label = av.grh.flow_label;
    f.hop_limit = av.grh.hop_limit;
  }
}

AddressHandle* ProtectionDomain::create_ah(const ibv_ah_attr& attr) {
  const DevicePort* dest = av_destination(device_->fabric().engine(), attr);
  if (dest == nullptr || !device_->has_port(attr.port_num)) {
    errno = EINVAL;
    return nullptr;
  }
  ahs_.push_back(std::make_unique<AddressHandle>(attr, *dest));
  device_->add_ah(ahs_.back().get());
  return ahs_.back().get();
}

int ProtectionDomain::destroy_ah(AddressHandle* ah) {
  if (ah == nullptr || !device_->remove_ah(ah)) return EINVAL;
  return erase_owned(ahs_, ah) ? 0 : EINVAL;
}

// --- QueuePair: state machine ----------------------------------------------------

QueuePair::QueuePair(std::unique_ptr<QpImpl> impl) : impl_(std::move(impl)) {}
QueuePair::~QueuePair() = default;

std::uint32_t QueuePair::qp_num() const noexcept {
  return impl_->qpn;
}
ibv_qp_type QueuePair::qp_type() const noexcept {
  return impl_->type;
}
ibv_qp_state QueuePair::state() const noexcept {
  return impl_->state;
}
void QueuePair::set_options(const Options& options) {
  QpImpl& q = *impl_;
  q.options = options;
  // The adaptive-routing window follows the options while it holds nothing
  // (the labs turn the model on once the QPs are connected).
  const std::size_t window =
      options.adaptive_routing ? std::max<std::uint32_t>(1, options.ar_window) : 0;
  if (q.ar_held_count == 0 && q.ar_held.size() != window) {
    q.ar_held.assign(window, {});
    q.ar_base = 0;
  }
}
const QueuePair::Options& QueuePair::options() const noexcept {
  return impl_->options;
}
const QueuePair::Stats& QueuePair::stats() const noexcept {
  return impl_->stats;
}

namespace {

void add_counts(Device::Counters& c, const QueuePair::Stats& s) noexcept {
  c.out_of_sequence += s.out_of_sequence_dropped;
  c.duplicate_request += s.duplicates_received;
  c.packet_seq_err += s.seq_err_naks_received;
  c.local_ack_timeout_err += s.timeouts;
  c.retry_exceeded_err += s.retries_exceeded;
  c.rnr_nak_retry_err += s.rnr_naks_received;
  c.np_ecn_marked_roce_packets += s.np_ecn_marked_roce_packets;
  c.np_cnp_sent += s.np_cnp_sent;
  c.rp_cnp_handled += s.rp_cnp_handled;
  c.rp_cnp_ignored += s.rp_cnp_ignored;
}

}  // namespace

Device::Counters Device::counters() const noexcept {
  Counters c = retired_;
  for (const QpImpl* qp : qps_)
    if (qp != nullptr) add_counts(c, qp->stats);
  return c;
}

void Device::retire_counters(const QpImpl& qp) noexcept {
  add_counts(retired_, qp.stats);
}

namespace {

struct Masks {
  int required;
  int optional;
};

struct Transition {
  ibv_qp_state from;
  ibv_qp_state to;
  Masks rc;
  Masks uc;
  Masks ud;
};

constexpr int S = IBV_QP_STATE;
constexpr int kPort = IBV_QP_PKEY_INDEX | IBV_QP_PORT;
constexpr int kPath = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
constexpr int kRcRtr = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRcRts =
    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
constexpr int kAlt = IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE;
constexpr int kCur = IBV_QP_CUR_STATE;
constexpr int kAcc = IBV_QP_ACCESS_FLAGS;
constexpr int kQkey = IBV_QP_QKEY;

// The transitions of man ibv_modify_qp (IBTA 10.3.1, table 91): per
// transport, what must be given and what may be given. Anything else in the
// mask is EINVAL.
// clang-format off
constexpr Transition kTransitions[] = {
  //  from           to             RC {required, optional}                UC {required, optional}          UD {required, optional}
  {IBV_QPS_RESET, IBV_QPS_INIT, {S | kPort | kAcc, 0},                    {S | kPort | kAcc, 0},               {S | kPort | kQkey, 0}},
  {IBV_QPS_INIT,  IBV_QPS_INIT, {S, kPort | kAcc},                        {S, kPort | kAcc},                   {S, kPort | kQkey}},
  {IBV_QPS_INIT,  IBV_QPS_RTR,  {S | kPath | kRcRtr, IBV_QP_PKEY_INDEX | kAcc | IBV_QP_ALT_PATH},
                                                                          {S | kPath, IBV_QP_PKEY_INDEX | kAcc | IBV_QP_ALT_PATH},
                                                                                                               {S, IBV_QP_PKEY_INDEX | kQkey}},
  {IBV_QPS_RTR,   IBV_QPS_RTS,  {S | IBV_QP_SQ_PSN | kRcRts, kCur | kAcc | IBV_QP_MIN_RNR_TIMER | kAlt},
                                                                          {S | IBV_QP_SQ_PSN, kCur | kAcc | kAlt},
                                                                                                               {S | IBV_QP_SQ_PSN, kCur | kQkey}},
  {IBV_QPS_RTS,   IBV_QPS_RTS,  {S, kCur | kAcc | IBV_QP_MIN_RNR_TIMER | kAlt},
                                                                          {S, kCur | kAcc | kAlt},             {S, kCur | kQkey}},
  {IBV_QPS_RTS,   IBV_QPS_SQD,  {S, IBV_QP_EN_SQD_ASYNC_NOTIFY},          {S, IBV_QP_EN_SQD_ASYNC_NOTIFY},     {S, IBV_QP_EN_SQD_ASYNC_NOTIFY}},
  {IBV_QPS_SQD,   IBV_QPS_RTS,  {S, kCur | kAcc | IBV_QP_MIN_RNR_TIMER | kAlt},
                                                                          {S, kCur | kAcc | kAlt},             {S, kCur | kQkey}},
  {IBV_QPS_SQE,   IBV_QPS_RTS,  {S, kCur | kAcc},                         {S, kCur | kAcc},                    {S, kCur | kQkey}},
};
// clang-format on

}  // namespace

int QueuePair::modify(const ibv_qp_attr& a, int mask) {
  QpImpl& q = *impl_;
  const ibv_qp_state cur = q.state;
  const ibv_qp_state next = (mask & IBV_QP_STATE) != 0 ? a.qp_state : cur;
  if ((mask & IBV_QP_CUR_STATE) != 0 && a.cur_qp_state != cur) return EINVAL;

  if ((mask & IBV_QP_STATE) != 0 && next == IBV_QPS_RESET) {
    q.reset_queues();
    q.state = IBV_QPS_RESET;
    return 0;
  }
  if ((mask & IBV_QP_STATE) != 0 && next == IBV_QPS_ERR) {
    q.enter_error(IBV_WC_WR_FLUSH_ERR);
    return 0;
  }
  const Transition* t = nullptr;
  for (const Transition& x : kTransitions)
    if (x.from == cur && x.to == next) t = &x;
  if (t == nullptr) return EINVAL;
  const Masks& m = q.type == IBV_QPT_RC ? t->rc : q.type == IBV_QPT_UC ? t->uc : t->ud;
  const int required = m.required;
  const int optional = m.optional;
  if ((mask & required) != required || (mask & ~(required | optional)) != 0) return EINVAL;

  // Value checks.
  if ((mask & IBV_QP_PORT) != 0 && !q.device->has_port(a.port_num)) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) != 0 && a.pkey_index != 0) return EINVAL;
  if ((mask & IBV_QP_TIMEOUT) != 0 && a.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) != 0 && a.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) != 0 && a.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) != 0 && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0 && a.max_rd_atomic > q.device->limits().max_qp_rd_atom)
    return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0 &&
      a.max_dest_rd_atomic > q.device->limits().max_qp_rd_atom)
    return EINVAL;
  std::uint32_t mtu = q.mtu;
  if ((mask & IBV_QP_PATH_MTU) != 0) {
    mtu = mtu_bytes(a.path_mtu);
    if (mtu == 0 || mtu > q.device->config().port_mtu) return EINVAL;
  }
  // The QP's port, and the AV's: 0 (the QP's) or the same port.
  const std::uint8_t port = (mask & IBV_QP_PORT) != 0 ? a.port_num : q.port;
  Device* peer = q.peer;
  std::uint8_t peer_port = q.peer_port;
  if ((mask & IBV_QP_AV) != 0) {
    if (a.ah_attr.port_num != 0 && a.ah_attr.port_num != port) return EINVAL;
    const DevicePort* dest = av_destination(*q.engine, a.ah_attr);
    if (dest == nullptr) return EINVAL;
    peer = dest->device;
    peer_port = dest->port;
  }

  // Apply.
  ibv_qp_attr& s = q.attr;
  if ((mask & IBV_QP_ACCESS_FLAGS) != 0) s.qp_access_flags = a.qp_access_flags;
  if ((mask & IBV_QP_PKEY_INDEX) != 0) s.pkey_index = a.pkey_index;
  if ((mask & IBV_QP_PORT) != 0) {
    s.port_num = a.port_num;
    q.port = a.port_num;
  }
  if ((mask & IBV_QP_QKEY) != 0) s.qkey = a.qkey;
  if ((mask & IBV_QP_PATH_MTU) != 0) {
    s.path_mtu = a.path_mtu;
    q.mtu = mtu;
  }
  if ((mask & IBV_QP_DEST_QPN) != 0) s.dest_qp_num = a.dest_qp_num & wire::kPsnMask;
  if ((mask & IBV_QP_RQ_PSN) != 0) {
    s.rq_psn = a.rq_psn & wire::kPsnMask;
    q.epsn = s.rq_psn;
  }
  if ((mask & IBV_QP_SQ_PSN) != 0) {
    s.sq_psn = a.sq_psn & wire::kPsnMask;
    q.next_psn = s.sq_psn;
    q.una = s.sq_psn;
    q.sent_hw = s.sq_psn;
  }
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0) {
    s.max_dest_rd_atomic = a.max_dest_rd_atomic;
    q.resources.assign(std::max<std::size_t>(1, a.max_dest_rd_atomic), RdAtomicResource{});
    q.resource_next = 0;
  }
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0) s.max_rd_atomic = a.max_rd_atomic;
  if ((mask & IBV_QP_MIN_RNR_TIMER) != 0) s.min_rnr_timer = a.min_rnr_timer;
  if ((mask & IBV_QP_TIMEOUT) != 0) s.timeout = a.timeout;
  if ((mask & IBV_QP_RETRY_CNT) != 0) {
    s.retry_cnt = a.retry_cnt;
    q.retry_left = a.retry_cnt;
  }
  if ((mask & IBV_QP_RNR_RETRY) != 0) {
    s.rnr_retry = a.rnr_retry;
    q.rnr_left = a.rnr_retry;
  }
  if ((mask & IBV_QP_AV) != 0) {
    s.ah_attr = a.ah_attr;
    q.peer = peer;
    q.peer_port = peer_port;
  }
  if (next == IBV_QPS_RTR && q.type != IBV_QPT_UD) {
    // The frame template of this connection.
    Engine& e = *q.engine;
    q.link = &e.link(Engine::node_of(*q.device, q.port), Engine::node_of(*q.peer, q.peer_port));
    wire::FrameSpec& f = q.spec;
    f.src_mac = q.device->mac(q.port);
    f.dst_mac = q.peer->mac(q.peer_port);
    f.src_ip = q.device->ip(q.port);
    f.dst_ip = q.peer->ip(q.peer_port);
    f.traffic_class = s.ah_attr.grh.traffic_class;
    f.hop_limit = s.ah_attr.grh.hop_limit != 0 ? s.ah_attr.grh.hop_limit : 64;
    f.flow_label = s.ah_attr.grh.flow_label;
    f.udp_src_port = wire::udp_source_port(q.qpn, s.dest_qp_num);
    if (e.ib) address_ib(f, *q.device, q.port, s.ah_attr);
    // The adaptive-routing window, only when the model is on (set before RTR).
    q.ar_held.assign(
        q.options.adaptive_routing ? std::max<std::uint32_t>(1, q.options.ar_window) : 0, {});
    q.ar_held_count = 0;
    q.ar_base = 0;
  }
  q.state = next;
  if (next == IBV_QPS_RTS) q.pump();
  return 0;
}

int QueuePair::query(ibv_qp_attr& attr, int /*mask*/, ibv_qp_init_attr& init) const {
  const QpImpl& q = *impl_;
  attr = q.attr;
  attr.qp_state = q.state;
  attr.cur_qp_state = q.state;
  attr.cap = q.cap;
  init = ibv_qp_init_attr{};
  init.send_cq = q.send_cq->get();
  init.recv_cq = q.recv_cq->get();
  init.cap = q.cap;
  init.srq = q.srq != nullptr ? &q.srq->raw : nullptr;
  init.qp_type = q.type;
  init.sq_sig_all = q.sig_all ? 1 : 0;
  return 0;
}

// --- QueuePair: posting -----------------------------------------------------------

int QueuePair::post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  QpImpl& q = *impl_;
  const ibv_send_wr* const first_wr = wr;  // NIC cost model: one doorbell per call
  for (; wr != nullptr; wr = wr->next) {
    int err = 0;
    const bool state_ok = q.state == IBV_QPS_RTS || q.state == IBV_QPS_SQD ||
                          q.state == IBV_QPS_SQE || q.state == IBV_QPS_ERR;
    bool op_ok = false;
    switch (wr->opcode) {
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM: op_ok = true; break;
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM: op_ok = q.type != IBV_QPT_UD; break;
      case IBV_WR_RDMA_READ:
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
      case IBV_WR_SEND_WITH_INV:
      case IBV_WR_LOCAL_INV: op_ok = q.type == IBV_QPT_RC; break;
      // A bind carries no data and no immediate (rxe's validate_send_wr).
      case IBV_WR_BIND_MW:
        op_ok = q.type != IBV_QPT_UD && wr->num_sge == 0 && wr->imm_data == 0 &&
                wr->bind_mw.mw != nullptr &&
                (wr->bind_mw.bind_info.length == 0 || wr->bind_mw.bind_info.mr != nullptr);
        break;
      default: op_ok = false;
    }
    std::uint64_t length = 0;
    for (int i = 0; i < wr->num_sge; ++i) length += wr->sg_list[i].length;
    const bool is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
    const bool atomic =
        wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    if (!state_ok || !op_ok || wr->num_sge < 0 ||
        static_cast<std::uint32_t>(wr->num_sge) > q.cap.max_send_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr))
      err = EINVAL;
    else if (is_inline &&
             (length > q.cap.max_inline_data || wr->opcode == IBV_WR_RDMA_READ || atomic))
      err = EINVAL;
    else if (atomic && (length != 8 || wr->num_sge != 1))
      err = EINVAL;
    else if (length > q.device->limits().max_msg_sz)
      err = EINVAL;
    // A UD message above the port MTU is accepted here: the requester
    // completes it without a packet (C10-93.1.1, below in requester.cpp).
    else if (q.type == IBV_QPT_UD && q.device->find_ah(wr->wr.ud.ah) == nullptr)
      err = EINVAL;
    else if (q.sq_count == q.sq.size())
      err = ENOMEM;
    if (err != 0) {
      if (bad_wr != nullptr) *bad_wr = wr;
      return err;
    }
    const std::size_t slot = q.slot_at(q.sq_count);
    SendWqe& w = q.sq[slot];
    w.clear();
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.flags = wr->send_flags;
    w.imm = wr->imm_data;  // the same union holds invalidate_rkey
    w.length = static_cast<std::uint32_t>(length);
    if (wr->opcode == IBV_WR_BIND_MW) {
      // As rxe's provider does: the keys are read now, the objects are
      // looked up by key when the request executes.
      const ibv_mw_bind_info& bi = wr->bind_mw.bind_info;
      w.bind.mw_rkey = wr->bind_mw.mw->rkey;
      w.bind.rkey = wr->bind_mw.rkey;
      w.bind.mr_lkey = bi.mr != nullptr ? bi.mr->lkey : 0;
      w.bind.addr = bi.addr;
      w.bind.length = bi.length;
      w.bind.access = static_cast<int>(bi.mw_access_flags);
    } else if (atomic) {
      w.remote_addr = wr->wr.atomic.remote_addr;
      w.rkey = wr->wr.atomic.rkey;
      w.compare_add = wr->wr.atomic.compare_add;
      w.swap = wr->wr.atomic.swap;
    } else if (q.type == IBV_QPT_UD) {
      w.ah = q.device->find_ah(wr->wr.ud.ah);
      w.remote_qpn = wr->wr.ud.remote_qpn & wire::kPsnMask;
      w.remote_qkey = wr->wr.ud.remote_qkey;
    } else {
      w.remote_addr = wr->wr.rdma.remote_addr;
      w.rkey = wr->wr.rdma.rkey;
    }
    if (is_inline) {
      // Inline data is copied now: the caller may reuse its buffer at once.
      w.is_inline = true;
      std::uint8_t* dst = q.sq_inline.data() + slot * q.cap.max_inline_data;
      for (int i = 0; i < wr->num_sge; ++i) {
        const ibv_sge& g = wr->sg_list[i];
        if (g.length > 0) std::memcpy(dst, reinterpret_cast<const void*>(g.addr), g.length);
        dst += g.length;
      }
    } else {
      w.num_sge = wr->num_sge;
      for (int i = 0; i < wr->num_sge; ++i)
        q.sq_sge[slot * q.cap.max_send_sge + static_cast<std::size_t>(i)] = wr->sg_list[i];
    }
    ++q.sq_count;
    // --- NIC cost model (HostConfig::doorbell_ns ...; all 0 = off) ---
    // The QP's send engine takes the doorbell (the first WR of this call)
    // and then fetches this WQE, after what it was already doing; the first
    // packet waits for that, and for the payload's DMA read unless inline.
    if (const HostConfig& nic = q.device->config();
        nic.doorbell_ns + nic.wqe_fetch_ns + nic.payload_fetch_ns > 0) {
      Time t = std::max(q.nic_free, q.engine->now);
      if (wr == first_wr) t += nic.doorbell_ns;
      t += nic.wqe_fetch_ns;
      q.nic_free = t;
      w.ready_at = t + (is_inline ? 0 : nic.payload_fetch_ns);
    }
    if (q.state == IBV_QPS_ERR) q.flush_all(IBV_WC_WR_FLUSH_ERR);
  }
  q.pump();
  return 0;
}

int QueuePair::bind_mw(ibv_mw* mw, const ibv_mw_bind& bind) {
  // libibverbs' inline ibv_bind_mw and rxe's provider, in that order.
  const ibv_mw_bind_info& bi = bind.bind_info;
  if (mw == nullptr || mw->type != IBV_MW_TYPE_1) return EINVAL;
  if (bi.mr == nullptr && (bi.addr != 0 || bi.length != 0)) return EINVAL;
  if (bi.mr != nullptr && mw->pd != bi.mr->pd) return EPERM;
  if ((bi.mw_access_flags & IBV_ACCESS_ZERO_BASED) != 0) return EINVAL;
  ibv_send_wr wr{};
  wr.wr_id = bind.wr_id;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = bind.send_flags;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = bi;
  ibv_send_wr* bad = nullptr;
  if (const int rc = post_send(&wr, &bad); rc != 0) return rc;
  mw->rkey = wr.bind_mw.rkey;  // the caller undoes this on an error completion
  return 0;
}

void fill_recv_wqe(Engine& e, const Device& d, const ProtectionDomain* pd, const ibv_recv_wr& wr,
                   RecvWqe& r, ibv_sge* sges) noexcept {
  r.wr_id = wr.wr_id;
  r.num_sge = wr.num_sge;
  r.length = 0;
  // The SGEs are checked against their MRs here and kept as host
  // addresses; a bad one makes the receive fail when a message uses it.
  r.valid = true;
  for (int i = 0; i < wr.num_sge; ++i) {
    ibv_sge g = wr.sg_list[i];
    const MemoryRegion* mr = e.find_mr(d, g.lkey);
    if (mr == nullptr || &mr->pd() != pd || (mr->access() & IBV_ACCESS_LOCAL_WRITE) == 0 ||
        !mr->contains(g.addr, g.length))
      r.valid = false;
    else
      g.addr = reinterpret_cast<std::uintptr_t>(mr->host(g.addr));
    sges[i] = g;
    r.length += g.length;
  }
}

int QueuePair::post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  QpImpl& q = *impl_;
  for (; wr != nullptr; wr = wr->next) {
    int err = 0;
    // A QP with an SRQ has no receive queue of its own (rxe: EINVAL).
    if (q.srq != nullptr || q.state == IBV_QPS_RESET || wr->num_sge < 0 ||
        static_cast<std::uint32_t>(wr->num_sge) > q.cap.max_recv_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr))
      err = EINVAL;
    else if (q.rq_count == q.rq.size())
      err = ENOMEM;
    if (err != 0) {
      if (bad_wr != nullptr) *bad_wr = wr;
      return err;
    }
    const std::size_t slot = ring_slot(q.rq_head + q.rq_count, q.rq.size());  // rq_count < size
    fill_recv_wqe(*q.engine, *q.device, q.pd, *wr, q.rq[slot],
                  &q.rq_sge[slot * q.cap.max_recv_sge]);
    ++q.rq_count;
    if (q.state == IBV_QPS_ERR) q.flush_all(IBV_WC_WR_FLUSH_ERR);
  }
  return 0;
}

}  // namespace rdmalab::sim
