// Memory for the analysing thread, made resident by the reading thread.
//
// On a capture of a whole cluster the analyser's state grows to hundreds of
// megabytes (each conversation's channel, rings and series), and every page
// of it is first touched by the analysing thread, the slower of the two
// there: each first touch is a page fault, in which the kernel finds a page,
// zeroes it and maps it. On the 100,000-QP benchmark capture that was about
// a sixth of the analysing thread's time, while the reading thread waited
// for it.
//
// jemalloc keeps the memory freed in an arena as "dirty" extents, resident,
// and hands it out again before asking the kernel for more. So when the
// reading thread finds no batch to fill, it takes blocks from the analysing
// thread's arena, has the kernel make them resident (MADV_POPULATE_WRITE,
// Linux 5.14 and later; else a write to each page) and frees them: the
// analysing thread's next allocations are carved out of them without a
// fault. It does so only for a heap that grows (the arena's pages in use,
// from jemalloc's statistics, up by half of kAhead since it last did), and
// keeps at most kAhead bytes waiting, so the process's peak memory grows by
// about that much. jemalloc's options that make it work are set in
// heap_warm.cpp.
//
// On the 100,000-QP benchmark capture the analysing thread's page faults
// fell from about 48,000 to 21,000 and the run's wall time from 1.165 s to
// 1.02 s (medians of 20 runs in turns with the build before); the 4-QP capture's
// peak memory grew by 8 to 10 MiB, its time did not change; the 1 KiB
// capture, where reading is the slower thread, warms nothing.
//
// Only in a build that links jemalloc (not the sanitizer build): elsewhere
// warm() does nothing.
#pragma once

#include <array>
#include <cstddef>

namespace rdmapcap {

class HeapWarmer {
 public:
  /// The calling thread's arena is the one to warm: construct it on the
  /// analysing thread.
  HeapWarmer() noexcept;

  /// Whether warm() can do anything here (jemalloc, with its statistics).
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }

  /// From any thread, one at a time: makes kAhead bytes resident in the arena and frees
  /// them there, when its use has grown by kAhead / 2 since the last time
  /// (or since the warmer was made) and fewer than kAhead bytes wait. False
  /// when it did nothing.
  bool warm() noexcept;

  /// Bytes warmed so far (for tests and measurements).
  [[nodiscard]] std::size_t warmed() const noexcept { return warmed_; }

  static constexpr std::size_t kBlock = std::size_t{2} << 20;
  static constexpr std::size_t kAhead = std::size_t{8} << 20;

 private:
  /// The arena's dirty and active pages, from its statistics.
  bool pages(std::size_t& dirty, std::size_t& active) noexcept;

  // Used only in a build that links jemalloc (maybe_unused elsewhere).
  [[maybe_unused]] unsigned arena_ = 0;
  // The names "stats.arenas.<arena_>.pdirty" and ".pactive", looked up once.
  [[maybe_unused]] std::array<std::size_t, 8> dirty_mib_{};
  [[maybe_unused]] std::size_t dirty_mib_len_ = 0;
  [[maybe_unused]] std::array<std::size_t, 8> active_mib_{};
  [[maybe_unused]] std::size_t active_mib_len_ = 0;
  [[maybe_unused]] std::size_t active_at_warm_ = 0;  // pages in use when warm() last warmed
  bool enabled_ = false;
  [[maybe_unused]] std::size_t page_ = 4096;
  std::size_t warmed_ = 0;
};

}  // namespace rdmapcap
