#include "rdmapcap/heap_warm.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>

#if defined(RDMAPCAP_JEMALLOC)
#include <jemalloc/jemalloc.h>
#endif

// Linux 5.14's madvise advice, for headers older than it.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#if defined(RDMAPCAP_JEMALLOC)
// jemalloc's options for this program, read when it starts (the MALLOC_CONF
// environment variable still overrides them).
// - lg_extent_max_active_fit: by default jemalloc takes a freed ("dirty")
//   extent for a new allocation only when it is at most 64 times as large
//   (2^6). The blocks warm() frees were then left unused while the
//   analyser's small-object slabs, a page or a few each, took new memory: in
//   a test program, 51 MB of 128-byte allocations still took 13,300 page
//   faults of 15,000 after 64 MB had been warmed by another thread, and
//   1,700 with the limit lifted (tests/unit/heap_warm_test.cpp checks it).
//   rdmapcap's heap mostly grows: splitting a large free extent costs it
//   nothing.
// - dirty_decay_ms -1: by default freed memory is given back to the kernel
//   over ten seconds, which in practice gave back most of the warmed blocks
//   before the analyser reached them (on the 100,000-QP benchmark capture
//   1,208 MB were warmed and 938 MB given back). rdmapcap runs once and exits;
//   the memory it frees stays for its own later allocations.
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name for it
extern const char* malloc_conf;
const char* malloc_conf = "lg_extent_max_active_fit:30,dirty_decay_ms:-1";
}
#endif

namespace rdmapcap {

HeapWarmer::HeapWarmer() noexcept {
#if defined(RDMAPCAP_JEMALLOC)
  unsigned arena = 0;
  std::size_t len = sizeof arena;
  if (mallctl("thread.arena", &arena, &len, nullptr, 0) != 0) return;
  bool stats = false;
  len = sizeof stats;
  if (mallctl("config.stats", &stats, &len, nullptr, 0) != 0 || !stats) return;
  char name[64];
  std::snprintf(name, sizeof name, "stats.arenas.%u.pdirty", arena);
  dirty_mib_len_ = dirty_mib_.size();
  if (mallctlnametomib(name, dirty_mib_.data(), &dirty_mib_len_) != 0) return;
  std::snprintf(name, sizeof name, "stats.arenas.%u.pactive", arena);
  active_mib_len_ = active_mib_.size();
  if (mallctlnametomib(name, active_mib_.data(), &active_mib_len_) != 0) return;
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || (page & (page - 1)) != 0) return;
  page_ = static_cast<std::size_t>(page);
  arena_ = arena;
  enabled_ = true;
  std::size_t dirty = 0;
  if (!pages(dirty, active_at_warm_)) enabled_ = false;
#endif
}

bool HeapWarmer::pages(std::size_t& dirty, std::size_t& active) noexcept {
#if defined(RDMAPCAP_JEMALLOC)
  // Statistics are refreshed by a new epoch.
  std::uint64_t epoch = 1;
  std::size_t len = sizeof epoch;
  std::size_t dirty_len = sizeof dirty;
  std::size_t active_len = sizeof active;
  return mallctl("epoch", &epoch, &len, &epoch, len) == 0 &&
         mallctlbymib(dirty_mib_.data(), dirty_mib_len_, &dirty, &dirty_len, nullptr, 0) == 0 &&
         mallctlbymib(active_mib_.data(), active_mib_len_, &active, &active_len, nullptr, 0) == 0;
#else
  (void)dirty;
  (void)active;
  return false;
#endif
}

bool HeapWarmer::warm() noexcept {
#if defined(RDMAPCAP_JEMALLOC)
  if (!enabled_) return false;
  // The arena's pages in use, and its dirty pages: freed, still resident,
  // and handed out before the kernel is asked for more.
  std::size_t dirty = 0;
  std::size_t active = 0;
  if (!pages(dirty, active)) {
    enabled_ = false;
    return false;
  }
  // Only for a heap that grows: the arena's use has grown by half of kAhead
  // since the last warming (or the start), and less than kAhead waits.
  if (active < active_at_warm_ || (active - active_at_warm_) * page_ < kAhead / 2 ||
      dirty * page_ >= kAhead)
    return false;
  active_at_warm_ = active;
  // The arena hands out its dirty memory first: the blocks are held until
  // kAhead bytes are in hand, so that new memory is among them, then freed
  // together.
  std::array<void*, kAhead / kBlock> held{};
  std::size_t n = 0;
  for (; n < held.size(); ++n) {
    held[n] = mallocx(kBlock, MALLOCX_ARENA(arena_) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(page_));
    if (held[n] == nullptr) break;
    if (madvise(held[n], kBlock, MADV_POPULATE_WRITE) != 0) {
      // An older kernel: a write to each page does the same, a fault at a time.
      auto* bytes = static_cast<volatile unsigned char*>(held[n]);
      for (std::size_t off = 0; off < kBlock; off += page_) bytes[off] = 0;
    }
  }
  for (std::size_t i = 0; i < n; ++i) dallocx(held[i], MALLOCX_TCACHE_NONE);
  if (n < held.size()) enabled_ = false;  // out of memory: no more of this
  warmed_ += n * kBlock;
  return n > 0;
#else
  return false;
#endif
}

}  // namespace rdmapcap
