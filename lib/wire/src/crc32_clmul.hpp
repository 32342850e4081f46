// CRC-32 by carry-less multiplication (x86-64 only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "rdmalab/wire/crc32_impl.hpp"

namespace rdmalab::wire::detail {

#if defined(__x86_64__)
/// The CRC register (without zlib's inversions) after `raw` and the n bytes
/// at p (n >= 16), the first `head` bytes of them ORed with the bytes at
/// `mask` (which holds at least head + 16 bytes, zeros after head; head is
/// at most 64, and 0 when mask is null). The mask lets the ICRC read a packet
/// where it lies, its variant fields set to ones on the way. `impl` (not
/// Zlib, and one the CPU supports): with Vpclmul or Vpclmul256, long inputs
/// are folded in 512-bit or 256-bit registers; otherwise PCLMULQDQ and
/// SSE4.1 only.
__attribute__((target("pclmul,sse4.1"))) std::uint32_t crc32_clmul(
    std::uint32_t raw, const std::uint8_t* p, std::size_t n, const std::uint8_t* mask,
    std::size_t head, CrcImpl impl) noexcept;
#endif

}  // namespace rdmalab::wire::detail
