// The reference passes (docs/design.md, "The structural oracle"): a plain, slow transcription of
// TVM v0.8's MergeCompilerRegions, PartitionGraph and FuseOps, written from TVM's source and
// sharing no code with the pipeline under test (aot/) beyond ir/. The oracle compares each stage
// of the pipeline with the reference pass applied to that stage's input.
//
// Each function follows the TVM function it names, visit order included, because the order
// decides region ids, parameter order and names. Where TVM does not produce a module (it fails a
// check, throws, or recurses until its stack overflows) the reference throws TvmRefuses.
#pragma once

#include <string>

#include "ir/error.h"
#include "ir/module.h"

namespace aotfuzz::reference {

/// The largest function body (in nodes) the reference passes take: their recursion gets a stack
/// sized to the graph, which this bounds. Larger graphs throw std::length_error; the oracle does
/// not check them structurally.
inline constexpr std::size_t kMaxReferenceNodes = 200000;

/// TVM v0.8 gives no module for this input; what() says what TVM does instead.
class TvmRefuses : public ir::Error {
 public:
  using ir::Error::Error;
};

/// TVM's `relay.transform.MergeCompilerRegions()` on every user function (no Compiler and no
/// Primitive attribute): RegionMerger then MergeAnnotations. No cycle check: TVM has none; it
/// only recurses forever when a region's processing reaches that region again.
ir::Module merge_compiler_regions(const ir::Module& module);

/// TVM's `relay.transform.PartitionGraph(mod_name)`: FlattenTupleOutputs, RemoveDefaultAnnotations,
/// Partitioner and NameMangleExtFuncs. Outlined functions are named
/// `tvmgen_<mod_name>_<target>_<caller>_<id>`, then every character outside [A-Za-z0-9] becomes
/// `_` (TVM v0.8 leaves the name raw and its C does not compile; docs/design.md, PartitionGraph);
/// parameters keep TVM's raw `<target>_<id>_i<k>`.
ir::Module partition_graph(const ir::Module& module, const std::string& mod_name);

/// TVM's `relay.transform.FuseOps()` at opt level 3 with `relay.FuseOps.max_depth`, on every
/// function that is not Primitive. One documented difference: a group without any call is left
/// unwrapped where TVM makes a `Primitive=0` function (docs/design.md, FuseOps).
ir::Module fuse_ops(const ir::Module& module, int max_fuse_depth = 256);

}  // namespace aotfuzz::reference
