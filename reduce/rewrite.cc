// What the reductions share: @main rebuilt around a new body or new parameters, the nodes a
// reduction may cut at, and groups of independent targets to remove together.
#include "reduce/rewrite.h"

#include <set>
#include <unordered_map>

#include "ir/error.h"
#include "ir/structural.h"
#include "ir/traversal.h"

namespace aotfuzz::reduce {

const ir::Function& main_of(const ir::Module& m) { return m.main(); }

ir::Module with_main(const ir::Module& m, std::vector<ir::Var> params, ir::Expr body) {
  ir::Module out = m;
  out.replace("main",
              ir::FunctionNode::make(std::move(params), std::move(body), main_of(m)->attrs()));
  return out;
}

ir::Module with_body(const ir::Module& m, ir::Expr body) {
  return with_main(m, main_of(m)->params(), std::move(body));
}

bool is_value_node(const ir::Expr& e) {
  return e->kind() != ir::ExprKind::kVar && e->kind() != ir::ExprKind::kGlobalVar &&
         e->kind() != ir::ExprKind::kFunction;
}

bool is_call_of(const ir::ExprNode* node, ir::Op op) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(op);
}

std::vector<ir::Expr> nodes_root_first(const ir::Module& m) {
  auto order = ir::post_order(main_of(m)->body());
  std::vector<ir::Expr> out;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (is_value_node(*it)) out.push_back(*it);
  }
  return out;
}

std::optional<ir::RegionSet> regions_of(const ir::Module& m) {
  try {
    return ir::RegionSet::build(main_of(m)->body());
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

std::string fresh_param_name(const std::vector<ir::Var>& params, const std::string& stem) {
  std::set<std::string> used;
  for (const auto& p : params) used.insert(p->name());
  for (int k = 0;; ++k) {
    std::string name = stem + std::to_string(k);
    if (!used.count(name)) return name;
  }
}

ir::Type map_tensors(const ir::Type& type, const std::function<ir::Type(const ir::Type&)>& fn) {
  if (type->is_tensor()) return fn(type);
  std::vector<ir::Type> fields;
  for (const auto& f : type->fields()) fields.push_back(map_tensors(f, fn));
  return ir::TypeNode::tuple(std::move(fields));
}

ir::Module retype_params(const ir::Module& m, const std::function<ir::Type(const ir::Type&)>& fn) {
  const auto& main = main_of(m);
  std::unordered_map<const ir::ExprNode*, ir::Expr> map;
  std::vector<ir::Var> params;
  bool changed = false;
  for (const auto& p : main->params()) {
    ir::Type t = map_tensors(p->type(), fn);
    if (ir::type_equal(t, p->type())) {
      params.push_back(p);
      continue;
    }
    changed = true;
    ir::Var np = ir::VarNode::make(p->name(), t);
    map[p.get()] = np;
    params.push_back(np);
  }
  if (!changed) throw ir::Error("no parameter changes");
  return with_main(m, std::move(params), ir::substitute(main->body(), map));
}

std::set<std::string> targets_of(const ir::Module& m) {
  std::set<std::string> targets;
  for (const auto& n : ir::post_order(main_of(m)->body())) {
    if (auto t = ir::annotation_target(n.get())) targets.insert(*t);
  }
  return targets;
}

std::vector<std::vector<std::size_t>> chunks_then_singles(std::size_t n) {
  std::vector<std::vector<std::size_t>> out;
  // Halves, quarters, ... of at least two targets: when most targets can go, a few steps take
  // them instead of one step each; the singles after them keep the result 1-minimal.
  for (std::size_t parts = 2; n >= 4 && n / parts >= 2; parts *= 2) {
    for (std::size_t p = 0; p < parts; ++p) {
      const std::size_t begin = n * p / parts, end = n * (p + 1) / parts;
      std::vector<std::size_t> chunk;
      for (std::size_t i = begin; i < end; ++i) chunk.push_back(i);
      out.push_back(std::move(chunk));
    }
  }
  for (std::size_t i = 0; i < n; ++i) out.push_back({i});
  return out;
}

}  // namespace aotfuzz::reduce
