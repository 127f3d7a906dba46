// FuseOps: TVM v0.8's IndexedForwardGraph, post-dominator tree, GraphPartitioner and FuseMutator,
// with every graph walk iterative; and the kernel names of TVM's lowering.
//
// Requires: a module that passes ir::verify() (checked only with verify_input). Ensures: the ops
// of each user function are grouped into Primitive=1 functions as TVM groups them; the output
// passes ir::verify() (guarded_pass checks it); the input is left unchanged. KernelNames names
// the distinct kernels of such a module as TVM's LowerTE does.
#include "aot/fuse_ops.h"

#include <cstdint>
#include <span>
#include <unordered_map>

#include "aot/annotations.h"
#include "aot/pass_guard.h"
#include "ir/node_map.h"
#include "ir/structural.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

constexpr const char* kPassName = "fuse";

// TVM's OpPatternKind (the order matters: patterns are compared and combined by max).
enum Pattern : int {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};

int op_pattern(ir::Op op) { return ir::is_elementwise(op) ? kBroadcast : kOpaque; }

struct Edge {
  int node;
  int pattern;
};

// IndexedForwardGraph: nodes in post-DFS order, each with its consumers (in compressed rows:
// the consumers of node i are `edges[first_edge[i] .. first_edge[i + 1])`, in TVM's order).
struct ForwardGraph {
  std::vector<ir::Expr> nodes;
  std::vector<bool> extern_ref;
  std::vector<int> pattern;
  std::vector<std::size_t> first_edge;
  std::vector<Edge> edges;
  ir::NodeMap<int> index;

  int index_of(const ir::Expr& e) const { return *index.find(e.get()); }
  std::span<const Edge> outputs(std::size_t i) const {
    return {edges.data() + first_edge[i], edges.data() + first_edge[i + 1]};
  }
};

bool in_graph(const ir::ExprNode& node) {
  return node.kind() != ir::ExprKind::kGlobalVar && node.kind() != ir::ExprKind::kFunction;
}

ForwardGraph build_graph(const ir::Function& fn, const BugSet& bugs) {
  ForwardGraph g;
  const std::vector<ir::Expr>& order = fn->body_order();
  g.index.reserve(order.size() + fn->params().size());
  g.nodes.reserve(order.size() + fn->params().size());
  auto add = [&](ir::Expr e) {
    if (g.index.try_emplace(e.get(), static_cast<int>(g.nodes.size())).second) {
      g.nodes.push_back(std::move(e));
    }
  };
  // TVM visits the parameters before the body.
  for (const auto& p : fn->params()) add(p);
  for (const auto& node : order) {
    if (in_graph(*node)) add(node);
  }
  const std::size_t n = g.nodes.size();
  g.extern_ref.assign(n, false);
  g.pattern.assign(n, kOpaque);
  for (const auto& p : fn->params()) g.extern_ref[g.index_of(p)] = true;
  g.extern_ref[g.index_of(fn->body())] = true;
  // Two rounds over the same edges: the first counts each node's consumers, the second places
  // them, in the order TVM appends them.
  std::vector<std::size_t> next(n + 1, 0);
  for (int round = 0; round < 2; ++round) {
    auto edge = [&](const ir::Expr& from, int to, int pattern) {
      const int i = g.index_of(from);
      if (round == 0) {
        ++next[i + 1];
      } else {
        g.edges[next[i]++] = Edge{to, pattern};
      }
    };
    for (std::size_t i = 0; i < n; ++i) {
      const ir::Expr& node = g.nodes[i];
      const int self = static_cast<int>(i);
      if (const auto* call = ir::as<ir::CallNode>(node)) {
        const int pattern = call->op() ? op_pattern(*call->op()) : kOpaque;
        g.pattern[i] = pattern;
        for (const auto& arg : call->args()) {
          int kind = pattern;
          if (kind == kBroadcast && arg->type()->is_tensor() && node->type()->is_tensor() &&
              arg->type()->shape() == node->type()->shape()) {
            kind = kElemWise;
          }
          edge(arg, self, kind);
        }
      } else if (const auto* tuple = ir::as<ir::TupleNode>(node)) {
        g.pattern[i] = kTuple;
        for (const auto& field : tuple->fields()) {
          if (field->type()->is_tensor()) {
            edge(field, self, kInjective);
          } else {
            g.extern_ref[g.index_of(field)] = true;
          }
        }
      } else if (const auto* c = ir::as<ir::ConstantNode>(node)) {
        // TVM fuses a scalar float32 or int32 constant into its consumer; any other constant
        // stays opaque, so its group receives it as an argument.
        g.pattern[i] = c->is_scalar() && c->type()->dtype() != ir::DType::kInt8 ? kElemWise : kOpaque;
      } else if (const auto* tgi = ir::as<ir::TupleGetItemNode>(node)) {
        bool all_tensors = true;
        for (const auto& t : tgi->tuple()->type()->fields()) all_tensors &= t->is_tensor();
        // Injected bug kFuseStopsAtTupleGetItem: every projection is opaque.
        if (all_tensors && !bugs.on(Bug::kFuseStopsAtTupleGetItem)) {
          g.pattern[i] = kInjective;
          edge(tgi->tuple(), self, kInjective);
        } else {
          g.extern_ref[g.index_of(tgi->tuple())] = true;
        }
      }
    }
    if (round == 0) {
      for (std::size_t i = 0; i < n; ++i) next[i + 1] += next[i];
      g.first_edge = next;
      g.edges.resize(next[n]);
    }
  }
  return g;
}

// DominatorTree::PostDom: the immediate post-dominator of each node by LCA of its consumers.
struct PostDomTree {
  std::vector<int> parent, depth, pattern;

  explicit PostDomTree(const ForwardGraph& g) {
    const std::size_t n = g.nodes.size();
    parent.assign(n, -1);
    depth.assign(n, 0);
    pattern.assign(n, kOpaque);
    for (std::size_t i = n; i-- > 0;) {
      const std::span<const Edge> outputs = g.outputs(i);
      if (g.extern_ref[i] || outputs.empty()) {
        depth[i] = 1;
        continue;
      }
      int p = kElemWise;
      int lca = outputs[0].node;
      p = std::max(p, outputs[0].pattern);
      for (std::size_t k = 1; k < outputs.size(); ++k) {
        lca = common_ancestor(lca, outputs[k].node, p);
        p = std::max(p, outputs[k].pattern);
      }
      parent[i] = lca;
      depth[i] = lca >= 0 ? depth[lca] + 1 : 1;
      pattern[i] = p;
    }
  }

  int common_ancestor(int lhs, int rhs, int& p) const {
    while (lhs != rhs) {
      if (lhs < 0 || rhs < 0) return -1;
      if (depth[lhs] < depth[rhs]) {
        p = std::max(p, pattern[rhs]);
        rhs = parent[rhs];
      } else if (depth[rhs] < depth[lhs]) {
        p = std::max(p, pattern[lhs]);
        lhs = parent[lhs];
      } else {
        p = std::max({p, pattern[lhs], pattern[rhs]});
        lhs = parent[lhs];
        rhs = parent[rhs];
      }
    }
    return lhs;
  }
};

// GraphPartitioner: union-find groups and TVM's three fusion phases.
class Partitioner {
 public:
  struct Group {
    int parent = -1;
    int pattern = kOpaque;
    int root_ref = -1;
    int anchor_ref = -1;
    std::uint32_t num_nodes = 1;
  };

  Partitioner(const ForwardGraph& g, int max_fuse_depth)
      : g_(g), dom_(g), max_depth_(static_cast<std::size_t>(max_fuse_depth)) {
    groups_.resize(g.nodes.size());
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      groups_[i].pattern = g.pattern[i];
      groups_[i].root_ref = static_cast<int>(i);
      if (groups_[i].pattern == kOutEWiseFusable) groups_[i].anchor_ref = static_cast<int>(i);
    }
    seen_.assign(groups_.size(), 0);
    for (int phase = 0; phase < 3; ++phase) run_fuse(phase);
  }

  int find(int gid) {
    int root = gid;
    while (groups_[root].parent >= 0) root = groups_[root].parent;
    while (gid != root) {
      int next = groups_[gid].parent;
      groups_[gid].parent = root;
      gid = next;
    }
    return root;
  }
  const Group& group(int gid) const { return groups_[gid]; }

 private:
  // Nodes reachable from the outputs of `src` (or from `src` itself) up to `sink`, each once.
  template <class F>
  bool walk_to_sink(int src, int sink, bool include_src, F visit) {
    ++epoch_;
    std::vector<int>& stack = stack_;
    stack.clear();
    if (include_src) {
      stack.push_back(src);
    } else {
      const std::span<const Edge> outputs = g_.outputs(src);
      for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back(it->node);
    }
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (seen_[n] == epoch_) continue;
      seen_[n] = epoch_;
      if (!visit(n)) return false;
      if (n == sink) continue;
      const std::span<const Edge> outputs = g_.outputs(n);
      for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back(it->node);
    }
    return true;
  }

  // CheckPath: every node between src (excluded) and sink (included) satisfies fcond.
  template <class F>
  bool check_path(int src, int sink, F fcond) {
    return walk_to_sink(src, sink, false,
                        [&](int n) { return fcond(groups_[find(n)].pattern, n == sink); });
  }

  void merge_from_to(int child, int parent) {
    child = find(child);
    parent = find(parent);
    if (child == parent) return;
    groups_[parent].num_nodes += groups_[child].num_nodes;
    groups_[child].parent = parent;
    if (groups_[child].anchor_ref >= 0) {
      groups_[parent].anchor_ref = groups_[child].anchor_ref;
      groups_[parent].pattern = std::max(groups_[child].pattern, groups_[parent].pattern);
    }
  }

  // CommitFuse: every node from src up to (not including) sink joins sink's group.
  void commit_fuse(int src, int sink) {
    const int target = sink;
    walk_to_sink(src, sink, true, [&](int n) {
      if (n != sink) merge_from_to(n, target);
      return true;
    });
  }

  // CountFusedNodesWithNewChild, including TVM's use of the child-side groups' own counts.
  std::size_t count_fused_nodes(int child, int dom_parent) {
    std::size_t sum = groups_[find(dom_parent)].num_nodes;
    walk_to_sink(child, dom_parent, true, [&](int n) {
      if (n != dom_parent) sum += groups_[n].num_nodes;
      return true;
    });
    return sum;
  }

  void run_fuse(int phase) {
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      const int nid = static_cast<int>(i);
      const int pattern = groups_[nid].pattern;
      if (pattern == kOpaque) continue;
      const int dom_parent = dom_.parent[nid];
      if (dom_parent < 0) continue;
      // TVM tests the group size first; it is a pure count, so it is left until a fusion is
      // otherwise possible (the cheap tests decide most nodes).
      auto fits = [&] { return count_fused_nodes(nid, dom_parent) <= max_depth_; };
      if (phase == 2) {
        // Fuse injective ops into intermediate tuples, if any.
        if (pattern > kInjective) continue;
        const int dom_root = find(dom_parent);
        if (groups_[dom_root].pattern == kTuple) continue;
        if (groups_[dom_parent].pattern == kTuple && groups_[dom_root].pattern <= kInjective) {
          if (fits() &&
              check_path(nid, dom_parent, [](int kind, bool) { return kind <= kInjective; })) {
            commit_fuse(nid, dom_parent);
          }
        }
        continue;
      }
      if (find(nid) == find(dom_parent)) continue;
      if (groups_[dom_parent].pattern == kTuple) continue;
      if (pattern == kOutEWiseFusable) {
        if (phase != 0) continue;
        if (dom_.pattern[nid] == kElemWise && fits() &&
            check_path(nid, dom_parent, [](int kind, bool) { return kind <= kBroadcast; })) {
          commit_fuse(nid, dom_parent);
        }
      } else if (pattern <= kBroadcast) {
        if (dom_.pattern[nid] <= kInjective || dom_.pattern[nid] == kCommReduce) {
          auto fcond = [](int kind, bool is_sink) {
            if (!is_sink) return kind <= kInjective;
            return kind <= kBroadcast || kind == kCommReduce || kind == kInjective ||
                   kind == kOutEWiseFusable;
          };
          if (fits() && check_path(nid, dom_parent, fcond)) commit_fuse(nid, dom_parent);
        }
      } else if (pattern == kInjective || pattern == kTuple) {
        if (phase != 1) continue;
        if (fits() &&
            check_path(nid, dom_parent, [](int kind, bool) { return kind <= kInjective; })) {
          commit_fuse(nid, dom_parent);
        }
      }
    }
  }

  const ForwardGraph& g_;
  PostDomTree dom_;
  std::size_t max_depth_;
  std::vector<Group> groups_;
  std::vector<unsigned> seen_;
  unsigned epoch_ = 0;
  std::vector<int> stack_;  // walk_to_sink's, kept to reuse its storage
};

// FuseMutator: rewrites the body in post order, wrapping each group in a primitive function.
class FuseMutator {
 public:
  FuseMutator(const ForwardGraph& g, Partitioner& parts) : g_(g), parts_(parts) {
    post_.resize(g.nodes.size());
    info_.resize(g.nodes.size());
  }

  ir::Expr run(const ir::Function& fn) {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) post_[i] = rewrite(static_cast<int>(i));
    return post_[g_.index_of(fn->body())];
  }

 private:
  struct GroupInfo {
    std::vector<ir::Var> params;
    std::vector<ir::Expr> arguments;
  };

  const ir::Expr& post_of(const ir::Expr& e) const {
    const int* i = g_.index.find(e.get());
    return i == nullptr ? e : post_[*i];
  }

  // TVM's GetOrAllocParam: a group's parameter for `arg`, one per distinct argument, found by a
  // linear scan as TVM does (groups have few inputs).
  ir::Var param_for(int group, const ir::Expr& arg, const ir::Type& type) {
    GroupInfo& info = info_[group];
    for (std::size_t i = 0; i < info.arguments.size(); ++i) {
      if (info.arguments[i] == arg) return info.params[i];
    }
    std::string param_name = "p";
    param_name += std::to_string(info.params.size());
    ir::Var var = ir::VarNode::make(std::move(param_name), type);
    info.params.push_back(var);
    info.arguments.push_back(arg);
    return var;
  }

  std::vector<ir::Expr> new_arguments(const std::vector<ir::Expr>& args, int group) {
    std::vector<ir::Expr> out;
    out.reserve(args.size());
    for (const auto& arg : args) {
      // Every argument is a node of the graph: one index lookup for both uses.
      const int index = g_.index_of(arg);
      const ir::Expr& new_arg = post_[index];
      if (parts_.find(index) != group) {
        out.push_back(param_for(group, new_arg, arg->type()));
      } else {
        out.push_back(new_arg);
      }
    }
    return out;
  }

  ir::Expr make_function(int group, const ir::Expr& body) {
    const GroupInfo& info = info_[group];
    bool has_call = body->kind() == ir::ExprKind::kCall;
    if (!has_call) {
      for (const auto& n : ir::post_order(body)) has_call |= n->kind() == ir::ExprKind::kCall;
    }
    if (!has_call) {
      // No kernel for a group without calls: put the arguments back in place of the parameters.
      std::unordered_map<const ir::ExprNode*, ir::Expr> back;
      for (std::size_t i = 0; i < info.params.size(); ++i) {
        back.emplace(info.params[i].get(), info.arguments[i]);
      }
      return ir::substitute(body, back);
    }
    ir::Function fn =
        ir::FunctionNode::make(info.params, body, ir::Attrs{{"Primitive", std::int64_t{1}}});
    return ir::CallNode::make(fn, info.arguments);
  }

  ir::Expr rewrite(int nid) {
    const ir::Expr& node = g_.nodes[nid];
    const int group = parts_.find(nid);
    const bool is_root = parts_.group(group).root_ref == nid;
    if (const auto* call = ir::as<ir::CallNode>(node)) {
      // Annotations are non-computational in TVM: FuseMutator leaves them unwrapped.
      if (call->op() && !ir::is_annotation(*call->op())) {
        ir::Expr new_call =
            ir::CallNode::make(*call->op(), new_arguments(call->args(), group), call->attrs());
        return is_root ? make_function(group, new_call) : new_call;
      }
    } else if (const auto* tuple = ir::as<ir::TupleNode>(node)) {
      if (!is_root) return ir::TupleNode::make(new_arguments(tuple->fields(), group));
    } else if (const auto* tgi = ir::as<ir::TupleGetItemNode>(node)) {
      if (g_.pattern[nid] == kInjective) {
        ir::Expr new_node =
            ir::TupleGetItemNode::make(new_arguments({tgi->tuple()}, group)[0], tgi->index());
        if (!is_root) return new_node;
        if (parts_.find(g_.index_of(tgi->tuple())) == group) return make_function(group, new_node);
        // Isolated (the tuple comes from an opaque call): keep the TupleGetItem as it is.
      }
    }
    const std::size_t n = ir::num_children(*node);
    std::size_t k = 0;
    while (k < n && post_of(ir::child(*node, k)) == ir::child(*node, k)) ++k;
    if (k == n) return node;  // what with_children gives for unchanged children
    std::vector<ir::Expr> kids;
    kids.reserve(n);
    for (std::size_t i = 0; i < n; ++i) kids.push_back(post_of(ir::child(*node, i)));
    return ir::with_children(node, std::move(kids));
  }

  const ForwardGraph& g_;
  Partitioner& parts_;
  std::vector<ir::Expr> post_;
  std::vector<GroupInfo> info_;  // by group (its root node's index)
};

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

ir::Expr fuse_ops_in_function(const ir::Function& function, int max_fuse_depth,
                              const BugSet& bugs) {
  ForwardGraph graph = build_graph(function, bugs);
  Partitioner partitioner(graph, max_fuse_depth);
  return FuseMutator(graph, partitioner).run(function);
}

ir::Module fuse_ops(const ir::Module& module, const Options& options) {
  return guarded_pass(kPassName, module, options.verify_input, [&](const ir::Module& in) {
    if (options.max_fuse_depth < 1) {
      throw PassError(
          kPassName, PassError::Kind::kRejectedInput,
          "max_fuse_depth must be at least 1, got " + std::to_string(options.max_fuse_depth));
    }
    ir::Module out;
    for (const auto& [name, fn] : in.functions()) {
      if (!is_user_function(*fn)) {
        out.add(name, fn);
        continue;
      }
      ir::Expr body = fuse_ops_in_function(fn, options.max_fuse_depth, options.bugs);
      out.add(name, body == fn->body()
                        ? fn
                        : ir::FunctionNode::make(fn->params(), body, fn->attrs(), nullptr));
    }
    return out;
  });
}

std::string kernel_base_name(const ir::FunctionNode& primitive) {
  constexpr std::size_t kMaxFuncNameLength = 80;
  std::string name = "fused";
  for (const auto& node : primitive.body_order()) {
    const auto* call = ir::as<ir::CallNode>(node);
    if (call != nullptr && call->op()) name.append("_").append(ir::op_name(*call->op()));
  }
  if (name.size() > kMaxFuncNameLength) {
    name = name.substr(0, kMaxFuncNameLength) + "_" + std::to_string(fnv1a(name)) + "_";
  }
  return name;
}

KernelNames::KernelNames(const ir::Module& fused, std::string_view mod_name, BugSet bugs) {
  std::unordered_map<std::string, int> name_uses;
  // TVM's compile-engine cache: kernels by structural hash, then structural equality.
  std::unordered_multimap<std::size_t, std::size_t> by_hash;  // structural hash -> kernel
  auto lower = [&](const ir::Function& fn) {
    if (kernel_of_.contains(fn.get())) return;
    const std::size_t hash = ir::structural_hash(fn);
    auto [lo, hi] = by_hash.equal_range(hash);
    for (auto it = lo; it != hi; ++it) {
      if (ir::structural_equal(kernels_[it->second].function, fn)) {
        kernel_of_.try_emplace(fn.get(), it->second);
        return;
      }
    }
    // TVM's GetUniqueName over the mangled name.
    std::string name = mangled_module_name(mod_name);
    name.append("_").append(kernel_base_name(*fn));
    name = sanitize_name(std::move(name));
    for (;;) {
      auto [it, inserted] = name_uses.try_emplace(name, 1);  // one lookup for both outcomes
      if (inserted || bugs.on(Bug::kKernelNameClash)) break;
      name += '_';
      name += std::to_string(it->second++);
    }
    by_hash.emplace(hash, kernels_.size());
    kernel_of_.try_emplace(fn.get(), kernels_.size());
    kernels_.push_back({std::move(name), fn});
  };
  std::vector<const ir::Function*> order;
  ir::NodeSet visited(64);
  std::vector<const ir::Expr*> stack;
  stack.reserve(64);
  if (const ir::Function* main = fused.find("main")) order.push_back(main);
  for (const auto& [name, fn] : fused.functions()) {
    if (name != "main") order.push_back(&fn);
  }
  for (const ir::Function* fn : order) {
    if (!is_user_function(**fn)) continue;
    // LowerTE's mutator lowers a call's callee before visiting its arguments: pre order. The
    // stack points into the graph, which `fused` keeps alive. One visited set serves every
    // function: a subgraph shared with an earlier function had all its callees lowered there.
    stack.assign(1, &(*fn)->body());
    while (!stack.empty()) {
      const ir::Expr& node = *stack.back();
      stack.pop_back();
      if (!visited.insert(node.get())) continue;
      if (const auto* call = ir::as<ir::CallNode>(node)) {
        if (call->callee() && call->callee()->kind() == ir::ExprKind::kFunction) {
          const auto& callee = static_cast<const ir::FunctionNode&>(*call->callee());
          if (callee.attrs().get_int("Primitive").value_or(0) != 0 &&
              !callee.attrs().has("Compiler")) {
            lower(std::static_pointer_cast<const ir::FunctionNode>(call->callee()));
          }
        }
        for (auto it = call->args().rbegin(); it != call->args().rend(); ++it)
          stack.push_back(&*it);
      } else {
        for (std::size_t k = ir::num_children(*node); k-- > 0;) {
          stack.push_back(&ir::child(*node, k));
        }
      }
    }
  }
}

const std::string& KernelNames::name_of(const ir::FunctionNode* primitive) const {
  const std::size_t* kernel = kernel_of_.find(primitive);
  if (kernel == nullptr) {
    throw PassError(kPassName, PassError::Kind::kRejectedInput,
                    "no host kernel for this function: it is not a Primitive=1 local function "
                    "called from the module");
  }
  return kernels_[*kernel].name;
}

}  // namespace aotfuzz::aot
