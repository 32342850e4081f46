// Shared receive queues and the device's asynchronous events.
//
// An SRQ is a pool of receive WQEs that several QPs draw from (see
// SharedReceiveQueue in device.hpp for the rules, which are rdma_rxe's:
// drivers/infiniband/sw/rxe/rxe_srq.c for the attribute checks, get_srq_wqe()
// in rxe_resp.c for taking a WQE and the limit event). The responder side of
// a QP takes its WQE through QpImpl::take_recv() (responder.cpp).
#include <cerrno>

#include "engine.hpp"

namespace rdmalab::sim {

// --- SrqImpl --------------------------------------------------------------------

bool SrqImpl::take(RecvWqe& wqe, std::vector<ibv_sge>& sges) {
  if (count == 0) return false;
  wqe = ring[head];
  sges.assign(sge.begin() + static_cast<std::ptrdiff_t>(head * max_sge),
              sge.begin() + static_cast<std::ptrdiff_t>((head + 1) * max_sge));
  if (++head == ring.size()) head = 0;
  --count;
  // rxe: an armed limit that the WQEs left fall below is disarmed, and the
  // event raised once.
  if (limit != 0 && count < limit) {
    limit = 0;
    ibv_async_event ev{};
    ev.element.srq = &raw;
    ev.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
    device->post_async_event(ev);
  }
  return true;
}

// --- SharedReceiveQueue -----------------------------------------------------------

SharedReceiveQueue::SharedReceiveQueue(std::unique_ptr<SrqImpl> impl) : impl_(std::move(impl)) {}
SharedReceiveQueue::~SharedReceiveQueue() = default;

ibv_srq* SharedReceiveQueue::get() noexcept {
  return &impl_->raw;
}
ProtectionDomain& SharedReceiveQueue::pd() const noexcept {
  return *impl_->pd;
}
std::size_t SharedReceiveQueue::posted() const noexcept {
  return impl_->count;
}

int SharedReceiveQueue::post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  SrqImpl& q = *impl_;
  for (; wr != nullptr; wr = wr->next) {
    int err = 0;
    if (wr->num_sge < 0 || static_cast<std::uint32_t>(wr->num_sge) > q.max_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr))
      err = EINVAL;
    else if (q.count == q.ring.size())
      err = ENOMEM;
    if (err != 0) {
      if (bad_wr != nullptr) *bad_wr = wr;
      return err;
    }
    const std::size_t slot = ring_slot(q.head + q.count, q.ring.size());  // count < size
    fill_recv_wqe(q.device->fabric().engine(), *q.device, q.pd, *wr, q.ring[slot],
                  &q.sge[slot * q.max_sge]);
    ++q.count;
  }
  return 0;
}

int SharedReceiveQueue::modify(const ibv_srq_attr& attr, int mask) {
  SrqImpl& q = *impl_;
  if ((mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) != 0) return EINVAL;
  const int max_srq_wr = q.device->limits().max_srq_wr;
  std::size_t size = q.ring.size();
  if ((mask & IBV_SRQ_MAX_WR) != 0) {
    // rxe_srq_chk_attr(): within the device's limit, not below an armed limit;
    // the WQEs posted must fit in the new ring.
    if (attr.max_wr == 0 || attr.max_wr > static_cast<std::uint32_t>(max_srq_wr) ||
        (q.limit != 0 && attr.max_wr < q.limit) || attr.max_wr < q.count)
      return EINVAL;
    size = attr.max_wr;
  }
  if ((mask & IBV_SRQ_LIMIT) != 0 && attr.srq_limit > size) return EINVAL;
  if (size != q.ring.size()) {
    std::vector<RecvWqe> ring(size);
    std::vector<ibv_sge> sge(size * q.max_sge);
    for (std::size_t i = 0; i < q.count; ++i) {
      const std::size_t from = ring_slot(q.head + i, q.ring.size());
      ring[i] = q.ring[from];
      std::copy_n(q.sge.begin() + static_cast<std::ptrdiff_t>(from * q.max_sge), q.max_sge,
                  sge.begin() + static_cast<std::ptrdiff_t>(i * q.max_sge));
    }
    q.ring = std::move(ring);
    q.sge = std::move(sge);
    q.head = 0;
  }
  if ((mask & IBV_SRQ_LIMIT) != 0) q.limit = attr.srq_limit;
  return 0;
}

int SharedReceiveQueue::query(ibv_srq_attr& attr) const noexcept {
  attr.max_wr = static_cast<std::uint32_t>(impl_->ring.size());
  attr.max_sge = impl_->max_sge;
  attr.srq_limit = impl_->limit;
  return 0;
}

// --- ProtectionDomain -------------------------------------------------------------

SharedReceiveQueue* ProtectionDomain::create_srq(const ibv_srq_init_attr& ia) {
  const DeviceLimits& lim = device_->limits();
  const ibv_srq_attr& a = ia.attr;
  if (a.max_wr == 0 || a.max_wr > static_cast<std::uint32_t>(lim.max_srq_wr) ||
      a.max_sge > static_cast<std::uint32_t>(lim.max_srq_sge) || a.srq_limit > a.max_wr) {
    errno = EINVAL;
    return nullptr;
  }
  if (device_->srqs_alive_ >= lim.max_srq) {
    errno = ENOMEM;
    return nullptr;
  }
  auto impl = std::make_unique<SrqImpl>();
  impl->device = device_;
  impl->pd = this;
  impl->max_sge = std::max(1u, a.max_sge);
  impl->limit = a.srq_limit;
  impl->ring.resize(a.max_wr);
  impl->sge.resize(std::size_t{a.max_wr} * impl->max_sge);
  impl->raw.pd = &raw_;
  impl->raw.srq_context = ia.srq_context;
  SrqImpl* raw = impl.get();
  srqs_.push_back(std::make_unique<SharedReceiveQueue>(std::move(impl)));
  raw->handle = srqs_.back().get();
  ++device_->srqs_alive_;
  return srqs_.back().get();
}

int ProtectionDomain::destroy_srq(SharedReceiveQueue* srq) {
  if (srq == nullptr || &srq->pd() != this) return EINVAL;
  if (srq->impl().users > 0) return EBUSY;
  // Events about it that were not read yet name a handle that is gone.
  std::erase_if(device_->async_events_, [&](const ibv_async_event& ev) {
    return ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq->get();
  });
  if (!erase_owned(srqs_, srq)) return EINVAL;
  --device_->srqs_alive_;
  return 0;
}

// --- Device -----------------------------------------------------------------------

bool Device::get_async_event(ibv_async_event& event) {
  if (async_events_.empty()) return false;
  event = async_events_.front();
  async_events_.pop_front();
  return true;
}

}  // namespace rdmalab::sim
