// A completion queue (ibv_create_cq / ibv_poll_cq / ibv_destroy_cq).
//
// poll() is the data-plane verb: it never throws and never allocates; it
// returns how many completions it wrote, or a negative value on failure, as
// ibv_poll_cq does. wait() is the convenience labs use: poll until n
// completions arrived or a deadline passed; on the simulator, waiting is what
// advances virtual time.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
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

  /// Polls until `n` completions are collected (successful or not), the
  /// timeout passes (wall time on real devices; the simulator stops as soon
  /// as it is idle), or poll fails. Returns what was collected; fewer than n
  /// means it timed out.
  [[nodiscard]] std::vector<ibv_wc> wait(std::size_t n, std::chrono::milliseconds timeout);

 protected:
  CompletionQueue() = default;
};

}  // namespace rdmalab::verbs
