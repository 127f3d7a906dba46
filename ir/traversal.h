// Iterative graph walks and rewrites: no recursion on the expression graph, so a
// 1,000,000-node chain is as safe as a 3-node one.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace aotfuzz::ir {

/// Every node reachable from `root` once, children before parents, children left to right.
/// Function nodes are listed but their bodies are not entered unless `enter_functions`; when
/// entered, a body's nodes come before the Function node itself.
std::vector<Expr> post_order(const Expr& root, bool enter_functions = false);

/// Number of uses of each node within the graph of `root` (edges from parents; the root has 0).
std::unordered_map<const ExprNode*, int> use_counts(const Expr& root, bool enter_functions = false);

/// Rebuilds the graph of `root` bottom-up. For each node (post order, Function bodies not
/// entered), `fn(old, new_children)` returns its replacement; `new_children` are the already
/// rewritten children. Returning `with_children(old, new_children)` keeps the node.
/// Shared nodes are rewritten once, so sharing is preserved.
using RewriteFn = std::function<Expr(const Expr& old, std::vector<Expr> new_children)>;
Expr rewrite(const Expr& root, const RewriteFn& fn);

/// Rewrite keeping every node but substituting the ones in `map` (by identity).
Expr substitute(const Expr& root, const std::unordered_map<const ExprNode*, Expr>& map);

}  // namespace aotfuzz::ir
