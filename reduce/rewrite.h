// What the reductions (one per file, reduction_passes.def) share: @main rebuilt around a new body
// or new parameters, the nodes a reduction may cut at, and groups of independent targets to
// remove together. Rebuilding may throw ir::Error when a step does not apply; the reducer drops
// such a candidate.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/module.h"
#include "ir/regions.h"

namespace aotfuzz::reduce {

const ir::Function& main_of(const ir::Module& m);
/// `m` with @main's parameters and body replaced (its attributes kept).
ir::Module with_main(const ir::Module& m, std::vector<ir::Var> params, ir::Expr body);
ir::Module with_body(const ir::Module& m, ir::Expr body);

/// Neither a variable, a global nor a function: a node a reduction may replace.
bool is_value_node(const ir::Expr& e);
bool is_call_of(const ir::ExprNode* node, ir::Op op);
/// The non-variable nodes of @main's body, closest to the result first (big cuts first).
std::vector<ir::Expr> nodes_root_first(const ir::Module& m);
/// @main's regions; nullopt when its annotations do not form regions.
std::optional<ir::RegionSet> regions_of(const ir::Module& m);

/// The region targets of @main's annotations.
std::set<std::string> targets_of(const ir::Module& m);

/// A parameter name not used by any parameter of `params`.
std::string fresh_param_name(const std::vector<ir::Var>& params, const std::string& stem);
/// `type` with every tensor rewritten by `fn` (tuple nesting is bounded by kMaxTypeDepth).
ir::Type map_tensors(const ir::Type& type, const std::function<ir::Type(const ir::Type&)>& fn);
/// @main with every parameter retyped by `fn`, the body rebuilt (and re-typed) on top. Throws
/// ir::Error when no parameter changes.
ir::Module retype_params(const ir::Module& m, const std::function<ir::Type(const ir::Type&)>& fn);

/// Groups of the indices 0..n-1 of independent targets, in the order a reduction tries removing
/// them: halves, quarters, ... (while a group holds at least two; only when n >= 4), then each
/// index alone. The chunks take the big steps of delta debugging; the singles keep a reduced
/// graph 1-minimal for the reduction.
std::vector<std::vector<std::size_t>> chunks_then_singles(std::size_t n);

}  // namespace aotfuzz::reduce
