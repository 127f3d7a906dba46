// Iterative post-order walks and memoized rewrites.
#include "ir/traversal.h"

#include <unordered_set>

namespace aotfuzz::ir {
namespace {

// Children to descend into, including a Function's body when asked.
std::vector<Expr> walk_children(const ExprNode& node, bool enter_functions) {
  if (enter_functions && node.kind() == ExprKind::kFunction) {
    return {static_cast<const FunctionNode&>(node).body()};
  }
  return children(node);
}

}  // namespace

std::vector<Expr> post_order(const Expr& root, bool enter_functions) {
  std::vector<Expr> order;
  if (!root) return order;
  std::unordered_set<const ExprNode*> done;
  // Each frame: node and the index of the next child to visit.
  struct Frame {
    Expr node;
    std::vector<Expr> kids;
    std::size_t next = 0;
  };
  std::vector<Frame> stack;
  std::unordered_set<const ExprNode*> on_stack;
  stack.push_back({root, walk_children(*root, enter_functions)});
  on_stack.insert(root.get());
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next < top.kids.size()) {
      Expr kid = top.kids[top.next++];
      if (done.count(kid.get()) || on_stack.count(kid.get())) continue;
      auto kids = walk_children(*kid, enter_functions);
      on_stack.insert(kid.get());
      stack.push_back({std::move(kid), std::move(kids)});
      continue;
    }
    done.insert(top.node.get());
    on_stack.erase(top.node.get());
    order.push_back(std::move(top.node));
    stack.pop_back();
  }
  return order;
}

std::unordered_map<const ExprNode*, int> use_counts(const Expr& root, bool enter_functions) {
  std::unordered_map<const ExprNode*, int> counts;
  for (const auto& node : post_order(root, enter_functions)) {
    counts.try_emplace(node.get(), 0);
    for (const auto& kid : walk_children(*node, enter_functions)) ++counts[kid.get()];
  }
  return counts;
}

Expr rewrite(const Expr& root, const RewriteFn& fn) {
  std::unordered_map<const ExprNode*, Expr> memo;
  for (const auto& node : post_order(root)) {
    std::vector<Expr> kids = children(*node);
    for (auto& k : kids) k = memo.at(k.get());
    memo[node.get()] = fn(node, std::move(kids));
  }
  return memo.at(root.get());
}

Expr substitute(const Expr& root, const std::unordered_map<const ExprNode*, Expr>& map) {
  return rewrite(root, [&](const Expr& old, std::vector<Expr> kids) {
    auto it = map.find(old.get());
    if (it != map.end()) return it->second;
    return with_children(old, std::move(kids));
  });
}

}  // namespace aotfuzz::ir
