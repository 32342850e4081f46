// A hash map from small keys to small values, stored in one array (open
// addressing, linear probing), for the analyser's per-packet look-ups.
//
// std::unordered_map keeps each entry in its own node: a look-up reads the
// bucket array, then the node, then (when the hash is not cached) hashes
// each node of the bucket again. In a capture of 100,000 QPs every packet
// looks up a different half-channel, and each of those reads is a cache
// miss. Here a look-up reads one slot, rarely two or three neighbours. The
// table is at most three quarters full and doubles when it would be fuller;
// entries are never removed (the analyser forgets no channel and no host).
// Values are unsigned integers; the largest one marks an empty slot.
// FlatMultiMap is the same table with a key allowed several times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace rdmalab::dissect {

template <class Key, class Value, class Hash>
class FlatMap {
  static_assert(std::is_unsigned_v<Value>);
  static constexpr Value kEmpty = std::numeric_limits<Value>::max();

 public:
  /// The value of `key`, or nullptr.
  [[nodiscard]] const Value* find(const Key& key) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = Hash{}(key)&mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.value == kEmpty) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  /// Asks the processor to fetch the slot where a look-up of `key` starts
  /// (a hint, for a look-up that follows a little later).
  void prefetch(const Key& key) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Hash{}(key)&mask()]);
  }

  /// Inserts key -> value unless the key is there; returns the value the
  /// key has now and whether it was inserted.
  std::pair<Value, bool> try_emplace(const Key& key, Value value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = Hash{}(key)&mask();; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.value == kEmpty) {
        s = Slot{key, value};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    Key key{};
    Value value = kEmpty;
  };

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }

  void grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(slots_.empty() ? 16 : 2 * slots_.size()));
    size_ = 0;
    for (const Slot& s : old)
      if (s.value != kEmpty) try_emplace(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

/// Several values per key, in the same kind of table: an insertion takes
/// the first free slot from the key's, so a key's values lie between its
/// slot and the next empty one, among other keys' entries.
template <class Key, class Value, class Hash>
class FlatMultiMap {
  static_assert(std::is_unsigned_v<Value>);
  static constexpr Value kEmpty = std::numeric_limits<Value>::max();

 public:
  void insert(const Key& key, Value value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    place(key, value);
    ++size_;
  }

  /// Calls f(value) for each value of `key` (in no particular order).
  template <class F>
  void for_each(const Key& key, F f) const {
    if (slots_.empty()) return;
    for (std::size_t i = Hash{}(key)&mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.value == kEmpty) return;
      if (s.key == key) f(s.value);
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    Key key{};
    Value value = kEmpty;
  };

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }

  void place(const Key& key, Value value) {
    for (std::size_t i = Hash{}(key)&mask();; i = (i + 1) & mask()) {
      if (slots_[i].value == kEmpty) {
        slots_[i] = Slot{key, value};
        return;
      }
    }
  }

  void grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(slots_.empty() ? 16 : 2 * slots_.size()));
    for (const Slot& s : old)
      if (s.value != kEmpty) place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace rdmalab::dissect
