// verify(): the one statement of every module invariant. Runs after every pass, generation,
// mutation and reduction step.
#pragma once

#include "ir/module.h"

namespace aotfuzz::ir {

/// Throws VerifyError (naming the offending node) unless:
///  - `@main` exists; every called `@f` exists with the type the call was built against; the
///    call graph is acyclic;
///  - every variable is a parameter of its innermost enclosing function, bound once;
///  - node types are consistent (re-derived bottom-up);
///  - annotations follow docs/design.md, "Annotations and regions" (ir/regions.h: begin on
///    every edge into a region, end on every edge out, matching targets, consistent argument
///    regions, no end without a region);
///  - functions carrying `Compiler` or `Primitive` contain no annotations.
void verify(const Module& module);

}  // namespace aotfuzz::ir
