// The reduction `shrink-shapes`. One candidate step: shrink every parameter's shape towards (1):
// all to (1), drop the leading axis, set one axis to 1, halve one axis. Requires a verified module;
// each candidate is rebuilt from it and verified by the reducer, which drops one that throws or
// does not lower complexity().
#include "reduce/reductions.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void shrink_shapes(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  std::size_t max_rank = 0;
  bool all_unit = true;
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      max_rank = std::max(max_rank, t->shape().size());
      all_unit &= t->shape() == std::vector<std::int64_t>{1};
    }
  }
  if (all_unit) return;
  out.push_back([m] {
    return retype_params(m,
                         [](const ir::Type& t) { return ir::TypeNode::tensor({1}, t->dtype()); });
  });
  if (max_rank > 1) {
    out.push_back([m, max_rank] {
      return retype_params(m, [max_rank](const ir::Type& t) {
        if (t->shape().size() != max_rank) return t;
        std::vector<std::int64_t> s(t->shape().begin() + 1, t->shape().end());
        return ir::TypeNode::tensor(std::move(s), t->dtype());
      });
    });
  }
  // Axis `a` counts from the right, so broadcasting partners change together.
  for (std::size_t a = 0; a < max_rank; ++a) {
    for (bool halve : {false, true}) {
      out.push_back([m, a, halve] {
        return retype_params(m, [a, halve](const ir::Type& t) {
          auto s = t->shape();
          if (s.size() <= a) return t;
          auto& d = s[s.size() - 1 - a];
          d = halve ? (d + 1) / 2 : std::min<std::int64_t>(d, 1);
          return ir::TypeNode::tensor(std::move(s), t->dtype());
        });
      });
    }
  }
}

}  // namespace aotfuzz::reduce
