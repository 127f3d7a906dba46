// Iterative graph walks and rewrites: no recursion on the expression graph, so a
// 1,000,000-node chain is as safe as a 3-node one.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"

namespace aotfuzz::ir {

/// Every node reachable from `root` once, children before parents, children left to right.
/// Function nodes are listed but their bodies are not entered unless `enter_functions`; when
/// entered, a body's nodes come before the Function node itself.
std::vector<Expr> post_order(const Expr& root, bool enter_functions = false);

/// Rebuilds the graph of `root` bottom-up. For each node (post order, Function bodies not
/// entered), `fn(old, new_children)` returns its replacement; `new_children` are the already
/// rewritten children. Returning `with_children(old, new_children)` keeps the node.
/// Shared nodes are rewritten once, so sharing is preserved.
using RewriteFn = std::function<Expr(const Expr& old, std::vector<Expr> new_children)>;
Expr rewrite(const Expr& root, const RewriteFn& fn);

/// rewrite() over a post order already at hand (`order == post_order(root)`), without a
/// std::function call or a fresh child vector per node: `fn(old, kids, changed)` gets the
/// rewritten children in a buffer it may move from, and whether any of them differs from the old
/// one; it returns the replacement (rebuilt() keeps the node).
template <class F>
Expr rewrite_in_order(const std::vector<Expr>& order, const Expr& root, F&& fn) {
  NodeMap<Expr> memo(order.size());
  std::vector<Expr> kids;
  for (const auto& node : order) {
    kids.clear();
    const std::size_t n = num_children(*node);
    kids.reserve(n);  // after `fn` took the buffer, one allocation instead of regrowth
    bool changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      const Expr& kid = child(*node, k);
      kids.push_back(*memo.find(kid.get()));
      changed |= kids.back() != kid;
    }
    memo[node.get()] = fn(node, kids, changed);
  }
  return *memo.find(root.get());
}

/// The replacement of a node a rewrite leaves alone: `old` itself when no child `changed`, else
/// with_children(old, kids) (which takes `kids`).
inline Expr rebuilt(const Expr& old, std::vector<Expr>& kids, bool changed) {
  return changed ? with_children(old, std::move(kids)) : old;
}

/// Rewrite keeping every node but substituting the ones in `map` (by identity).
Expr substitute(const Expr& root, const std::unordered_map<const ExprNode*, Expr>& map);

}  // namespace aotfuzz::ir
