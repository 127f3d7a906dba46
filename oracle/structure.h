// The structural oracle (docs/design.md, "The structural oracle"): after each pass, the pipeline's
// module must print exactly as the reference pass's module for the same input (TVM v0.8's rules,
// reference/tvm_passes.h), and the pipeline must refuse exactly the inputs the reference refuses.
// It sees passes that compute right numbers with the wrong structure, which the differential
// check cannot.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "aot/options.h"
#include "aot/pipeline.h"
#include "ir/module.h"
#include "oracle/verdict.h"

namespace aotfuzz::oracle {

/// The reference pass of a row of aot/passes.def, by its CLI name; nullptr for a pass that has
/// none (it is then not checked: docs/adding-a-pass.md).
using ReferencePass = ir::Module (*)(const ir::Module& input, const aot::Options& options);
ReferencePass reference_pass(std::string_view pass_name);

/// The structural check of one pass that ran on `input`: `output` is the pipeline's module, or
/// nullptr when the pipeline refused the input with the message `refusal`. Returns a structure
/// verdict at the pass's stage when the two differ (a unified diff, or the one refusal and the
/// other side's module); nullopt when they agree (the same text, or both refuse) or the pass has
/// no reference.
std::optional<Verdict> check_structure(const aot::PassInfo& pass, const ir::Module& input,
                                       const ir::Module* output, const std::string& refusal,
                                       const aot::Options& options);

/// What the reference pass of `stage` gives on that stage's input in `stages` (for bundles of
/// structure findings): nullopt when the stage has no reference pass or TVM's rules refuse.
std::optional<ir::Module> reference_stage_module(aot::Stage stage, const aot::Stages& stages,
                                                 const aot::Options& options);

}  // namespace aotfuzz::oracle
