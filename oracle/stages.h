// The IR half of a case, shared by run_case and run_case_in_process: the reference result of the
// annotated graph, then every pass in turn, each stage interpreted and compared with it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "aot/pipeline.h"
#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/verdict.h"
#include "reference/footprint.h"
#include "reference/interpreter.h"
#include "reference/value.h"

namespace aotfuzz::oracle {

/// The reference side of a case: the verified annotated graph's inputs and expected outputs, or
/// the invalid-input verdict (stage annotated) when it does not verify, does not fit
/// `memory_budget` (reference::over_memory_budget, checked before anything is allocated) or does
/// not evaluate. Computed once per graph and shared by the runs of several option sets.
struct CaseReference {
  std::vector<reference::Value> inputs;
  std::vector<reference::Value> expected;
  std::optional<Verdict> invalid;
};
/// `plans`, when given, keeps the evaluation plans for later evaluations of the same case.
CaseReference case_reference(const ir::Module& annotated, std::uint64_t input_seed,
                             reference::PlanCache* plans = nullptr,
                             std::uint64_t memory_budget = reference::kDefaultMemoryBudget);

/// The first output of `actual` that differs from `expected` (bitwise, or by more than `ulp`
/// units in the last place for floats) as a mismatch verdict of `stage`; nullopt when none does.
std::optional<Verdict> compare_outputs(const std::vector<reference::Value>& expected,
                                       const std::vector<reference::Value>& actual,
                                       std::uint32_t ulp, Stage stage);

/// Told each step of a case as it is entered (the probe's child reports them to its parent).
using StageMark = std::function<void(Stage)>;

/// The stage of the first step after `stage` under `options`: the next enabled pass, else codegen.
Stage next_stage(Stage stage, const aot::Options& options);

/// Runs the pipeline driver (aot::run_pipeline) with `options` on
/// `annotated`, which `reference` must come from (so it is valid and is not verified again; every
/// pass still verifies its output). Each stage's output is interpreted on reference.inputs and
/// compared with reference.expected. `stages` receives every stage reached (a skipped or failed
/// stage repeats the last good module). Returns the first verdict: invalid input (a pass refused
/// the graph), pipeline error (a pass broke its output or threw) or mismatch; nullopt when every
/// stage agrees. `plans`, when given, is used for every stage's evaluation. With
/// `check_structure`, each pass that agrees on values is then checked against its reference pass
/// (oracle/structure.h), and a refusal is a structure verdict unless the reference refuses too.
/// `mismatch_actual`, when given, receives the outputs of the stage a mismatch verdict is about
/// (a bundle's actual.txt). `mark`, when given, is told the next step each time a stage agrees.
std::optional<Verdict> run_stages(const ir::Module& annotated, aot::Options options,
                                  const CaseReference& reference, std::uint32_t ulp,
                                  aot::Stages& stages, reference::PlanCache* plans = nullptr,
                                  bool check_structure = true,
                                  std::vector<reference::Value>* mismatch_actual = nullptr,
                                  const StageMark* mark = nullptr);

/// Steps 1 and 2 of every case, into `r`: the reference (`*reference` when given, computed from
/// `annotated` and options.input_seed otherwise) into r.inputs and r.expected, then run_stages
/// into r.stages (set in either case). Returns false when that settled the case (r.verdict is then
/// invalid input, pipeline error or mismatch); true when the executor side is to be checked next.
bool reference_and_stages(const ir::Module& annotated, const CaseOptions& options,
                          const CaseReference* reference, CaseResult& r,
                          reference::PlanCache* plans = nullptr,
                          const StageMark* mark = nullptr);

}  // namespace aotfuzz::oracle
