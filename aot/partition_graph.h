// PartitionGraph(mod_name) as TVM v0.8 implements it (src/relay/transforms/partition_graph.cc):
// FlattenTupleOutputs, RemoveDefaultAnnotations, the Partitioner and NameMangleExtFuncs.
#pragma once

#include <string>
#include <string_view>

#include "aot/options.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// Outlines every region of every function without a `Compiler` or `Primitive` attribute.
///
/// First each `compiler_end` on a Tuple node becomes a Tuple of one end per field (one level,
/// as TVM), and annotations with target `default` are removed. Regions are then rebuilt on that
/// graph (ids as ir::RegionSet gives them, with gaps). Region `id` of `target` in `@caller`
/// becomes the global function `tvmgen_<mod_name>_<target>_<caller>_<id>` (outlined_name) with
/// attributes `Inline=1, Compiler="<target>", global_symbol="<name>", Primitive=1`. Its
/// parameters are the region's inputs in the order TVM meets the begins, one per producer (the
/// first ancestor that is not an annotation), named `<target>_<id>_i<k>` with k the begin's
/// position among the region's inputs. Its result is the one distinct output, or the tuple of
/// the distinct outputs in the order the ends were met; each consumer then reads
/// `TupleGetItem(call, i)` (one node per output, shared).
///
/// Module order (our choice; TVM's IRModule is a hash map): the input's functions in their
/// order, then the outlined functions grouped by caller (in module order) and by region id.
///
/// Honours Bug::kSwappedOutputOrder, Bug::kRegionOutputOffByOne and Bug::kWrongParamDedup.
/// Throws ir::VerifyError on invalid input and PassError(kRejectedInput) for a cyclic region, a
/// begin fed directly by an end of its own region (run MergeCompilerRegions first; TVM
/// ICHECK-failed), or an outlined name that already exists.
ir::Module partition_graph(const ir::Module& module, const Options& options);

/// `tvmgen_<mod_name>_<target>_<caller>_<region_id>` with every character outside [A-Za-z0-9]
/// turned into '_' (TVM's SanitizeName over the mangled name).
std::string outlined_name(std::string_view mod_name, std::string_view target,
                          std::string_view caller, int region_id);

/// TVM's FlattenTupleOutputs on one body: `compiler_end(Tuple(a, b))` becomes
/// `Tuple(compiler_end(a), compiler_end(b))`.
ir::Expr flatten_tuple_outputs(const ir::Expr& body);
/// TVM's RemoveDefaultAnnotations on one body: annotations with target `default` disappear.
ir::Expr remove_default_annotations(const ir::Expr& body);

}  // namespace aotfuzz::aot
