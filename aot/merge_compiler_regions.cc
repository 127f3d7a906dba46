// MergeCompilerRegions: TVM v0.8's RegionMerger and MergeAnnotations, iterative.
//
// Requires: a module that passes ir::verify() (checked only with verify_input). Ensures: regions
// are merged in TVM's order, or PassError reports where TVM's merger recurses forever (a region
// whose processing reaches the region again); the output, which may hold a cyclic region for
// PartitionGraph to refuse, passes ir::verify() (guarded_pass checks it); the input is left
// unchanged.
#include "aot/merge_compiler_regions.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "aot/annotations.h"
#include "aot/nested_walk.h"
#include "aot/pass_guard.h"
#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

constexpr const char* kPassName = "merge";

// TVM copies parent restriction sets into each child and renames a merged parent's id in every
// set. Both are kept implicit here: a region's set is a node that lists its own new entries
// (parents of another target) and points at its parents' nodes, and entries are read through a
// union-find of merged ids. That keeps long alternating chains linear instead of quadratic.
struct RestrictionNode {
  std::vector<int> items;
  std::vector<int> inherits;
};

class Merger {
 public:
  // `order` is ir::post_order(body) and outlives the merger.
  Merger(const ir::Expr& body, const std::vector<ir::Expr>& order, const BugSet& bugs,
         std::string where)
      : body_(body),
        order_(order),
        regions_(ir::RegionSet::build(body, order_)),
        bugs_(bugs),
        where_(std::move(where)) {
    const int n = regions_.next_id();
    uf_.resize(n);
    std::iota(uf_.begin(), uf_.end(), 0);
    restriction_of_.assign(n, -1);
    processed_.assign(n, false);
    in_progress_.assign(n, false);
    target_.resize(n);
    for (const ir::Region* r : regions_.regions()) target_[r->id] = r->target;
    if (bugs_.on(Bug::kMergeSiblings)) {
      for (const auto& node : order_) {
        if (is_begin(node.get())) {
          const ir::Expr& arg = ir::as<ir::CallNode>(node)->args()[0];
          if (is_end(arg.get())) begins_of_end_[arg.get()].push_back(node);
        }
      }
    }
  }

  ir::Expr run() {
    // Sized for the body: the walk's map never rehashes and its order never regrows.
    if (bugs_.on(Bug::kMergeVisitOrder)) {
      // Injected bug: each region is processed at its last end, walking backwards, before its
      // parents are; the walk below then finds every region processed.
      for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
        if (!is_end(it->get())) continue;
        const ir::Region* region = regions_.region_of(it->get());
        if (!processed_[find(region->id)]) process(*it);
      }
    }
    NestedWalk walk(order_.size());
    walk.walk(body_, *this);
    // No cycle check here: TVM's merger has none. A merged region that is cyclic is refused
    // where TVM's behaviour is decided, by PartitionGraph, which first splits ends on tuples and
    // rebuilds the regions (a region joined only through such a tuple is not cyclic there).
    bool internal_pair = false;
    for (const ir::Expr& node : walk.order()) {
      if (is_begin(node.get())) {
        const ir::Expr& arg = ir::as<ir::CallNode>(node)->args()[0];
        internal_pair |=
            is_end(arg.get()) && regions_.region_of(node.get()) == regions_.region_of(arg.get());
      }
    }
    if (!internal_pair) return body_;
    return ir::rewrite_in_order(
        order_, body_, [this](const ir::Expr& old, std::vector<ir::Expr>& kids, bool changed) {
          if (is_begin(old.get())) {
            const ir::Expr& arg = ir::as<ir::CallNode>(old)->args()[0];
            if (is_end(arg.get()) &&
                regions_.region_of(old.get()) == regions_.region_of(arg.get())) {
              // The pair is internal to one region now: use the end's (rewritten) argument.
              return ir::as<ir::CallNode>(kids[0])->args()[0];
            }
          }
          return ir::rebuilt(old, kids, changed);
        });
  }

  // NestedWalk's handler: the first end of a region is pending while the unprocessed parent
  // regions are visited (TVM: VisitExpr(begin->args[0])), then the region is processed.
  bool start(const ir::Expr& node) {
    if (!is_end(node.get())) return false;
    const ir::Region* region = regions_.region_of(node.get());
    if (processed_[region->id]) return false;
    // Reaching another end of a region whose processing is pending means the region feeds
    // itself: TVM recursed forever here.
    if (in_progress_[region->id]) reject_cycle();
    in_progress_[region->id] = true;
    // The inputs as they are now: visiting the parents may merge regions.
    tasks_.push_back(Task{task_ins_.size()});
    for (const auto& in : region->ins) task_ins_.push_back(in.get());
    return true;
  }
  ir::Expr next(const ir::Expr&) {
    Task& task = tasks_.back();
    while (task.next < task_ins_.size()) {
      const ir::Expr& arg = ir::as<ir::CallNode>(task_ins_[task.next++])->args()[0];
      const ir::Region* parent = regions_.region_of(arg.get());
      if (parent == nullptr || processed_[parent->id]) continue;
      if (in_progress_[parent->id]) reject_cycle();
      return arg;
    }
    return nullptr;
  }
  void finish(const ir::Expr& end) {
    task_ins_.resize(tasks_.back().first);
    tasks_.pop_back();
    process(end);
  }
  [[noreturn]] void on_cycle(const ir::Expr&) { reject_cycle(); }

 private:
  // A pending region: its inputs are task_ins_[first..], the next to look at task_ins_[next].
  struct Task {
    explicit Task(std::size_t f) : first(f), next(f) {}
    std::size_t first;
    std::size_t next;
  };

  int find(int id) {
    while (uf_[id] != id) {
      uf_[id] = uf_[uf_[id]];
      id = uf_[id];
    }
    return id;
  }

  // Whether `parent` is in the restriction set `node` (TVM: region_restrictions.find(parent)).
  // The parent's own set is not searched: a region in its own set is cyclic, which the final
  // cycle check reports anyway.
  bool restricted(int parent, int node) {
    if (node < 0) return false;
    ++epoch_;
    if (restriction_of_[parent] >= 0) seen_[restriction_of_[parent]] = epoch_;
    std::vector<int>& stack = stack_;
    stack.assign(1, node);
    seen_[node] = epoch_;
    while (!stack.empty()) {
      const RestrictionNode& r = nodes_[stack.back()];
      stack.pop_back();
      for (int item : r.items) {
        if (find(item) == parent) return true;
      }
      for (int next : r.inherits) {
        if (seen_[next] != epoch_) {
          seen_[next] = epoch_;
          stack.push_back(next);
        }
      }
    }
    return false;
  }

  void merge(int src, int dest) {
    regions_.merge(src, dest);
    uf_[find(src)] = find(dest);
  }

  // TVM's RegionMerger::VisitExpr_ for the first end of a region, after its parents.
  void process(const ir::Expr& end) {
    const ir::Region* region = regions_.region_of(end.get());
    const int id = region->id;
    in_progress_[id] = false;
    std::vector<const ir::Region*>& parents = parents_;  // storage kept across calls
    parents.clear();
    for (const auto& in : region->ins) {
      const ir::Region* p = regions_.region_of(ir::as<ir::CallNode>(in)->args()[0].get());
      if (p != nullptr && p->id != id &&
          std::find(parents.begin(), parents.end(), p) == parents.end()) {
        parents.push_back(p);
      }
    }
    RestrictionNode node;
    for (const ir::Region* p : parents) {
      if (restriction_of_[p->id] >= 0) node.inherits.push_back(restriction_of_[p->id]);
      if (p->target != region->target) node.items.push_back(p->id);
    }
    int node_index = -1;
    if (!node.items.empty() || !node.inherits.empty()) {
      node_index = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(node));
      seen_.push_back(0);
    }
    restriction_of_[id] = node_index;
    std::vector<int> siblings;
    if (bugs_.on(Bug::kMergeSiblings)) {
      for (const ir::Region* p : parents) {
        for (const auto& out : p->outs) {
          auto it = begins_of_end_.find(out.get());
          if (it == begins_of_end_.end()) continue;
          for (const auto& begin : it->second) {
            siblings.push_back(regions_.region_of(begin.get())->id);
          }
        }
      }
    }
    const std::string target = region->target;
    std::vector<int>& same_target = same_target_;
    same_target.clear();
    for (const ir::Region* p : parents) {
      if (p->target == target) same_target.push_back(p->id);
    }
    // `region` and `parents` may dangle from here on: merging erases the parents.
    for (int p : same_target) {
      if (!bugs_.on(Bug::kMergeAcrossTargets) && restricted(p, node_index)) continue;
      merge(p, id);
    }
    for (int s : siblings) {
      // Injected bug: a region of the same target that shares a parent is merged as well.
      const int current = find(s);
      if (current != find(id) && target_[current] == target) merge(current, find(id));
    }
    processed_[find(id)] = true;
  }

  [[noreturn]] void reject_cycle() {
    const ir::RegionSet original = ir::RegionSet::build(body_, order_);
    if (auto cycle = find_region_cycle(body_, original)) {
      throw PassError(kPassName, PassError::Kind::kRejectedInput,
                      where_ + ": the annotated input has a cyclic region: " + *cycle);
    }
    auto cycle = find_region_cycle(body_, regions_);
    throw PassError(kPassName, PassError::Kind::kRejectedInput,
                    where_ +
                        ": merging would make a cyclic region (TVM v0.8 recursed forever "
                        "here): " +
                        (cycle ? *cycle : std::string("a region feeds itself")));
  }

  ir::Expr body_;
  // ir::post_order(body_): the function's cached order, not a copy of its own.
  const std::vector<ir::Expr>& order_;
  ir::RegionSet regions_;
  BugSet bugs_;
  std::string where_;
  std::vector<int> uf_;
  std::vector<std::string> target_;
  std::vector<int> restriction_of_;
  std::vector<RestrictionNode> nodes_;
  std::vector<unsigned> seen_;
  unsigned epoch_ = 0;
  std::vector<bool> processed_;    // by region id
  std::vector<bool> in_progress_;  // by region id
  std::vector<Task> tasks_;
  std::vector<const ir::ExprNode*> task_ins_;
  std::vector<int> stack_;  // restricted()'s
  // process()'s, kept to reuse their storage.
  std::vector<const ir::Region*> parents_;
  std::vector<int> same_target_;
  std::unordered_map<const ir::ExprNode*, std::vector<ir::Expr>> begins_of_end_;
};

}  // namespace

ir::Module merge_compiler_regions(const ir::Module& module, const Options& options) {
  return guarded_pass(kPassName, module, options.verify_input, [&](const ir::Module& in) {
    ir::Module out;
    for (const auto& [name, fn] : in.functions()) {
      if (!is_user_function(*fn)) {
        out.add(name, fn);
        continue;
      }
      // The function's cached post order: no walk of its own.
      ir::Expr body = Merger(fn->body(), fn->body_order(), options.bugs, "@" + name).run();
      out.add(name, body == fn->body()
                        ? fn
                        : ir::FunctionNode::make(fn->params(), body, fn->attrs(), nullptr));
    }
    return out;
  });
}

}  // namespace aotfuzz::aot
