// TVM v0.8's AnnotatedRegionSet (src/relay/analysis/annotated_region_set.cc), for the reference
// passes. Kept as TVM keeps it: each region's begins and ends in std::lists in the order they
// were met, its members in a set, regions merged by splicing those lists.
#pragma once

#include <deque>
#include <list>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"

namespace aotfuzz::reference {

struct AnnotatedRegion {
  int id = 0;
  std::string target;
  /// The compiler_begin calls of the region (TVM: ins_).
  std::list<ir::Expr> ins;
  /// The compiler_end calls of the region (TVM: outs_).
  std::list<ir::Expr> outs;
  /// Every member, in the order it joined (TVM: the set nodes_).
  std::vector<const ir::ExprNode*> members;
};

class AnnotatedRegionSet {
 public:
  /// AnnotatedRegionSet::Create: one walk of a body in post order (`order`, as ir::post_order
  /// gives it: children left to right, function bodies not entered). Throws TvmRefuses where
  /// TVM's Creator ICHECK-fails or throws.
  static AnnotatedRegionSet create(const std::vector<ir::Expr>& order);

  /// GetRegion: the region holding `node`, or nullptr.
  AnnotatedRegion* region_of(const ir::ExprNode* node);
  /// MergeRegions(src, dest).
  void merge_regions(AnnotatedRegion* src, AnnotatedRegion* dest);
  /// AddToRegion(dest, expr).
  void add_to_region(AnnotatedRegion* dest, const ir::Expr& expr);
  /// MakeRegion: ids count up from 0.
  AnnotatedRegion* make_region(const std::string& target);
  /// The live regions, by id.
  std::vector<AnnotatedRegion*> regions();

 private:
  void add_to_arg_region(const ir::Expr& expr, const std::vector<ir::Expr>& args);

  std::deque<AnnotatedRegion> regions_;  // by id; erased ones stay, marked dead
  std::vector<bool> alive_;
  // TVM keeps a node set per region and GetRegion scans them; one map gives the same answers.
  ir::NodeMap<int> member_of_;
};

/// Whether `node` is a compiler_begin / compiler_end call.
bool is_compiler_begin(const ir::ExprNode* node);
bool is_compiler_end(const ir::ExprNode* node);
/// The `compiler` attribute of an annotation call.
std::string compiler_of(const ir::ExprNode* annotation);

}  // namespace aotfuzz::reference
