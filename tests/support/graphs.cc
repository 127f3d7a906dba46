#include "tests/support/graphs.h"

#include "ir/traversal.h"
#include "ir/type.h"

namespace aotfuzz::test_support {

std::size_t count_calls(const ir::Expr& body) {
  std::size_t n = 0;
  for (const auto& node : ir::post_order(body)) n += node->kind() == ir::ExprKind::kCall;
  return n;
}

ir::Module host_chain(int n) {
  auto x = ir::VarNode::make("x", ir::TypeNode::tensor({4}, ir::DType::kFloat32));
  ir::Expr e = x;
  for (int i = 0; i < n; ++i) e = ir::CallNode::make(ir::Op::kAdd, {e, x});
  ir::Module m;
  m.add("main", ir::FunctionNode::make({x}, e));
  return m;
}

ir::Module annotated_chain(int n, bool split, const std::function<std::string(int)>& target_of) {
  auto x = ir::VarNode::make("x", ir::TypeNode::tensor({2}, ir::DType::kFloat32));
  ir::Expr prev = x;
  ir::Expr w_begin;
  std::string prev_target;
  for (int i = 0; i < n; ++i) {
    const std::string t = target_of(i);
    ir::Expr in = prev;
    const bool boundary = prev_target != t || (split && !t.empty());
    if (!prev_target.empty() && boundary) in = ir::compiler_end(in, prev_target);
    if (!t.empty() && boundary) in = ir::compiler_begin(in, t);
    // One begin of the shared input per region, as TVM's own tests annotate such chains.
    if (!t.empty() && boundary) w_begin = ir::compiler_begin(x, t);
    ir::Expr w = t.empty() ? ir::Expr(x) : w_begin;
    prev = ir::CallNode::make(ir::Op::kAdd, {in, w});
    prev_target = t;
  }
  if (!prev_target.empty()) prev = ir::compiler_end(prev, prev_target);
  ir::Module m;
  m.add("main", ir::FunctionNode::make({x}, prev));
  return m;
}

}  // namespace aotfuzz::test_support
