// Graphviz DOT export of a module: functions and annotated regions as coloured clusters.
#pragma once

#include <string>

#include "ir/module.h"

namespace aotfuzz::ir {

/// The module as a Graphviz `digraph`. One `subgraph cluster_N` per function (global or local;
/// functions with a `Compiler` attribute are filled with their target's colour) and, inside it,
/// one per annotated region (ir::RegionSet; a body whose annotations do not form valid regions
/// is drawn without region clusters). Colours come from a fixed palette assigned to the targets
/// in name order. Nodes are labelled with op names (`%x`, `@f`, `tuple`, `.1`, `fn`), edges run
/// from operand to user and carry the operand's type. Deterministic for a given module.
std::string to_dot(const Module& module);

}  // namespace aotfuzz::ir
