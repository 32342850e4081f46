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

#include "prefetch.hpp"

namespace rdmalab::dissect {

namespace detail {

/// The table both maps keep: one array of slots, at most three quarters
/// full, probed linearly from the key's hash.
template <class Key, class Value, class Hash>
struct FlatSlots {
  static_assert(std::is_unsigned_v<Value>);
  static constexpr Value kEmpty = std::numeric_limits<Value>::max();
  struct Slot {
    Key key{};
    Value value = kEmpty;
  };

  std::vector<Slot> slots;
  std::size_t size = 0;

  [[nodiscard]] std::size_t mask() const noexcept { return slots.size() - 1; }
  [[nodiscard]] std::size_t start(const Key& key) const noexcept { return Hash{}(key)&mask(); }

  /// Calls f(slot) for the slots from `key`'s up to the first empty one,
  /// until f returns true.
  template <class F>
  void probe(const Key& key, F f) const {
    if (slots.empty()) return;
    for (std::size_t i = start(key); slots[i].value != kEmpty; i = (i + 1) & mask())
      if (f(slots[i])) return;
  }

  void prefetch(const Key& key) const noexcept {
    if (!slots.empty()) prefetch_line(&slots[start(key)]);
  }

  /// Makes room for one more entry: the table doubles when it would be
  /// more than three quarters full.
  void make_room() {
    if ((size + 1) * 4 <= slots.size() * 3) return;
    std::vector<Slot> old =
        std::exchange(slots, std::vector<Slot>(slots.empty() ? 16 : 2 * slots.size()));
    for (const Slot& s : old)
      if (s.value != kEmpty) free_slot(s.key) = s;
  }

  /// The first empty slot from `key`'s (after make_room()).
  Slot& free_slot(const Key& key) noexcept {
    std::size_t i = start(key);
    while (slots[i].value != kEmpty) i = (i + 1) & mask();
    return slots[i];
  }
};

}  // namespace detail

template <class Key, class Value, class Hash>
class FlatMap {
 public:
  /// The value of `key`, or nullptr.
  [[nodiscard]] const Value* find(const Key& key) const noexcept {
    const Value* found = nullptr;
    t_.probe(key, [&](const Slot& s) {
      if (s.key == key) found = &s.value;
      return found != nullptr;
    });
    return found;
  }

  /// Asks the processor to fetch the slot where a look-up of `key` starts
  /// (a hint, for a look-up that follows a little later).
  void prefetch(const Key& key) const noexcept { t_.prefetch(key); }

  /// Inserts key -> value unless the key is there; returns the value the
  /// key has now and whether it was inserted.
  std::pair<Value, bool> try_emplace(const Key& key, Value value) {
    if (const Value* v = find(key)) return {*v, false};
    t_.make_room();
    t_.free_slot(key) = Slot{key, value};
    ++t_.size;
    return {value, true};
  }

  [[nodiscard]] std::size_t size() const noexcept { return t_.size; }

 private:
  using Slot = typename detail::FlatSlots<Key, Value, Hash>::Slot;
  detail::FlatSlots<Key, Value, Hash> t_;
};

/// Several values per key, in the same kind of table: an insertion takes
/// the first free slot from the key's, so a key's values lie between its
/// slot and the next empty one, among other keys' entries.
template <class Key, class Value, class Hash>
class FlatMultiMap {
 public:
  void insert(const Key& key, Value value) {
    t_.make_room();
    t_.free_slot(key) = Slot{key, value};
    ++t_.size;
  }

  /// Calls f(value) for each value of `key` (in no particular order).
  template <class F>
  void for_each(const Key& key, F f) const {
    t_.probe(key, [&](const Slot& s) {
      if (s.key == key) f(s.value);
      return false;
    });
  }

  [[nodiscard]] std::size_t size() const noexcept { return t_.size; }

 private:
  using Slot = typename detail::FlatSlots<Key, Value, Hash>::Slot;
  detail::FlatSlots<Key, Value, Hash> t_;
};

}  // namespace rdmalab::dissect
