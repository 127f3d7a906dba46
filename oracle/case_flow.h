// run_case in three steps, so that the middle one can be batched: prepare_case (in process: the
// reference, every pass, C code and the static checks), an Executor (compile and run), and
// judge_case (the verdict from the raw result). run_case is prepare, SingleProgramExecutor, judge.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/executor.h"
#include "oracle/prepare_work.h"
#include "oracle/stages.h"

namespace aotfuzz::oracle {

/// Steps 1-3 into `r`, by the case's system under test (SystemUnderTest::prepare) (inputs,
/// expected, stages, files, pipeline_time): returns the case to run, or nullopt when the case is
/// settled without running (r.verdict set: invalid input, pipeline error, mismatch of a stage,
/// static arity, or pass with options.in_process_only). `reference`, when given, is case_reference
/// of the same graph and options.input_seed; `mark`, when given, is told each pass's successor as
/// the passes go (run_stages).
std::optional<PreparedCase> prepare_case(const ir::Module& annotated, const CaseOptions& options,
                                         CaseResult& r, const CaseReference* reference = nullptr,
                                         const StageMark* mark = nullptr);

/// prepare_case for the builtin pipeline.
std::optional<PreparedCase> prepare_builtin_case(const ir::Module& annotated,
                                                 const CaseOptions& options, CaseResult& r,
                                                 const CaseReference* reference = nullptr,
                                                 const StageMark* mark = nullptr);

/// The end of prepare_builtin_case: the fields of `c` that come from the options rather than
/// from the graph (the limits, the compiler, sanitizers, kept files, the warnings oracle), and
/// with options.in_process_only the verdict that settles the case instead (r.verdict, nullopt).
/// A case aotfuzz-probe prepared gets them from its caller, whose options are the ones that
/// count (a toolchain resolved once is in no replay line).
std::optional<PreparedCase> finish_prepared_case(const ir::Module& annotated,
                                                 const CaseOptions& options, PreparedCase c,
                                                 CaseResult& r);

/// The limits a case of `annotated` runs under: options.limits with the output cap raised to
/// what the harness report needs (the outputs in hex and the call trace), so that a correct
/// program's report is never cut short, and for sanitized programs the address-space limit
/// turned into a resident-memory watch (a sanitizer runtime reserves terabytes of shadow).
host::RunLimits case_limits(const ir::Module& annotated, const CaseOptions& options);

/// Step 4's verdict: `raw` (from any executor) for the case prepared from `annotated` into `r`,
/// judged against r.expected: harness reports, dynamic arity of the call traces, signals,
/// timeouts, return codes, unwritten outputs, output comparison. Sets r.verdict, r.actual,
/// r.compile_time, r.run_time and r.work_dir. A verdict other than pass of a program that
/// `prepared.compiler` built as a stand-in (PreparedCase::confirm_compiler) is replaced by the
/// verdict of the program the confirming compiler builds (by `confirming`, else a
/// SingleProgramExecutor of its own; the compile times add up). Never throws.
void judge_case(const ir::Module& annotated, const CaseOptions& options,
                const PreparedCase& prepared, const RawResult& raw, CaseResult& r,
                SingleProgramExecutor* confirming = nullptr);

}  // namespace aotfuzz::oracle
