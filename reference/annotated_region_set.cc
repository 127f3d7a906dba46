// TVM v0.8's AnnotatedRegionSet and its Creator (src/relay/analysis/annotated_region_set.cc).
#include "reference/annotated_region_set.h"

#include <algorithm>
#include <unordered_set>

#include "ir/traversal.h"
#include "reference/tvm_passes.h"

namespace aotfuzz::reference {

bool is_compiler_begin(const ir::ExprNode* node) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(ir::Op::kCompilerBegin);
}

bool is_compiler_end(const ir::ExprNode* node) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(ir::Op::kCompilerEnd);
}

std::string compiler_of(const ir::ExprNode* annotation) {
  return ir::as<ir::CallNode>(annotation)->attrs().get_string("compiler").value_or("");
}

AnnotatedRegion* AnnotatedRegionSet::region_of(const ir::ExprNode* node) {
  const int* id = member_of_.find(node);
  return id == nullptr ? nullptr : &regions_[static_cast<std::size_t>(*id)];
}

// AnnotatedRegionSetNode::MergeRegions: src's members, ins and outs are appended to dest's; an
// input of dest whose argument is a member of src is internal now, so it leaves dest's ins and
// that argument (an end of src) leaves dest's outs. Only this direction is checked, as in TVM.
void AnnotatedRegionSet::merge_regions(AnnotatedRegion* src, AnnotatedRegion* dest) {
  if (src == dest) return;
  const std::unordered_set<const ir::ExprNode*> src_nodes(src->members.begin(),
                                                          src->members.end());
  for (const ir::ExprNode* node : src->members) {
    member_of_[node] = dest->id;
    dest->members.push_back(node);
  }
  src->members.clear();
  dest->ins.insert(dest->ins.end(), src->ins.begin(), src->ins.end());
  dest->outs.insert(dest->outs.end(), src->outs.begin(), src->outs.end());
  std::vector<ir::Expr> ins_to_remove;
  for (const ir::Expr& input : dest->ins) {
    const ir::Expr& arg = ir::as<ir::CallNode>(input)->args()[0];
    if (src_nodes.contains(arg.get())) {
      dest->outs.remove(arg);
      ins_to_remove.push_back(input);
    }
  }
  for (const ir::Expr& input : ins_to_remove) dest->ins.remove(input);
  src->ins.clear();
  src->outs.clear();
  alive_[static_cast<std::size_t>(src->id)] = false;
}

void AnnotatedRegionSet::add_to_region(AnnotatedRegion* dest, const ir::Expr& expr) {
  if (AnnotatedRegion* src = region_of(expr.get())) {
    merge_regions(src, dest);
  } else {
    member_of_[expr.get()] = dest->id;
    dest->members.push_back(expr.get());
  }
}

AnnotatedRegion* AnnotatedRegionSet::make_region(const std::string& target) {
  AnnotatedRegion& region = regions_.emplace_back();
  region.id = static_cast<int>(regions_.size()) - 1;
  region.target = target;
  alive_.push_back(true);
  return &region;
}

std::vector<AnnotatedRegion*> AnnotatedRegionSet::regions() {
  std::vector<AnnotatedRegion*> out;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    if (alive_[i]) out.push_back(&regions_[i]);
  }
  return out;
}

// Creator::AddToArgRegion: a node joins the region of its first argument that is in one (ends
// are closed regions and skipped), the regions of its other arguments are merged into that one,
// and either every argument is in a region or none is.
void AnnotatedRegionSet::add_to_arg_region(const ir::Expr& expr,
                                           const std::vector<ir::Expr>& args) {
  AnnotatedRegion* region = nullptr;
  for (const ir::Expr& arg : args) {
    if (is_compiler_end(arg.get())) continue;
    region = region_of(arg.get());
    if (region != nullptr) break;
  }
  for (const ir::Expr& arg : args) {
    if (is_compiler_end(arg.get())) continue;
    AnnotatedRegion* arg_region = region_of(arg.get());
    if ((region != nullptr) != (arg_region != nullptr)) {
      throw TvmRefuses("TVM v0.8 fails ICHECK \"Arg regions are inconsistent\" at " +
                       ir::describe(*expr) + " (AnnotatedRegionSet::Creator::AddToArgRegion)");
    }
    if (region != nullptr && region != arg_region) merge_regions(arg_region, region);
  }
  if (region != nullptr) add_to_region(region, expr);
}

// Creator: a MixedModeVisitor, so nodes are handled in post order, arguments left to right.
AnnotatedRegionSet AnnotatedRegionSet::create(const std::vector<ir::Expr>& order) {
  AnnotatedRegionSet set;
  set.member_of_.reserve(order.size());
  for (const ir::Expr& node : order) {
    if (const auto* tuple = ir::as<ir::TupleNode>(node)) {
      set.add_to_arg_region(node, tuple->fields());
    } else if (const auto* get = ir::as<ir::TupleGetItemNode>(node)) {
      set.add_to_arg_region(node, {get->tuple()});
    } else if (const auto* call = ir::as<ir::CallNode>(node)) {
      if (is_compiler_begin(call)) {
        AnnotatedRegion* region = set.make_region(compiler_of(call));
        set.member_of_[call] = region->id;
        region->members.push_back(call);
        region->ins.push_back(node);
      } else if (is_compiler_end(call)) {
        AnnotatedRegion* region = set.region_of(call->args()[0].get());
        if (region == nullptr) {
          throw TvmRefuses("TVM v0.8 throws \"Cannot find the corresponding region for end "
                           "annotation\" at " +
                           ir::describe(*node));
        }
        if (region->target != compiler_of(call)) {
          throw TvmRefuses("TVM v0.8 fails ICHECK_EQ(region->GetTarget(), target) at " +
                           ir::describe(*node) + ": region " + std::to_string(region->id) +
                           " has target " + region->target);
        }
        set.member_of_[call] = region->id;
        region->members.push_back(call);
        region->outs.push_back(node);
      } else {
        set.add_to_arg_region(node, call->args());
      }
    }
  }
  return set;
}

}  // namespace aotfuzz::reference
