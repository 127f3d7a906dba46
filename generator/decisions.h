// The one source of every random choice the builder makes: a seeded engine for generation, or a
// byte string for libFuzzer-driven decoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/rng.h"

namespace aotfuzz::generator {

/// A stream of choices. The builder asks nothing else, so any implementation yields a graph.
class Decisions {
 public:
  virtual ~Decisions() = default;
  /// Uniform-ish in [0, n); 0 when n <= 1.
  virtual std::uint64_t below(std::uint64_t n) = 0;
  /// True with probability about p; p <= 0 is always false and p >= 1 always true.
  virtual bool chance(double p) = 0;
  /// An index drawn by the non-negative weights; an index of positive weight when there is one,
  /// else 0.
  virtual std::size_t weighted(const std::vector<double>& weights) = 0;
  /// True once the source has nothing left to say; the builder then stops adding ops.
  virtual bool exhausted() const { return false; }
  /// In [lo, hi] (inclusive); lo when hi <= lo.
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
};

/// Choices drawn from an ir::Rng: the same seed gives the same choices on every machine.
class RngDecisions final : public Decisions {
 public:
  explicit RngDecisions(ir::Rng& rng) : rng_(rng) {}
  std::uint64_t below(std::uint64_t n) override { return rng_.below(n); }
  bool chance(double p) override { return rng_.chance(p); }
  std::size_t weighted(const std::vector<double>& weights) override;

 private:
  ir::Rng& rng_;
};

/// Choices read from a byte string, front to back. Once the bytes run out every choice is the
/// smallest one (0, false, the first positive weight), so decoding always ends, and ends small.
/// Nearby byte strings give nearby graphs, which is what a coverage-guided fuzzer needs.
class ByteDecisions final : public Decisions {
 public:
  ByteDecisions(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t below(std::uint64_t n) override;
  bool chance(double p) override;
  std::size_t weighted(const std::vector<double>& weights) override;
  bool exhausted() const override { return pos_ >= size_; }
  /// Bytes read so far.
  std::size_t consumed() const { return pos_; }

 private:
  /// The next `count` bytes little-endian; missing bytes read as 0.
  std::uint64_t take(int count);
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace aotfuzz::generator
