// Graph mutations for the custom libFuzzer mutator: each picks a place in @main with the Rng,
// rebuilds the body with ir::rewrite (iterative), and keeps the result only if it verifies.
#include "generator/mutator.h"

#include <algorithm>
#include <unordered_set>

#include "ir/error.h"
#include "ir/regions.h"
#include "ir/traversal.h"
#include "ir/verify.h"

namespace aotfuzz::generator {
namespace {

using ir::Expr;

// @main's body with its regions and host-side tensor values.
struct View {
  ir::Function main;
  std::vector<Expr> nodes;  // post order, function bodies not entered
  ir::RegionSet regions;
  std::vector<Expr> host_tensors;    // parameters, ends, host ops and host TupleGetItems
  std::vector<std::string> targets;  // region targets met, plus the usual ones
};

bool is_end(const Expr& e) {
  return ir::as<ir::CallNode>(e) && ir::as<ir::CallNode>(e)->is_op(ir::Op::kCompilerEnd);
}
bool is_begin(const Expr& e) {
  return ir::as<ir::CallNode>(e) && ir::as<ir::CallNode>(e)->is_op(ir::Op::kCompilerBegin);
}
bool is_elementwise_call(const Expr& e) {
  const auto* c = ir::as<ir::CallNode>(e);
  return c != nullptr && c->op() && ir::is_elementwise(*c->op());
}

View make_view(const ir::Module& module) {
  View v{module.main(),
         ir::post_order(module.main()->body()),
         ir::RegionSet::build(module.main()->body()),
         {},
         {"ccompiler", "default"}};
  for (const auto& p : v.main->params()) {
    if (p->type()->is_tensor()) v.host_tensors.push_back(p);
  }
  for (const auto& n : v.nodes) {
    if (!n->type()->is_tensor() || n->kind() == ir::ExprKind::kVar) continue;
    const bool host = v.regions.region_of(n.get()) == nullptr || is_end(n);
    if (host && (n->kind() == ir::ExprKind::kCall || n->kind() == ir::ExprKind::kTupleGetItem)) {
      v.host_tensors.push_back(n);
    }
  }
  for (const auto* r : v.regions.regions()) {
    if (std::find(v.targets.begin(), v.targets.end(), r->target) == v.targets.end()) {
      v.targets.push_back(r->target);
    }
  }
  return v;
}

template <class T>
const T& pick(const std::vector<T>& xs, ir::Rng& rng) {
  return xs[rng.below(xs.size())];
}

// The module with @main's body (and parameters) replaced, if it verifies.
std::optional<ir::Module> rebuild(const ir::Module& module, std::vector<ir::Var> params,
                                  Expr body) {
  try {
    auto fn = ir::FunctionNode::make(std::move(params), std::move(body), module.main()->attrs());
    ir::Module out = module;
    out.replace("main", fn);
    ir::verify(out);
    return out;
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

std::optional<ir::Module> rebuild(const ir::Module& module, Expr body) {
  return rebuild(module, module.main()->params(), std::move(body));
}

// `body` with `value` as one more output (a field of the result tuple).
Expr with_output(const Expr& body, const Expr& value) {
  if (const auto* t = ir::as<ir::TupleNode>(body)) {
    auto fields = t->fields();
    fields.push_back(value);
    return ir::TupleNode::make(std::move(fields));
  }
  return ir::TupleNode::make({body, value});
}

ir::Op random_op(ir::Rng& rng) {
  const auto r = rng.below(10);
  return r < 8 ? ir::Op::kAdd : (r == 8 ? ir::Op::kSubtract : ir::Op::kMultiply);
}

// A second operand for `a`: another host value, `a` itself, or a new parameter of a's type.
Expr partner(const View& v, const Expr& a, std::vector<ir::Var>& params, ir::Rng& rng) {
  const auto r = rng.below(4);
  if (r == 0) return a;
  if (r == 1) {
    auto p = ir::VarNode::make("m" + std::to_string(params.size()), a->type());
    params.push_back(p);
    return p;
  }
  return pick(v.host_tensors, rng);
}

std::optional<ir::Module> add_op(const ir::Module& module, const View& v, bool in_region,
                                 ir::Rng& rng) {
  if (v.host_tensors.empty()) return std::nullopt;
  auto params = v.main->params();
  const Expr a = pick(v.host_tensors, rng);
  const Expr b = partner(v, a, params, rng);
  try {
    Expr op;
    if (in_region) {
      const std::string& t = pick(v.targets, rng);
      op = ir::compiler_end(
          ir::CallNode::make(random_op(rng), {ir::compiler_begin(a, t), ir::compiler_begin(b, t)}),
          t);
    } else {
      op = ir::CallNode::make(random_op(rng), {a, b});
    }
    return rebuild(module, std::move(params), with_output(v.main->body(), op));
  } catch (const ir::Error&) {
    return std::nullopt;  // operand types that do not broadcast
  }
}

std::optional<ir::Module> wrap_in_region(const ir::Module& module, const View& v, ir::Rng& rng) {
  std::vector<Expr> ops;
  for (const auto& n : v.nodes) {
    if (is_elementwise_call(n) && v.regions.region_of(n.get()) == nullptr) ops.push_back(n);
  }
  if (ops.empty()) return std::nullopt;
  const ir::ExprNode* target = pick(ops, rng).get();
  const std::string& t = pick(v.targets, rng);
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (old.get() != target) return ir::with_children(old, std::move(kids));
    for (auto& k : kids) k = ir::compiler_begin(k, t);
    return ir::compiler_end(ir::with_children(old, std::move(kids)), t);
  });
  return rebuild(module, body);
}

std::unordered_set<const ir::ExprNode*> annotations_of(const ir::Region& r) {
  std::unordered_set<const ir::ExprNode*> out;
  for (const auto& e : r.ins) out.insert(e.get());
  for (const auto& e : r.outs) out.insert(e.get());
  return out;
}

std::optional<ir::Module> remove_region(const ir::Module& module, const View& v, ir::Rng& rng) {
  const auto regions = v.regions.regions();
  if (regions.empty()) return std::nullopt;
  const auto drop = annotations_of(*pick(regions, rng));
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (drop.count(old.get())) return kids[0];
    return ir::with_children(old, std::move(kids));
  });
  return rebuild(module, body);
}

std::optional<ir::Module> retarget_region(const ir::Module& module, const View& v, ir::Rng& rng) {
  const auto regions = v.regions.regions();
  if (regions.empty()) return std::nullopt;
  const ir::Region& r = *pick(regions, rng);
  std::string t = pick(v.targets, rng);
  if (t == r.target) t = r.target == "ccompiler" ? "default" : "ccompiler";
  const auto change = annotations_of(r);
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (!change.count(old.get())) return ir::with_children(old, std::move(kids));
    return is_begin(old) ? ir::compiler_begin(kids[0], t) : ir::compiler_end(kids[0], t);
  });
  return rebuild(module, body);
}

std::optional<ir::Module> split_region(const ir::Module& module, const View& v, ir::Rng& rng) {
  // (user, operand index) pairs where the operand is an op of the user's region.
  std::vector<std::pair<const ir::ExprNode*, std::size_t>> edges;
  std::vector<std::string> edge_target;
  for (const auto& n : v.nodes) {
    const auto* region = v.regions.region_of(n.get());
    if (region == nullptr || !is_elementwise_call(n)) continue;
    const auto& args = ir::as<ir::CallNode>(n)->args();
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (is_elementwise_call(args[k]) && v.regions.region_of(args[k].get()) == region) {
        edges.emplace_back(n.get(), k);
        edge_target.push_back(region->target);
      }
    }
  }
  if (edges.empty()) return std::nullopt;
  const std::size_t e = rng.below(edges.size());
  const ir::ExprNode* user = edges[e].first;
  const std::size_t k = edges[e].second;
  const std::string t = edge_target[e];
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (old.get() == user) kids[k] = ir::compiler_begin(ir::compiler_end(kids[k], t), t);
    return ir::with_children(old, std::move(kids));
  });
  return rebuild(module, body);
}

std::optional<ir::Module> merge_regions(const ir::Module& module, const View& v, ir::Rng& rng) {
  std::vector<const ir::ExprNode*> begins;
  for (const auto& n : v.nodes) {
    if (!is_begin(n)) continue;
    const auto& arg = ir::as<ir::CallNode>(n)->args()[0];
    if (is_end(arg) && ir::annotation_target(arg.get()) == ir::annotation_target(n.get())) {
      begins.push_back(n.get());
    }
  }
  if (begins.empty()) return std::nullopt;
  const ir::ExprNode* drop = pick(begins, rng);
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (old.get() == drop) return ir::as<ir::CallNode>(kids[0])->args()[0];
    return ir::with_children(old, std::move(kids));
  });
  return rebuild(module, body);
}

std::optional<ir::Module> expose_value(const ir::Module& module, const View& v, ir::Rng& rng) {
  std::vector<Expr> inner;
  for (const auto& n : v.nodes) {
    if (is_elementwise_call(n) && v.regions.region_of(n.get()) != nullptr) inner.push_back(n);
  }
  if (inner.empty()) return std::nullopt;
  const Expr x = pick(inner, rng);
  const std::string t = v.regions.region_of(x.get())->target;
  return rebuild(module, with_output(v.main->body(), ir::compiler_end(x, t)));
}

std::optional<ir::Module> add_output(const ir::Module& module, const View& v, ir::Rng& rng) {
  if (v.host_tensors.empty()) return std::nullopt;
  return rebuild(module, with_output(v.main->body(), pick(v.host_tensors, rng)));
}

std::optional<ir::Module> wrap_in_tuple(const ir::Module& module, const View& v, ir::Rng& rng) {
  std::vector<Expr> used;
  for (const auto& n : v.host_tensors) {
    if (n->kind() != ir::ExprKind::kVar ||
        std::find(v.nodes.begin(), v.nodes.end(), n) != v.nodes.end()) {
      used.push_back(n);
    }
  }
  if (used.empty()) return std::nullopt;
  const Expr x = pick(used, rng);
  // The other field: x again or a parameter, so it cannot depend on x.
  const auto& params = v.main->params();
  const Expr other = params.empty() || rng.chance(0.5) ? x : Expr(pick(params, rng));
  const bool first = rng.chance(0.5);
  const Expr tuple = first ? ir::TupleNode::make({x, other}) : ir::TupleNode::make({other, x});
  const Expr get = ir::TupleGetItemNode::make(tuple, first ? 0 : 1);
  return rebuild(module, ir::substitute(v.main->body(), {{x.get(), get}}));
}

// Whether `from` is reachable from `root` through children (so `root` depends on it).
bool depends_on(const Expr& root, const ir::ExprNode* from) {
  for (const auto& n : ir::post_order(root)) {
    if (n.get() == from) return true;
  }
  return false;
}

std::optional<ir::Module> replace_operand(const ir::Module& module, const View& v, ir::Rng& rng) {
  std::vector<std::pair<const ir::ExprNode*, std::size_t>> sites;
  for (const auto& n : v.nodes) {
    const bool host_op = is_elementwise_call(n) && v.regions.region_of(n.get()) == nullptr;
    if (!host_op && !is_begin(n)) continue;
    const auto& args = ir::as<ir::CallNode>(n)->args();
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (args[k]->type()->is_tensor()) sites.emplace_back(n.get(), k);
    }
  }
  if (sites.empty()) return std::nullopt;
  const auto& site = pick(sites, rng);
  const ir::ExprNode* user = site.first;
  const std::size_t k = site.second;
  const Expr old_arg = ir::as<ir::CallNode>(user)->args()[k];
  auto params = v.main->params();
  Expr replacement;
  std::vector<Expr> same_type;
  for (const auto& h : v.host_tensors) {
    if (h != old_arg && ir::type_equal(h->type(), old_arg->type()) && !depends_on(h, user)) {
      same_type.push_back(h);
    }
  }
  if (same_type.empty() || rng.chance(0.3)) {
    // Appended to a named string: GCC 12 warns (-Wrestrict) on "m" + a temporary at -O2.
    std::string name = "m";
    name += std::to_string(params.size());
    auto p = ir::VarNode::make(name, old_arg->type());
    params.push_back(p);
    replacement = p;
  } else {
    replacement = pick(same_type, rng);
  }
  Expr body = ir::rewrite(v.main->body(), [&](const Expr& old, std::vector<Expr> kids) -> Expr {
    if (old.get() == user) kids[k] = replacement;
    return ir::with_children(old, std::move(kids));
  });
  return rebuild(module, std::move(params), body);
}

}  // namespace

std::string_view graph_mutation_name(GraphMutation m) {
  switch (m) {
    case GraphMutation::kAddRegionOp:
      return "add-region-op";
    case GraphMutation::kAddHostOp:
      return "add-host-op";
    case GraphMutation::kWrapInRegion:
      return "wrap-in-region";
    case GraphMutation::kRemoveRegion:
      return "remove-region";
    case GraphMutation::kSplitRegion:
      return "split-region";
    case GraphMutation::kMergeRegions:
      return "merge-regions";
    case GraphMutation::kRetargetRegion:
      return "retarget-region";
    case GraphMutation::kExposeValue:
      return "expose-value";
    case GraphMutation::kAddOutput:
      return "add-output";
    case GraphMutation::kWrapInTuple:
      return "wrap-in-tuple";
    case GraphMutation::kReplaceOperand:
      return "replace-operand";
    case GraphMutation::kCount:
      break;
  }
  return "?";
}

std::optional<ir::Module> mutate_graph(const ir::Module& module, GraphMutation mutation,
                                       ir::Rng& rng) {
  try {
    const View v = make_view(module);
    switch (mutation) {
      case GraphMutation::kAddRegionOp:
        return add_op(module, v, true, rng);
      case GraphMutation::kAddHostOp:
        return add_op(module, v, false, rng);
      case GraphMutation::kWrapInRegion:
        return wrap_in_region(module, v, rng);
      case GraphMutation::kRemoveRegion:
        return remove_region(module, v, rng);
      case GraphMutation::kSplitRegion:
        return split_region(module, v, rng);
      case GraphMutation::kMergeRegions:
        return merge_regions(module, v, rng);
      case GraphMutation::kRetargetRegion:
        return retarget_region(module, v, rng);
      case GraphMutation::kExposeValue:
        return expose_value(module, v, rng);
      case GraphMutation::kAddOutput:
        return add_output(module, v, rng);
      case GraphMutation::kWrapInTuple:
        return wrap_in_tuple(module, v, rng);
      case GraphMutation::kReplaceOperand:
        return replace_operand(module, v, rng);
      case GraphMutation::kCount:
        break;
    }
  } catch (const ir::Error&) {
    // A module without @main or with broken annotations offers no place to mutate.
  }
  return std::nullopt;
}

std::optional<ir::Module> mutate_graph(const ir::Module& module, ir::Rng& rng, int attempts) {
  for (int i = 0; i < attempts; ++i) {
    const auto m = static_cast<GraphMutation>(rng.below(static_cast<int>(GraphMutation::kCount)));
    if (auto out = mutate_graph(module, m, rng)) return out;
  }
  return std::nullopt;
}

std::optional<ir::Module> cross_graphs(const ir::Module& a, const ir::Module& b, ir::Rng& rng) {
  if (a.size() != 1 || b.size() != 1 || a.find("main") == nullptr || b.find("main") == nullptr) {
    return std::nullopt;
  }
  auto outputs = [](const ir::Function& main) {
    if (const auto* t = ir::as<ir::TupleNode>(main->body())) return t->fields();
    return std::vector<Expr>{main->body()};
  };
  std::vector<ir::Var> params = a.main()->params();
  for (const auto& p : b.main()->params()) params.push_back(p);
  std::vector<Expr> fields = outputs(a.main());
  for (const auto& f : outputs(b.main())) fields.push_back(f);
  if (rng.chance(0.5)) {
    // One host op joining the two graphs.
    const View va = make_view(a);
    const View vb = make_view(b);
    if (!va.host_tensors.empty() && !vb.host_tensors.empty()) {
      try {
        fields.push_back(ir::CallNode::make(
            ir::Op::kAdd, {pick(va.host_tensors, rng), pick(vb.host_tensors, rng)}));
      } catch (const ir::Error&) {
        // The picked values do not broadcast: side by side only.
      }
    }
  }
  return rebuild(a, std::move(params), ir::TupleNode::make(std::move(fields)));
}

ir::Module mutant(const ir::Module& module, std::uint64_t seed) {
  ir::Rng rng(seed);
  const int rounds = 1 + static_cast<int>(rng.below(4));
  ir::Module out = module;
  for (int i = 0; i < rounds; ++i) {
    if (auto next = mutate_graph(out, rng)) out = *next;
  }
  return out;
}

}  // namespace aotfuzz::generator
