// Shape statistics over @main, computed iteratively.
#include "generator/stats.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::generator {
namespace {

bool is_call_of(const ir::ExprNode* node, ir::Op op) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(op);
}

}  // namespace

GraphStats graph_stats(const ir::Module& module) {
  GraphStats s;
  const ir::Function& main = module.main();
  const ir::Expr& body = main->body();
  s.inputs = main->params().size();
  s.outputs = ir::flat_count(body->type());
  if (const auto* tup = ir::as<ir::TupleNode>(body)) {
    std::unordered_set<const ir::ExprNode*> seen;
    for (const auto& f : tup->fields()) s.duplicate_outputs |= !seen.insert(f.get()).second;
  }

  const ir::RegionSet regions = ir::RegionSet::build(body);
  std::set<std::string> targets;
  for (const ir::Region* r : regions.regions()) {
    ++s.regions;
    targets.insert(r->target);
    std::unordered_set<const ir::ExprNode*> outs;
    std::size_t flat = 0;
    for (const auto& end : r->outs) {
      const ir::Expr& arg = ir::as<ir::CallNode>(end)->args()[0];
      if (outs.insert(arg.get()).second) flat += ir::flat_count(arg->type());
    }
    if (flat > 1) ++s.multi_output_regions;
    std::size_t members = 0;
    for (const auto& n : r->nodes) members += ir::annotation_target(n.get()) ? 0 : 1;
    if (members == 1) ++s.single_op_regions;
  }
  s.targets.assign(targets.begin(), targets.end());

  const auto order = ir::post_order(body);
  std::unordered_map<const ir::ExprNode*, int> ends_per_value;
  // upstream[n]: some region reaches host node n; parents: for the downstream pass.
  std::unordered_map<const ir::ExprNode*, bool> upstream;
  std::unordered_map<const ir::ExprNode*, std::vector<const ir::ExprNode*>> parents;
  for (const auto& node : order) {
    const ir::ExprNode* n = node.get();
    for (const auto& kid : ir::children(*n)) parents[kid.get()].push_back(n);
    if (const auto* call = ir::as<ir::CallNode>(n)) {
      if (call->is_op(ir::Op::kCompilerBegin)) {
        ++s.begins;
        continue;
      }
      if (call->is_op(ir::Op::kCompilerEnd)) {
        ++s.ends;
        const ir::Expr& arg = call->args()[0];
        if (arg->type()->is_tuple()) ++s.ends_on_tuples;
        if (++ends_per_value[arg.get()] == 2) ++s.multi_end_values;
        continue;
      }
      if (call->op() && ir::is_elementwise(*call->op())) ++s.ops;
    } else if (ir::as<ir::ConstantNode>(n)) {
      ++s.constants;
      continue;
    } else if (const auto* tuple = ir::as<ir::TupleNode>(n)) {
      const bool constant =
          !tuple->fields().empty() &&
          std::all_of(tuple->fields().begin(), tuple->fields().end(),
                      [](const ir::Expr& f) { return ir::as<ir::ConstantNode>(f) != nullptr; });
      if (constant) {
        ++s.constant_tuples;
        continue;
      }
      ++s.tuples;
    } else if (ir::as<ir::TupleGetItemNode>(n)) {
      ++s.tuple_get_items;
    } else {
      continue;  // parameters and functions
    }
    if (regions.region_of(n) != nullptr) continue;
    ++s.host_ops;
    bool up = false;
    for (const auto& kid : ir::children(*n)) {
      up = up || is_call_of(kid.get(), ir::Op::kCompilerEnd) || upstream[kid.get()];
    }
    upstream[n] = up;
  }
  // downstream[n]: host node n reaches some region (through host nodes and a begin).
  std::unordered_map<const ir::ExprNode*, bool> downstream;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::ExprNode* n = it->get();
    auto up = upstream.find(n);
    if (up == upstream.end()) continue;  // not a host op
    bool down = false;
    for (const ir::ExprNode* parent : parents[n]) {
      down = down || is_call_of(parent, ir::Op::kCompilerBegin) || downstream[parent];
    }
    downstream[n] = down;
    if (down && up->second) ++s.host_ops_between_regions;
  }
  return s;
}

}  // namespace aotfuzz::generator
