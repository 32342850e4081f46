// crc32() and the choice of its implementation.
#include <zlib.h>

#include <atomic>

#include "crc32_clmul.hpp"
#include "rdmalab/wire/crc32_impl.hpp"
#include "rdmalab/wire/icrc.hpp"

namespace rdmalab::wire {
namespace detail {
namespace {

// Chosen once, before main. A call before then (another translation unit's
// static initialiser) sees Zlib, which gives the same values.
std::atomic<CrcImpl> g_impl{best_crc_impl()};

}  // namespace

const char* crc_impl_name(CrcImpl impl) noexcept {
  switch (impl) {
    case CrcImpl::Zlib: return "zlib";
    case CrcImpl::Clmul: return "PCLMULQDQ, 128-bit";
    case CrcImpl::Vpclmul256: return "VPCLMULQDQ, 256-bit (AVX2)";
    case CrcImpl::Vpclmul: return "VPCLMULQDQ, 512-bit (AVX-512F)";
  }
  return "?";
}

bool crc_impl_supported(CrcImpl impl) noexcept {
  switch (impl) {
    case CrcImpl::Zlib: return true;
#if defined(__x86_64__)
    case CrcImpl::Clmul:
      __builtin_cpu_init();
      return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    case CrcImpl::Vpclmul:
      return crc_impl_supported(CrcImpl::Clmul) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("vpclmulqdq");
    case CrcImpl::Vpclmul256:
      return crc_impl_supported(CrcImpl::Clmul) && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("vpclmulqdq");
#endif
    default: return false;
  }
}

CrcImpl best_crc_impl() noexcept {
  for (const CrcImpl impl : {CrcImpl::Vpclmul, CrcImpl::Vpclmul256, CrcImpl::Clmul})
    if (crc_impl_supported(impl)) return impl;
  return CrcImpl::Zlib;
}

CrcImpl crc_impl() noexcept {
  return g_impl.load(std::memory_order_relaxed);
}

bool set_crc_impl(CrcImpl impl) noexcept {
  if (!crc_impl_supported(impl)) return false;
  g_impl.store(impl, std::memory_order_relaxed);
  return true;
}

}  // namespace detail

std::uint32_t crc32(std::uint32_t crc, Bytes data) noexcept {
  if (data.empty()) return crc;  // (zlib gives 0 for no buffer)
#if defined(__x86_64__)
  const detail::CrcImpl impl = detail::crc_impl();
  if (impl != detail::CrcImpl::Zlib && data.size() >= 16)
    return ~detail::crc32_clmul(~crc, data.data(), data.size(), nullptr, 0, impl);
#endif
  return static_cast<std::uint32_t>(crc32_z(crc, data.data(), data.size()));
}

}  // namespace rdmalab::wire
