// A reduction's verdicts by graph structure.
#include "reduce/verdict_cache.h"

#include "ir/structural.h"

namespace aotfuzz::reduce {

std::optional<bool> VerdictCache::find(const ir::Module& module, std::size_t hash) const {
  const auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  for (const auto& [seen, verdict] : it->second) {
    if (ir::structural_equal(seen, module)) return verdict;
  }
  return std::nullopt;
}

void VerdictCache::insert(const ir::Module& module, std::size_t hash, bool verdict) {
  auto& same_hash = by_hash_[hash];
  for (auto& [seen, known] : same_hash) {
    if (ir::structural_equal(seen, module)) {
      known = verdict;
      return;
    }
  }
  same_hash.emplace_back(module, verdict);
}

}  // namespace aotfuzz::reduce
