// The reduction `remove-region`. One candidate step: drop every compiler_begin and compiler_end of
// a group of regions (halves, quarters, ..., then each alone), turning them into host code.
// Requires a verified module; each candidate is rebuilt from it and verified by the reducer, which
// drops one that throws or does not lower complexity().
#include "reduce/reductions.h"

#include <utility>

#include <memory>
#include <unordered_set>

#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void remove_region(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  auto rs = regions_of(m);
  if (!rs) return;
  const auto regions = rs->regions();
  for (const auto& group : chunks_then_singles(regions.size())) {
    auto drop = std::make_shared<std::unordered_set<const ir::ExprNode*>>();
    for (std::size_t i : group) {
      for (const auto& e : regions[i]->ins) drop->insert(e.get());
      for (const auto& e : regions[i]->outs) drop->insert(e.get());
    }
    out.push_back([m, drop] {
      auto body = ir::rewrite(main_of(m)->body(),
                              [&](const ir::Expr& old, std::vector<ir::Expr> kids) -> ir::Expr {
                                if (drop->count(old.get())) return kids.at(0);
                                return ir::with_children(old, std::move(kids));
                              });
      return with_body(m, body);
    });
  }
}

}  // namespace aotfuzz::reduce
