// Not built: the source that tests/aot/data/equivalents/equivalents.txt was reviewed against,
// edited since (a line inserted above `reserve`, and the bound check changed from `< n`).
#include <vector>

std::vector<int> first(const std::vector<int>& in, std::size_t n) {
  std::vector<int> out;
  // inserted after the review: moves the next line down by two
  out.reserve(n);
  for (std::size_t i = 0; i <= n && i < in.size(); ++i) out.push_back(in[i]);
  return out;
}
