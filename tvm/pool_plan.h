// The pool-plan oracle: with TVM's Unified Static Memory Planner (USMP) on, TVM's memory plan
// judged against itself and against the C it generated (docs/tvm.md, "The pool-plan oracle").
//
// Requires: `plan` as driver.py's recording planner answers it ({"algorithm", "buffers": [{"name",
// "size", "alignment", "pool", "offset", "conflicts"}], "pools": [{"name", "internal",
// "constant", "size"}]}) or null when TVM gave none; `files` TVM's generated C sources and
// headers by name (the C runtime's own files, crt_backend_api.c and crt_config.h, may be among
// them: they are not TVM's output and are skipped); `metadata_json` the Model Library Format's
// metadata.json ("" when there is none); `options` the case's (its module name, and the
// workspace and constant alignments the executor was asked for).
//
// Ensures: a verdict only on evidence read in the forms TVM v0.18.0 writes (the let bindings
// ConvertPoolAllocationsToOffsets leaves, `static uint8_t <pool>[N];`, the header's
// `..._WORKSPACE_POOL_SIZE` macros, metadata.json's main workspace); a plan, C text or metadata
// of another shape leaves the checks that need it out, never gives a finding. The first
// finding, in this order: pool-overlap, pool-too-small, pool-misaligned,
// pool-size-disagreement, workspace-leftover (all at stage codegen); nullopt when none.
//
// Liveness is recomputed, not taken from TVM: each buffer's let in `__tvm_main__` is live from
// the first to the last call that uses it (inputs under workspace-io from before the first call,
// outputs to after the last, constants throughout), a buffer bound inside a callee at that
// callee's calls. Two buffers that share bytes of one pool while both are live overlap whether
// or not TVM's conflict list says so; only where one's last use and the other's first use are
// the same call of a host kernel (TVM orders the statements inside it) is it left to TVM's list.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oracle/case.h"
#include "oracle/verdict.h"

namespace aotfuzz::tvm {

std::optional<oracle::Verdict> judge_pool_plan(
    const nlohmann::json& plan, const std::vector<std::pair<std::string, std::string>>& files,
    const std::string& metadata_json, const oracle::CaseOptions& options);

/// A pool's name as signatures carry it: without the `_<k>_var` counter TVM gives the pool's C
/// variable in each function ("global_workspace_1_var" is "global_workspace").
std::string stable_pool_name(const std::string& name);

}  // namespace aotfuzz::tvm
