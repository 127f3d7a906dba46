// The reduction `drop-tuple-field`. One candidate step: drop one field of a tuple (renumbering the
// TupleGetItems on it), or unwrap a one-field tuple. Requires a verified module; each candidate is
// rebuilt from it and verified by the reducer, which drops one that throws or does not lower
// complexity().
#include "reduce/reductions.h"

#include <unordered_map>
#include <utility>

#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {
namespace {

// How TupleGetItems on a rewritten tuple are renumbered: old index -> new index (-1: dropped),
// or `unwrap` when the one-field tuple became its field.
struct Remap {
  bool unwrap = false;
  std::vector<int> index;
};

ir::Module drop_field(const ir::Module& m, const ir::ExprNode* target, int drop, bool unwrap) {
  std::unordered_map<const ir::ExprNode*, Remap> remap;
  auto body = ir::rewrite(
      main_of(m)->body(), [&](const ir::Expr& old, std::vector<ir::Expr> kids) -> ir::Expr {
        if (old.get() == target) {
          Remap r;
          if (unwrap) {
            r.unwrap = true;
            remap[old.get()] = r;
            return kids.at(0);
          }
          int next = 0;
          for (int i = 0; i < static_cast<int>(kids.size()); ++i) {
            r.index.push_back(i == drop ? -1 : next++);
          }
          kids.erase(kids.begin() + drop);
          remap[old.get()] = r;
          return ir::TupleNode::make(std::move(kids));
        }
        if (const auto* call = ir::as<ir::CallNode>(old)) {
          if (call->op() && ir::is_annotation(*call->op())) {
            auto it = remap.find(call->args()[0].get());
            if (it != remap.end()) {
              Remap r = it->second;
              remap[old.get()] = r;
            }
          }
        }
        if (const auto* tgi = ir::as<ir::TupleGetItemNode>(old)) {
          auto it = remap.find(tgi->tuple().get());
          if (it != remap.end()) {
            if (it->second.unwrap) return kids.at(0);
            int idx = it->second.index.at(static_cast<std::size_t>(tgi->index()));
            if (idx < 0) throw ir::Error("the dropped field is used");
            return ir::TupleGetItemNode::make(kids.at(0), idx);
          }
        }
        return ir::with_children(old, std::move(kids));
      });
  return with_body(m, body);
}

}  // namespace

void drop_tuple_field(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  const ir::Expr& root = main_of(m)->body();
  for (const auto& node : nodes_root_first(m)) {
    const auto* tup = ir::as<ir::TupleNode>(node);
    if (tup == nullptr || node == root) continue;
    const int n = static_cast<int>(tup->fields().size());
    if (n == 1) {
      out.push_back([m, node] { return drop_field(m, node.get(), 0, true); });
      continue;
    }
    for (int i = 0; i < n; ++i) {
      out.push_back([m, node, i] { return drop_field(m, node.get(), i, false); });
    }
  }
}

}  // namespace aotfuzz::reduce
