// MergeCompilerRegions as TVM v0.8 implements it (src/relay/transforms/merge_compiler_regions.cc).
// Like TVM's, it does not check for cycles: a merge that makes a region cyclic through a node
// outside every region is left for PartitionGraph, which refuses the region if it is still
// cyclic after splitting ends on tuples (where TVM v0.8 recurses forever).
#pragma once

#include <string>

#include "aot/bugs.h"
#include "aot/options.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// Merges compiler regions in every function without a `Compiler` or `Primitive` attribute.
///
/// Regions are those of ir::RegionSet. Ends are visited in TVM's order (post order; a region's
/// unprocessed parent regions are visited first). At a region's first end, its restriction set
/// becomes the union of its parents' sets plus every parent of another target; each parent of
/// the same target that is not in the set is merged into it (the region keeps its id; sets that
/// named the parent now name the region). Finally every `compiler_begin(compiler_end(x))` whose
/// two annotations are in one region is replaced by `x`.
///
/// Honours Bug::kMergeAcrossTargets (ignore restriction sets) and Bug::kMergeSiblings (also merge
/// regions of the same target that share a parent region). Throws ir::VerifyError on invalid
/// input and PassError(kRejectedInput) only where TVM's visiting order re-enters a region it is
/// still processing (TVM recurses forever there).
ir::Module merge_compiler_regions(const ir::Module& module, const Options& options);

}  // namespace aotfuzz::aot
