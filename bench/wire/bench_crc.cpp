// bench_crc: how fast each CRC-32 implementation this CPU supports computes
// the CRC of a buffer and the ICRC of a RoCEv2 packet (IPv4, the variant
// fields masked where they lie), at the sizes rdmapcap and the simulator
// see: a 256-byte, 1 KiB and 4 KiB payload, and a long buffer.
// Each figure is the fastest of seven repetitions of a loop of about 0.1 s
// over data in the cache, so it is the computation's speed, not memory's.
// Not a test: run it by hand on a Release build and read the figures.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "rdmalab/wire/crc32_impl.hpp"
#include "rdmalab/wire/icrc.hpp"

using namespace rdmalab;
using wire::detail::CrcImpl;

namespace {

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<std::uint8_t> noise(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t seed = 12345;
  for (auto& b : v) {
    seed = seed * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(seed >> 24);
  }
  return v;
}

/// Nanoseconds per call of f: the fastest of seven loops of about 0.1 s.
template <class F>
double ns_per_call(F f) {
  std::size_t iters = 1;
  for (;;) {  // calibrate
    const double t0 = now();
    for (std::size_t i = 0; i < iters; ++i) f();
    if (now() - t0 > 0.02) break;
    iters *= 2;
  }
  iters *= 5;
  double best = 1e300;
  for (int rep = 0; rep < 7; ++rep) {
    const double t0 = now();
    for (std::size_t i = 0; i < iters; ++i) f();
    best = std::min(best, (now() - t0) / static_cast<double>(iters));
  }
  return best * 1e9;
}

volatile std::uint32_t g_sink;

}  // namespace

int main() {
  std::printf("%-32s %-22s %10s %10s\n", "implementation", "input", "ns", "GB/s");
  const auto data = noise(1 << 20);
  for (const CrcImpl impl : wire::detail::kCrcImpls) {
    const wire::detail::ScopedCrcImpl use(impl);
    if (!use.active()) {
      std::printf("%-32s not supported by this CPU\n", wire::detail::crc_impl_name(impl));
      continue;
    }
    for (const std::size_t n : {64u, 256u, 1024u, 4096u, 1u << 20}) {
      const wire::Bytes b(data.data(), n);
      std::uint32_t crc = 0;
      const double ns = ns_per_call([&] { crc = wire::crc32(crc, b); });
      g_sink = crc;
      std::printf("%-32s %-22s %10.1f %10.2f\n", wire::detail::crc_impl_name(impl),
                  ("crc32, " + std::to_string(n) + " B").c_str(), ns, static_cast<double>(n) / ns);
    }
    // A RoCEv2 RDMA WRITE Only over IPv4: Ethernet 14, IPv4 20, UDP 8,
    // BTH 12, RETH 16, the payload, the ICRC 4. (Only the IP version
    // matters to the ICRC's layout; the other bytes are noise.)
    for (const std::size_t payload : {256u, 1024u, 4096u}) {
      std::vector<std::uint8_t> frame(data.begin(), data.begin() + 14 + 20 + 8 + 12 + 16 +
                                                        static_cast<std::ptrdiff_t>(payload) + 4);
      frame[14] = 0x45;
      const wire::Bytes f(frame);
      std::uint32_t acc = 0;
      const double ns = ns_per_call([&] {
        acc ^= wire::icrc_of(f, wire::RoceVersion::V2, 14, 42, frame.size() - 4).value_or(0);
      });
      g_sink = acc;
      const std::size_t covered = frame.size() - 14 - 4;
      std::printf("%-32s %-22s %10.1f %10.2f\n", wire::detail::crc_impl_name(impl),
                  ("ICRC, " + std::to_string(payload) + " B payload").c_str(), ns,
                  static_cast<double>(covered) / ns);
    }
  }
}
