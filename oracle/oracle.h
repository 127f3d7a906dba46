// One differential test case end to end: reference on the original graph, the pipeline stage by
// stage (interpreted after each pass), C codegen, static arity, compile, out-of-process run,
// dynamic arity, output comparison. The result is one verdict with its stage.
#pragma once

#include <optional>
#include <string>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/case_flags.h"

namespace aotfuzz::oracle {

/// Runs one case. Never throws for anything the input or the pipeline does: every outcome is
/// a verdict (internal failures of the harness itself become toolchain-error).
CaseResult run_case(const ir::Module& annotated, const CaseOptions& options);

/// The same case on a system without the bug: the builtin pipeline without injected bugs, or the
/// fixed TVM build (SystemUnderTest::fixed_case); nullopt when there is none to compare with.
std::optional<CaseOptions> fixed_options(const CaseOptions& options);

}  // namespace aotfuzz::oracle
