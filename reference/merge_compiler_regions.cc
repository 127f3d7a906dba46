// TVM v0.8's MergeCompilerRegions (src/relay/transforms/merge_compiler_regions.cc): RegionMerger,
// then MergeAnnotations, on each user function.
#include <map>
#include <set>

#include "ir/node_map.h"
#include "ir/traversal.h"
#include "reference/annotated_region_set.h"
#include "reference/tvm_passes.h"
#include "reference/user_functions.h"

namespace aotfuzz::reference {
namespace {

// RegionMerger: a MixedModeVisitor whose handler runs on the first end of each region after
// visiting the producers of the region's inputs (so parents are merged first), then merges into
// the region every parent of its target that no path through another target separates from it.
class RegionMerger {
 public:
  explicit RegionMerger(AnnotatedRegionSet& regions) : regions_(regions) {}

  // MixedModeVisitor::VisitExpr: children first, then the node; a node counts as visited only
  // once its handler returned, so a handler that reaches its own end again re-enters.
  void visit(const ir::Expr& expr) {
    if (visited_.contains(expr.get())) return;
    for (std::size_t i = 0; i < ir::num_children(*expr); ++i) visit(ir::child(*expr, i));
    if (visited_.contains(expr.get())) return;
    if (is_compiler_end(expr.get())) visit_end(expr);
    visited_.insert(expr.get());
  }

 private:
  // RegionMerger::VisitExpr_(const CallNode*) for a compiler_end.
  void visit_end(const ir::Expr& end) {
    AnnotatedRegion* region = regions_.region_of(end.get());
    const int id = region->id;
    if (merged_.contains(id)) return;
    if (in_progress_.contains(id)) {
      // TVM's visit counter is raised only after the handler returns, so this end is handled
      // again, which visits the same inputs again: the recursion never ends.
      throw TvmRefuses("TVM v0.8 recurses forever in MergeCompilerRegions: processing region " +
                       std::to_string(id) + " reaches " + ir::describe(*end) +
                       ", an end of the same region, through its own inputs");
    }
    in_progress_.insert(id);
    const std::list<ir::Expr> inputs = region->ins;
    for (const ir::Expr& begin : inputs) {
      const ir::Expr& producer = ir::as<ir::CallNode>(begin)->args()[0];
      AnnotatedRegion* parent = regions_.region_of(producer.get());
      if (parent != nullptr && !merged_.contains(parent->id)) visit(producer);
    }
    region = regions_.region_of(end.get());
    // TVM collects the parents in an unordered set; the outcome does not depend on the order.
    std::vector<AnnotatedRegion*> parents;
    for (const ir::Expr& begin : region->ins) {
      AnnotatedRegion* parent = regions_.region_of(ir::as<ir::CallNode>(begin)->args()[0].get());
      if (parent != nullptr && std::find(parents.begin(), parents.end(), parent) == parents.end()) {
        parents.push_back(parent);
      }
    }
    std::set<int>& restrictions = restrictions_[id];
    for (AnnotatedRegion* parent : parents) {
      const std::set<int> inherited = restrictions_[parent->id];
      restrictions.insert(inherited.begin(), inherited.end());
    }
    for (AnnotatedRegion* parent : parents) {
      if (parent->target != region->target) {
        restrictions.insert(parent->id);
        continue;
      }
      if (restrictions.contains(parent->id)) continue;
      const int parent_id = parent->id;
      regions_.merge_regions(parent, region);
      for (AnnotatedRegion* r : regions_.regions()) {
        std::set<int>& others = restrictions_[r->id];
        if (others.erase(parent_id) > 0) others.insert(id);
      }
    }
    merged_.insert(id);
    in_progress_.erase(id);
  }

  AnnotatedRegionSet& regions_;
  ir::NodeSet visited_;
  std::set<int> merged_;
  std::set<int> in_progress_;
  std::map<int, std::set<int>> restrictions_;
};

// MergeAnnotations: a begin on an end of its own region is dropped with that end.
ir::Expr merge_annotations(const ir::Function& fn, AnnotatedRegionSet& regions) {
  return ir::rewrite_in_order(fn->body_order(), fn->body(), [&](const ir::Expr& old,
                                                               std::vector<ir::Expr>& kids,
                                                               bool changed) {
    if (is_compiler_begin(old.get())) {
      const ir::Expr& arg = ir::as<ir::CallNode>(old)->args()[0];
      if (is_compiler_end(arg.get()) &&
          regions.region_of(old.get()) == regions.region_of(arg.get())) {
        return ir::as<ir::CallNode>(kids[0])->args()[0];
      }
    }
    return ir::rebuilt(old, kids, changed);
  });
}

}  // namespace

ir::Module merge_compiler_regions(const ir::Module& module) {
  return map_user_functions(module, [](const std::string&, const ir::Function& fn) {
    AnnotatedRegionSet regions = AnnotatedRegionSet::create(fn->body_order());
    with_stack_for(fn->body_order().size(), [&] { RegionMerger(regions).visit(fn->body()); });
    return merge_annotations(fn, regions);
  });
}

}  // namespace aotfuzz::reference
