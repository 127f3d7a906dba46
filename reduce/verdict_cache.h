// The verdicts a reduction has had for its candidates, by graph structure: a candidate equal to
// one judged before (ir::structural_equal) gets that verdict without running the predicate again.
// Keyed by structural hash for the lookup, and checked for equality on a hit, so that two
// different graphs whose hashes collide never share a verdict.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/module.h"

namespace aotfuzz::reduce {

class VerdictCache {
 public:
  /// The verdict of a module structurally equal to `module`, whose ir::structural_hash is
  /// `hash`; nullopt when there is none.
  std::optional<bool> find(const ir::Module& module, std::size_t hash) const;
  /// Records `verdict` for `module` (hash: its structural hash), replacing the verdict of a
  /// module equal to it.
  void insert(const ir::Module& module, std::size_t hash, bool verdict);

 private:
  std::unordered_map<std::size_t, std::vector<std::pair<ir::Module, bool>>> by_hash_;
};

}  // namespace aotfuzz::reduce
