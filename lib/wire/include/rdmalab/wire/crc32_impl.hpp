// Which implementation computes crc32() and the ICRC. Each gives the same
// values; the fastest the CPU supports is chosen before main, and tests
// force each in turn to compare it with icrc_reference() and zlib.
#pragma once

#include <array>
#include <cstdint>

namespace rdmalab::wire::detail {

enum class CrcImpl : std::uint8_t {
  /// zlib's crc32; the ICRC's headers are copied to mask their variant fields.
  Zlib,
  /// Carry-less multiplication on 128-bit registers (x86-64 PCLMULQDQ and
  /// SSE4.1); the ICRC read where it lies for the usual header layouts.
  Clmul,
  /// As Clmul, with 512-bit VPCLMULQDQ (AVX-512F) for 256 bytes per step.
  Vpclmul,
  /// As Clmul, with 256-bit VPCLMULQDQ (AVX2) for 128 bytes per step: CPUs
  /// that have VPCLMULQDQ without AVX-512 (AMD Zen 3; Intel client CPUs since
  /// Alder Lake).
  Vpclmul256,
};

inline constexpr std::array kCrcImpls{CrcImpl::Zlib, CrcImpl::Clmul, CrcImpl::Vpclmul256,
                                      CrcImpl::Vpclmul};

/// The implementation's name, with the register width and the CPU features
/// it needs (for tests and benchmarks).
[[nodiscard]] const char* crc_impl_name(CrcImpl impl) noexcept;

/// Whether this CPU (and build) can run `impl`.
[[nodiscard]] bool crc_impl_supported(CrcImpl impl) noexcept;

/// The fastest implementation this CPU supports.
[[nodiscard]] CrcImpl best_crc_impl() noexcept;

/// The implementation in use.
[[nodiscard]] CrcImpl crc_impl() noexcept;

/// Uses `impl` from now on; false, and nothing changes, when the CPU lacks it.
bool set_crc_impl(CrcImpl impl) noexcept;

/// Uses an implementation for its lifetime, then the previous one again.
class ScopedCrcImpl {
 public:
  explicit ScopedCrcImpl(CrcImpl impl) noexcept : active_(set_crc_impl(impl)) {}
  ~ScopedCrcImpl() { set_crc_impl(previous_); }
  ScopedCrcImpl(const ScopedCrcImpl&) = delete;
  ScopedCrcImpl& operator=(const ScopedCrcImpl&) = delete;
  /// False when the CPU lacks the implementation (the previous one stays).
  [[nodiscard]] bool active() const noexcept { return active_; }

 private:
  CrcImpl previous_ = crc_impl();
  bool active_;
};

}  // namespace rdmalab::wire::detail
