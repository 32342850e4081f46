// A completion queue (ibv_create_cq / ibv_poll_cq / ibv_destroy_cq), its
// events (ibv_req_notify_cq / ibv_ack_cq_events, ibv_modify_cq for
// moderation) and the completion channel they arrive on
// (ibv_create_comp_channel / ibv_get_cq_event / ibv_destroy_comp_channel).
//
// poll() is the data-plane verb: it never throws and never allocates; it
// returns how many completions it wrote, or a negative value on failure, as
// ibv_poll_cq does. wait() is the convenience labs use: poll until n
// completions arrived or a deadline passed; on the simulator, waiting is what
// advances virtual time.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace rdmalab::verbs {

class CompletionQueue {
 public:
  virtual ~CompletionQueue() = default;
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  /// Polls up to out.size() completions: the count written (0 when empty),
  /// negative on error. Never throws.
  [[nodiscard]] virtual int poll(std::span<ibv_wc> out) noexcept = 0;
  /// Lets the backend make progress while the CQ is empty. Real devices
  /// progress by themselves (returns true at once); the simulator runs its
  /// fabric until something happens, and returns false when nothing ever
  /// will (every queue idle, no timer armed).
  [[nodiscard]] virtual bool progress() = 0;
  /// The number of entries the CQ was created with.
  [[nodiscard]] virtual int size() const noexcept = 0;

  /// ibv_req_notify_cq: arms the CQ for one completion event on its channel,
  /// for the next completion, or with `solicited_only` for the next
  /// solicited one (a receive whose message had the SE bit). One arm, one
  /// event: re-arm after each. 0 or the errno value; never throws.
  [[nodiscard]] virtual int req_notify(bool solicited_only) noexcept = 0;
  /// ibv_ack_cq_events: acknowledges `n` events that CompChannel::get_event
  /// returned for this CQ. Every event read must be acknowledged before the
  /// CQ is destroyed: libibverbs' ibv_destroy_cq waits for it (forever when
  /// it never comes; the simulator fails with EBUSY instead).
  virtual void ack_events(unsigned n) noexcept = 0;
  /// ibv_modify_cq with IBV_CQ_MODERATE: one event per `count` completions
  /// or `period_us` µs, whichever comes first. 0 or the errno value
  /// (EOPNOTSUPP on rxe and on the simulator); never throws.
  [[nodiscard]] virtual int moderate(std::uint16_t count, std::uint16_t period_us) noexcept = 0;

  /// Polls until `n` completions are collected (successful or not), the
  /// timeout passes (wall time on real devices; the simulator stops as soon
  /// as it is idle), or poll fails. Returns what was collected; fewer than n
  /// means it timed out.
  [[nodiscard]] std::vector<ibv_wc> wait(std::size_t n, std::chrono::milliseconds timeout);

 protected:
  CompletionQueue() = default;
};

/// A completion channel (ibv_create_comp_channel): a file descriptor the
/// events of the CQs created on it (Context::create_cq(cqe, channel)) are
/// read from. Owned through std::unique_ptr from Context; the destructor
/// calls ibv_destroy_comp_channel, which fails (EBUSY) while a CQ uses it:
/// destroy the CQs first.
class CompChannel {
 public:
  virtual ~CompChannel() = default;
  CompChannel(const CompChannel&) = delete;
  CompChannel& operator=(const CompChannel&) = delete;

  /// ibv_get_cq_event: waits for the next event and returns the CQ it names
  /// (the caller then acknowledges it with CompletionQueue::ack_events), or
  /// nullptr when none came: on a real device within `timeout` (wall time);
  /// on the simulator within `timeout` of virtual time, or as soon as its
  /// fabric has nothing left to do, since then no event can ever come.
  /// Throws VerbsError when the verb fails.
  [[nodiscard]] virtual CompletionQueue* get_event(std::chrono::milliseconds timeout) = 0;
  /// Like get_event(), but an event that does not come is an error: throws
  /// VerbsError(ibv_get_cq_event, ETIMEDOUT) with the hint that says why an
  /// event may never come (the CQ not armed, a solicited-only arm and no
  /// solicited message), where blocking in ibv_get_cq_event would hang.
  [[nodiscard]] CompletionQueue& wait_event(std::chrono::milliseconds timeout);
  /// The verbs handle (ibv_comp_channel::fd on a real device).
  [[nodiscard]] virtual ibv_comp_channel* get() const noexcept = 0;

 protected:
  CompChannel() = default;
};

}  // namespace rdmalab::verbs
