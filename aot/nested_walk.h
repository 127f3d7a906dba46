// The traversal order of TVM's MixedModeVisitor / MixedModeMutator, without recursion: a post-order
// walk (callee, then arguments left to right) in which the handling of one node may first walk
// further subgraphs, as TVM's passes call VisitExpr() from inside VisitExpr_().
// MergeCompilerRegions and PartitionGraph depend on exactly this order (which regions are processed
// first, which parameters come first), so they share this engine.
//
// Requires: the graph stays unchanged while the walker is used. Ensures: every reachable node is
// started once (children first), and a pending node is finished before the walk returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"

namespace aotfuzz::aot {

/// Walks expression graphs once each node (across every walk() call), children first.
///
/// The handler passed to walk() provides, for a node whose children are all visited:
///  - `bool start(const ir::Expr& node)`: handles the node completely (returns false), or leaves
///    it pending (returns true) until the subgraphs it asks for are walked;
///  - `ir::Expr next(const ir::Expr& node)`: for the innermost pending node, the next subgraph to
///    walk first, or nullptr when none is left;
///  - `void finish(const ir::Expr& node)`: completes that pending node (once, after next()
///    returned nullptr);
///  - `void on_cycle(const ir::Expr& node)`: the node was reached again while still pending, the
///    re-entry that made TVM recurse forever. Must throw.
/// Pending nodes nest: the one finished is always the one started last, so a handler can keep
/// its per-node state on a stack.
class NestedWalk {
 public:
  /// `expected_nodes` sizes the bookkeeping (a hint; more nodes are fine).
  explicit NestedWalk(std::size_t expected_nodes = 32) : state_(expected_nodes) {
    order_.reserve(expected_nodes);
  }

  /// Visits every node of `root` not yet visited. Calls made from inside the handler are not
  /// allowed; the handler asks for nested walks through next().
  template <class Handler>
  void walk(const ir::Expr& root, Handler& handler);

  /// Whether `node` has been finished (by any walk() so far).
  bool visited(const ir::ExprNode* node) const {
    const State* s = state_.find(node);
    return s != nullptr && *s == State::kVisited;
  }
  /// Every node visited so far, in the order each was finished: always after its children, so
  /// it is a valid post order for analyses that need one. Holding the nodes keeps a subgraph the
  /// handler returned from next() alive as long as the walker remembers it.
  const std::vector<ir::Expr>& order() const { return order_; }

 private:
  enum class State : std::uint8_t { kPending, kVisited };

  ir::NodeMap<State> state_;
  std::vector<ir::Expr> order_;
};

template <class Handler>
void NestedWalk::walk(const ir::Expr& root, Handler& handler) {
  if (!root || visited(root.get())) return;
  // TVM's ExpandDataflow stack: a node with whether its children have been pushed.
  struct Entry {
    ir::Expr node;
    bool expanded;
  };
  // A frame is either a traversal (the entries from `base` up, top at the back) or one pending
  // node (`pending`), whose nested traversals are the frames above it.
  struct Frame {
    std::size_t base;
    ir::Expr pending;
  };
  std::vector<Entry> entries;
  std::vector<Frame> frames;
  entries.push_back(Entry{root, false});
  frames.push_back(Frame{0, nullptr});
  while (!frames.empty()) {
    Frame& frame = frames.back();
    if (frame.pending) {
      ir::Expr sub = handler.next(frame.pending);
      if (sub) {
        if (!visited(sub.get())) {
          frames.push_back(Frame{entries.size(), nullptr});
          entries.push_back(Entry{std::move(sub), false});
        }
        continue;
      }
      ir::Expr node = std::move(frame.pending);
      frames.pop_back();
      handler.finish(node);
      state_[node.get()] = State::kVisited;
      order_.push_back(std::move(node));
      continue;
    }
    if (entries.size() == frame.base) {
      frames.pop_back();
      continue;
    }
    Entry& top = entries.back();
    if (!top.expanded) {
      const ir::ExprNode* node = top.node.get();
      if (visited(node)) {
        entries.pop_back();
        continue;
      }
      top.expanded = true;
      for (std::size_t k = ir::num_children(*node); k-- > 0;) {
        const ir::Expr& kid = ir::child(*node, k);
        if (!visited(kid.get())) entries.push_back(Entry{kid, false});
      }
      continue;
    }
    ir::Expr node = std::move(top.node);
    entries.pop_back();
    const State* state = state_.find(node.get());
    if (state != nullptr && *state == State::kVisited) continue;
    if (state != nullptr && *state == State::kPending) handler.on_cycle(node);
    if (handler.start(node)) {
      state_[node.get()] = State::kPending;
      frames.push_back(Frame{entries.size(), std::move(node)});
    } else {
      state_[node.get()] = State::kVisited;
      order_.push_back(std::move(node));
    }
  }
}

}  // namespace aotfuzz::aot
