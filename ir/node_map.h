// Flat hash maps keyed by node identity, for the walks every pass and verify() run many times.
// std::unordered_map allocates one heap node per entry, which made allocation the largest cost
// of a pass. Abseil's and Boost's flat maps would do, but Debian 12's Boost (1.74) predates
// unordered_flat_map and its Abseil is shared-library only, which OSS-Fuzz runners cannot load.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace aotfuzz::ir {

class ExprNode;

/// Open-addressing map from a node pointer to a value: linear probing, power-of-two capacity,
/// load factor at most 1/2, erase by backward shift (no tombstones). Iteration order is
/// unspecified, so nothing that reaches output may iterate it.
template <class V>
class NodeMap {
 public:
  NodeMap() = default;
  /// Sized for `n` entries without rehashing.
  explicit NodeMap(std::size_t n) { reserve(n); }
  NodeMap(const NodeMap& other)
      : slots_(other.cap_ ? std::make_unique<Slot[]>(other.cap_) : nullptr),
        cap_(other.cap_),
        mask_(other.mask_),
        shift_(other.shift_),
        size_(other.size_) {
    std::copy(other.slots_.get(), other.slots_.get() + cap_, slots_.get());
  }
  NodeMap(NodeMap&& other) noexcept { swap(other); }
  NodeMap& operator=(NodeMap other) noexcept {
    swap(other);
    return *this;
  }
  void swap(NodeMap& other) noexcept {
    std::swap(slots_, other.slots_);
    std::swap(cap_, other.cap_);
    std::swap(mask_, other.mask_);
    std::swap(shift_, other.shift_);
    std::swap(size_, other.size_);
  }

  void reserve(std::size_t n) {
    if (n == 0) return;  // an empty map allocates on its first insert
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > cap_) rehash(cap);
  }

  /// The value of `key`, or nullptr.
  V* find(const ExprNode* key) {
    if (cap_ == 0) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  const V* find(const ExprNode* key) const { return const_cast<NodeMap*>(this)->find(key); }
  bool contains(const ExprNode* key) const { return find(key) != nullptr; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Inserts `key` with `value` unless present; returns the entry and whether it was inserted.
  std::pair<V*, bool> try_emplace(const ExprNode* key, V value = V()) {
    if (2 * (size_ + 1) > cap_) rehash(cap_ == 0 ? 16 : 2 * cap_);
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
      if (slots_[i].key == nullptr) {
        slots_[i].key = key;
        slots_[i].value = std::move(value);
        ++size_;
        return {&slots_[i].value, true};
      }
    }
  }
  /// The value of `key`, default-constructed first when absent.
  V& operator[](const ExprNode* key) { return *try_emplace(key).first; }

  /// Removes `key`; returns whether it was present. Later entries of the probe run move back
  /// into the hole, so lookups never need to skip deleted slots.
  bool erase(const ExprNode* key) {
    if (cap_ == 0) return false;
    std::size_t hole = home(key);
    while (slots_[hole].key != key) {
      if (slots_[hole].key == nullptr) return false;
      hole = (hole + 1) & mask_;
    }
    for (std::size_t i = (hole + 1) & mask_; slots_[i].key != nullptr; i = (i + 1) & mask_) {
      // The entry at i may fill the hole when the hole lies between its home and i (cyclically).
      if (((i - home(slots_[i].key)) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = std::move(slots_[i]);
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  /// Removes every entry, keeping the capacity.
  void clear() {
    for (std::size_t i = 0; i < cap_; ++i) slots_[i] = Slot{};
    size_ = 0;
  }

 private:
  // No member initialisers: `Slot{}` is still a null key with a value-initialised V, and a
  // trivial Slot can be cleared with memset.
  struct Slot {
    const ExprNode* key;
    V value;
  };

  std::size_t home(const ExprNode* key) const {
    // Fibonacci hashing: node addresses share their low bits, the product's high bits do not.
    const auto bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key));
    return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void rehash(std::size_t cap) {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const std::size_t old_cap = cap_;
    if constexpr (std::is_trivial_v<Slot>) {
      // Most walks are small, so clearing the slots is a visible part of their cost: one memset
      // instead of a store loop (all-zero bytes are a null key and a zero value).
      slots_ = std::make_unique_for_overwrite<Slot[]>(cap);
      std::memset(static_cast<void*>(slots_.get()), 0, cap * sizeof(Slot));
    } else {
      slots_ = std::make_unique<Slot[]>(cap);
    }
    cap_ = cap;
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (std::size_t i = 0; i < old_cap; ++i) {
      if (old[i].key != nullptr) try_emplace(old[i].key, std::move(old[i].value));
    }
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t cap_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

/// A set of nodes by identity (see NodeMap).
class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(std::size_t n) : map_(n) {}
  /// True when `key` was not yet present.
  bool insert(const ExprNode* key) { return map_.try_emplace(key, true).second; }
  bool contains(const ExprNode* key) const { return map_.contains(key); }

 private:
  NodeMap<bool> map_;
};

}  // namespace aotfuzz::ir
