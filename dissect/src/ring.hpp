// A first-in first-out queue that owns no memory until its first element.
//
// The analyser keeps a few queues per channel (unacknowledged requests, the
// history of first transmissions, the requests of the last rate window). A
// capture of a whole cluster has hundreds of thousands of channels, most of
// them idle: std::deque allocates about 576 bytes for each even while empty,
// this ring nothing. It is one array used circularly, doubling from one
// element when full; it never shrinks (a channel that was busy once may be
// busy again). 24 bytes when empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

#include "prefetch.hpp"

namespace rdmalab::dissect {

template <class T>
class Ring {
 public:
  template <class R, class V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::remove_const_t<V>;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iter() = default;
    Iter(R* ring, std::size_t i) : ring_(ring), i_(i) {}
    reference operator*() const { return (*ring_)[i_]; }
    pointer operator->() const { return &(*ring_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.i_ == b.i_; }

   private:
    R* ring_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = Iter<Ring, T>;
  using const_iterator = Iter<const Ring, const T>;

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Elements the ring has room for without growing (0 until the first push).
  [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }

  T& operator[](std::size_t i) noexcept { return data_[slot(i)]; }
  const T& operator[](std::size_t i) const noexcept { return data_[slot(i)]; }
  T& front() noexcept { return data_[head_]; }
  const T& front() const noexcept { return data_[head_]; }
  T& back() noexcept { return (*this)[size_ - 1]; }
  const T& back() const noexcept { return (*this)[size_ - 1]; }

  iterator begin() noexcept { return {this, 0}; }
  iterator end() noexcept { return {this, size_}; }
  const_iterator begin() const noexcept { return {this, 0}; }
  const_iterator end() const noexcept { return {this, size_}; }

  /// Asks the processor to fetch both ends of the ring: the oldest element
  /// and the slot the next one goes to (a hint, for the packet that will
  /// touch them a little later).
  void prefetch() const noexcept {
    if (cap_ == 0) return;
    prefetch_line(&data_[head_]);
    prefetch_line(&data_[slot(size_ < cap_ ? size_ : size_ - 1)]);
  }

  template <class... Args>
  void emplace_back(Args&&... args) {
    if (size_ == cap_) grow();
    data_[slot(size_)] = T{std::forward<Args>(args)...};
    ++size_;
  }
  void push_back(const T& v) { emplace_back(v); }

  void pop_front() noexcept {
    head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
    if (--size_ == 0) head_ = 0;
  }

  /// Removes the elements `pred` holds for, keeping the others in order.
  template <class Pred>
  void erase_if(Pred pred) {
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < size_; ++i) {
      T& v = data_[slot(i)];
      if (pred(v)) continue;
      if (kept != i) data_[slot(kept)] = std::move(v);
      ++kept;
    }
    size_ = kept;
    if (size_ == 0) head_ = 0;
  }

 private:
  static constexpr std::uint32_t kFirstCapacity = 1;

  [[nodiscard]] std::size_t slot(std::size_t i) const noexcept {
    const std::size_t s = head_ + i;
    return s < cap_ ? s : s - cap_;
  }

  void grow() {
    const std::uint32_t cap = cap_ == 0 ? kFirstCapacity : cap_ * 2;
    auto data = std::make_unique<T[]>(cap);
    for (std::uint32_t i = 0; i < size_; ++i) data[i] = std::move(data_[slot(i)]);
    data_ = std::move(data);
    head_ = 0;
    cap_ = cap;
  }

  std::unique_ptr<T[]> data_;
  std::uint32_t head_ = 0, size_ = 0, cap_ = 0;
};

}  // namespace rdmalab::dissect
