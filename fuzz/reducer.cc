// The graph-aware reducer: candidate steps per pass, a verdict cache keyed by graph structure, and
// batches of candidates evaluated on several threads with a deterministic choice.
#include "fuzz/reducer.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "fuzz/verdict_cache.h"
#include "ir/error.h"
#include "ir/regions.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
/// Builds one candidate; may throw ir::Error when the step does not apply.
using CandidateFn = ReductionCandidate;

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

// The non-variable nodes of @main's body, closest to the result first (big cuts first).
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

// A parameter name not used by any parameter of `params`.
std::string fresh_param_name(const std::vector<ir::Var>& params, const std::string& stem) {
  std::set<std::string> used;
  for (const auto& p : params) used.insert(p->name());
  for (int k = 0;; ++k) {
    std::string name = stem + std::to_string(k);
    if (!used.count(name)) return name;
  }
}

// `type` with every tensor rewritten by `fn` (tuple nesting is bounded by kMaxTypeDepth).
ir::Type map_tensors(const ir::Type& type, const std::function<ir::Type(const ir::Type&)>& fn) {
  if (type->is_tensor()) return fn(type);
  std::vector<ir::Type> fields;
  for (const auto& f : type->fields()) fields.push_back(map_tensors(f, fn));
  return ir::TypeNode::tuple(std::move(fields));
}

// @main with every parameter retyped by `fn`, the body rebuilt (and re-typed) on top.
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

// ---------------------------------------------------------------------------------------------
// The passes: each appends its candidates for `m`, in the order they are tried.

void drop_outputs(const ir::Module& m, std::vector<CandidateFn>& out) {
  auto tup = ir::as_ptr<ir::TupleNode>(main_of(m)->body());
  if (!tup) return;
  const auto fields = tup->fields();
  if (fields.size() == 1) {
    out.push_back([m, fields] { return with_body(m, fields[0]); });
    return;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.push_back([m, fields, i] { return with_body(m, fields[i]); });
  }
  if (fields.size() < 3) return;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.push_back([m, fields, i] {
      std::vector<ir::Expr> kept = fields;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
      return with_body(m, ir::TupleNode::make(std::move(kept)));
    });
  }
}

void replace_with_input(const ir::Module& m, std::vector<CandidateFn>& out) {
  auto rs = regions_of(m);
  if (!rs) return;
  const auto& params = main_of(m)->params();
  for (const auto& node : nodes_root_first(m)) {
    if (!node->type()->is_tensor()) continue;
    if (is_call_of(node.get(), ir::Op::kCompilerBegin)) continue;
    const bool is_end = is_call_of(node.get(), ir::Op::kCompilerEnd);
    if (!is_end && rs->region_of(node.get()) != nullptr) continue;
    ir::Var existing;
    for (const auto& p : params) {
      if (ir::type_equal(p->type(), node->type())) {
        existing = p;
        break;
      }
    }
    out.push_back([m, node, existing] {
      const auto& main = main_of(m);
      std::vector<ir::Var> ps = main->params();
      ir::Var with = existing;
      if (!with) {
        with = ir::VarNode::make(fresh_param_name(ps, "r"), node->type());
        ps.push_back(with);
      }
      auto body = ir::substitute(main->body(), {{node.get(), with}});
      return with_main(m, std::move(ps), std::move(body));
    });
  }
}

void remove_region(const ir::Module& m, std::vector<CandidateFn>& out) {
  auto rs = regions_of(m);
  if (!rs) return;
  for (const ir::Region* r : rs->regions()) {
    auto drop = std::make_shared<std::unordered_set<const ir::ExprNode*>>();
    for (const auto& e : r->ins) drop->insert(e.get());
    for (const auto& e : r->outs) drop->insert(e.get());
    out.push_back([m, drop] {
      auto body = ir::rewrite(main_of(m)->body(),
                              [&](const ir::Expr& old, std::vector<ir::Expr> kids) -> ir::Expr {
                                if (drop->count(old.get())) return kids.at(0);
                                return ir::with_children(old, std::move(kids));
                              });
      return with_body(m, body);
    });
  }
}

void replace_with_operand(const ir::Module& m, std::vector<CandidateFn>& out) {
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

void drop_tuple_field(const ir::Module& m, std::vector<CandidateFn>& out) {
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

void merge_inputs(const ir::Module& m, std::vector<CandidateFn>& out) {
  const auto& params = main_of(m)->params();
  for (std::size_t j = 1; j < params.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (!ir::type_equal(params[i]->type(), params[j]->type())) continue;
      out.push_back([m, i, j] {
        const auto& main = main_of(m);
        std::vector<ir::Var> ps = main->params();
        auto body = ir::substitute(main->body(), {{ps[j].get(), ps[i]}});
        ps.erase(ps.begin() + static_cast<std::ptrdiff_t>(j));
        return with_main(m, std::move(ps), std::move(body));
      });
      break;  // the earliest match is enough: the others have the same type
    }
  }
}

void remove_unused_inputs(const ir::Module& m, std::vector<CandidateFn>& out) {
  const auto& main = main_of(m);
  std::unordered_set<const ir::ExprNode*> used;
  for (const auto& n : ir::post_order(main->body())) used.insert(n.get());
  std::vector<std::size_t> unused;
  for (std::size_t i = 0; i < main->params().size(); ++i) {
    if (!used.count(main->params()[i].get())) unused.push_back(i);
  }
  if (unused.empty()) return;
  auto without = [m](std::vector<std::size_t> drop) {
    return [m, drop] {
      std::vector<ir::Var> ps;
      const auto& all = main_of(m)->params();
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (std::find(drop.begin(), drop.end(), i) == drop.end()) ps.push_back(all[i]);
      }
      return with_main(m, std::move(ps), main_of(m)->body());
    };
  };
  out.push_back(without(unused));
  if (unused.size() < 2) return;
  for (auto i : unused) out.push_back(without({i}));
}

std::set<std::string> targets_of(const ir::Module& m) {
  std::set<std::string> targets;
  for (const auto& n : ir::post_order(main_of(m)->body())) {
    if (auto t = ir::annotation_target(n.get())) targets.insert(*t);
  }
  return targets;
}

void unify_targets(const ir::Module& m, std::vector<CandidateFn>& out) {
  const auto targets = targets_of(m);
  std::string canonical;
  if (targets.count("ccompiler")) {
    canonical = "ccompiler";
  } else {
    for (const auto& t : targets) {
      if (t != "default") {
        canonical = t;
        break;
      }
    }
  }
  if (canonical.empty()) return;
  std::vector<std::string> order;
  for (const auto& t : targets) {
    if (t != canonical && t != "default") order.push_back(t);
  }
  if (targets.count("default")) order.push_back("default");
  for (const auto& from : order) {
    out.push_back([m, from, canonical] {
      auto body = ir::rewrite(
          main_of(m)->body(), [&](const ir::Expr& old, std::vector<ir::Expr> kids) -> ir::Expr {
            auto t = ir::annotation_target(old.get());
            if (!t || *t != from) return ir::with_children(old, kids);
            const auto* call = ir::as<ir::CallNode>(old);
            return ir::CallNode::make(*call->op(), std::move(kids),
                                      call->attrs().with("compiler", canonical));
          });
      return with_body(m, body);
    });
  }
}

void convert_dtype(const ir::Module& m, std::vector<CandidateFn>& out) {
  bool any = false;
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) any |= t->dtype() != ir::DType::kFloat32;
  }
  if (!any) return;
  out.push_back([m] {
    return retype_params(
        m, [](const ir::Type& t) { return ir::TypeNode::tensor(t->shape(), ir::DType::kFloat32); });
  });
}

void shrink_shapes(const ir::Module& m, std::vector<CandidateFn>& out) {
  std::size_t max_rank = 0;
  bool all_unit = true;
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      max_rank = std::max(max_rank, t->shape().size());
      all_unit &= t->shape() == std::vector<std::int64_t>{1};
    }
  }
  if (all_unit) return;
  out.push_back([m] {
    return retype_params(m,
                         [](const ir::Type& t) { return ir::TypeNode::tensor({1}, t->dtype()); });
  });
  if (max_rank > 1) {
    out.push_back([m, max_rank] {
      return retype_params(m, [max_rank](const ir::Type& t) {
        if (t->shape().size() != max_rank) return t;
        std::vector<std::int64_t> s(t->shape().begin() + 1, t->shape().end());
        return ir::TypeNode::tensor(std::move(s), t->dtype());
      });
    });
  }
  // Axis `a` counts from the right, so broadcasting partners change together.
  for (std::size_t a = 0; a < max_rank; ++a) {
    for (bool halve : {false, true}) {
      out.push_back([m, a, halve] {
        return retype_params(m, [a, halve](const ir::Type& t) {
          auto s = t->shape();
          if (s.size() <= a) return t;
          auto& d = s[s.size() - 1 - a];
          d = halve ? (d + 1) / 2 : std::min<std::int64_t>(d, 1);
          return ir::TypeNode::tensor(std::move(s), t->dtype());
        });
      });
    }
  }
}

// Whether a parameter tensor of @main has a rank below `min_rank`.
bool has_rank_below(const ir::Module& m, std::size_t min_rank) {
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      if (t->shape().size() < min_rank) return true;
    }
  }
  return false;
}

// Builds and verifies a candidate; nullopt when the step does not apply.
std::optional<ir::Module> materialize(const CandidateFn& fn) {
  try {
    ir::Module c = fn();
    ir::verify(c);
    return c;
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

// One run of reduce(): the module reduced so far, the verdicts of the candidates so far, and the
// figures it reports.
class Reduction {
 public:
  Reduction(const Predicate& keep, const ReduceOptions& options)
      : keep_(keep),
        options_(options),
        t0_(Clock::now()),
        jobs_(static_cast<std::size_t>(std::max(1, options.jobs))) {}

  ReduceResult run(const ir::Module& module) {
    result_.module = module;
    result_.before = result_.after = module_size(module);
    ++result_.evaluated;
    if (!interesting(module)) return finish();
    cache_.insert(module, ir::structural_hash(module), true);
    current_ = module;
    current_cx_ = complexity(current_);
    const std::vector<ReductionPass> passes = passes_to_run();
    for (bool changed = true; changed && !cut_;) {
      changed = false;
      for (ReductionPass pass : passes) {
        if (reduce_with(pass)) changed = true;
        if (cut_) break;
      }
    }
    result_.minimal = !cut_;
    return finish();
  }

 private:
  // A candidate of a batch: its position in its pass's list, and its verdict once known.
  struct Candidate {
    ir::Module module;
    std::size_t hash;
    std::size_t pos;
    std::optional<bool> verdict;
  };

  std::vector<ReductionPass> passes_to_run() const {
    std::vector<ReductionPass> passes = options_.passes;
    if (passes.empty()) {
      for (const auto& row : reduction_pass_table()) passes.push_back(row.pass);
    }
    return passes;
  }

  bool interesting(const ir::Module& m) const {
    try {
      return keep_(m);
    } catch (...) {
      return false;
    }
  }

  bool should_stop() const {
    if (options_.stop != nullptr && options_.stop->load()) return true;
    return options_.time_limit.count() > 0 && Clock::now() - t0_ >= options_.time_limit;
  }

  // Takes steps of `pass`, each its first candidate (in candidate order) that is kept, going on
  // near where the last one was found, until none is or the reduction is cut short. Whether it
  // took one.
  bool reduce_with(ReductionPass pass) {
    bool stepped = false;
    std::size_t resume = 0;
    while (!cut_) {
      std::vector<CandidateFn> fns;
      reduction_pass_table().at(static_cast<std::size_t>(pass)).enumerate(current_, fns);
      std::optional<Candidate> kept = first_kept(fns, std::min(resume, fns.size()));
      if (!kept) break;
      resume = kept->pos;
      accept(pass, std::move(kept->module));
      stepped = true;
    }
    return stepped;
  }

  // The first candidate from `idx` on that is kept, judged a batch at a time; nullopt when none
  // is, or when the reduction is cut short first (cut_).
  std::optional<Candidate> first_kept(const std::vector<CandidateFn>& fns, std::size_t idx) {
    while (idx < fns.size()) {
      if (should_stop()) {
        cut_ = true;
        return std::nullopt;
      }
      std::vector<Candidate> batch = next_batch(fns, idx);
      judge(batch);
      for (auto& c : batch) {
        if (*c.verdict) return std::move(c);
      }
    }
    return std::nullopt;
  }

  bool below_min_rank(const ir::Module& m) const {
    return options_.min_rank > 0 && has_rank_below(m, options_.min_rank);
  }

  // The candidates from `idx` on, in order, up to `jobs` the cache cannot answer, or fewer ending
  // at one the cache says is kept. Left out: candidates that do not apply, do not lower
  // complexity(), or that the cache says are not kept. Advances `idx` past them.
  std::vector<Candidate> next_batch(const std::vector<CandidateFn>& fns, std::size_t& idx) {
    std::vector<Candidate> batch;
    std::size_t pending = 0;
    while (idx < fns.size() && pending < jobs_) {
      const std::size_t pos = idx++;
      auto c = materialize(fns[pos]);
      if (!c || !(complexity(*c) < current_cx_) || below_min_rank(*c)) {
        ++result_.rejected;
        continue;
      }
      const std::size_t hash = ir::structural_hash(*c);
      if (const std::optional<bool> known = cache_.find(*c, hash)) {
        ++result_.cache_hits;
        if (!*known) continue;
        batch.push_back({std::move(*c), hash, pos, true});
        break;
      }
      batch.push_back({std::move(*c), hash, pos, std::nullopt});
      ++pending;
    }
    return batch;
  }

  // Judges the candidates of `batch` the cache could not answer, in parallel: a thread each but
  // the first, which this thread judges.
  void judge(std::vector<Candidate>& batch) {
    std::vector<Candidate*> todo;
    for (auto& c : batch) {
      if (!c.verdict) todo.push_back(&c);
    }
    std::vector<char> answers(todo.size(), 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < todo.size(); ++t) {
      threads.emplace_back([&, t] { answers[t] = interesting(todo[t]->module) ? 1 : 0; });
    }
    if (!todo.empty()) answers[0] = interesting(todo[0]->module) ? 1 : 0;
    for (auto& th : threads) th.join();
    for (std::size_t t = 0; t < todo.size(); ++t) {
      todo[t]->verdict = answers[t] != 0;
      cache_.insert(todo[t]->module, todo[t]->hash, answers[t] != 0);
    }
    result_.evaluated += todo.size();
  }

  void accept(ReductionPass pass, ir::Module m) {
    current_ = std::move(m);
    current_cx_ = complexity(current_);
    result_.module = current_;
    ++result_.steps;
    ++result_.steps_per_pass[std::string(reduction_pass_table()[static_cast<unsigned>(pass)].name)];
    if (options_.on_step) options_.on_step(pass, current_);
  }

  ReduceResult finish() {
    result_.after = module_size(result_.module);
    result_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_);
    return std::move(result_);
  }

  const Predicate& keep_;
  const ReduceOptions& options_;
  const Clock::time_point t0_;
  const std::size_t jobs_;
  VerdictCache cache_;
  ir::Module current_;
  Complexity current_cx_{};
  bool cut_ = false;
  ReduceResult result_;
};

}  // namespace

const std::vector<ReductionPassInfo>& reduction_pass_table() {
  static const std::vector<ReductionPassInfo> kTable = {
#define AOTFUZZ_REDUCTION(id, name, enumerator, description) \
  {ReductionPass::id, name, &enumerator, description},
#include "fuzz/reduction_passes.def"
#undef AOTFUZZ_REDUCTION
  };
  return kTable;
}

std::optional<ReductionPass> parse_reduction_pass(std::string_view name) {
  for (const auto& row : reduction_pass_table()) {
    if (row.name == name) return row.pass;
  }
  return std::nullopt;
}

ModuleSize module_size(const ir::Module& module) {
  ModuleSize s;
  s.inputs = module.main()->params().size();
  for (const auto& [name, fn] : module.functions()) {
    for (const auto& n : ir::post_order(fn->body(), /*enter_functions=*/true)) {
      const auto* call = ir::as<ir::CallNode>(n);
      if (call == nullptr || !call->op()) continue;
      if (ir::is_elementwise(*call->op())) ++s.ops;
      if (ir::is_annotation(*call->op())) ++s.annotations;
    }
  }
  for (const auto& n : ir::post_order(module.main()->body())) s.nodes += is_value_node(n) ? 1 : 0;
  return s;
}

Complexity complexity(const ir::Module& module) {
  Complexity c{};
  const auto& main = module.main();
  for (const auto& n : ir::post_order(main->body())) {
    if (n->kind() == ir::ExprKind::kVar) continue;
    c[0] += 1 + ir::children(*n).size();
  }
  c[1] = main->params().size();
  c[2] = targets_of(module).size();
  for (const auto& p : main->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      c[3] += t->dtype() != ir::DType::kFloat32 ? 1 : 0;
      c[4] += t->shape().size();
      c[5] += static_cast<std::uint64_t>(std::max<std::int64_t>(t->num_elements(), 0));
    }
  }
  return c;
}

std::vector<ir::Module> reduction_candidates(const ir::Module& module, ReductionPass pass) {
  std::vector<CandidateFn> fns;
  reduction_pass_table().at(static_cast<std::size_t>(pass)).enumerate(module, fns);
  std::vector<ir::Module> out;
  for (const auto& fn : fns) {
    if (auto c = materialize(fn)) out.push_back(std::move(*c));
  }
  return out;
}

ReduceResult reduce(const ir::Module& module, const Predicate& keep, const ReduceOptions& options) {
  return Reduction(keep, options).run(module);
}

Predicate same_signature(const oracle::CaseOptions& options, std::string signature) {
  return [options, signature = std::move(signature)](const ir::Module& m) {
    return oracle::signature(oracle::run_case(m, options).verdict) == signature;
  };
}

}  // namespace aotfuzz::fuzz
