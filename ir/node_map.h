// Flat hash maps keyed by node identity, for the walks every pass and verify() run many times.
// std::unordered_map allocates one heap node per entry, which made allocation the largest cost
// of a pass. Abseil's and Boost's flat maps would do, but Debian 12's Boost (1.74) predates
// unordered_flat_map and its Abseil is shared-library only, which OSS-Fuzz runners cannot load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace aotfuzz::ir {

class ExprNode;

/// Open-addressing map from a node pointer to a value: linear probing, power-of-two capacity,
/// load factor at most 1/2, no erase (walks only ever add). Iteration order is unspecified, so
/// nothing that reaches output may iterate it.
template <class V>
class NodeMap {
 public:
  NodeMap() = default;
  /// Sized for `n` entries without rehashing.
  explicit NodeMap(std::size_t n) { reserve(n); }

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > slots_.size()) rehash(cap);
  }

  /// The value of `key`, or nullptr.
  V* find(const ExprNode* key) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  const V* find(const ExprNode* key) const { return const_cast<NodeMap*>(this)->find(key); }
  bool contains(const ExprNode* key) const { return find(key) != nullptr; }

  /// Inserts `key` with `value` unless present; returns the entry and whether it was inserted.
  std::pair<V*, bool> try_emplace(const ExprNode* key, V value = V()) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
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

 private:
  struct Slot {
    const ExprNode* key = nullptr;
    V value{};
  };

  std::size_t home(const ExprNode* key) const {
    // Fibonacci hashing: node addresses share their low bits, the product's high bits do not.
    const auto bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key));
    return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void rehash(std::size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (auto& s : old) {
      if (s.key != nullptr) try_emplace(s.key, std::move(s.value));
    }
  }

  std::vector<Slot> slots_;
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
