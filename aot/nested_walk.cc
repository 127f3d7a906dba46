// The explicit-stack form of TVM's re-entrant post-order visitors.
#include "aot/nested_walk.h"

namespace aotfuzz::aot {

void NestedWalk::walk(const ir::Expr& root) {
  if (!root || visited(root.get())) return;
  struct Entry {
    ir::Expr node;
    bool expanded = false;
  };
  // A frame is either a traversal (entries, top at the back, like ExpandDataflow's deque) or the
  // pending Task of one node.
  struct Frame {
    std::vector<Entry> entries;
    std::unique_ptr<Task> task;
    ir::Expr task_node;
  };
  std::vector<Frame> frames;
  frames.push_back(Frame{{Entry{root}}, nullptr, nullptr});
  while (!frames.empty()) {
    if (frames.back().task) {
      ir::Expr sub = frames.back().task->next();
      if (sub) {
        if (!visited(sub.get())) frames.push_back(Frame{{Entry{std::move(sub)}}, nullptr, nullptr});
        continue;
      }
      Frame done = std::move(frames.back());
      frames.pop_back();
      done.task->finish();
      *pending_.find(done.task_node.get()) = false;
      visited_.insert(done.task_node.get());
      order_.push_back(std::move(done.task_node));
      continue;
    }
    auto& entries = frames.back().entries;
    if (entries.empty()) {
      frames.pop_back();
      continue;
    }
    if (visited(entries.back().node.get())) {
      entries.pop_back();
      continue;
    }
    if (!entries.back().expanded) {
      entries.back().expanded = true;
      ir::Expr node = entries.back().node;
      for (std::size_t k = ir::num_children(*node); k-- > 0;) {
        const ir::Expr& kid = ir::child(*node, k);
        if (!visited(kid.get())) entries.push_back(Entry{kid});
      }
      continue;
    }
    ir::Expr node = std::move(entries.back().node);
    entries.pop_back();
    if (const bool* pending = pending_.find(node.get()); pending != nullptr && *pending) {
      on_cycle_(node);
    }
    std::unique_ptr<Task> task = start_(node);
    if (!task) {
      visited_.insert(node.get());
      order_.push_back(std::move(node));
      continue;
    }
    pending_[node.get()] = true;
    frames.push_back(Frame{{}, std::move(task), std::move(node)});
  }
}

}  // namespace aotfuzz::aot
