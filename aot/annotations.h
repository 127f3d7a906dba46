// Helpers shared by the annotation-driven passes (MergeCompilerRegions, PartitionGraph): annotation
// tests, TVM's name sanitising and the check that every region, contracted to one node, leaves the
// dataflow graph acyclic.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"
#include "ir/regions.h"

namespace aotfuzz::aot {

/// `annotation.compiler_begin(...)`.
bool is_begin(const ir::ExprNode* node);
/// `annotation.compiler_end(...)`.
bool is_end(const ir::ExprNode* node);

/// The first ancestor of `e` that is not an annotation (follows begin/end arguments), as
/// PartitionGraph backtracks a begin to its producer.
const ir::Expr& strip_annotations(const ir::Expr& e);

/// TVM's SanitizeName: every character outside [A-Za-z0-9] becomes '_'.
std::string sanitize_name(std::string name);

/// Whether the annotation passes and FuseOps transform this function: neither a `Compiler`
/// (external) nor a `Primitive` function.
bool is_user_function(const ir::FunctionNode& fn);

/// Describes a cycle through a region when the regions of `body` (as `regions` groups them now,
/// merges included), each contracted to one node, make the dataflow graph cyclic: some output of a
/// region flows back into one of its inputs through a node outside it. Regions of target `default`
/// are not contracted: PartitionGraph strips them, so their nodes count as host nodes (merging
/// two default regions that are not connected must not invent a path). Returns nullopt when the
/// contracted graph is acyclic. The description names the region (id, target) and the first node
/// outside it on the cycle. Iterative, linear in the graph.
std::optional<std::string> find_region_cycle(const ir::Expr& body, const ir::RegionSet& regions);
/// The same over `order`, every node of the graph with children before parents.
std::optional<std::string> find_region_cycle(const std::vector<ir::Expr>& order,
                                             const ir::RegionSet& regions);

}  // namespace aotfuzz::aot
