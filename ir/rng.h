// The one random engine: explicit, seeded, and portable (no std distributions, whose output
// differs between standard libraries), so a seed means the same graph on every machine.
#pragma once

#include <cstdint>
#include <vector>

namespace aotfuzz::ir {

/// xoshiro256** seeded through splitmix64. Passed down explicitly; never global.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) s = splitmix(seed);
  }
  /// Next raw 64 bits.
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, n); n == 0 gives 0. Rejection sampling keeps it unbiased.
  std::uint64_t below(std::uint64_t n) {
    if (n <= 1) return 0;
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t v;
    do {
      v = next();
    } while (v >= limit);
    return v % n;
  }
  /// Uniform integer in [lo, hi] (inclusive); lo > hi gives lo.
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  /// True with probability p (p <= 0 never, p >= 1 always), from 53 random bits.
  bool chance(double p) {
    if (p <= 0) return false;
    if (p >= 1) return true;
    return static_cast<double>(next() >> 11) * 0x1.0p-53 < p;
  }
  /// An index drawn with the given non-negative weights; all-zero weights give 0.
  std::size_t weighted(const std::vector<double>& weights) {
    double total = 0;
    for (double w : weights) total += w > 0 ? w : 0;
    if (total <= 0) return 0;
    double r = static_cast<double>(next() >> 11) * 0x1.0p-53 * total;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      double w = weights[i] > 0 ? weights[i] : 0;
      if (r < w) return i;
      r -= w;
    }
    return weights.size() - 1;
  }
  /// An independent engine derived from this one (for per-case streams).
  Rng fork() { return Rng(next()); }

 private:
  static std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace aotfuzz::ir
