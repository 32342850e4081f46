// Bounds-checked big-endian reading and writing of packet bytes.
//
// Every header in rdmalab is decoded with explicit loads from a Reader and
// encoded with explicit stores into a Writer: no packed structs, no
// bitfields, no reinterpret_cast of packet memory. A read past the end of the
// buffer does not happen: the Reader answers "not enough bytes" and leaves
// its position unchanged, so the caller can report where the packet ended.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace rdmalab::wire {

/// A read-only view of packet bytes.
using Bytes = std::span<const std::uint8_t>;

/// Big-endian loads from a pointer the caller has already bounds-checked.
[[nodiscard]] constexpr std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
[[nodiscard]] constexpr std::uint32_t load_be24(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
}
[[nodiscard]] constexpr std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}
[[nodiscard]] constexpr std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}
[[nodiscard]] constexpr std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[3]} << 24) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[1]} << 8) |
         p[0];
}

/// Sequential reader over a byte span. Each read either succeeds completely
/// and advances, or fails (returns false) and changes nothing.
class Reader {
 public:
  constexpr explicit Reader(Bytes data, std::size_t offset = 0) noexcept
      : data_(data), pos_(offset <= data.size() ? offset : data.size()) {}

  [[nodiscard]] constexpr std::size_t offset() const noexcept { return pos_; }
  [[nodiscard]] constexpr std::size_t remaining() const noexcept { return data_.size() - pos_; }
  [[nodiscard]] constexpr bool has(std::size_t n) const noexcept { return remaining() >= n; }
  /// The bytes not yet read.
  [[nodiscard]] constexpr Bytes rest() const noexcept { return data_.subspan(pos_); }

  constexpr bool u8(std::uint8_t& v) noexcept {
    if (!has(1)) return false;
    v = data_[pos_++];
    return true;
  }
  constexpr bool u16(std::uint16_t& v) noexcept { return load(v, 2, load_be16); }
  constexpr bool u24(std::uint32_t& v) noexcept { return load(v, 3, load_be24); }
  constexpr bool u32(std::uint32_t& v) noexcept { return load(v, 4, load_be32); }
  constexpr bool u64(std::uint64_t& v) noexcept { return load(v, 8, load_be64); }
  template <std::size_t N>
  constexpr bool array(std::array<std::uint8_t, N>& out) noexcept {
    if (!has(N)) return false;
    // One copy rather than N byte stores: a header read byte by byte and
    // then copied whole stalls the load on the stores (no forwarding).
    if (std::is_constant_evaluated()) {
      for (std::size_t i = 0; i < N; ++i) out[i] = data_[pos_ + i];
    } else {
      std::memcpy(out.data(), data_.data() + pos_, N);
    }
    pos_ += N;
    return true;
  }
  constexpr bool skip(std::size_t n) noexcept {
    if (!has(n)) return false;
    pos_ += n;
    return true;
  }

 private:
  template <class T, class F>
  constexpr bool load(T& v, std::size_t n, F f) noexcept {
    if (!has(n)) return false;
    v = static_cast<T>(f(data_.data() + pos_));
    pos_ += n;
    return true;
  }

  Bytes data_;
  std::size_t pos_;
};

/// Big-endian stores at `p`, each returning one past what it wrote: for
/// encoders that check the size of what they write once, up front.
inline std::uint8_t* put8(std::uint8_t* p, std::uint32_t v) noexcept {
  *p = static_cast<std::uint8_t>(v);
  return p + 1;
}
inline std::uint8_t* put16(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
  return p + 2;
}
inline std::uint8_t* put24(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 16);
  return put16(p + 1, v);
}
inline std::uint8_t* put32(std::uint8_t* p, std::uint32_t v) noexcept {
  return put16(put16(p, v >> 16), v);
}
inline std::uint8_t* put64(std::uint8_t* p, std::uint64_t v) noexcept {
  return put32(put32(p, static_cast<std::uint32_t>(v >> 32)), static_cast<std::uint32_t>(v));
}
inline std::uint8_t* put_bytes(std::uint8_t* p, Bytes b) noexcept {
  if (!b.empty()) std::memcpy(p, b.data(), b.size());
  return p + b.size();
}

/// Sequential big-endian writer into a caller-provided buffer. Writing past
/// the end sets a sticky overflow flag and writes nothing more.
class Writer {
 public:
  constexpr explicit Writer(std::span<std::uint8_t> out) noexcept : out_(out) {}

  [[nodiscard]] constexpr std::size_t offset() const noexcept { return pos_; }
  [[nodiscard]] constexpr bool overflow() const noexcept { return overflow_; }
  [[nodiscard]] constexpr std::span<std::uint8_t> written() const noexcept {
    return out_.first(pos_);
  }

  constexpr void u8(std::uint8_t v) noexcept {
    if (reserve(1)) out_[pos_++] = v;
  }
  constexpr void u16(std::uint16_t v) noexcept { store(v, 2); }
  constexpr void u24(std::uint32_t v) noexcept { store(v, 3); }
  constexpr void u32(std::uint32_t v) noexcept { store(v, 4); }
  constexpr void u64(std::uint64_t v) noexcept { store(v, 8); }
  constexpr void le32(std::uint32_t v) noexcept {
    if (!reserve(4)) return;
    for (int i = 0; i < 4; ++i) out_[pos_++] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  constexpr void bytes(Bytes b) noexcept {
    if (!reserve(b.size())) return;
    if (std::is_constant_evaluated()) {
      for (std::uint8_t c : b) out_[pos_++] = c;
    } else if (!b.empty()) {
      std::memcpy(out_.data() + pos_, b.data(), b.size());  // payloads: one copy, not a loop
      pos_ += b.size();
    }
  }
  constexpr void zeros(std::size_t n) noexcept {
    if (!reserve(n)) return;
    for (std::size_t i = 0; i < n; ++i) out_[pos_++] = 0;
  }
  /// The next n bytes, for the caller to fill (with the put* functions), or
  /// nullptr when they do not fit.
  [[nodiscard]] std::uint8_t* take(std::size_t n) noexcept {
    if (!reserve(n)) return nullptr;
    std::uint8_t* at = out_.data() + pos_;
    pos_ += n;
    return at;
  }
  /// Overwrite a 16-bit field already written (lengths, checksums).
  constexpr void patch16(std::size_t at, std::uint16_t v) noexcept {
    if (at + 2 > pos_) return;
    out_[at] = static_cast<std::uint8_t>(v >> 8);
    out_[at + 1] = static_cast<std::uint8_t>(v);
  }

 private:
  constexpr bool reserve(std::size_t n) noexcept {
    if (overflow_ || out_.size() - pos_ < n) {
      overflow_ = true;
      return false;
    }
    return true;
  }
  constexpr void store(std::uint64_t v, int n) noexcept {
    if (!reserve(static_cast<std::size_t>(n))) return;
    for (int i = n - 1; i >= 0; --i) out_[pos_++] = static_cast<std::uint8_t>(v >> (8 * i));
  }

  std::span<std::uint8_t> out_;
  std::size_t pos_ = 0;
  bool overflow_ = false;
};

}  // namespace rdmalab::wire
