// The reduction `replace-with-operand`. One candidate step: replace an op by one of its operands of
// the same type, or a TupleGetItem of a literal tuple by the field. Requires a verified module;
// each candidate is rebuilt from it and verified by the reducer, which drops one that throws or
// does not lower complexity().
#include "reduce/reductions.h"

#include "ir/structural.h"
#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void replace_with_operand(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  for (const auto& node : nodes_root_first(m)) {
    std::vector<ir::Expr> replacements;
    if (const auto* call = ir::as<ir::CallNode>(node)) {
      if (!call->op() || !ir::is_elementwise(*call->op())) continue;
      for (const auto& arg : call->args()) {
        if (!ir::type_equal(arg->type(), node->type())) continue;
        if (std::find(replacements.begin(), replacements.end(), arg) != replacements.end()) {
          continue;
        }
        replacements.push_back(arg);
      }
    } else if (const auto* tgi = ir::as<ir::TupleGetItemNode>(node)) {
      if (const auto* tup = ir::as<ir::TupleNode>(tgi->tuple())) {
        replacements.push_back(tup->fields().at(static_cast<std::size_t>(tgi->index())));
      }
    }
    for (const auto& with : replacements) {
      out.push_back([m, node, with] {
        return with_body(m, ir::substitute(main_of(m)->body(), {{node.get(), with}}));
      });
    }
  }
}

}  // namespace aotfuzz::reduce
