// Verdicts: the closed set of outcomes of one differential test, their de-duplication signatures,
// exit codes, one-line summaries and JSON form (docs/design.md, "Verdicts").
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "aot/pipeline.h"
#include "host/process.h"
#include "host/toolchain.h"
#include "ir/error.h"

namespace aotfuzz::oracle {

/// The kinds, in the order of the alternatives of VerdictDetail.
enum class VerdictKind {
  kPass,
  kMismatch,
  kArity,
  kInputClobbered,
  kOutputUnwritten,
  kCrash,
  kTimeout,
  kCompileError,
  kPipelineError,
  kInvalidInput,
  kToolchainError,
  kSutError,
  kSutCrash,
  kFidelity,
  kStructure,
  kNondeterministic,
  kErrorIgnored,
  kWorkspaceOversized,
  kPoolOverlap,
  kPoolMisaligned,
  kPoolTooSmall,
  kPoolSizeDisagreement,
  kWorkspaceLeftover,
  kKnown,
};
inline constexpr int kNumVerdictKinds = 24;

/// The stage a verdict is attributed to (the first one that diverged); the pipeline driver owns
/// the list (annotated, one per pass of aot/passes.def, codegen, run).
using aot::kNumStages;
using aot::Stage;

/// What kind of function a call goes to; named in signatures instead of the function's name
/// (names carry region ids and counters that vary from case to case).
enum class CalleeKind {
  kKernel,    ///< a fused host primitive function (tvmgen_<mod>_fused_...)
  kExternal,  ///< an outlined external-compiler function (tvmgen_<mod>_<target>_...)
  kExecutor,  ///< the AoT executor (tvmgen_<mod>_run_model)
  kEntry,     ///< the entry point (tvmgen_<mod>_run)
  /// an outlined region of a target that TVM lowers through TIR with a RelayToTIR hook
  /// (tvmgen_<mod>_aotfuzz_uma_..., the UMA backend of tvm/driver.py), not through C source
  kHookLowered,
};
inline constexpr int kNumCalleeKinds = 5;

/// The region targets whose functions TVM lowers with a RelayToTIR target hook (UMA's): their
/// bugs are not the C-source codegen's, so signatures keep them apart (kHookLowered).
inline constexpr std::string_view kHookLoweredTargets[] = {"aotfuzz_uma"};

/// Where an arity violation was seen.
enum class ArityEvidence {
  kStatic,   ///< in the emitted C (the num_args passed at a call site)
  kDynamic,  ///< in the call trace of a run
};

/// "pass", "mismatch", "arity", "input-clobbered", "output-unwritten", "crash", "timeout",
/// "compile-error", "pipeline-error", "invalid-input", "toolchain-error", "sut-error", "sut-crash",
/// "fidelity", "structure", "nondeterministic", "error-ignored", "workspace-oversized",
/// "pool-overlap", "pool-misaligned", "pool-too-small", "pool-size-disagreement",
/// "workspace-leftover", "known".
std::string_view verdict_kind_name(VerdictKind kind);
std::optional<VerdictKind> parse_verdict_kind(std::string_view name);
/// "annotated", the passes' names ("merge", "partition", "fuse"), "codegen", "run".
using aot::parse_stage;
using aot::stage_name;
/// "kernel", "external", "executor", "entry", "hook-lowered".
std::string_view callee_kind_name(CalleeKind kind);
/// The kind of the generated function `callee` of module `mod_name`, from its name:
/// tvmgen_<mod>_run_model, tvmgen_<mod>_run, tvmgen_<mod>_fused_..., tvmgen_<mod>_<target>_...
/// for a target of kHookLoweredTargets, else external.
CalleeKind callee_kind_of(const std::string& callee, const std::string& mod_name);
/// "static", "dynamic".
std::string_view arity_evidence_name(ArityEvidence evidence);

/// Every output matched, every check passed.
struct Pass {
  bool operator==(const Pass&) const = default;
};

/// An output element differs from the reference (values printed exactly, e.g. hex floats).
struct Mismatch {
  int output_index = 0;
  std::int64_t element_index = 0;
  std::string expected;
  std::string actual;
  bool operator==(const Mismatch&) const = default;
};

/// A call passed a different number of arguments than the callee takes.
struct Arity {
  std::string callee;  ///< the function's name (details only, never in the signature)
  CalleeKind callee_kind = CalleeKind::kKernel;
  int expected_args = 0;
  int actual_args = 0;
  ArityEvidence evidence = ArityEvidence::kStatic;
  bool operator==(const Arity&) const = default;
};

/// The run wrote into an input buffer.
struct InputClobbered {
  int input_index = 0;
  std::int64_t element_index = 0;
  std::string expected;
  std::string actual;
  bool operator==(const InputClobbered&) const = default;
};

/// An output buffer still holds the poison pattern after the run.
struct OutputUnwritten {
  int output_index = 0;
  std::int64_t element_index = 0;
  bool operator==(const OutputUnwritten&) const = default;
};

/// The test program died from a signal, or (signal 0) ended abnormally without one.
struct Crash {
  int signal = 0;
  /// The function the call trace was in when it died, if known.
  std::optional<CalleeKind> callee_kind;
  std::string callee;
  std::string stderr_tail;  ///< the end of its stderr (sanitizer report, ...)
  bool operator==(const Crash&) const = default;
};

/// The test program hit the wall-clock or CPU limit and was killed.
struct Timeout {
  std::int64_t limit_ms = 0;
  std::string detail;
  bool operator==(const Timeout&) const = default;
};

/// The C compiler rejected the emitted code.
struct CompileError {
  std::string compiler;  ///< "tcc", "gcc", "clang"
  std::string diagnostics;
  /// The first error's text without its position, names and numbers
  /// (diagnostic_class(diagnostics)), when it is part of the signature: set for TVM's C, where
  /// different bugs of TVM's example codegen all end as compile errors. Empty: not in it.
  std::string diagnostic;
  bool operator==(const CompileError&) const = default;
};

/// A pass or the code generator failed on valid input (threw, or broke an invariant).
struct PipelineError {
  std::string message;
  bool operator==(const PipelineError&) const = default;
};

/// The input graph itself is bad (parse or type error, cyclic region, ...): not a finding.
struct InvalidInput {
  std::string message;
  bool operator==(const InvalidInput&) const = default;
};

/// The compiler is missing, crashed or timed out, or the harness could not run: not a finding.
struct ToolchainError {
  std::string message;
  /// The system under test cannot be used at all (TVM does not import, its driver does not
  /// start): every other case would end the same way, so a campaign stops at the first.
  bool system_unusable = false;
  bool operator==(const ToolchainError&) const = default;
};

/// An external system under test (`--sut tvm`) raised an error on a graph it should compile;
/// the stage is the step it failed in (merge, partition, or codegen for its build).
struct SutError {
  std::string message;
  /// Where in the system it was raised (for TVM: the stem of the source file, e.g.
  /// "codegen_c"): part of the signature, so that errors of different origins stay apart.
  std::string where;
  bool operator==(const SutError&) const = default;
};
/// The system under test's compiler process died (a signal, an abort, an exit without answer)
/// while compiling the case.
struct SutCrash {
  std::string message;  ///< how it ended and the end of its stderr
  bool operator==(const SutCrash&) const = default;
};
/// The system under test and the builtin pipeline computed right outputs but different
/// structures at the stage (a unified diff of the two modules' text). One of the two deviates
/// from TVM's rules; which one is settled by reading TVM's source.
struct Fidelity {
  std::string diff;
  bool operator==(const Fidelity&) const = default;
};

/// A pass's module differs from what TVM v0.8's rules give for the same input (the reference
/// passes, reference/tvm_passes.h), or one of the two refuses the input and the other does not:
/// a unified diff of the two modules' text, or the refusal and the module of the other side.
/// The outputs may be right: this is the structural oracle (docs/design.md).
struct Structure {
  std::string diff;
  bool operator==(const Structure&) const = default;
};

/// Generating the C twice from the same module (the second time from a copy with fresh nodes)
/// gave different bytes: a build is not reproducible, and a cache or a diff of the output breaks
/// (TVM #10568). `diff` is a unified diff of the first file that differs.
struct Nondeterministic {
  std::string diff;
  bool operator==(const Nondeterministic&) const = default;
};

/// A fault run made one call of the model fail (the harness's fault points, one per function
/// the executor calls), or the workspace allocation (TVMBackendAllocWorkspace returning NULL),
/// and the entry point returned 0, or the executor went on calling after the failure: an error
/// would be lost in a deployment (TVM PR #10424).
struct ErrorIgnored {
  int fail_at = 0;      ///< the failed call, 1-based, in call order; 0: the workspace allocation
  int rc = 0;           ///< what the entry point returned
  int calls_after = 0;  ///< calls made after the failed one
  bool operator==(const ErrorIgnored&) const = default;
};

/// With storage reuse on, a call opens a new workspace buffer while an older one of at least its
/// size holds nothing live (oracle/workspace.h): the outputs are right, but the workspace the
/// application must provide is larger than the planner's own rule gives.
struct WorkspaceOversized {
  int call = 0;                       ///< the call that opens the buffer, 1-based, in call order
  std::string callee;                 ///< that call's callee
  int sid = 0;                        ///< the new buffer
  std::uint64_t bytes = 0;            ///< its size
  int dead_sid = 0;                   ///< an older buffer that could have held it
  std::uint64_t dead_bytes = 0;       ///< its size
  int dead_since = 0;                 ///< the call after which dead_sid held nothing live, 1-based
  std::uint64_t workspace_bytes = 0;  ///< the whole workspace the executor asks for
  bool operator==(const WorkspaceOversized&) const = default;
};

/// With TVM's static memory planner (USMP) on: two buffers of one pool that are live at once share
/// bytes (tvm/pool_plan.h). TVM's own conflict list may name them (a packing bug), or only the
/// liveness read off the executor's calls says they are live at once (a liveness bug of TVM's).
struct PoolOverlap {
  std::string pool;           ///< the pool's name, without the counters of its C variables
  std::string first, second;  ///< the buffers, by the plan's names
  std::int64_t first_offset = 0, first_end = 0;    ///< first's bytes [offset, end) in the pool
  std::int64_t second_offset = 0, second_end = 0;  ///< second's
  /// TVM's plan lists them as conflicting; false: only our liveness says they are live at once.
  bool tvm_conflict = false;
  /// A call (1-based, in the executor's call order) at which both are live; 0 when none says
  /// (constants, live all the time, or TVM's conflict alone).
  int live_at_call = 0;
  bool operator==(const PoolOverlap&) const = default;
};

/// With USMP on: a buffer's offset in its pool is not a multiple of the alignment it asks for
/// (its own, or the executor's workspace or constant byte alignment).
struct PoolMisaligned {
  std::string pool;
  std::string buffer;
  std::int64_t offset = 0;
  std::int64_t alignment = 0;
  bool operator==(const PoolMisaligned&) const = default;
};

/// With USMP on: a pool is smaller than the end of a buffer placed in it.
struct PoolTooSmall {
  std::string pool;
  std::int64_t size = 0;    ///< the pool's size
  std::string source;       ///< where that size comes from: "plan", "header", "c" (TVM's array)
  std::int64_t needed = 0;  ///< the largest offset + size of its buffers
  std::string buffer;       ///< the buffer that ends there
  bool operator==(const PoolTooSmall&) const = default;
};

/// With USMP on: the sizes of a pool (or, for the Model Library Format's metadata.json, of all
/// workspace pools together) that TVM states in different places differ.
struct PoolSizeDisagreement {
  std::string pool;  ///< a pool, or several joined by '+'
  /// Where each size was read ("plan", "header", "metadata", "c") and the size read there.
  std::map<std::string, std::int64_t> sizes;
  bool operator==(const PoolSizeDisagreement&) const = default;
};

/// With USMP on: TVM's generated C still allocates from the C runtime's workspace
/// (TVMBackendAllocWorkspace), which the memory planner should have replaced by pool offsets.
struct WorkspaceLeftover {
  std::string function;  ///< the function that calls it (details only)
  CalleeKind function_kind = CalleeKind::kKernel;
  bool operator==(const WorkspaceLeftover&) const = default;
};

/// The system under test did what a listed known behaviour of its release explains (for TVM,
/// tvm/known.def: a deliberate change of a later release, or a bug already reported), and
/// nothing else was wrong: counted, never a new finding, so that it does not hide the next bug.
struct Known {
  std::string id;      ///< the row of the system's list (part of the signature)
  std::string source;  ///< where it is recorded (for TVM: the pull request)
  std::string hidden;  ///< the summary of the verdict the case would have had without the list
  bool operator==(const Known&) const = default;
};

/// The payload; alternative i is the VerdictKind with value i.
using VerdictDetail =
    std::variant<Pass, Mismatch, Arity, InputClobbered, OutputUnwritten, Crash, Timeout,
                 CompileError, PipelineError, InvalidInput, ToolchainError, SutError, SutCrash,
                 Fidelity, Structure, Nondeterministic, ErrorIgnored, WorkspaceOversized,
                 PoolOverlap, PoolMisaligned, PoolTooSmall, PoolSizeDisagreement, WorkspaceLeftover,
                 Known>;
static_assert(std::variant_size_v<VerdictDetail> == kNumVerdictKinds);

/// One verdict: what happened and the stage it is attributed to.
struct Verdict {
  Stage stage = Stage::kRun;
  VerdictDetail detail = Pass{};

  VerdictKind kind() const { return static_cast<VerdictKind>(detail.index()); }
  bool operator==(const Verdict&) const = default;
};

/// A JSON verdict that is malformed (unknown kind, missing or mistyped field).
class VerdictError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// The de-duplication key: `kind:stage`, then `:callee-kind` for an arity verdict (and a crash
/// whose callee is known, and the function of a workspace-leftover), then `:SIGNAME` for a
/// crash, `:where` for a sut-error, `:id` for a known behaviour, `:pool` for the pool verdicts.
/// E.g. "arity:codegen:kernel", "crash:run:external:SIGSEGV", "mismatch:codegen",
/// "pool-overlap:codegen:global_workspace". Never contains function or buffer names, indices,
/// values, seeds or addresses (a pool's name is the same in every case of a configuration). A crash
/// without a signal ends in ":NOSIGNAL", one with a signal that has no conventional name in
/// ":SIGOTHER".
std::string signature(const Verdict& verdict);
/// What tells compile errors apart across cases: the compiler's first "error:" (else the
/// linker's first undefined reference, else the first line that mentions an error), with
/// positions, quoted names, numbers and punctuation dropped, as lower-case words joined by '-'
/// ("expected-declaration-specifiers-or-before-token"); at most 60 characters.
std::string diagnostic_class(std::string_view diagnostics);

/// What tells TVM errors apart across cases: `where` (the stem of the source file that raised
/// it) and, for a failed ICHECK, its condition with names kept and numbers dropped
/// ("aot_executor_codegen:ttype").
std::string tvm_error_site(std::string_view where, std::string_view message);

/// Whether the verdict reports a bug in the pipeline (everything but pass, known, invalid-input
/// and toolchain-error).
bool is_finding(const Verdict& verdict);

/// The process exit code for this verdict: 0 pass or known, 1 finding, 2 invalid input, 3
/// toolchain.
int exit_code(const Verdict& verdict);

/// One line for humans, e.g. "arity at codegen: kernel tvmgen_default_fused_add called with 2
/// arguments, takes 3 (call trace)".
std::string summary(const Verdict& verdict);

/// {"kind", "stage", "signature", "summary", <payload fields>}.
nlohmann::json to_json(const Verdict& verdict);
/// The inverse of to_json ("signature" and "summary" are ignored); throws VerdictError.
Verdict from_json(const nlohmann::json& json);

/// The verdict for a compilation that did not succeed: compile-error (stage codegen) or
/// toolchain-error; nullopt when it succeeded.
std::optional<Verdict> verdict_from_compile(const host::CompileResult& result,
                                            host::CompilerKind compiler);

/// The verdict for a test-program run that did not exit normally: crash (a signal), timeout, or
/// toolchain-error (it could not be started); nullopt when it exited, whatever the code.
std::optional<Verdict> verdict_from_run(const host::RunResult& result,
                                        const host::RunLimits& limits, Stage stage = Stage::kRun);

}  // namespace aotfuzz::oracle
