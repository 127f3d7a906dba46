// TVM v0.8's FuseOps (src/relay/transforms/fuse_ops.cc): IndexedForwardGraph::Creator,
// DominatorTree::PostDom, GraphPartitioner and FuseMutator, recursive as TVM's are.
#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ir/node_map.h"
#include "ir/traversal.h"
#include "reference/tvm_passes.h"
#include "reference/user_functions.h"

namespace aotfuzz::reference {
namespace {

// OpPatternKind (include/tvm/relay/op_attr_types.h).
enum OpPatternKind : int {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};

// TOpPattern of the ops in the IR: add, subtract and multiply are registered kBroadcast; the
// annotation ops kOpaque (src/relay/op/annotation/annotation.cc).
OpPatternKind op_pattern(ir::Op op) {
  switch (op) {
    case ir::Op::kAdd:
    case ir::Op::kSubtract:
    case ir::Op::kMultiply:
      return kBroadcast;
    default:
      return kOpaque;
  }
}

OpPatternKind combine_pattern(OpPatternKind lhs, OpPatternKind rhs) { return std::max(lhs, rhs); }

struct GraphNode;
struct Edge {
  GraphNode* node;
  OpPatternKind pattern;
};
// IndexedForwardGraph::Node.
struct GraphNode {
  const ir::ExprNode* ref = nullptr;
  std::size_t index = 0;
  bool extern_ref = false;
  OpPatternKind pattern = kOpaque;
  std::vector<Edge> outputs;
};

struct IndexedForwardGraph {
  std::deque<GraphNode> arena;
  std::unordered_map<const ir::ExprNode*, GraphNode*> node_map;
  std::vector<GraphNode*> post_dfs_order;
};

// IndexedForwardGraph::Creator: an ExprVisitor; a node's consumers add their edges to it before
// it is visited, and it is numbered after its children (post-DFS order).
class Creator {
 public:
  IndexedForwardGraph prepare(const ir::Function& fn) {
    update(fn.get(), nullptr, kOpaque);
    visit(fn);
    return std::move(graph_);
  }

 private:
  void update(const ir::ExprNode* key, GraphNode* parent, OpPatternKind pattern) {
    GraphNode*& current = graph_.node_map[key];
    if (current == nullptr) current = &graph_.arena.emplace_back();
    if (parent != nullptr) {
      current->outputs.push_back(Edge{parent, pattern});
    } else {
      current->extern_ref = true;
    }
  }

  void add_node(const ir::ExprNode* key) {
    GraphNode* node = graph_.node_map.at(key);
    node->ref = key;
    node->index = graph_.post_dfs_order.size();
    graph_.post_dfs_order.push_back(node);
  }

  // ExprVisitor::VisitExpr: each node once.
  void visit(const ir::Expr& expr) {
    if (!visited_.insert(expr.get())) return;
    switch (expr->kind()) {
      case ir::ExprKind::kFunction:
        return visit_function(static_cast<const ir::FunctionNode&>(*expr));
      case ir::ExprKind::kVar:
        return add_node(expr.get());
      case ir::ExprKind::kGlobalVar:
        return;
      case ir::ExprKind::kConstant: {
        // A scalar float32 or int32 constant fuses like an elementwise op (TVM: "this rule
        // must be consistent with code generator"); any other constant is opaque, left in the
        // caller and passed to the group as an argument.
        add_node(expr.get());
        const auto& c = static_cast<const ir::ConstantNode&>(*expr);
        const bool simple = c.type()->dtype() != ir::DType::kInt8;
        graph_.node_map.at(expr.get())->pattern = c.is_scalar() && simple ? kElemWise : kOpaque;
        return;
      }
      case ir::ExprKind::kCall:
        return visit_call(static_cast<const ir::CallNode&>(*expr));
      case ir::ExprKind::kTuple:
        return visit_tuple(static_cast<const ir::TupleNode&>(*expr));
      case ir::ExprKind::kTupleGetItem:
        return visit_tuple_get_item(static_cast<const ir::TupleGetItemNode&>(*expr));
    }
  }

  void visit_function(const ir::FunctionNode& fn) {
    if (fn.attrs().has("Compiler")) return;
    for (const ir::Var& param : fn.params()) update(param.get(), nullptr, kOpaque);
    update(fn.body().get(), nullptr, kOpaque);
    for (const ir::Var& param : fn.params()) visit(param);
    visit(fn.body());
  }

  void visit_call(const ir::CallNode& call) {
    GraphNode* node = graph_.node_map.at(&call);
    OpPatternKind pattern = kOpaque;
    if (call.op()) {
      pattern = op_pattern(*call.op());
    } else {
      update(call.callee().get(), node, kOpaque);
    }
    node->pattern = pattern;
    if (call.callee()) update(call.callee().get(), nullptr, kOpaque);
    const ir::Type& rtype = call.type();
    for (const ir::Expr& arg : call.args()) {
      OpPatternKind edge_pattern = pattern;
      if (edge_pattern == kBroadcast && arg->type()->is_tensor() && rtype->is_tensor() &&
          arg->type()->shape() == rtype->shape()) {
        edge_pattern = kElemWise;
      }
      update(arg.get(), node, edge_pattern);
    }
    if (call.callee()) visit(call.callee());
    for (const ir::Expr& arg : call.args()) visit(arg);
    add_node(&call);
  }

  void visit_tuple(const ir::TupleNode& tuple) {
    GraphNode* node = graph_.node_map.at(&tuple);
    node->pattern = kTuple;
    for (const ir::Expr& field : tuple.fields()) {
      if (field->type()->is_tensor()) {
        update(field.get(), node, kInjective);
      } else {
        update(field.get(), nullptr, kOpaque);
      }
    }
    for (const ir::Expr& field : tuple.fields()) visit(field);
    add_node(&tuple);
  }

  void visit_tuple_get_item(const ir::TupleGetItemNode& get) {
    bool has_non_tensor = false;
    for (const ir::Type& field : get.tuple()->type()->fields()) {
      has_non_tensor = has_non_tensor || !field->is_tensor();
    }
    if (has_non_tensor) {
      update(get.tuple().get(), nullptr, kOpaque);
    } else {
      GraphNode* node = graph_.node_map.at(&get);
      node->pattern = kInjective;
      update(get.tuple().get(), node, kInjective);
    }
    visit(get.tuple());
    add_node(&get);
  }

  IndexedForwardGraph graph_;
  ir::NodeSet visited_;
};

// DominatorTree::Node.
struct DomNode {
  GraphNode* gnode = nullptr;
  DomNode* parent = nullptr;
  int depth = 0;
  OpPatternKind pattern = kOpaque;
};

// DominatorTree::PostDom: each node's immediate post-dominator is the least common ancestor of
// its consumers, in reverse post-DFS order so the consumers are done first.
class DominatorTree {
 public:
  explicit DominatorTree(const IndexedForwardGraph& graph) : nodes_(graph.post_dfs_order.size()) {
    for (std::size_t i = graph.post_dfs_order.size(); i != 0; --i) {
      make_node(nodes_[i - 1], graph.post_dfs_order[i - 1]);
    }
  }
  const DomNode& at(std::size_t index) const { return nodes_[index]; }

 private:
  static DomNode* least_common_ancestor(DomNode* lhs, DomNode* rhs, OpPatternKind* pattern) {
    while (lhs != rhs) {
      if (lhs == nullptr || rhs == nullptr) return nullptr;
      if (lhs->depth < rhs->depth) {
        *pattern = combine_pattern(*pattern, rhs->pattern);
        rhs = rhs->parent;
      } else if (rhs->depth < lhs->depth) {
        *pattern = combine_pattern(*pattern, lhs->pattern);
        lhs = lhs->parent;
      } else {
        *pattern = combine_pattern(*pattern, lhs->pattern);
        *pattern = combine_pattern(*pattern, rhs->pattern);
        lhs = lhs->parent;
        rhs = rhs->parent;
      }
    }
    return lhs;
  }

  DomNode* least_common_ancestor(const std::vector<Edge>& outputs, OpPatternKind* pattern) {
    if (outputs.empty()) return nullptr;
    DomNode* parent = &nodes_[outputs[0].node->index];
    *pattern = combine_pattern(*pattern, outputs[0].pattern);
    for (std::size_t i = 1; i < outputs.size(); ++i) {
      parent = least_common_ancestor(parent, &nodes_[outputs[i].node->index], pattern);
      *pattern = combine_pattern(*pattern, outputs[i].pattern);
    }
    return parent;
  }

  void make_node(DomNode& tnode, GraphNode* gnode) {
    tnode.gnode = gnode;
    if (gnode->extern_ref) {
      tnode.depth = 1;
      tnode.parent = nullptr;
      tnode.pattern = kOpaque;
    } else {
      OpPatternKind pattern = kElemWise;
      DomNode* parent = least_common_ancestor(gnode->outputs, &pattern);
      tnode.depth = parent != nullptr ? parent->depth + 1 : 1;
      tnode.parent = parent;
      tnode.pattern = pattern;
    }
  }

  std::vector<DomNode> nodes_;
};

// GraphPartitioner::Group.
struct Group {
  Group* parent = nullptr;
  OpPatternKind pattern = kOpaque;
  const ir::ExprNode* root_ref = nullptr;
  const ir::ExprNode* anchor_ref = nullptr;
  std::size_t num_nodes = 1;

  Group* find_root() {
    Group* root = this;
    while (root->parent != nullptr) root = root->parent;
    for (Group* p = this; p != root;) {
      Group* next = p->parent;
      p->parent = root;
      p = next;
    }
    return root;
  }
};

// GraphPartitioner: three phases of fusing each node into its post-dominator's group.
class GraphPartitioner {
 public:
  explicit GraphPartitioner(std::size_t max_fuse_depth) : max_fuse_depth_(max_fuse_depth) {}

  std::deque<Group>& partition(const IndexedForwardGraph& graph) {
    for (const GraphNode* node : graph.post_dfs_order) {
      Group& group = groups_.emplace_back();
      group.pattern = node->pattern;
      group.root_ref = node->ref;
      if (group.pattern == kOutEWiseFusable) group.anchor_ref = node->ref;
    }
    const DominatorTree post_dom(graph);
    for (int phase = 0; phase < 3; ++phase) run_fuse(graph, post_dom, phase);
    return groups_;
  }

 private:
  template <class F>
  bool check_path_(GraphNode* src, GraphNode* sink, F fcond) {
    if (!visited_.insert(src).second) return true;
    Group* gnode = groups_[src->index].find_root();
    if (!fcond(gnode->pattern, src == sink)) return false;
    if (src == sink) return true;
    for (const Edge& link : src->outputs) {
      if (!check_path_(link.node, sink, fcond)) return false;
    }
    return true;
  }

  // CheckPath: every node on a path from src (excluded) to sink satisfies fcond.
  template <class F>
  bool check_path(GraphNode* src, GraphNode* sink, F fcond) {
    visited_.clear();
    for (const Edge& link : src->outputs) {
      if (!check_path_(link.node, sink, fcond)) return false;
    }
    return true;
  }

  void merge_from_to(Group* child, Group* parent) {
    child = child->find_root();
    parent = parent->find_root();
    if (child == parent) return;
    parent->num_nodes += child->num_nodes;
    child->parent = parent;
    if (child->anchor_ref != nullptr) {
      parent->anchor_ref = child->anchor_ref;
      parent->pattern = combine_pattern(child->pattern, parent->pattern);
    }
  }

  void commit_fuse_(GraphNode* src, GraphNode* sink, Group* target) {
    if (src == sink) return;
    if (!visited_.insert(src).second) return;
    merge_from_to(&groups_[src->index], target);
    for (const Edge& link : src->outputs) commit_fuse_(link.node, sink, target);
  }

  // CommitFuse: every node from src up to sink joins sink's group.
  void commit_fuse(GraphNode* src, GraphNode* sink) {
    visited_.clear();
    commit_fuse_(src, sink, &groups_[sink->index]);
  }

  std::size_t count_nodes_upto_sink_(GraphNode* src, GraphNode* sink) {
    if (src == sink || !visited_.insert(src).second) return 0;
    // The node's own group's count, root or not, as TVM counts.
    std::size_t sum = groups_[src->index].num_nodes;
    for (const Edge& link : src->outputs) sum += count_nodes_upto_sink_(link.node, sink);
    return sum;
  }

  std::size_t count_fused_nodes_with_new_child(GraphNode* child, GraphNode* dom_parent) {
    visited_.clear();
    return groups_[dom_parent->index].find_root()->num_nodes +
           count_nodes_upto_sink_(child, dom_parent);
  }

  void run_fuse(const IndexedForwardGraph& graph, const DominatorTree& post_dom, int phase) {
    for (std::size_t nid = 0; nid < groups_.size(); ++nid) {
      GraphNode* graph_node = graph.post_dfs_order[nid];
      const DomNode& dom_node = post_dom.at(nid);
      Group* group_node = &groups_[nid];
      if (group_node->pattern == kOpaque) continue;
      if (dom_node.parent == nullptr) continue;
      GraphNode* dom_parent = dom_node.parent->gnode;
      const std::size_t dom_parent_gindex = dom_parent->index;
      if (count_fused_nodes_with_new_child(graph_node, dom_parent) > max_fuse_depth_) continue;
      if (phase == 2) {
        // Fuse injective ops into intermediate tuples, if any.
        if (group_node->pattern > kInjective) continue;
        Group* dom_parent_group = &groups_[dom_parent_gindex];
        Group* dom_root_group = dom_parent_group->find_root();
        if (dom_root_group->pattern == kTuple) continue;
        if (dom_parent_group->pattern == kTuple && dom_root_group->pattern <= kInjective) {
          auto fcond = [](OpPatternKind kind, bool) { return kind <= kInjective; };
          if (check_path(graph_node, dom_parent, fcond)) commit_fuse(graph_node, dom_parent);
        }
        continue;
      }
      if (group_node->find_root() == groups_[dom_parent_gindex].find_root()) continue;
      if (groups_[dom_parent_gindex].pattern == kTuple) continue;
      if (group_node->pattern == kOutEWiseFusable) {
        if (phase != 0) continue;
        if (dom_node.pattern == kElemWise) {
          auto fcond = [](OpPatternKind kind, bool) { return kind <= kBroadcast; };
          if (check_path(graph_node, dom_parent, fcond)) commit_fuse(graph_node, dom_parent);
        }
      } else if (group_node->pattern <= kBroadcast) {
        if (dom_node.pattern <= kInjective || dom_node.pattern == kCommReduce) {
          auto fcond = [](OpPatternKind kind, bool is_sink) {
            if (!is_sink) return kind <= kInjective;
            return kind <= kBroadcast || kind == kCommReduce || kind == kInjective ||
                   kind == kOutEWiseFusable;
          };
          if (check_path(graph_node, dom_parent, fcond)) commit_fuse(graph_node, dom_parent);
        }
      } else if (group_node->pattern == kInjective || group_node->pattern == kTuple) {
        if (phase != 1) continue;
        auto fcond = [](OpPatternKind kind, bool) { return kind <= kInjective; };
        if (check_path(graph_node, dom_parent, fcond)) commit_fuse(graph_node, dom_parent);
      }
    }
  }

  std::size_t max_fuse_depth_;
  std::deque<Group> groups_;  // by post-DFS index
  std::unordered_set<GraphNode*> visited_;
};

// FuseMutator: each group becomes a call of a new primitive function at its root.
class FuseMutator {
 public:
  ir::Expr transform(const ir::Function& fn, std::size_t max_fuse_depth) {
    IndexedForwardGraph graph = Creator().prepare(fn);
    GraphPartitioner partitioner(max_fuse_depth);
    std::deque<Group>& groups = partitioner.partition(graph);
    for (std::size_t nid = 0; nid < graph.post_dfs_order.size(); ++nid) {
      gmap_[graph.post_dfs_order[nid]->ref] = &groups[nid];
    }
    return mutate(fn->body());
  }

 private:
  struct GroupInfo {
    std::vector<ir::Var> params;
    std::vector<ir::Expr> arguments;

    // GetOrAllocParam: one parameter per distinct argument (by identity), named p0, p1, ...
    ir::Var get_or_alloc_param(const ir::Expr& expr, const ir::Type& type) {
      for (std::size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i] == expr) return params[i];
      }
      // Appended to a named string: GCC 12 warns (-Wrestrict) on "p" + a temporary at -O2.
      std::string name = "p";
      name += std::to_string(params.size());
      ir::Var var = ir::VarNode::make(name, type);
      params.push_back(var);
      arguments.push_back(expr);
      return var;
    }
  };

  // MixedModeMutator::VisitExpr: memoised; the children of a dataflow node are mutated first (so
  // groups allocate their parameters in post order), then the node's Rewrite_ runs.
  ir::Expr mutate(const ir::Expr& expr) {
    if (const ir::Expr* done = memo_.find(expr.get())) return *done;
    for (std::size_t i = 0; i < ir::num_children(*expr); ++i) mutate(ir::child(*expr, i));
    ir::Expr result;
    switch (expr->kind()) {
      case ir::ExprKind::kCall:
        result = rewrite_call(expr);
        break;
      case ir::ExprKind::kTuple:
        result = rewrite_tuple(expr);
        break;
      case ir::ExprKind::kTupleGetItem:
        result = rewrite_tuple_get_item(expr);
        break;
      default:
        result = expr;  // vars, global vars; primitive functions are left as they are
    }
    memo_[expr.get()] = result;
    return result;
  }

  // ExprMutator::VisitExpr_: the node with its children mutated.
  ir::Expr mutate_children(const ir::Expr& expr) {
    std::vector<ir::Expr> kids;
    for (std::size_t i = 0; i < ir::num_children(*expr); ++i) {
      kids.push_back(mutate(ir::child(*expr, i)));
    }
    return ir::with_children(expr, std::move(kids));
  }

  std::vector<ir::Expr> get_new_arguments(const std::vector<ir::Expr>& args, Group* current) {
    std::vector<ir::Expr> new_args;
    for (const ir::Expr& arg : args) {
      Group* arg_group = gmap_.at(arg.get())->find_root();
      ir::Expr new_arg = mutate(arg);
      if (current != arg_group) {
        new_args.push_back(ginfo_[current].get_or_alloc_param(new_arg, arg->type()));
      } else {
        new_args.push_back(new_arg);
      }
    }
    return new_args;
  }

  ir::Expr rewrite_call(const ir::Expr& expr) {
    const auto& call = static_cast<const ir::CallNode&>(*expr);
    // Calls of global functions go through ExprMutator; the annotation ops are
    // TNonComputational, which FuseMutator leaves alone too.
    if (!call.op() || ir::is_annotation(*call.op())) return mutate_children(expr);
    Group* ret_group = gmap_.at(expr.get())->find_root();
    ir::Expr new_call =
        ir::CallNode::make(*call.op(), get_new_arguments(call.args(), ret_group), call.attrs());
    if (ret_group->root_ref == expr.get()) return make_new_function(ret_group, new_call);
    return new_call;
  }

  ir::Expr rewrite_tuple(const ir::Expr& expr) {
    const auto& tuple = static_cast<const ir::TupleNode&>(*expr);
    Group* ret_group = gmap_.at(expr.get())->find_root();
    if (ret_group->root_ref == expr.get()) return mutate_children(expr);
    return ir::TupleNode::make(get_new_arguments(tuple.fields(), ret_group));
  }

  ir::Expr rewrite_tuple_get_item(const ir::Expr& expr) {
    const auto& get = static_cast<const ir::TupleGetItemNode&>(*expr);
    Group* ret_group = gmap_.at(expr.get())->find_root();
    ir::Expr new_tuple = get_new_arguments({get.tuple()}, ret_group)[0];
    ir::Expr new_node = ir::TupleGetItemNode::make(new_tuple, get.index());
    if (ret_group->root_ref == expr.get()) {
      if (gmap_.at(get.tuple().get())->find_root() != ret_group) return mutate_children(expr);
      return make_new_function(ret_group, new_node);
    }
    return new_node;
  }

  // MakeNewFunction. TVM marks a group without any call Primitive=0; the pipeline's documented
  // difference (docs/design.md, FuseOps) leaves such a group unwrapped, its parameters replaced
  // by their arguments, and so does the reference.
  ir::Expr make_new_function(Group* group, const ir::Expr& body) {
    const GroupInfo& info = ginfo_[group];
    bool has_call = false;
    for (const ir::Expr& node : ir::post_order(body)) {
      has_call = has_call || node->kind() == ir::ExprKind::kCall;
    }
    if (!has_call) {
      std::unordered_map<const ir::ExprNode*, ir::Expr> arguments;
      for (std::size_t i = 0; i < info.params.size(); ++i) {
        arguments.emplace(info.params[i].get(), info.arguments[i]);
      }
      return ir::substitute(body, arguments);
    }
    ir::Function fn =
        ir::FunctionNode::make(info.params, body, ir::Attrs{{"Primitive", std::int64_t{1}}});
    return ir::CallNode::make(fn, info.arguments);
  }

  std::unordered_map<const ir::ExprNode*, Group*> gmap_;
  std::unordered_map<Group*, GroupInfo> ginfo_;
  ir::NodeMap<ir::Expr> memo_;
};

}  // namespace

ir::Module fuse_ops(const ir::Module& module, int max_fuse_depth) {
  if (max_fuse_depth < 1) {
    throw TvmRefuses("relay.FuseOps.max_depth must be at least 1, got " +
                     std::to_string(max_fuse_depth));
  }
  return map_user_functions(module, [&](const std::string&, const ir::Function& fn) {
    ir::Expr body;
    with_stack_for(fn->body_order().size(), [&] {
      body = FuseMutator().transform(fn, static_cast<std::size_t>(max_fuse_depth));
    });
    return body;
  });
}

}  // namespace aotfuzz::reference
