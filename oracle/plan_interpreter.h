// The plan interpreter: the in-process model of the emitted AoT executor. It runs the same
// aot::ExecutorProgram the C emitter prints (storage ids, argument slots, num_args, the shared
// stack_value array whose stale entries survive between calls), executing every kernel and
// external function with the reference interpreter on the bytes its slots point to, without a C
// compiler. It is the fast tier of the oracle (libFuzzer's fuzz_pipeline), an Executor like the
// compiled ones (PlanExecutor): its raw results go to the same judge; run_case stays the ground
// truth.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "aot/codegen.h"
#include "aot/executor_program.h"
#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/executor.h"
#include "oracle/stages.h"
#include "oracle/verdict.h"
#include "reference/value.h"

namespace aotfuzz::oracle {

/// The outcome of interpreting one executor program.
struct PlanRun {
  /// Pass, or the first problem met while running: crash (a NULL or out-of-range argument
  /// handle, a read or write past the end of a buffer), input-clobbered (a write into an input
  /// buffer), compile-error (a direct call with the wrong number of arguments, which a C compiler
  /// would refuse), output-unwritten (an output byte nobody wrote).
  Verdict verdict;
  /// The output buffers after the run, one tensor per flattened output of @main (empty when the
  /// run stopped early).
  std::vector<reference::Value> outputs;
};

/// The static arity check: every call's num_args against `expected` (aot::expected_call_arity,
/// derived from the IR alone), site by site. nullopt when they agree; otherwise an arity verdict
/// (stage codegen, evidence static), like run_case's check of the emitted C.
std::optional<Verdict> check_program_arity(const aot::ExecutorProgram& program,
                                           const std::vector<aot::CallSiteInfo>& expected);

/// Runs `program` (built from `fused`) on `inputs`, one value per parameter of @main. Memory
/// follows the emitted C: separate input and output buffers, one zero-initialised workspace with
/// every sid at its offset (so overlapping sids share bytes), the shared stack_value array zeroed
/// once and overwritten from slot 0 by each packed call, one DLTensor array per call that stays
/// valid for the whole run. A callee reads as many slots as its own signature says, whatever
/// num_args was. Outputs of one callee are written one after the other, each computed from the
/// memory as it is then (so an output aliasing a later input is seen as the C loop would see it
/// for elementwise accesses). Never throws for what the program does; throws ir::Error only when
/// `inputs` do not match @main.
/// `plans`, when given, supplies and keeps the callees' evaluation plans.
PlanRun interpret_program(const ir::Module& fused, const aot::ExecutorProgram& program,
                          const std::vector<reference::Value>& inputs,
                          reference::PlanCache* plans = nullptr);

/// A prepared case as the plan interpreter takes it (PreparedCase::plan).
struct PlanCase {
  ir::Module fused;
  aot::ExecutorProgram program;
  /// One value per parameter of @main.
  std::vector<reference::Value> inputs;
  /// The evaluation plans the stages already made (shared with them: the same functions).
  std::shared_ptr<reference::PlanCache> plans;
};

/// The executor without a C compiler: interpret_program on each case's PreparedCase::plan. A run
/// the harness would report (outputs, an unwritten output, a write into an input) comes back as
/// RawResult::report; a crash or a call a compiler would refuse comes back settled, as a compiled
/// executor settles a compile error. Timeouts and memory limits do not apply.
class PlanExecutor : public Executor {
 public:
  std::vector<RawResult> run(std::span<const PreparedCase> cases) override;
};

/// prepare_case for PlanExecutor: steps 1-2 into `r` as prepare_case does, then the executor
/// program (codegen's bug switches applied) and its static arities against the IR's. With
/// `emit_c`, generate_c also runs (catching emitter-only failures) and r.files holds its output.
std::optional<PreparedCase> prepare_plan_case(const ir::Module& annotated,
                                              const CaseOptions& options, CaseResult& r,
                                              bool emit_c = false,
                                              const CaseReference* reference = nullptr);

/// run_case without a C compiler: prepare_plan_case, PlanExecutor, judge_case. That is: the
/// reference on the original graph, every pass verified and interpreted, the executor program
/// built, its static arities checked and the program interpreted, its outputs judged against the
/// reference as run_case judges a compiled program's. `options.compiler`, `sanitize`, `limits`
/// and `keep_files` are ignored. Never throws; every outcome is a verdict with the same kinds,
/// stages and signatures run_case would give for these checks. Passing `reference`
/// (case_reference of the same graph and options.input_seed) skips recomputing it.
CaseResult run_case_in_process(const ir::Module& annotated, const CaseOptions& options,
                               bool emit_c = false, const CaseReference* reference = nullptr);

}  // namespace aotfuzz::oracle
