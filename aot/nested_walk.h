// The traversal order of TVM's MixedModeVisitor / MixedModeMutator, without recursion: a post-order
// walk (callee, then arguments left to right) in which the handling of one node may first walk
// further subgraphs, as TVM's passes call VisitExpr() from inside VisitExpr_().
// MergeCompilerRegions and PartitionGraph depend on exactly this order (which regions are processed
// first, which parameters come first), so they share this engine.
//
// Requires: the graph stays alive and unchanged while the walker is used, subgraphs returned by
// next() included (order() holds plain pointers). Ensures: every reachable node is started once
// (children first), and a pending node is finished before the walk returns.
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
  /// it is a valid post order for analyses that need one.
  const std::vector<const ir::ExprNode*>& order() const { return order_; }

 private:
  enum class State : std::uint8_t { kNone, kPending, kVisited };

  void mark_visited(const ir::ExprNode* node) {
    state_[node] = State::kVisited;
    order_.push_back(node);
  }

  // One map for both flags: a walk looks every node up several times.
  ir::NodeMap<State> state_;
  std::vector<const ir::ExprNode*> order_;
  // The roots of finished nested walks. order_ and state_ hold plain pointers, so a subgraph the
  // handler built itself must outlive them: a freed node's address could come back as a new node
  // that would look visited.
  std::vector<ir::Expr> retired_;
};

template <class Handler>
void NestedWalk::walk(const ir::Expr& root, Handler& handler) {
  if (!root || visited(root.get())) return;
  // A node to visit: a child inside the graph (alive as long as `root`), or `subs[sub]`, the root
  // of a nested walk. Pointing instead of copying keeps reference counts out of the loop.
  struct Ref {
    const ir::Expr* node;
    int sub;
  };
  struct Entry {
    Ref ref;
    bool expanded;
  };
  // A frame is either a traversal (the entries from `base` up, top at the back, like
  // ExpandDataflow's deque) or one pending node.
  struct Frame {
    std::size_t base;
    bool pending;
    Ref ref;
  };
  std::vector<ir::Expr> subs;  // one per nested traversal frame, innermost at the back
  auto get = [&subs](const Ref& r) -> const ir::Expr& { return r.sub < 0 ? *r.node : subs[r.sub]; };
  std::vector<Entry> entries;
  std::vector<Frame> frames;
  // Room for the usual depth, so the stacks do not grow step by step.
  entries.reserve(64);
  frames.reserve(16);
  entries.push_back(Entry{Ref{&root, -1}, false});
  frames.push_back(Frame{0, false, Ref{nullptr, -1}});
  while (!frames.empty()) {
    Frame& frame = frames.back();
    if (frame.pending) {
      const ir::Expr& node = get(frame.ref);
      ir::Expr sub = handler.next(node);
      if (sub) {
        if (!visited(sub.get())) {
          subs.push_back(std::move(sub));
          const Ref ref{nullptr, static_cast<int>(subs.size()) - 1};
          frames.push_back(Frame{entries.size(), false, ref});
          entries.push_back(Entry{ref, false});
        }
        continue;
      }
      handler.finish(node);
      mark_visited(node.get());
      frames.pop_back();
      continue;
    }
    if (entries.size() == frame.base) {
      if (frame.ref.sub >= 0) {
        retired_.push_back(std::move(subs.back()));
        subs.pop_back();
      }
      frames.pop_back();
      continue;
    }
    Entry& top = entries.back();
    const ir::ExprNode* node = get(top.ref).get();
    if (!top.expanded) {
      if (visited(node)) {
        entries.pop_back();
        continue;
      }
      top.expanded = true;
      for (std::size_t k = ir::num_children(*node); k-- > 0;) {
        const ir::Expr& kid = ir::child(*node, k);
        if (!visited(kid.get())) entries.push_back(Entry{Ref{&kid, -1}, false});
      }
      continue;
    }
    // One probe for the checks and the update: the handler never touches this map.
    State& state = *state_.try_emplace(node, State::kNone).first;
    if (state == State::kVisited) {
      entries.pop_back();
      continue;
    }
    const Ref ref = top.ref;
    entries.pop_back();
    if (state == State::kPending) handler.on_cycle(get(ref));
    if (!handler.start(get(ref))) {
      state = State::kVisited;
      order_.push_back(node);
      continue;
    }
    state = State::kPending;
    frames.push_back(Frame{entries.size(), true, ref});
  }
}

}  // namespace aotfuzz::aot
