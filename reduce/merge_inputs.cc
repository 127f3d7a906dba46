// The reduction `merge-inputs`. One candidate step: use the earliest parameter of their type
// instead of a group of later ones (halves, quarters, ..., then each alone). Requires a verified
// module; each candidate is rebuilt from it and verified by the reducer, which drops one that
// throws or does not lower complexity().
#include "reduce/reductions.h"

#include <unordered_map>
#include <utility>

#include "ir/structural.h"
#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void merge_inputs(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  const auto& params = main_of(m)->params();
  // Each later parameter with the earliest of its type: independent merges (that earliest one is
  // never merged away), so they are tried in groups too.
  std::vector<std::pair<std::size_t, std::size_t>> merges;
  for (std::size_t j = 1; j < params.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (!ir::type_equal(params[i]->type(), params[j]->type())) continue;
      merges.emplace_back(j, i);
      break;  // the earliest match is enough: the others have the same type
    }
  }
  for (const auto& group : chunks_then_singles(merges.size())) {
    std::vector<std::pair<std::size_t, std::size_t>> chosen;
    for (std::size_t g : group) chosen.push_back(merges[g]);
    out.push_back([m, chosen] {
      const auto& main = main_of(m);
      std::vector<ir::Var> ps = main->params();
      std::unordered_map<const ir::ExprNode*, ir::Expr> map;
      for (const auto& [j, i] : chosen) map[ps[j].get()] = ps[i];
      auto body = ir::substitute(main->body(), map);
      std::vector<ir::Var> kept;
      for (const auto& p : ps) {
        if (!map.count(p.get())) kept.push_back(p);
      }
      return with_main(m, std::move(kept), std::move(body));
    });
  }
}

}  // namespace aotfuzz::reduce
