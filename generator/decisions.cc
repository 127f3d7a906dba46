// Decision sources: the seeded engine and the byte-string reader.
#include "generator/decisions.h"

namespace aotfuzz::generator {
namespace {

std::size_t first_positive(const std::vector<double>& weights) {
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] > 0) return i;
  }
  return 0;
}

// The index whose cumulative weight interval holds `r` (r in [0, total)).
std::size_t pick_by(const std::vector<double>& weights, double r) {
  std::size_t last = first_positive(weights);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i] > 0 ? weights[i] : 0;
    if (w <= 0) continue;
    last = i;
    if (r < w) return i;
    r -= w;
  }
  return last;  // rounding left r just past the end: the last positive entry
}

double total_weight(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w > 0 ? w : 0;
  return total;
}

}  // namespace

std::size_t RngDecisions::weighted(const std::vector<double>& weights) {
  const double total = total_weight(weights);
  if (total <= 0) return 0;
  return pick_by(weights, static_cast<double>(rng_.next() >> 11) * 0x1.0p-53 * total);
}

std::uint64_t ByteDecisions::take(int count) {
  std::uint64_t v = 0;
  for (int i = 0; i < count; ++i) {
    std::uint64_t byte = pos_ < size_ ? data_[pos_] : 0;
    if (pos_ < size_) ++pos_;
    v |= byte << (8 * i);
  }
  return v;
}

std::uint64_t ByteDecisions::below(std::uint64_t n) {
  if (n <= 1 || exhausted()) return 0;
  // As few bytes as cover n - 1, so small choices cost one byte.
  int count = 1;
  while (count < 8 && ((n - 1) >> (8 * count)) != 0) ++count;
  return take(count) % n;
}

bool ByteDecisions::chance(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  if (exhausted()) return false;
  return (static_cast<double>(take(1)) + 0.5) / 256.0 < p;
}

std::size_t ByteDecisions::weighted(const std::vector<double>& weights) {
  const double total = total_weight(weights);
  if (total <= 0) return 0;
  if (exhausted()) return first_positive(weights);
  return pick_by(weights, static_cast<double>(take(2)) / 65536.0 * total);
}

}  // namespace aotfuzz::generator
