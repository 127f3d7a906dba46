// The traversal order of TVM's MixedModeVisitor / MixedModeMutator, without recursion: a post-order
// walk (callee, then arguments left to right) in which the handling of one node may first walk
// further subgraphs, as TVM's passes call VisitExpr() from inside VisitExpr_().
// MergeCompilerRegions and PartitionGraph depend on exactly this order (which regions are processed
// first, which parameters come first), so they share this engine.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"

namespace aotfuzz::aot {

/// Walks expression graphs once each node (across every walk() call), children first.
class NestedWalk {
 public:
  /// The pending handling of one node.
  class Task {
   public:
    virtual ~Task() = default;
    /// The next subgraph to walk before the node can be finished, or nullptr when none is left.
    virtual ir::Expr next() = 0;
    /// Completes the node; called once, after next() returned nullptr.
    virtual void finish() = 0;
  };
  /// Handles a node whose children are all visited: either completely (returns nullptr) or by
  /// returning a Task.
  using StartFn = std::function<std::unique_ptr<Task>(const ir::Expr& node)>;
  /// Called when a node is reached again while its own Task is still pending: the re-entry that
  /// made TVM recurse forever. Must throw.
  using CycleFn = std::function<void(const ir::Expr& node)>;

  NestedWalk(StartFn start, CycleFn on_cycle)
      : start_(std::move(start)), on_cycle_(std::move(on_cycle)) {}

  /// Visits every node of `root` not yet visited. Calls made from inside a Task are not allowed;
  /// a Task asks for nested walks through next().
  void walk(const ir::Expr& root);
  bool visited(const ir::ExprNode* node) const { return visited_.contains(node); }
  /// Every node visited so far, in the order each was finished: always after its children, so
  /// it is a valid post order for analyses that need one.
  const std::vector<ir::Expr>& order() const { return order_; }

 private:
  StartFn start_;
  CycleFn on_cycle_;
  ir::NodeSet visited_{64};
  std::vector<ir::Expr> order_;
  ir::NodeMap<bool> pending_;  // true while the node's Task is pending
};

}  // namespace aotfuzz::aot
