// The graph builder. Invariants kept at every step (so the result always verifies):
//  - an op in a region takes operands only from that region: its own values, compiler_begin on
//    host values and parameters, compiler_begin(compiler_end(v)) on other regions' values, or
//    values of another open region of the same target, which then becomes the same region;
//  - an op on the host takes host values, parameters and compiler_end of region values;
//  - a region closes when one of its values first leaves it and takes no ops afterwards: nothing
//    outside an open region depends on it, so a new edge into it cannot close a cycle, regions
//    stay convex and the graph of regions stays acyclic;
//  - with merge_safe, contracting each merge component (regions that a chain of same-target
//    end->begin edges links, a superset of what MergeCompilerRegions merges) leaves no cycle
//    that crosses a host node: neither a host path from a component back into itself nor one
//    through other components (A -> host -> C's component -> host -> A's). Cycles through
//    other targets' regions alone are left to TVM's restriction sets, which prevent them.
#include "generator/builder.h"

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/expr.h"
#include "ir/verify.h"

namespace aotfuzz::generator {
namespace {

// Sets of region instances as fixed-width bit sets: exact while a graph has at most kSetWidth
// region instances; beyond that ids fold modulo the width, so a set may claim members it lacks.
// That only makes the merge-safety checks reject more, never accept an unsafe edge, and keeps
// memory and time linear in the graph size.
constexpr std::size_t kSetWidth = 1024;
using Bits = std::bitset<kSetWidth>;

void set_bit(Bits& bits, int i) { bits.set(static_cast<std::size_t>(i) % kSetWidth); }
void or_into(Bits& into, const Bits& from) { into |= from; }
bool meets(const Bits& a, const Bits& b) { return (a & b).any(); }

constexpr int kHost = -1;
// Candidate draws per operand before falling back to a parameter.
constexpr int kAttempts = 8;

// One value the builder made: a parameter, a host op's result or a region op's result.
struct Value {
  ir::Expr expr;
  int inst = kHost;  // raw region instance id (see Builder::root), kHost outside regions
  bool input = false;  // a parameter or a constant: never an output by itself
  bool constant = false;
  bool used = false;
  std::vector<ir::Expr> ends;  // compiler_end nodes on this value, in creation order
  Bits anc;                    // host values: every region instance upstream
};

// A region as the builder intends it. Instances met by one op are joined (union-find `join`);
// instances linked by same-target end->begin edges share a merge component (union-find `comp`).
struct Instance {
  std::string target;
  int join = 0;
  int comp = 0;
  bool closed = false;
  std::vector<int> values;
  std::vector<int> unused;      // lazily pruned
  Bits anc;                     // instances upstream of this one, itself included
  Bits taint;                   // instances upstream through a path that crosses the host
  Bits comp_members;            // at a comp root: the component's instances
  Bits comp_taint;              // at a comp root: union of its instances' taint
  Bits comp_anc;                // at a comp root: union of its instances' anc
  std::vector<int> comp_insts;  // at a comp root: the component's instances
  std::uint64_t seen_down = 0;  // merge_safe_edge's marks, valid at its current epoch
  std::uint64_t seen_down_host = 0;
};

// How a chosen value reaches the op being built.
enum class Via { kDirect, kEnd, kBegin, kEndBegin, kJoin };

struct Choice {
  int value;
  Via via;
};

// The kind of operand an op asks for.
struct Want {
  bool tuple = false;
  std::optional<ir::DType> dtype;     // tensors only; nullopt accepts any dtype
  int max_depth = ir::kMaxTypeDepth;  // tuples only: the deepest nesting accepted
};

class Builder {
 public:
  Builder(const GenPolicy& policy, Decisions& decisions) : p_(policy), d_(decisions) {
    for (const auto& t : p_.targets) {
      targets_.push_back(t.name);
      target_weights_.push_back(t.weight);
    }
    for (const auto& t : p_.dtypes) {
      dtypes_.push_back(*ir::parse_dtype(t.name));
      dtype_weights_.push_back(t.weight);
    }
    for (const auto& o : p_.ops) {
      ops_.push_back(*ir::parse_op(o.name));
      op_weights_.push_back(o.weight);
    }
  }

  // The per-graph shape within max_tensor_elements: its largest dimension halved (rounding up)
  // until it fits. No draws, so shapes that already fit are the ones drawn.
  void fit_universe() {
    auto elements = [&] {
      std::int64_t n = 1;
      for (auto d : universe_) {
        if (n > p_.max_tensor_elements) break;  // dims are at most 1024: no overflow
        n *= d;
      }
      return n;
    };
    while (!universe_.empty() && elements() > p_.max_tensor_elements) {
      auto largest = std::max_element(universe_.begin(), universe_.end());
      *largest = (*largest + 1) / 2;
    }
  }

  ir::Module run() {
    const int rank = static_cast<int>(d_.range(p_.min_rank, p_.max_rank));
    for (int i = 0; i < rank; ++i) universe_.push_back(d_.range(p_.min_dim, p_.max_dim));
    fit_universe();
    main_dtype_ = dtypes_[d_.weighted(dtype_weights_)];

    const auto steps = d_.range(p_.min_ops, p_.max_ops);
    // Values are steps plus parameters; instances at most one per step.
    const auto reserve = static_cast<std::size_t>(steps);
    values_.reserve(reserve + std::min<std::size_t>(reserve, p_.max_inputs) + 2);
    insts_.reserve(reserve + 1);
    begins_.reserve(2 * reserve);
    for (std::int64_t i = 0; i < steps; ++i) {
      if (i > 0 && d_.exhausted()) break;
      step();
    }
    ir::Expr body = outputs();

    std::vector<ir::Var> params;
    for (int v : inputs_) params.push_back(ir::as_ptr<ir::VarNode>(values_[v].expr));
    if (static_cast<int>(inputs_.size()) < p_.max_inputs && d_.chance(p_.p_unused_input)) {
      int v = new_input(pick_dtype());
      auto at = static_cast<std::ptrdiff_t>(d_.below(params.size() + 1));
      params.insert(params.begin() + at, ir::as_ptr<ir::VarNode>(values_[v].expr));
    }
    ir::Module module;
    module.add("main", ir::FunctionNode::make(std::move(params), std::move(body)));
#ifndef NDEBUG
    ir::verify(module);
#endif
    return module;
  }

 private:
  // ---- union-find over instances ----------------------------------------------------------
  int root(int i) {
    while (insts_[i].join != i) {
      insts_[i].join = insts_[insts_[i].join].join;
      i = insts_[i].join;
    }
    return i;
  }
  int comp_root(int i) {
    while (insts_[i].comp != i) {
      insts_[i].comp = insts_[insts_[i].comp].comp;
      i = insts_[i].comp;
    }
    return i;
  }
  Instance& comp_of(int i) { return insts_[comp_root(i)]; }

  // Whether an edge into region r (from instance q's value with its `anc` and `taint`, or from
  // a host value whose ancestors are all `anc`), uniting q's component with r's when `unite`,
  // leaves the contracted component graph without a cycle that crosses the host. Only cycles
  // through r's component N can be new. Instance-level `anc` and `taint` already follow every
  // path that enters each component it crosses at the member it leaves from; what they miss is
  // a path entering a component of several regions at one and leaving from another. So the
  // search walks those components downstream of N: `down` by any path, `down_host` by one that
  // crosses the host; a cycle closes when they reach back into N by a host path, or any path.
  bool merge_safe_edge(int q, int r, bool unite, const Bits& anc, const Bits& taint) {
    const int cr = comp_root(r);
    const int cq = unite ? comp_root(q) : cr;
    Bits members = insts_[cr].comp_members;
    Bits up_any = insts_[cr].comp_anc | anc;
    Bits up_host = insts_[cr].comp_taint | taint;
    if (unite && cq != cr) {
      members |= insts_[cq].comp_members;
      up_any |= insts_[cq].comp_anc;
      up_host |= insts_[cq].comp_taint;
    }
    if (meets(members, up_host)) return false;
    // Nothing upstream but the component itself: no path can leave it and come back.
    if ((up_any & ~members).none()) return true;
    Bits down = members;
    Bits down_host;
    ++epoch_;
    std::size_t live = 0;
    for (int c : multi_comps_) {
      if (insts_[c].comp == c) multi_comps_[live++] = c;
    }
    multi_comps_.resize(live);
    // Past kSetWidth such components their member sets alias anyway; refusing keeps generation
    // linear in the graph's size rather than quadratic.
    if (live > kSetWidth) return false;
    for (bool changed = true; changed;) {
      changed = false;
      for (int c : multi_comps_) {
        if (c == cr || c == cq) continue;
        Instance& z = insts_[c];
        if (z.seen_down != epoch_ && meets(z.comp_anc, down)) {
          z.seen_down = epoch_;
          down |= z.comp_members;
          changed = true;
        }
        if (z.seen_down_host != epoch_ &&
            (meets(z.comp_taint, down) || meets(z.comp_anc, down_host))) {
          z.seen_down_host = epoch_;
          down_host |= z.comp_members;
          changed = true;
        }
      }
    }
    return !meets(down, up_host) && !meets(down_host, up_any);
  }
  void union_comps(int a, int b) {
    int ca = comp_root(a);
    int cb = comp_root(b);
    if (ca == cb) return;
    // The larger member list absorbs the smaller: linear total work.
    if (insts_[ca].comp_insts.size() > insts_[cb].comp_insts.size()) std::swap(ca, cb);
    Instance& from = insts_[ca];
    Instance& to = insts_[cb];
    from.comp = cb;
    or_into(to.comp_members, from.comp_members);
    or_into(to.comp_taint, from.comp_taint);
    or_into(to.comp_anc, from.comp_anc);
    // `to` is listed already when it had several members.
    if (to.comp_insts.size() == 1) multi_comps_.push_back(cb);
    to.comp_insts.insert(to.comp_insts.end(), from.comp_insts.begin(), from.comp_insts.end());
    std::vector<int>().swap(from.comp_insts);
  }

  int new_instance(const std::string& target) {
    const int id = static_cast<int>(insts_.size());
    Instance inst;
    inst.target = target;
    inst.join = id;
    inst.comp = id;
    set_bit(inst.anc, id);
    set_bit(inst.comp_members, id);
    set_bit(inst.comp_anc, id);
    inst.comp_insts.push_back(id);
    insts_.push_back(std::move(inst));
    open_.push_back(id);
    return id;
  }

  // Marks region r closed: a value is leaving it. Its values that do not leave yet become
  // candidates for further outputs (multi-output regions).
  void close(int r) {
    Instance& inst = insts_[r];
    if (inst.closed) return;
    inst.closed = true;
    for (int v : inst.values) {
      if (values_[v].ends.empty()) exited_.push_back(v);
    }
  }

  // ---- choices --------------------------------------------------------------------------------
  ir::DType pick_dtype() {
    if (d_.chance(p_.p_mixed_dtypes)) return dtypes_[d_.weighted(dtype_weights_)];
    return main_dtype_;
  }

  // A constant tensor of the graph's shape (or one that broadcasts to it, or a scalar),
  // or an existing one of that dtype. Elements follow a drawn start and stride, so that they
  // differ from each other in few draws. Kept off the frontier: it is never a sink of @main.
  int constant(ir::DType dtype) {
    std::vector<int>& pool = constants_by_dtype_[static_cast<int>(dtype)];
    if (!pool.empty() && d_.chance(p_.p_shared_input)) return pool[d_.below(pool.size())];
    std::vector<std::int64_t> shape;
    if (!d_.chance(p_.p_scalar_constant)) shape = broadcastable_shape();
    ir::Type type = ir::TypeNode::tensor(std::move(shape), dtype);
    const std::int64_t start = d_.range(-4, 4);
    const std::int64_t stride = d_.range(0, 3);
    std::vector<std::int64_t> values(static_cast<std::size_t>(type->num_elements()));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = (start + 4 + stride * static_cast<std::int64_t>(i % 9)) % 9 - 4;
    }
    const int id = static_cast<int>(values_.size());
    Value val;
    val.expr = ir::ConstantNode::make(std::move(type), std::move(values));
    val.input = true;
    val.constant = true;
    values_.push_back(std::move(val));
    pool.push_back(id);
    // A host value like any other for second uses, so @main's extra output may be a constant
    // (which the executor copies out, as TVM's CopyToOutput does).
    host_values_.push_back(id);
    return id;
  }

  // The graph's shape, or with p_broadcast one that broadcasts to it.
  std::vector<std::int64_t> broadcastable_shape() {
    std::vector<std::int64_t> shape = universe_;
    if (!universe_.empty() && d_.chance(p_.p_broadcast)) {
      const int full = static_cast<int>(universe_.size());
      const int rank = static_cast<int>(d_.range(std::min(p_.min_rank, full), full));
      shape.erase(shape.begin(), shape.begin() + (full - rank));
      for (auto& dim : shape) {
        if (d_.chance(0.5)) dim = 1;
      }
    }
    return shape;
  }

  int new_input(ir::DType dtype) {
    std::vector<std::int64_t> shape = broadcastable_shape();
    const int id = static_cast<int>(values_.size());
    Value val;
    std::string name = input_name();
    val.expr = ir::VarNode::make(std::move(name), ir::TypeNode::tensor(std::move(shape), dtype));
    val.input = true;
    values_.push_back(std::move(val));
    inputs_.push_back(id);
    inputs_by_dtype_[static_cast<int>(dtype)].push_back(id);
    return id;
  }

  // "x<k>", or with p_odd_name "x<k>" and a suffix that is no identifier ("x3:0", "x3::-1"):
  // its sanitized C name "x3_0" stays unique, as k is, unless a clash is drawn on purpose (no
  // merge_safe): an earlier odd name respelled with other separators, one C name after
  // sanitizing, as in TVM's test_name_sanitiser_name_clash.
  std::string input_name() {
    std::string name = "x";
    name += std::to_string(inputs_.size());
    if (!d_.chance(p_.p_odd_name)) return name;
    static constexpr const char* kSeparators[] = {":", "::", "-", ".", "/", ":-", "::-"};
    constexpr std::size_t kNumSeparators = std::size(kSeparators);
    if (!p_.merge_safe && !odd_names_.empty() && d_.chance(0.25)) {
      std::string clash = odd_names_[d_.below(odd_names_.size())];
      std::string respelled;
      for (char c : clash) {
        const bool ident = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        respelled += ident ? c : (c == '-' ? ':' : '-');
      }
      if (std::find(odd_names_.begin(), odd_names_.end(), respelled) == odd_names_.end()) {
        odd_names_.push_back(respelled);
        return respelled;
      }
    }
    name += kSeparators[d_.below(kNumSeparators)];
    name += std::to_string(d_.below(3));
    odd_names_.push_back(name);
    return name;
  }

  int choose_location() {
    if (d_.chance(p_.p_host_op)) return kHost;
    return choose_region();
  }
  int choose_region() {
    if (!open_.empty() && !d_.chance(p_.p_new_region)) {
      while (!open_.empty()) {
        const std::size_t i = d_.below(open_.size());
        const int r = open_[i];
        if (root(r) == r && !insts_[r].closed) return r;
        open_[i] = open_.back();
        open_.pop_back();
      }
    }
    return new_instance(targets_[d_.weighted(target_weights_)]);
  }

  // A still-unused value of `list`, pruning used ones as they are met.
  std::optional<int> pick_unused(std::vector<int>& list) {
    while (!list.empty()) {
      const std::size_t i = d_.below(list.size());
      const int v = list[i];
      if (!values_[v].used) return v;
      list[i] = list.back();
      list.pop_back();
    }
    return std::nullopt;
  }
  std::optional<int> pick_any(const std::vector<int>& all) {
    if (all.empty()) return std::nullopt;
    return all[d_.below(all.size())];
  }
  // A value of an exited region that does not leave it yet.
  std::optional<int> pick_exited() {
    while (!exited_.empty()) {
      const std::size_t i = d_.below(exited_.size());
      const int v = exited_[i];
      if (values_[v].ends.empty()) return v;
      exited_[i] = exited_.back();
      exited_.pop_back();
    }
    return std::nullopt;
  }
  std::optional<int> pick_region_value() {
    if (d_.chance(p_.p_multi_output)) {
      if (auto v = pick_exited()) return v;
    }
    return pick_any(region_values_);
  }
  // An unused value: from the op's own place first (with p_local_operand) or from elsewhere
  // first, then from the other pools, so a non-empty frontier is always found.
  std::optional<int> pick_frontier(int loc) {
    std::vector<int>* pools[4];
    int n = 0;
    std::vector<int>* local = loc == kHost ? &host_unused_ : &insts_[root(loc)].unused;
    const bool local_first = d_.chance(p_.p_local_operand);
    if (local_first) pools[n++] = local;
    if (loc == kHost) {
      pools[n++] = &region_unused_;
    } else if (d_.chance(0.5)) {
      pools[n++] = &host_unused_;
      pools[n++] = &region_unused_;
    } else {
      pools[n++] = &region_unused_;
      pools[n++] = &host_unused_;
    }
    if (!local_first) pools[n++] = local;
    for (int i = 0; i < n; ++i) {
      if (auto v = pick_unused(*pools[i])) return v;
    }
    return std::nullopt;
  }
  // A tuple value, unused ones first.
  std::optional<int> pick_tuple() {
    if (d_.chance(p_.p_prefer_unused)) {
      if (auto v = pick_unused(tuple_unused_)) return v;
    }
    return pick_any(tuple_values_);
  }
  std::optional<int> pick_input(const Want& want) {
    if (want.tuple) return std::nullopt;
    if (d_.chance(p_.p_constant)) return constant(want.dtype ? *want.dtype : pick_dtype());
    const std::vector<int>& pool =
        want.dtype ? inputs_by_dtype_[static_cast<int>(*want.dtype)] : inputs_;
    const bool can_add = static_cast<int>(inputs_.size()) < p_.max_inputs;
    if (!pool.empty() && (!can_add || d_.chance(p_.p_shared_input))) {
      return pool[d_.below(pool.size())];
    }
    if (can_add) return new_input(want.dtype ? *want.dtype : pick_dtype());
    return std::nullopt;
  }

  // Whether value v may be an operand of an op at `loc`, and how it gets there.
  std::optional<Choice> admit(int loc, int v, const Want& want) {
    const Value& val = values_[v];
    const ir::Type& type = val.expr->type();
    if (want.tuple != type->is_tuple()) return std::nullopt;
    if (want.tuple && type->depth() > want.max_depth) return std::nullopt;
    if (!want.tuple && want.dtype && type->dtype() != *want.dtype) return std::nullopt;
    if (loc == kHost) return Choice{v, val.inst == kHost ? Via::kDirect : Via::kEnd};
    const int r = root(loc);
    if (val.inst == kHost) {
      if (type->is_tuple() && !d_.chance(p_.p_begin_on_tuple)) return std::nullopt;
      if (p_.merge_safe && !merge_safe_edge(kHost, r, false, val.anc, val.anc)) return std::nullopt;
      return Choice{v, Via::kBegin};
    }
    const int q = root(val.inst);
    if (q == r) return Choice{v, Via::kDirect};
    const bool same_target = insts_[q].target == insts_[r].target;
    const Instance& from = insts_[q];
    if (same_target && !from.closed && d_.chance(p_.p_region_join)) {
      if (p_.merge_safe && !merge_safe_edge(q, r, true, from.anc, from.taint)) return std::nullopt;
      return Choice{v, Via::kJoin};
    }
    if (type->is_tuple() && !d_.chance(p_.p_begin_on_tuple)) return std::nullopt;
    if (p_.merge_safe && !merge_safe_edge(q, r, same_target, from.anc, from.taint)) {
      return std::nullopt;
    }
    return Choice{v, Via::kEndBegin};
  }

  // A value for an operand at loc. Values nobody uses yet (the frontier) come first, so the
  // graph keeps converging to few outputs; otherwise a parameter, or any value here or elsewhere
  // (a second use: shared values, several region outputs).
  std::optional<Choice> sample(int loc, const Want& want) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      std::optional<int> v;
      if (want.tuple) {
        v = pick_tuple();
      } else if (d_.chance(p_.p_prefer_unused)) {
        v = pick_frontier(loc);
      } else if (d_.chance(p_.p_input_operand)) {
        v = pick_input(want);
      } else if (d_.chance(p_.p_local_operand)) {
        v = pick_any(loc == kHost ? host_values_ : insts_[root(loc)].values);
      } else if (loc != kHost && d_.chance(0.5)) {
        v = pick_any(host_values_);
      } else {
        v = pick_region_value();
      }
      if (!v) continue;
      if (auto c = admit(loc, *v, want)) return c;
    }
    return std::nullopt;
  }

  // ---- wiring ---------------------------------------------------------------------------------
  ir::Expr end_of(int v) {
    Value& val = values_[v];
    if (val.ends.empty() || d_.chance(p_.p_multi_end)) {
      val.ends.push_back(ir::compiler_end(val.expr, insts_[root(val.inst)].target));
      return val.ends.back();
    }
    return val.ends[d_.below(val.ends.size())];
  }

  // compiler_begin into region r of value v (a host value, or `end` of a region value).
  ir::Expr begin_of(int v, int r, bool through_end) {
    const std::uint64_t key = (static_cast<std::uint64_t>(v) << 32) | static_cast<std::uint32_t>(r);
    auto it = begins_.find(key);
    if (it != begins_.end() && d_.chance(p_.p_shared_begin)) return it->second;
    ir::Expr src = through_end ? end_of(v) : values_[v].expr;
    ir::Expr begin = ir::compiler_begin(std::move(src), insts_[r].target);
    begins_[key] = begin;
    return begin;
  }

  // `begin((c, c')).i` in region r, where field i is constant value v and c' another constant.
  ir::Expr constant_tuple_field(int v, int r) {
    const ir::Expr c = values_[v].expr;  // a copy: constant() may grow values_
    const ir::Expr other = values_[constant(c->type()->dtype())].expr;
    const int index = static_cast<int>(d_.below(2));
    std::vector<ir::Expr> fields{other};
    fields.insert(fields.begin() + index, c);
    ir::Expr begin = ir::compiler_begin(ir::TupleNode::make(std::move(fields)), insts_[r].target);
    return ir::TupleGetItemNode::make(std::move(begin), index);
  }

  // Commits choice c for an op at loc and returns the argument expression.
  ir::Expr access(int loc, const Choice& c) {
    Value& val = values_[c.value];
    if (!val.used && val.expr->type()->is_tuple()) --unused_tuples_;
    val.used = true;
    switch (c.via) {
      case Via::kDirect:
        if (loc == kHost) or_into(pending_anc_, val.anc);
        return val.expr;
      case Via::kEnd: {
        last_exit_ = c.value;
        const int q = root(val.inst);
        close(q);
        or_into(pending_anc_, insts_[q].anc);
        return end_of(c.value);
      }
      case Via::kBegin: {
        const int r = root(loc);
        or_into(insts_[r].anc, val.anc);
        or_into(insts_[r].taint, val.anc);
        or_into(comp_of(r).comp_taint, val.anc);
        or_into(comp_of(r).comp_anc, val.anc);
        if (val.constant && d_.chance(p_.p_constant_tuple)) return constant_tuple_field(c.value, r);
        return begin_of(c.value, r, false);
      }
      case Via::kEndBegin: {
        last_exit_ = c.value;
        const int q = root(val.inst);
        const int r = root(loc);
        close(q);
        if (insts_[q].target == insts_[r].target) union_comps(q, r);
        or_into(insts_[r].anc, insts_[q].anc);
        or_into(insts_[r].taint, insts_[q].taint);
        or_into(comp_of(r).comp_taint, insts_[q].taint);
        or_into(comp_of(r).comp_anc, insts_[q].anc);
        return begin_of(c.value, r, true);
      }
      case Via::kJoin: {
        const int q = root(val.inst);
        const int r = root(loc);
        Instance& from = insts_[q];
        Instance& to = insts_[r];
        from.join = r;
        to.values.insert(to.values.end(), from.values.begin(), from.values.end());
        to.unused.insert(to.unused.end(), from.unused.begin(), from.unused.end());
        or_into(to.anc, from.anc);
        or_into(to.taint, from.taint);
        std::vector<int>().swap(from.values);
        std::vector<int>().swap(from.unused);
        union_comps(q, r);
        return val.expr;
      }
    }
    return val.expr;
  }

  // Another value of the merge group (same-target regions linked end->begin, which
  // MergeCompilerRegions makes one region) of `first`, a value that just left its region.
  std::optional<Choice> sibling(int loc, const Want& want, int first) {
    const std::vector<int>& members = insts_[comp_root(root(values_[first].inst))].comp_insts;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      const std::vector<int>& vals = insts_[root(members[d_.below(members.size())])].values;
      if (vals.empty()) continue;
      const int v = vals[d_.below(vals.size())];
      if (v == first) continue;
      if (auto c = admit(loc, v, want)) return c;
    }
    return std::nullopt;
  }

  // An operand for an op at loc; a tensor request always succeeds (a parameter at worst).
  ir::Expr operand(int loc, const Want& want) {
    // After an operand left a region, the next one may leave the same (merged) region too: one
    // consumer of several outputs of one region, the TVM #9036 class.
    if (last_exit_ >= 0 && d_.chance(p_.p_multi_output)) {
      if (auto c = sibling(loc, want, last_exit_)) return access(loc, *c);
    }
    if (auto c = sample(loc, want)) return access(loc, *c);
    auto v = pick_input(want);
    if (!v && !want.dtype) v = inputs_[d_.below(inputs_.size())];
    if (!v) return nullptr;
    // Parameters have nothing upstream, so they may enter any region.
    return access(loc, Choice{*v, loc == kHost ? Via::kDirect : Via::kBegin});
  }

  int add_value(ir::Expr expr, int loc) {
    const int id = static_cast<int>(values_.size());
    Value val;
    const bool tuple = expr->type()->is_tuple();
    val.expr = std::move(expr);
    if (loc == kHost) {
      val.anc = pending_anc_;
      host_values_.push_back(id);
      host_unused_.push_back(id);
    } else {
      const int r = root(loc);
      val.inst = r;
      insts_[r].values.push_back(id);
      insts_[r].unused.push_back(id);
      region_values_.push_back(id);
      region_unused_.push_back(id);
    }
    if (tuple) {
      tuple_values_.push_back(id);
      tuple_unused_.push_back(id);
      ++unused_tuples_;
    }
    values_.push_back(std::move(val));
    return id;
  }

  // ---- steps ----------------------------------------------------------------------------------
  void step() {
    pending_anc_.reset();
    last_exit_ = -1;
    // Reading a tuple nobody reads yet consumes a value; a further read of a used tuple adds an
    // output, so it is as rare as any second use.
    const double p_read =
        unused_tuples_ > 0 ? p_.p_tuple_get_item : p_.p_tuple_get_item * (1 - p_.p_prefer_unused);
    if (!tuple_values_.empty() && d_.chance(p_read) && tuple_get_item()) return;
    const int loc = choose_location();
    if (d_.chance(p_.p_tuple)) {
      tuple(loc);
      return;
    }
    binary(loc);
  }

  void binary(int loc) {
    const ir::Op op = ops_[d_.weighted(op_weights_)];
    ir::Expr a = operand(loc, Want{});
    ir::Expr b;
    if (!d_.chance(p_.p_repeat_operand)) b = operand(loc, Want{false, a->type()->dtype()});
    if (!b) b = a;
    add_value(ir::CallNode::make(op, {a, b}), loc);
  }

  void tuple(int loc) {
    const auto count = d_.range(2, p_.max_tuple_fields);
    std::vector<ir::Expr> fields;
    for (std::int64_t i = 0; i < count; ++i) {
      if (!tuple_values_.empty() && d_.chance(p_.p_nested_tuple)) {
        if (auto c = sample(loc, Want{true, std::nullopt, p_.max_tuple_depth - 1})) {
          fields.push_back(access(loc, *c));
          continue;
        }
      }
      fields.push_back(operand(loc, Want{}));
    }
    add_value(ir::TupleNode::make(std::move(fields)), loc);
  }

  // The tuple comes first; the TupleGetItem then goes where the tuple is read: in its region while
  // that is open (or on the host, through an end on the tuple, with p_host_op); on the host for
  // host tuples and tuples of closed regions, which nothing else could read; or into a region
  // when tuples may enter one. False when merge safety forbids the place drawn.
  bool tuple_get_item() {
    const int t = *pick_tuple();
    const Value& val = values_[t];
    int loc = kHost;
    if (val.inst != kHost && !insts_[root(val.inst)].closed) {
      if (!d_.chance(p_.p_host_op)) loc = root(val.inst);
    } else if (d_.chance(p_.p_begin_on_tuple) && !d_.chance(p_.p_host_op)) {
      loc = choose_region();
    }
    const std::optional<Choice> c = admit(loc, t, Want{true, std::nullopt});
    if (!c) return false;
    ir::Expr tuple = access(loc, *c);
    const auto index = static_cast<int>(d_.below(tuple->type()->fields().size()));
    add_value(ir::TupleGetItemNode::make(std::move(tuple), index), loc);
    return true;
  }

  // @main's result: every value nobody uses (so no op is dead), plus the optional extras.
  ir::Expr outputs() {
    pending_anc_.reset();
    std::vector<ir::Expr> fields;
    auto take = [&](int v) {
      return access(kHost, Choice{v, values_[v].inst == kHost ? Via::kDirect : Via::kEnd});
    };
    std::vector<int> sinks;
    for (int v = 0; v < static_cast<int>(values_.size()); ++v) {
      if (!values_[v].input && !values_[v].used) sinks.push_back(v);
    }
    for (int v : sinks) fields.push_back(take(v));
    if (sinks.size() == 1 && d_.chance(p_.p_tuple_output)) {
      // One more output: a value some op already uses, or the sink again when none is found.
      int extra = sinks[0];
      for (int attempt = 0; attempt < kAttempts && extra == sinks[0]; ++attempt) {
        const bool host = !host_values_.empty() && (region_values_.empty() || d_.chance(0.5));
        extra = pick_any(host ? host_values_ : region_values_).value_or(sinks[0]);
      }
      fields.push_back(extra == sinks[0] ? fields[0] : take(extra));
    }
    if (!fields.empty() && d_.chance(p_.p_duplicate_output)) {
      ir::Expr dup = fields[d_.below(fields.size())];
      fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(d_.below(fields.size() + 1)), dup);
    }
    if (d_.chance(p_.p_empty_tuple_output)) fields.push_back(ir::TupleNode::make({}));
    for (std::size_t i = fields.size(); i > 1; --i) {
      std::swap(fields[i - 1], fields[d_.below(i)]);
    }
    if (fields.size() == 1) return fields[0];
    return ir::TupleNode::make(std::move(fields));
  }

  const GenPolicy& p_;
  Decisions& d_;
  std::vector<std::string> targets_;
  std::vector<double> target_weights_;
  std::vector<ir::DType> dtypes_;
  std::vector<double> dtype_weights_;
  std::vector<ir::Op> ops_;
  std::vector<double> op_weights_;

  std::vector<std::int64_t> universe_;
  ir::DType main_dtype_ = ir::DType::kFloat32;

  std::vector<Value> values_;
  std::vector<Instance> insts_;
  std::vector<int> inputs_;
  std::vector<std::string> odd_names_;   // input_name()'s non-identifier names so far
  std::vector<int> inputs_by_dtype_[3];  // indexed by ir::DType
  std::vector<int> constants_by_dtype_[3];  // indexed by ir::DType
  std::vector<int> host_values_, host_unused_;
  std::vector<int> region_values_, region_unused_;
  std::vector<int> exited_;
  std::vector<int> open_;
  std::vector<int> tuple_values_, tuple_unused_;
  int unused_tuples_ = 0;
  int last_exit_ = -1;            // the value whose end the current step took last, or -1
  std::vector<int> multi_comps_;  // roots of components of several regions; lazily pruned
  std::uint64_t epoch_ = 0;
  Bits pending_anc_;
  // compiler_begin per (value, region), for sharing; looked up only, never iterated.
  std::unordered_map<std::uint64_t, ir::Expr> begins_;
};

}  // namespace

ir::Module build(const GenPolicy& policy, Decisions& decisions) {
  validate(policy);
  return Builder(policy, decisions).run();
}

ir::Module generate(const GenPolicy& policy, ir::Rng& rng) {
  RngDecisions decisions(rng);
  return build(policy, decisions);
}

ir::Module decode(const GenPolicy& policy, const std::uint8_t* data, std::size_t size) {
  ByteDecisions decisions(data, size);
  return build(policy, decisions);
}

}  // namespace aotfuzz::generator
