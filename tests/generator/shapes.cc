// Shape predicates for the generator tests, written over the IR independently of the builder.
#include "tests/generator/shapes.h"

#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "ir/regions.h"
#include "ir/traversal.h"
#include "reference/c_interface.h"
#include "reference/tvm_passes.h"

namespace aotfuzz::generator::testing {
namespace {

const ir::CallNode* op_call(const ir::ExprNode* node, ir::Op op) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(op) ? call : nullptr;
}

const ir::ExprNode* end_arg(const ir::ExprNode* node) {
  const auto* end = op_call(node, ir::Op::kCompilerEnd);
  return end ? end->args()[0].get() : nullptr;
}

// Region id per node (regions as TVM's analysis builds them), -1 outside.
int region_id(const ir::RegionSet& set, const ir::ExprNode* node) {
  const ir::Region* r = set.region_of(node);
  return r ? r->id : -1;
}

bool is_host_add(const ir::RegionSet& set, const ir::ExprNode* node) {
  return op_call(node, ir::Op::kAdd) != nullptr && set.region_of(node) == nullptr;
}

}  // namespace

bool has_9036_shape(const ir::Module& m) {
  const ir::Expr& body = m.main()->body();
  const ir::RegionSet set = ir::RegionSet::build(body);
  for (const auto& node : ir::post_order(body)) {
    if (!is_host_add(set, node.get())) continue;
    const auto& args = ir::as<ir::CallNode>(node)->args();
    for (int first = 0; first < 2; ++first) {
      const ir::ExprNode* a = end_arg(args[first].get());
      const ir::ExprNode* b = end_arg(args[1 - first].get());
      if (a == nullptr || b == nullptr) continue;
      const ir::Region* ra = set.region_of(a);
      const ir::Region* rb = set.region_of(b);
      if (ra == rb || ra->target != rb->target) continue;
      for (const auto& in : rb->ins) {
        if (end_arg(ir::as<ir::CallNode>(in)->args()[0].get()) == a) return true;
      }
    }
  }
  return false;
}

bool has_end_on_tuple(const ir::Module& m) {
  for (const auto& node : ir::post_order(m.main()->body())) {
    const ir::ExprNode* arg = end_arg(node.get());
    if (arg != nullptr && arg->type()->is_tuple()) return true;
  }
  return false;
}

bool has_extern_feeding_chained_host_adds(const ir::Module& m) {
  const ir::Expr& body = m.main()->body();
  const ir::RegionSet set = ir::RegionSet::build(body);
  for (const auto& node : ir::post_order(body)) {
    if (!is_host_add(set, node.get())) continue;
    const auto& args = ir::as<ir::CallNode>(node)->args();
    for (int first = 0; first < 2; ++first) {
      const ir::ExprNode* inner = args[first].get();
      const ir::ExprNode* value = end_arg(args[1 - first].get());
      if (value == nullptr || !is_host_add(set, inner)) continue;
      for (const auto& inner_arg : ir::as<ir::CallNode>(inner)->args()) {
        if (end_arg(inner_arg.get()) == value) return true;
      }
    }
  }
  return false;
}

bool has_single_op_region(const ir::Module& m) {
  const ir::RegionSet set = ir::RegionSet::build(m.main()->body());
  for (const ir::Region* r : set.regions()) {
    int ops = 0;
    for (const auto& n : r->nodes) ops += ir::annotation_target(n.get()) ? 0 : 1;
    if (ops == 1) return true;
  }
  return false;
}

bool region_graph_is_acyclic(const ir::Module& m) {
  const ir::Expr& body = m.main()->body();
  const ir::RegionSet set = ir::RegionSet::build(body);
  const auto order = ir::post_order(body);
  // Units: one per region, one per node outside regions.
  std::unordered_map<const ir::ExprNode*, int> unit;
  std::map<int, int> region_unit;
  int units = 0;
  for (const auto& node : order) {
    const int r = region_id(set, node.get());
    if (r < 0) {
      unit[node.get()] = units++;
    } else {
      auto [it, fresh] = region_unit.emplace(r, units);
      if (fresh) ++units;
      unit[node.get()] = it->second;
    }
  }
  std::vector<std::set<int>> out(units);
  std::vector<int> indegree(units, 0);
  for (const auto& node : order) {
    for (const auto& kid : ir::children(*node)) {
      const int from = unit.at(kid.get());
      const int to = unit.at(node.get());
      if (from != to && out[from].insert(to).second) ++indegree[to];
    }
  }
  std::vector<int> ready;
  for (int u = 0; u < units; ++u) {
    if (indegree[u] == 0) ready.push_back(u);
  }
  int seen = 0;
  while (!ready.empty()) {
    const int u = ready.back();
    ready.pop_back();
    ++seen;
    for (int v : out[u]) {
      if (--indegree[v] == 0) ready.push_back(v);
    }
  }
  return seen == units;
}

bool has_host_path_inside_merge_group(const ir::Module& m) {
  const ir::Expr& body = m.main()->body();
  const ir::RegionSet set = ir::RegionSet::build(body);
  const auto order = ir::post_order(body);
  // Merge groups: union-find over region ids linked by same-target end->begin edges.
  std::map<int, int> parent;
  for (const ir::Region* r : set.regions()) parent[r->id] = r->id;
  auto find = [&](int x) {
    while (parent.at(x) != x) x = parent.at(x);
    return x;
  };
  for (const ir::Region* child : set.regions()) {
    for (const auto& in : child->ins) {
      const ir::ExprNode* src = ir::as<ir::CallNode>(in)->args()[0].get();
      const ir::Region* par = end_arg(src) ? set.region_of(src) : nullptr;
      if (par != nullptr && par->target == child->target) parent[find(par->id)] = find(child->id);
    }
  }
  // up[n]: regions upstream of n; tainted[n]: regions upstream through a host node.
  std::unordered_map<const ir::ExprNode*, std::set<int>> up;
  std::unordered_map<const ir::ExprNode*, std::set<int>> tainted;
  for (const auto& node : order) {
    const ir::ExprNode* n = node.get();
    std::set<int>& u = up[n];
    std::set<int>& t = tainted[n];
    for (const auto& kid : ir::children(*n)) {
      u.insert(up[kid.get()].begin(), up[kid.get()].end());
      t.insert(tainted[kid.get()].begin(), tainted[kid.get()].end());
    }
    const int r = region_id(set, n);
    if (r >= 0) {
      u.insert(r);
      for (int source : t) {
        if (find(source) == find(r)) return true;
      }
    } else if (node->kind() != ir::ExprKind::kVar && !ir::annotation_target(n)) {
      t = u;  // every path through a host node is a host path
    }
  }
  return false;
}

bool partitions_after_merging(const ir::Module& m) {
  try {
    reference::partition_graph(reference::merge_compiler_regions(m), "");
    return true;
  } catch (const reference::TvmRefuses&) {
    return false;
  }
}

bool c_interface_refuses_input_names(const ir::Module& m) {
  try {
    reference::c_interface_input_names(m.main());
    return false;
  } catch (const reference::TvmRefuses&) {
    return true;
  }
}

}  // namespace aotfuzz::generator::testing
