// Annotated regions of a function body, built as TVM v0.8's AnnotatedRegionSet builds them:
// post order, arguments left to right, a fresh id per compiler_begin, an op joining its first
// argument's region and merging the others into it, an end joining its argument's region.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace aotfuzz::ir {

/// One region: its begins (ins), ends (outs, in the order met) and members.
struct Region {
  int id = 0;
  std::string target;
  std::vector<Expr> ins;
  std::vector<Expr> outs;
  /// Every member, begins and ends included, in the order they joined.
  std::vector<Expr> nodes;
};

/// The regions of one function body. Ids have gaps where regions were merged away.
class RegionSet {
 public:
  /// Builds the regions of `body`. Throws VerifyError naming the node when the annotations break
  /// DESIGN.md §4: an end with no region or a target other than its region's, a begin on a value
  /// still inside a region, an op whose arguments are partly in regions, merged regions of
  /// different targets, a region value used without an end (or returned without one).
  static RegionSet build(const Expr& body);

  /// The region holding `node`, or nullptr when it is outside every region.
  const Region* region_of(const ExprNode* node) const;
  /// Live regions ordered by id.
  std::vector<const Region*> regions() const;
  /// Merges region `src` into `dest` as TVM's MergeRegions does: members, ins and outs are
  /// appended, and ends of `src` that feed begins of `dest` become internal (dropped from both).
  void merge(int src, int dest);
  /// The id the next new region would get.
  int next_id() const { return next_id_; }

 private:
  int find(int id) const;
  Region& make_region(const std::string& target);
  void add_node(int region, const Expr& node);

  int next_id_ = 0;
  std::map<int, Region> regions_;
  mutable std::vector<int> parent_;
  std::unordered_map<const ExprNode*, int> node_region_;
};

}  // namespace aotfuzz::ir
