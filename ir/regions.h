// Annotated regions of a function body, built as TVM v0.8's AnnotatedRegionSet builds them:
// post order, arguments left to right, a fresh id per compiler_begin, an op joining its first
// argument's region and merging the others into it, an end joining its argument's region.
#pragma once

#include <deque>
#include <list>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"

namespace aotfuzz::ir {

/// One region: its begins (ins), ends (outs, in the order met) and members. Lists, so that a
/// merge splices instead of copying: merging along a long chain stays linear.
struct Region {
  int id = 0;
  std::string target;
  std::list<Expr> ins;
  std::list<Expr> outs;
  /// Every member, begins and ends included, in the order they joined.
  std::list<Expr> nodes;
};

/// The regions of one function body. Ids have gaps where regions were merged away.
class RegionSet {
 public:
  /// Move-only: the position index holds iterators into this set's own lists.
  RegionSet() = default;
  RegionSet(RegionSet&&) noexcept = default;
  RegionSet& operator=(RegionSet&&) noexcept = default;
  RegionSet(const RegionSet&) = delete;
  RegionSet& operator=(const RegionSet&) = delete;

  /// Builds the regions of `body`. Throws VerifyError naming the node when the annotations break
  /// docs/design.md, "Annotations and regions": an end with no region or a target other than its
  /// region's, a begin on a value still inside a region, an op whose arguments are partly in
  /// regions, merged regions of different targets, a region value used without an end (or returned
  /// without one).
  static RegionSet build(const Expr& body);
  /// The same, given `order == post_order(body)` already (verify() has it at hand).
  static RegionSet build(const Expr& body, const std::vector<Expr>& order);
  /// Throws exactly what build(body, order) throws, without keeping the regions' members, ins
  /// and outs: the check verify() runs on every annotated body.
  static void check(const Expr& body, const std::vector<Expr>& order);

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
  // Where a begin sits in its region's ins, or an end in its region's outs, while it is there.
  struct Position {
    std::list<Expr>::iterator it;
    bool live = false;
  };

  static RegionSet build(const Expr& body, const std::vector<Expr>& order, bool members);
  int find(int id) const;
  Region& make_region(const std::string& target);
  void add_node(int region, const Expr& node);
  bool in_region(const ExprNode* node, int root) const;

  int next_id_ = 0;
  // False in check(): only the node-to-region map and the union-find are kept, which is all the
  // errors depend on.
  bool members_ = true;
  std::deque<Region> regions_;  // by id; a deque keeps Region pointers stable
  std::vector<bool> alive_;
  mutable std::vector<int> parent_;
  NodeMap<int> node_region_;
  // Every end member (internal ones too) of each region, by id; moved to the survivor on merge.
  std::vector<std::vector<const ExprNode*>> ends_;
  // The begins that take each end (index into consumers_), to find internal pairs from the end.
  NodeMap<int> consumer_index_;
  std::vector<std::vector<const ExprNode*>> consumers_;
  // Begins among a region's ins whose argument is an end of that same region (by id): a later
  // merge of that region into another makes them internal.
  std::vector<std::vector<const ExprNode*>> self_fed_;
  NodeMap<Position> position_;
};

}  // namespace aotfuzz::ir
