// Region construction (TVM v0.8 AnnotatedRegionSet semantics) with explicit errors for the
// inputs TVM only CHECK-failed on.
#include "ir/regions.h"

#include <algorithm>
#include <unordered_set>

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
std::vector<Expr> region_args(const ExprNode& node) {
  if (const auto* call = as<CallNode>(&node)) return call->args();
  if (const auto* tup = as<TupleNode>(&node)) return tup->fields();
  if (const auto* tgi = as<TupleGetItemNode>(&node)) return {tgi->tuple()};
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
  Region& r = regions_[id];
  r.id = id;
  r.target = target;
  return r;
}

void RegionSet::add_node(int region, const Expr& node) {
  node_region_[node.get()] = region;
  regions_.at(region).nodes.push_back(node);
}

const Region* RegionSet::region_of(const ExprNode* node) const {
  auto it = node_region_.find(node);
  if (it == node_region_.end()) return nullptr;
  return &regions_.at(find(it->second));
}

std::vector<const Region*> RegionSet::regions() const {
  std::vector<const Region*> out;
  for (const auto& [id, r] : regions_) out.push_back(&r);
  return out;
}

void RegionSet::merge(int src, int dest) {
  src = find(src);
  dest = find(dest);
  if (src == dest) return;
  Region& s = regions_.at(src);
  Region& d = regions_.at(dest);
  std::unordered_set<const ExprNode*> src_nodes;
  for (const auto& n : s.nodes) src_nodes.insert(n.get());
  d.nodes.insert(d.nodes.end(), s.nodes.begin(), s.nodes.end());
  d.ins.insert(d.ins.end(), s.ins.begin(), s.ins.end());
  d.outs.insert(d.outs.end(), s.outs.begin(), s.outs.end());
  // A begin of the merged region fed by an end of `src` now joins two members: both internal.
  std::vector<Expr> kept_ins;
  std::unordered_set<const ExprNode*> internal_outs;
  for (const auto& in : d.ins) {
    const Expr& arg = as<CallNode>(in)->args()[0];
    if (src_nodes.count(arg.get())) {
      internal_outs.insert(arg.get());
    } else {
      kept_ins.push_back(in);
    }
  }
  d.ins = std::move(kept_ins);
  std::erase_if(d.outs, [&](const Expr& e) { return internal_outs.count(e.get()) > 0; });
  parent_[src] = dest;
  regions_.erase(src);
}

RegionSet RegionSet::build(const Expr& body) {
  RegionSet set;
  for (const auto& node : post_order(body)) {
    const auto* call = as<CallNode>(node);
    if (call != nullptr && call->is_op(Op::kCompilerBegin)) {
      const Expr& arg = call->args()[0];
      if (set.region_of(arg.get()) != nullptr && !is_end(arg.get())) {
        throw VerifyError("compiler_begin on " + describe(*arg) +
                          ", a value still inside region " +
                          std::to_string(set.region_of(arg.get())->id) +
                          " (its edge out needs a compiler_end)");
      }
      Region& r = set.make_region(*call->attrs().get_string("compiler"));
      r.ins.push_back(node);
      set.add_node(r.id, node);
      continue;
    }
    if (call != nullptr && call->is_op(Op::kCompilerEnd)) {
      const Expr& arg = call->args()[0];
      const std::string target = *call->attrs().get_string("compiler");
      const Region* r = set.region_of(arg.get());
      if (r == nullptr || is_end(arg.get())) {
        throw VerifyError("compiler_end [" + target + "] on " + describe(*arg) +
                          ", which is in no region (missing compiler_begin?)");
      }
      if (r->target != target) {
        throw VerifyError("compiler_end [" + target + "] closes region " + std::to_string(r->id) +
                          " of target " + r->target);
      }
      int id = r->id;
      set.regions_.at(id).outs.push_back(node);
      set.add_node(id, node);
      continue;
    }
    if (node->kind() == ExprKind::kFunction || node->kind() == ExprKind::kVar ||
        node->kind() == ExprKind::kGlobalVar) {
      continue;
    }
    auto args = region_args(*node);
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
        const Region& d = set.regions_.at(set.find(region));
        if (r->target != d.target) {
          throw VerifyError(describe(*node) + " joins region " + std::to_string(d.id) + " [" +
                            d.target + "] and region " + std::to_string(r->id) + " [" +
                            r->target + "]: targets differ");
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
