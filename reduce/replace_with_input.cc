// The reduction `replace-with-input`. One candidate step: replace a host-side tensor value (a host
// op or a compiler_end) by a parameter of @main of its type, cutting off everything above it.
// Requires a verified module; each candidate is rebuilt from it and verified by the reducer, which
// drops one that throws or does not lower complexity().
#include "reduce/reductions.h"

#include <utility>

#include "ir/structural.h"
#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void replace_with_input(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  auto rs = regions_of(m);
  if (!rs) return;
  const auto& params = main_of(m)->params();
  for (const auto& node : nodes_root_first(m)) {
    if (!node->type()->is_tensor()) continue;
    if (is_call_of(node.get(), ir::Op::kCompilerBegin)) continue;
    const bool is_end = is_call_of(node.get(), ir::Op::kCompilerEnd);
    if (!is_end && rs->region_of(node.get()) != nullptr) continue;
    ir::Var existing;
    for (const auto& p : params) {
      if (ir::type_equal(p->type(), node->type())) {
        existing = p;
        break;
      }
    }
    out.push_back([m, node, existing] {
      const auto& main = main_of(m);
      std::vector<ir::Var> ps = main->params();
      ir::Var with = existing;
      if (!with) {
        with = ir::VarNode::make(fresh_param_name(ps, "r"), node->type());
        ps.push_back(with);
      }
      auto body = ir::substitute(main->body(), {{node.get(), with}});
      return with_main(m, std::move(ps), std::move(body));
    });
  }
}

}  // namespace aotfuzz::reduce
