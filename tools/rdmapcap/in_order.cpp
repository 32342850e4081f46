#include "rdmapcap/in_order.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

namespace rdmapcap {

void render_in_order(std::size_t n, const std::function<void(std::size_t, std::string&)>& render,
                     const std::function<void(std::string_view)>& write, std::size_t block) {
  block = std::max<std::size_t>(block, 1);
  const std::size_t blocks = n / block + (n % block != 0 ? 1 : 0);
  const auto render_block = [&](std::size_t b, std::string& out) {
    const std::size_t end = std::min(n, (b + 1) * block);
    for (std::size_t i = b * block; i < end; ++i) render(i, out);
  };
  std::string mine;
  const auto own = [&](std::size_t b) {
    mine.clear();
    render_block(b, mine);
    write(mine);
  };
  const auto all_own = [&] {
    for (std::size_t b = 0; b < blocks; ++b) own(b);
  };
  if (blocks < 2 || std::thread::hardware_concurrency() < 2) return all_own();

  // The second thread renders blocks 1, 3, 5, ... into these slots in
  // turn; a slot is the second thread's while empty and the caller's while
  // full, and changes hands under the lock.
  constexpr std::size_t kSlots = 4;
  struct Slot {
    std::string text;
    bool full = false;
    std::exception_ptr error;  // what rendering this slot's block threw
  };
  std::array<Slot, kSlots> slots;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;  // the caller gave up: the second thread stops too
  const auto helper = [&] {
    for (std::size_t k = 0, b = 1; b < blocks; ++k, b += 2) {
      Slot& s = slots[k % kSlots];
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || !s.full; });
        if (stop) return;
      }
      s.text.clear();
      std::exception_ptr error;
      try {
        render_block(b, s.text);
      } catch (...) {
        error = std::current_exception();
      }
      {
        const std::lock_guard lock(mu);
        s.error = error;
        s.full = true;
      }
      cv.notify_all();
      if (error) return;
    }
  };
  std::thread thread;
  try {
    thread = std::thread(helper);
  } catch (const std::system_error&) {
    return all_own();
  }
  // However the caller's loop ends, the second thread is stopped and joined.
  struct Join {
    std::thread& t;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    ~Join() {
      {
        const std::lock_guard lock(mu);
        stop = true;
      }
      cv.notify_all();
      t.join();
    }
  } join{thread, mu, cv, stop};
  for (std::size_t b = 0; b < blocks; ++b) {
    if (b % 2 == 0) {
      own(b);
      continue;
    }
    Slot& s = slots[(b / 2) % kSlots];
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return s.full; });
      if (s.error) std::rethrow_exception(s.error);
    }
    write(s.text);
    {
      const std::lock_guard lock(mu);
      s.full = false;
    }
    cv.notify_all();
  }
}

}  // namespace rdmapcap
