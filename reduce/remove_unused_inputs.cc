// The reduction `remove-unused-inputs`. One candidate step: remove parameters of @main nobody uses
// (all at once, then one at a time). Requires a verified module; each candidate is rebuilt from it
// and verified by the reducer, which drops one that throws or does not lower complexity().
#include "reduce/reductions.h"

#include <unordered_set>
#include <utility>

#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void remove_unused_inputs(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  const auto& main = main_of(m);
  std::unordered_set<const ir::ExprNode*> used;
  for (const auto& n : ir::post_order(main->body())) used.insert(n.get());
  std::vector<std::size_t> unused;
  for (std::size_t i = 0; i < main->params().size(); ++i) {
    if (!used.count(main->params()[i].get())) unused.push_back(i);
  }
  if (unused.empty()) return;
  auto without = [m](std::vector<std::size_t> drop) {
    return [m, drop] {
      std::vector<ir::Var> ps;
      const auto& all = main_of(m)->params();
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (std::find(drop.begin(), drop.end(), i) == drop.end()) ps.push_back(all[i]);
      }
      return with_main(m, std::move(ps), main_of(m)->body());
    };
  };
  out.push_back(without(unused));
  if (unused.size() < 2) return;
  for (auto i : unused) out.push_back(without({i}));
}

}  // namespace aotfuzz::reduce
