// Predicates over annotated modules used by the generator tests: the conformance shapes, and the
// structural guarantees the builder promises (acyclic region graph, merge safety).
#pragma once

#include "ir/module.h"

namespace aotfuzz::generator::testing {

/// TVM #9036: a host add of compiler_end(a) and compiler_end(b) where a and b lie in two
/// regions of one target and b's region takes a through end->begin (after
/// MergeCompilerRegions: one two-output region feeding one host add).
bool has_9036_shape(const ir::Module& m);
/// A compiler_end whose argument is a tuple.
bool has_end_on_tuple(const ir::Module& m);
/// An external region's output feeding two chained host adds: add(add(e, ..), e') with e, e'
/// ends of one region value.
bool has_extern_feeding_chained_host_adds(const ir::Module& m);
/// A region holding exactly one non-annotation node.
bool has_single_op_region(const ir::Module& m);
/// True when contracting every region to one node leaves the graph acyclic (what outlining
/// each region into one function call needs).
bool region_graph_is_acyclic(const ir::Module& m);
/// True when some region reaches another region through a host node while the two are linked by
/// a chain of same-target end->begin edges (MergeCompilerRegions would build a cyclic region).
bool has_host_path_inside_merge_group(const ir::Module& m);
/// True when TVM's MergeCompilerRegions then PartitionGraph (the reference transcription) give
/// a module: no merged region is cyclic, on its own or with others. What merge_safe promises.
bool partitions_after_merging(const ir::Module& m);
/// True when TVM's C interface refuses @main's input names (two of them one C field after
/// sanitizing, reference/c_interface.h).
bool c_interface_refuses_input_names(const ir::Module& m);

}  // namespace aotfuzz::generator::testing
