// The IR-to-IR half of the pipeline under test (docs/design.md, "Pipeline semantics"):
// MergeCompilerRegions (optional), PartitionGraph(mod_name), FuseOps, with ir::verify() after every
// pass. The pass table is aot/passes.def.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aot/bugs.h"
#include "aot/pass_error.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// TVM's default `relay.FuseOps.max_depth`: no fused function holds more nodes.
inline constexpr int kDefaultMaxFuseDepth = 256;

/// How to run the passes.
struct PipelineOptions {
  /// Run MergeCompilerRegions (CLI --merge / --no-merge).
  bool merge = true;
  /// The `mod_name` of PartitionGraph and of kernel names (`tvmgen_<mod_name>_...`).
  std::string mod_name = "default";
  /// Injected bugs; the merge and partition switches are honoured by these passes.
  BugSet bugs;
  /// FuseOps' limit on nodes per fused function (TVM's relay.FuseOps.max_depth).
  int max_fuse_depth = kDefaultMaxFuseDepth;
  /// Every pass verifies its input. run_passes verifies the annotated input and each pass's
  /// output once, so it turns this off for the passes it runs (verify() is the largest cost).
  bool verify_input = true;
};

/// One enumerator per row of passes.def, in pipeline order.
enum class Pass : unsigned {
#define AOTFUZZ_PASS(id, name, function, description) id,
#include "aot/passes.def"
#undef AOTFUZZ_PASS
  kCount
};

/// A pass: module in, module out. Verifies its input (throws ir::VerifyError on invalid input)
/// and throws PassError when it cannot handle the input or (with injected bugs) breaks it.
using PassFn = ir::Module (*)(const ir::Module&, const PipelineOptions&);

/// A row of the pass table.
struct PassInfo {
  Pass pass;
  std::string_view name;
  PassFn run;
  std::string_view description;
};

/// Every pass, in pipeline order.
const std::vector<PassInfo>& pass_table();
/// The pass whose CLI name is `name`.
std::optional<Pass> parse_pass(std::string_view name);
const PassInfo& pass_info(Pass pass);

/// The module after each stage. `merged` is `annotated` when merging is off.
struct Stages {
  ir::Module annotated, merged, partitioned, fused;
  /// The stage called `name` ("annotated", "merged", "partitioned", "fused"; the CLI's --emit
  /// values), or nullptr.
  const ir::Module* stage(std::string_view name) const;
};

/// The stage names, in order: annotated, merged, partitioned, fused.
const std::vector<std::string_view>& stage_names();

/// Runs the passes of the table on `annotated`. Throws ir::VerifyError (naming the offending
/// node) when the input is invalid, PassError(kRejectedInput) when a pass refuses it, and
/// PassError(kBrokenOutput) when a pass's output fails ir::verify() or a pass builds an ill-typed
/// node (possible only with injected bugs).
Stages run_passes(const ir::Module& annotated, const PipelineOptions& options = {});

}  // namespace aotfuzz::aot
