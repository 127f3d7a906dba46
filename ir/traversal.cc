// Iterative post-order walks and memoized rewrites.
#include "ir/traversal.h"

#include "ir/node_map.h"

namespace aotfuzz::ir {
namespace {

// Children to descend into, including a Function's body when asked.
std::size_t walk_count(const ExprNode& node, bool enter_functions) {
  if (enter_functions && node.kind() == ExprKind::kFunction) return 1;
  return num_children(node);
}
const Expr& walk_child(const ExprNode& node, std::size_t i, bool enter_functions) {
  if (enter_functions && node.kind() == ExprKind::kFunction) {
    return static_cast<const FunctionNode&>(node).body();
  }
  return child(node, i);
}

}  // namespace

std::vector<Expr> post_order(const Expr& root, bool enter_functions) {
  std::vector<Expr> order;
  if (!root) return order;
  // Nodes are immutable and built from existing children, so the graph is acyclic: a node met
  // again was either finished or is an ancestor (impossible), and one "seen" set suffices.
  // Sized for a typical generated body (tens of nodes) so small walks never rehash.
  NodeSet seen(64);
  order.reserve(64);
  struct Frame {
    const Expr* node;
    std::size_t next;
  };
  std::vector<Frame> stack;
  stack.reserve(32);
  stack.push_back({&root, 0});
  seen.insert(root.get());
  while (!stack.empty()) {
    Frame& top = stack.back();
    const ExprNode& node = **top.node;
    if (top.next < walk_count(node, enter_functions)) {
      const Expr& kid = walk_child(node, top.next++, enter_functions);
      // Parents on the stack keep `kid` alive, so pointing at it is safe.
      if (seen.insert(kid.get())) stack.push_back({&kid, 0});
      continue;
    }
    order.push_back(*top.node);
    stack.pop_back();
  }
  return order;
}

// FunctionNode's cached post order lives with the walk that computes it, so that expr.cc needs
// nothing of the traversals.
const std::vector<Expr>& FunctionNode::body_order() const {
  std::call_once(order_once_, [this] { order_ = post_order(body_); });
  return order_;
}

Expr rewrite(const Expr& root, const RewriteFn& fn) {
  return rewrite_in_order(post_order(root), root,
                          [&fn](const Expr& old, std::vector<Expr>& kids, bool /*changed*/) {
                            return fn(old, std::move(kids));
                          });
}

Expr substitute(const Expr& root, const std::unordered_map<const ExprNode*, Expr>& map) {
  return rewrite(root, [&](const Expr& old, std::vector<Expr> kids) {
    auto it = map.find(old.get());
    if (it != map.end()) return it->second;
    return with_children(old, std::move(kids));
  });
}

}  // namespace aotfuzz::ir
