// Region construction (TVM v0.8 AnnotatedRegionSet semantics) with explicit errors for the
// inputs TVM only CHECK-failed on.
#include "ir/regions.h"

#include <algorithm>
#include <iterator>
#include <span>

#include "ir/error.h"
#include "ir/traversal.h"

namespace aotfuzz::ir {
namespace {

bool is_end(const ExprNode* node) {
  const auto* call = as<CallNode>(node);
  return call != nullptr && call->is_op(Op::kCompilerEnd);
}

// Arguments that take part in region propagation: call args (not the callee), tuple fields,
// the tuple of a TupleGetItem.
std::span<const Expr> region_args(const ExprNode& node) {
  if (const auto* call = as<CallNode>(&node)) return call->args();
  if (const auto* tup = as<TupleNode>(&node)) return tup->fields();
  if (const auto* tgi = as<TupleGetItemNode>(&node)) return {&tgi->tuple(), 1};
  return {};
}

}  // namespace

int RegionSet::find(int id) const {
  while (parent_[id] != id) {
    parent_[id] = parent_[parent_[id]];
    id = parent_[id];
  }
  return id;
}

Region& RegionSet::make_region(const std::string& target) {
  int id = next_id_++;
  parent_.push_back(id);
  alive_.push_back(true);
  ends_.emplace_back();
  self_fed_.emplace_back();
  Region& r = regions_.emplace_back();
  r.id = id;
  r.target = target;
  return r;
}

void RegionSet::add_node(int region, const Expr& node) {
  node_region_[node.get()] = region;
  if (members_) regions_[region].nodes.push_back(node);
}

bool RegionSet::in_region(const ExprNode* node, int root) const {
  const int* r = node_region_.find(node);
  return r != nullptr && find(*r) == root;
}

const Region* RegionSet::region_of(const ExprNode* node) const {
  const int* r = node_region_.find(node);
  if (r == nullptr) return nullptr;
  return &regions_[find(*r)];
}

std::vector<const Region*> RegionSet::regions() const {
  std::vector<const Region*> out;
  for (std::size_t id = 0; id < regions_.size(); ++id) {
    if (alive_[id]) out.push_back(&regions_[id]);
  }
  return out;
}

void RegionSet::merge(int src, int dest) {
  src = find(src);
  dest = find(dest);
  if (src == dest) return;
  if (!members_) {
    parent_[src] = dest;
    alive_[src] = false;
    return;
  }
  Region& s = regions_[src];
  Region& d = regions_[dest];
  const auto arg_of = [](const ExprNode* begin) {
    return static_cast<const CallNode*>(begin)->args()[0].get();
  };
  // The begins of `owner`'s ins that take an end of `producer`: walks whichever side is shorter
  // (the ins, or the consumers of the producer's ends), so a long region merging with short ones
  // again and again stays linear.
  const auto fed_by = [&](int owner, int producer) {
    std::vector<const ExprNode*> out;
    const Region& o = regions_[owner];
    if (o.ins.size() <= ends_[producer].size()) {
      for (const auto& in : o.ins) {
        if (in_region(arg_of(in.get()), producer)) out.push_back(in.get());
      }
      return out;
    }
    for (const ExprNode* end : ends_[producer]) {
      const int* c = consumer_index_.find(end);
      if (c == nullptr) continue;
      for (const ExprNode* begin : consumers_[*c]) {
        const Position* pos = position_.find(begin);
        if (pos != nullptr && pos->live && in_region(begin, owner)) out.push_back(begin);
      }
    }
    return out;
  };
  // A begin of the merged region fed by an end of `src` joins two members: both become internal
  // (TVM: only ends of the source, so a begin of `src` fed by `dest` stays an input).
  std::vector<const ExprNode*> internal = fed_by(dest, src);
  for (const ExprNode* b : self_fed_[src]) internal.push_back(b);
  std::vector<const ExprNode*> now_self_fed = fed_by(src, dest);
  for (const ExprNode* b : internal) {
    Position* in = position_.find(b);
    if (in == nullptr || !in->live) continue;
    in->live = false;
    (in_region(b, src) ? s.ins : d.ins).erase(in->it);
    // The begin's argument is an end of `src` (that is what made the pair internal).
    Position* out = position_.find(arg_of(b));
    if (out != nullptr && out->live) {
      out->live = false;
      s.outs.erase(out->it);
    }
  }
  d.nodes.splice(d.nodes.end(), s.nodes);
  d.ins.splice(d.ins.end(), s.ins);
  d.outs.splice(d.outs.end(), s.outs);
  if (ends_[src].size() > ends_[dest].size()) ends_[src].swap(ends_[dest]);
  ends_[dest].insert(ends_[dest].end(), ends_[src].begin(), ends_[src].end());
  ends_[src].clear();
  // (None of these was made internal above: those are begins of `dest`, or fed by `src`.)
  self_fed_[dest].insert(self_fed_[dest].end(), now_self_fed.begin(), now_self_fed.end());
  self_fed_[src].clear();
  parent_[src] = dest;
  alive_[src] = false;
}

RegionSet RegionSet::build(const Expr& body) { return build(body, post_order(body)); }

RegionSet RegionSet::build(const Expr& body, const std::vector<Expr>& order) {
  return build(body, order, true);
}

void RegionSet::check(const Expr& body, const std::vector<Expr>& order) {
  build(body, order, false);
}

RegionSet RegionSet::build(const Expr& body, const std::vector<Expr>& order, bool members) {
  RegionSet set;
  set.members_ = members;
  set.node_region_.reserve(order.size());
  if (members) set.position_.reserve(order.size());
  // One region per begin: sized up front, the per-region tables never regrow (each regrowth
  // moved every inner vector).
  const auto begins =
      static_cast<std::size_t>(std::count_if(order.begin(), order.end(), [](const Expr& e) {
        const auto* call = as<CallNode>(e);
        return call != nullptr && call->is_op(Op::kCompilerBegin);
      }));
  set.parent_.reserve(begins);
  set.alive_.reserve(begins);
  set.ends_.reserve(begins);
  set.self_fed_.reserve(begins);
  set.consumers_.reserve(begins);
  for (const auto& node : order) {
    const auto* call = as<CallNode>(node);
    if (call != nullptr && call->is_op(Op::kCompilerBegin)) {
      const Expr& arg = call->args()[0];
      if (set.region_of(arg.get()) != nullptr && !is_end(arg.get())) {
        throw VerifyError("compiler_begin on " + describe(*arg) + ", a value still inside region " +
                          std::to_string(set.region_of(arg.get())->id) +
                          " (its edge out needs a compiler_end)");
      }
      Region& r = set.make_region(*call->attrs().find_string("compiler"));
      set.add_node(r.id, node);
      if (!members) continue;
      r.ins.push_back(node);
      set.position_[node.get()] = {std::prev(r.ins.end()), true};
      if (is_end(arg.get())) {
        auto [index, fresh] =
            set.consumer_index_.try_emplace(arg.get(), static_cast<int>(set.consumers_.size()));
        if (fresh) set.consumers_.emplace_back();
        set.consumers_[*index].push_back(node.get());
      }
      continue;
    }
    if (call != nullptr && call->is_op(Op::kCompilerEnd)) {
      const Expr& arg = call->args()[0];
      const std::string& target = *call->attrs().find_string("compiler");
      const Region* r = set.region_of(arg.get());
      if (r == nullptr || is_end(arg.get())) {
        throw VerifyError("compiler_end [" + target + "] on " + describe(*arg) +
                          ", which is in no region (missing compiler_begin?)");
      }
      if (r->target != target) {
        throw VerifyError("compiler_end [" + target + "] closes region " + std::to_string(r->id) +
                          " of target " + r->target);
      }
      const int id = r->id;
      set.add_node(id, node);
      if (!members) continue;
      Region& region = set.regions_[id];
      region.outs.push_back(node);
      set.position_[node.get()] = {std::prev(region.outs.end()), true};
      set.ends_[id].push_back(node.get());
      continue;
    }
    if (node->kind() == ExprKind::kFunction || node->kind() == ExprKind::kVar ||
        node->kind() == ExprKind::kGlobalVar || node->kind() == ExprKind::kConstant) {
      continue;
    }
    const std::span<const Expr> args = region_args(*node);
    int region = -1;
    bool saw_end = false;
    for (const auto& a : args) {
      if (is_end(a.get())) {
        saw_end = true;
        continue;
      }
      if (const Region* r = set.region_of(a.get())) {
        region = r->id;
        break;
      }
    }
    for (const auto& a : args) {
      if (is_end(a.get())) continue;
      const Region* r = set.region_of(a.get());
      if ((r != nullptr) != (region >= 0)) {
        throw VerifyError("arg regions are inconsistent in " + describe(*node) + ": " +
                          describe(*a) + (r ? " is in a region" : " is outside every region") +
                          " (missing compiler_begin?)");
      }
      if (r != nullptr && r->id != region) {
        const Region& d = set.regions_[set.find(region)];
        if (r->target != d.target) {
          throw VerifyError(describe(*node) + " joins region " + std::to_string(d.id) + " [" +
                            d.target + "] and region " + std::to_string(r->id) + " [" + r->target +
                            "]: targets differ");
        }
        set.merge(r->id, region);
        region = set.find(region);
      }
    }
    if (region >= 0) {
      if (saw_end) {
        throw VerifyError(describe(*node) + " in region " + std::to_string(region) +
                          " takes a compiler_end output directly (missing compiler_begin)");
      }
      set.add_node(set.find(region), node);
    }
  }
  if (const Region* r = set.region_of(body.get()); r != nullptr && !is_end(body.get())) {
    throw VerifyError("the function returns " + describe(*body) + " from inside region " +
                      std::to_string(r->id) + " without a compiler_end");
  }
  return set;
}

}  // namespace aotfuzz::ir
