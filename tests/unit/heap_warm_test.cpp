// rdmapcap's heap warmer (tools/rdmapcap/heap_warm.hpp): memory made
// resident by one thread is what another thread's next allocations take,
// without page faults; and nothing is warmed for a heap that does not grow.
#include "rdmapcap/heap_warm.hpp"

#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace {

using rdmapcap::HeapWarmer;

#if defined(RDMAPCAP_JEMALLOC)
/// Page faults the calling thread has taken so far.
long thread_faults() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_minflt;
}

/// Allocates `bytes` in 128-byte blocks (the analyser's rings and series are
/// blocks of this order), writes each, keeps them; returns the page faults
/// the calling thread took meanwhile.
long allocate(std::vector<std::unique_ptr<char[]>>& keep, std::size_t bytes) {
  constexpr std::size_t kBlock = 128;
  keep.reserve(keep.size() + bytes / kBlock);
  const long before = thread_faults();
  for (std::size_t done = 0; done < bytes; done += kBlock) {
    keep.push_back(std::make_unique<char[]>(kBlock));
    keep.back()[0] = 1;
  }
  return thread_faults() - before;
}
#endif

/// warm() called from another thread, as the reading thread calls it.
bool warm_from_another_thread(HeapWarmer& warmer) {
  bool warmed = false;
  std::thread([&] { warmed = warmer.warm(); }).join();
  return warmed;
}

}  // namespace

TEST_CASE("the heap warmer: another thread's memory, made resident, is taken without faults") {
  HeapWarmer warmer;  // this thread's arena
#if defined(RDMAPCAP_JEMALLOC)
  REQUIRE(warmer.enabled());
  // The heap has not grown since the warmer was made: nothing is warmed.
  CHECK_FALSE(warm_from_another_thread(warmer));
  CHECK(warmer.warmed() == 0);

  // The analysis allocates: kAhead bytes, each new page a fault of this
  // thread's (a page is 4 KiB here: at least kAhead / 4 KiB faults, 2,048;
  // a fifth of that is allowed for memory the arena had already).
  std::vector<std::unique_ptr<char[]>> keep;
  const long cold = allocate(keep, HeapWarmer::kAhead);
  MESSAGE("page faults for " << (HeapWarmer::kAhead >> 20) << " MiB, cold: " << cold);
  CHECK(cold >= static_cast<long>(HeapWarmer::kAhead / 4096) * 4 / 5);

  // The heap grew by more than half of kAhead: another thread warms kAhead
  // bytes, then finds enough waiting and stops.
  CHECK(warm_from_another_thread(warmer));
  CHECK(warmer.warmed() == HeapWarmer::kAhead);
  CHECK_FALSE(warm_from_another_thread(warmer));
  CHECK(warmer.warmed() == HeapWarmer::kAhead);

  // Three quarters of kAhead more, carved out of the warmed memory: of the
  // 1,536 new pages, none should fault; a tenth of the cold count is
  // allowed for the odd page the arena takes from elsewhere.
  const long warm = allocate(keep, HeapWarmer::kAhead * 3 / 4);
  MESSAGE("page faults for " << (HeapWarmer::kAhead * 3 / 4 >> 20) << " MiB, warmed: " << warm);
  CHECK(warm * 10 <= cold);
#else
  // Without jemalloc (the sanitizer build) there is nothing to warm.
  CHECK_FALSE(warmer.enabled());
  CHECK_FALSE(warm_from_another_thread(warmer));
#endif
}
