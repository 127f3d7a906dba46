// Structural equality (alpha-equivalence, sharing ignored) and a hash consistent with it.
#include "ir/structural.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ir/node_map.h"
#include "ir/traversal.h"

namespace aotfuzz::ir {
namespace {

std::size_t mix(std::size_t seed, std::size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

std::size_t hash_attrs(const Attrs& attrs) {
  std::size_t h = 0x41;
  for (const auto& [k, v] : attrs.entries()) {
    h = mix(h, std::hash<std::string>{}(k));
    h = mix(h, std::visit(
                   [](const auto& x) {
                     return std::hash<std::decay_t<decltype(x)>>{}(x);
                   },
                   v));
  }
  return h;
}

struct PairHash {
  std::size_t operator()(const std::pair<const ExprNode*, const ExprNode*>& p) const {
    return mix(std::hash<const void*>{}(p.first), std::hash<const void*>{}(p.second));
  }
};

}  // namespace

namespace {

// `closed`: `a` and `b` use no variable they do not bind.
bool equal_graphs(const Expr& a, const Expr& b, VarNames names, bool closed) {
  NodeMap<const ExprNode*> fwd, bwd;
  // The pairs already compared. Nearly every node of `a` meets one partner, kept flat in
  // `partner`; a node shared in `a` but not in `b` meets several, and the pairs past its first
  // partner go to `more`.
  NodeMap<const ExprNode*> partner;
  std::unordered_set<std::pair<const ExprNode*, const ExprNode*>, PairHash> more;
  auto first_visit = [&](const ExprNode* x, const ExprNode* y) {
    auto [p, inserted] = partner.try_emplace(x, y);
    return inserted || (*p != y && more.insert({x, y}).second);
  };
  if (const auto* fn = as<FunctionNode>(a)) partner.reserve(fn->body_order().size() + 1);
  std::vector<std::pair<const ExprNode*, const ExprNode*>> work{{a.get(), b.get()}};
  // In closed graphs, while every variable is matched to itself, a node shared by `a` and `b` is
  // equal to itself and is not walked: the variables it uses were bound before it was reached (a
  // function's parameters before its body), so they are matched to themselves too. Modules that
  // came out of the same input share most of their nodes.
  bool identity = closed;
  auto bind = [&](const ExprNode* x, const ExprNode* y) {
    if (const ExprNode* const* fx = fwd.find(x)) return *fx == y;
    if (bwd.contains(y)) return false;
    if (names == VarNames::kCompared && static_cast<const VarNode*>(x)->name() !=
                                            static_cast<const VarNode*>(y)->name()) {
      return false;
    }
    fwd.try_emplace(x, y);
    bwd.try_emplace(y, x);
    identity = identity && x == y;
    return true;
  };
  while (!work.empty()) {
    auto [x, y] = work.back();
    work.pop_back();
    if (x == nullptr || y == nullptr) {
      if (x != y) return false;
      continue;
    }
    if ((x == y && identity) || !first_visit(x, y)) continue;
    if (x->kind() != y->kind() || !type_equal(x->type(), y->type())) return false;
    switch (x->kind()) {
      case ExprKind::kVar:
        if (!bind(x, y)) return false;
        continue;
      case ExprKind::kGlobalVar:
        if (static_cast<const GlobalVarNode*>(x)->name() !=
            static_cast<const GlobalVarNode*>(y)->name()) {
          return false;
        }
        continue;
      case ExprKind::kConstant:
        if (static_cast<const ConstantNode*>(x)->values() !=
            static_cast<const ConstantNode*>(y)->values()) {
          return false;
        }
        continue;
      case ExprKind::kCall: {
        const auto* cx = static_cast<const CallNode*>(x);
        const auto* cy = static_cast<const CallNode*>(y);
        if (cx->op() != cy->op() || !(cx->attrs() == cy->attrs())) return false;
        break;
      }
      case ExprKind::kTupleGetItem:
        if (static_cast<const TupleGetItemNode*>(x)->index() !=
            static_cast<const TupleGetItemNode*>(y)->index()) {
          return false;
        }
        break;
      case ExprKind::kTuple:
        break;
      case ExprKind::kFunction: {
        const auto* fx = static_cast<const FunctionNode*>(x);
        const auto* fy = static_cast<const FunctionNode*>(y);
        if (!(fx->attrs() == fy->attrs()) || fx->params().size() != fy->params().size()) {
          return false;
        }
        for (std::size_t i = 0; i < fx->params().size(); ++i) {
          if (!bind(fx->params()[i].get(), fy->params()[i].get())) return false;
        }
        work.emplace_back(fx->body().get(), fy->body().get());
        continue;
      }
    }
    const std::size_t n = num_children(*x);
    if (num_children(*y) != n) return false;
    for (std::size_t i = n; i-- > 0;) work.emplace_back(child(*x, i).get(), child(*y, i).get());
  }
  return true;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b, VarNames names) {
  return equal_graphs(a, b, names, /*closed=*/false);
}

bool closed_functions_equal(const Function& a, const Function& b, VarNames names) {
  return equal_graphs(a, b, names, /*closed=*/true);
}

bool structural_equal(const Module& a, const Module& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.functions()[i].first != b.functions()[i].first) return false;
    if (!closed_functions_equal(a.functions()[i].second, b.functions()[i].second)) return false;
  }
  return true;
}

std::size_t structural_hash(const Expr& e) {
  auto order = post_order(e, /*enter_functions=*/true);
  std::unordered_map<const ExprNode*, std::size_t> h;
  // Parameters hash by position and type, so renaming them keeps the hash.
  for (const auto& node : order) {
    if (const auto* fn = as<FunctionNode>(node)) {
      for (std::size_t i = 0; i < fn->params().size(); ++i) {
        h[fn->params()[i].get()] = mix(mix(0x7a, i), fn->params()[i]->type()->hash());
      }
    }
  }
  for (const auto& node : order) {
    std::size_t v = mix(static_cast<std::size_t>(node->kind()) + 1, node->type()->hash());
    switch (node->kind()) {
      case ExprKind::kVar: {
        auto it = h.find(node.get());
        h[node.get()] = it != h.end() ? it->second : mix(0x7b, node->type()->hash());
        continue;
      }
      case ExprKind::kGlobalVar:
        v = mix(v, std::hash<std::string>{}(static_cast<const GlobalVarNode&>(*node).name()));
        break;
      case ExprKind::kConstant:
        for (std::int64_t x : static_cast<const ConstantNode&>(*node).values()) {
          v = mix(v, static_cast<std::size_t>(x));
        }
        break;
      case ExprKind::kCall: {
        const auto& call = static_cast<const CallNode&>(*node);
        v = mix(v, call.op() ? static_cast<std::size_t>(*call.op()) + 100 : 99);
        v = mix(v, hash_attrs(call.attrs()));
        break;
      }
      case ExprKind::kTupleGetItem:
        v = mix(v, static_cast<std::size_t>(static_cast<const TupleGetItemNode&>(*node).index()));
        break;
      case ExprKind::kTuple:
        break;
      case ExprKind::kFunction: {
        const auto& fn = static_cast<const FunctionNode&>(*node);
        v = mix(v, hash_attrs(fn.attrs()));
        v = mix(v, h.at(fn.body().get()));
        h[node.get()] = v;
        continue;
      }
    }
    for (const auto& kid : children(*node)) v = mix(v, h.at(kid.get()));
    h[node.get()] = v;
  }
  return h.at(e.get());
}

std::size_t structural_hash(const Module& m) {
  std::size_t v = 0x6d;
  for (const auto& [name, fn] : m.functions()) {
    v = mix(v, std::hash<std::string>{}(name));
    v = mix(v, structural_hash(fn));
  }
  return v;
}

}  // namespace aotfuzz::ir
