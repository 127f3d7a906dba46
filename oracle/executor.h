// The executor seam: a case is prepared in process (reference, passes, C code, static checks)
// into a PreparedCase, an Executor runs a span of them and returns each one's RawResult, and one
// judge (judge_case, oracle/case_flow.cc) turns a raw result into the verdict. Executors differ
// only in what runs the case: one compiled program per case (SingleProgramExecutor, `aotfuzz run`
// and confirmation), many cases in one program run by a fork server, each case in its own child
// (BatchedExecutor, campaigns), or the executor program interpreted without a C compiler
// (PlanExecutor, oracle/plan_interpreter.h: the libFuzzer targets' fast tier).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "host/process.h"
#include "host/toolchain.h"
#include "oracle/harness.h"
#include "oracle/verdict.h"

namespace aotfuzz::oracle {

struct PlanCase;

/// A case ready to compile and run: everything the executor and the judge need, nothing of the IR.
struct PreparedCase {
  /// The case's module name; the emitted symbols are `tvmgen_<mod_name>_...`.
  std::string mod_name;
  /// The generated files in codegen order: aotfuzz_runtime.h, tvmgen_<mod>.h, tvmgen_<mod>_lib.c.
  std::vector<std::pair<std::string, std::string>> sources;
  /// The name of tvmgen_<mod>.h among `sources`.
  std::string header_name;
  /// This case's harness part without its inputs (harness_code_c), and its inputs.
  std::string harness_case;
  std::vector<HarnessInput> inputs;
  /// What each callee takes, from the IR (the dynamic arity check of the call trace).
  std::map<std::string, int> expected_args;
  host::RunLimits limits;
  /// Single programs: the compiler (nullopt: tcc, else gcc, else clang) and its lookup.
  std::optional<host::CompilerKind> compiler;
  std::optional<host::Toolchain> toolchain;
  /// The compiler whose program decides every verdict but a pass, when `compiler` is a faster
  /// stand-in for it (TVM's C: tcc, then gcc as TVM's own tests build it): a case the stand-in's
  /// program does not pass is judged again on this compiler's program, so that a finding carries
  /// its diagnostics and its program's behaviour (judge_case).
  std::optional<host::CompilerKind> confirm_compiler;
  bool sanitize = false;
  bool keep_files = false;
  /// gcc/clang: check the program's own files with -fsyntax-only first and stop at an error
  /// there, whose diagnostics are the full build's: confirming a stand-in compiler's compile
  /// error then costs no code generation or link. A clean check goes on to the full build.
  bool syntax_check_first = false;
  /// main.c when set (TVM's programs: the harness over TVM's runtime headers); else
  /// harness_main_c of the builtin pipeline's runtime.
  std::string main_c;
  /// How the single program is compiled beyond its own files (TVM's: the standalone CRT's
  /// include directory, TVM's code not held to -Werror, no call trace).
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines = {"AOTFUZZ_TRACE"};
  bool warnings_as_errors = true;
  /// A compile error's signature carries its first diagnostic's class (TVM's C: the bugs of its
  /// example codegen all end as compile errors, told apart by what the compiler says).
  bool diagnostic_in_signature = false;
  /// The warnings oracle: before it runs, the generated files (`sources`, not the harness) are
  /// also checked by gcc (else clang) with -Wall -Wextra -Werror, syntax only, since tcc, which campaigns compile with, warns of
  /// almost nothing (no unused parameter or variable). A warning is a compile-error at codegen;
  /// with no gcc or clang installed, or a program compiled by one anyway, there is no check.
  bool check_warnings = false;
  /// The verdict that replaces a pass (a difference found while preparing that matters only
  /// when the run itself is right: a fidelity difference).
  std::optional<Verdict> instead_of_pass;

  /// What the plan interpreter runs (PlanExecutor); null for the compiled executors, which run
  /// `sources`.
  std::shared_ptr<const PlanCase> plan;

  /// Files of the program that are the same for many cases (TVM's: the C runtime's backend API,
  /// its configuration header, the harness's runtime and platform layer): an executor that keeps
  /// objects (SingleProgramExecutor(true)) compiles each .c of them once and links the object
  /// into every program it fits; the headers here are the ones those files may include from the
  /// program's directory. Otherwise they are compiled with the rest.
  std::vector<std::pair<std::string, std::string>> support_sources;

  /// The files of the single program: `sources`, `support_sources` and main.c.
  std::vector<std::pair<std::string, std::string>> program_files() const;
};

/// What running a prepared case produced, before judging.
struct RawResult {
  /// Set when the case never ran: compile-error, or toolchain-error (no compiler, a harness
  /// failure of the executor itself).
  std::optional<Verdict> settled;
  /// The program run: how it ended, its stdout (the harness report) and stderr. An output flood
  /// is ExitKind::kTimedOut with a message saying so.
  host::RunResult run;
  /// The harness report when no program printed one (PlanExecutor): judged as the parse of a
  /// compiled program's stdout is.
  std::optional<ParsedRun> report;
  /// Stdout passed the output cap and the case was killed for it.
  bool flood = false;
  std::chrono::microseconds compile_time{0}, run_time{0};
  /// Where the single program's files are (kept with keep_files), else empty.
  std::string work_dir;
  /// Cut short by a stop request (BatchOptions::stop): the case has no result to judge.
  bool cancelled = false;
};

/// Runs prepared cases. One executor is used by one thread at a time.
class Executor {
 public:
  virtual ~Executor() = default;
  /// One raw result per case, in order. Never throws for what a case does.
  virtual std::vector<RawResult> run(std::span<const PreparedCase> cases) = 0;
};

/// Today's path: per case, the files written to a temporary directory, the compiler run on them
/// (CompileOptions: -DAOTFUZZ_TRACE, -Wall -Werror, sanitizers on request) and the program run
/// with run_process under the case's limits.
class SingleProgramExecutor : public Executor {
 public:
  /// `keep_support_objects`: compile each case's support_sources once (per compiler, flags and
  /// contents) into objects kept in a temporary directory of this executor, and link them into
  /// the programs, which then compile only their own files (a campaign worker's executor). A
  /// support file that does not compile alone is compiled with the program, as without this.
  explicit SingleProgramExecutor(bool keep_support_objects = false);
  ~SingleProgramExecutor() override;
  std::vector<RawResult> run(std::span<const PreparedCase> cases) override;

  /// Support objects compiled so far.
  std::size_t support_objects() const;

  class SupportObjects;

 private:
  std::unique_ptr<SupportObjects> support_;
};

/// How a BatchedExecutor compiles and where it runs.
struct BatchOptions {
  /// tcc: libtcc in memory (no files, no compiler process); gcc/clang: the compiler's command
  /// line makes a shared object in a temporary directory, which the runner loads.
  host::CompilerKind compiler = host::CompilerKind::kTcc;
  /// The gcc/clang executable (looked up when unset).
  std::optional<host::Toolchain> toolchain;
  /// Added to the runner's environment: a program shipped without aotfuzz-runner names itself
  /// as `runner` and serves when it sees this (fuzz_differential, serve_as_runner_if_asked).
  std::vector<std::string> runner_env;
  /// tcc: compile the harness runtime once per runner process and each batch's cases against it
  /// (batch_runtime_c, batch_cases_c). A batch that does not compile that way is compiled whole
  /// before its verdict is decided, so that a compile error reads as it always did.
  bool shared_runtime = true;
  /// The runner executable (empty: runner_path()). A process of its own, never a fork of this
  /// one: a fresh process forks its case children in a third of the time a copy of a large
  /// process takes.
  std::string runner;
  /// A batch program holds cases until its source passes this many bytes (at least one case).
  std::size_t max_source_bytes = std::size_t{16} << 20;
  /// Cases one forked child runs in turn (0: the whole batch). Any case that crashes, exits,
  /// hangs or floods ends its child and is that case's verdict alone; the next case starts in a
  /// fresh child. 1 forks a child per case: a fork costs many times a whole case's batched
  /// cost, so it is for checking isolation, not for campaigns.
  std::uint32_t cases_per_child = 0;
  /// A stop request (a campaign's SIGTERM flag). Once set, the batch in flight is abandoned
  /// within milliseconds (its compiler or runner killed) and every case not yet run comes back
  /// `cancelled`.
  const std::atomic<bool>* stop = nullptr;
};

/// The runner executable: $AOTFUZZ_RUNNER, else `aotfuzz-runner` next to this program, else the
/// build tree's; empty when none exists.
std::string runner_path();

/// The C translation unit of a batch: the harness runtime and runtime header once, then each
/// case's header, sources and harness part with every `tvmgen_`/`TVMGEN_`/`aotfuzz_case_` name
/// prefixed by `c<k>_` (string literals untouched, so call traces keep the case's own names),
/// then `int aotfuzz_batch_run(int k, const uint8_t* const* inputs)`. The inputs are not in the
/// program: the runner passes each case's (CaseRequest::inputs). Includes of the generated files
/// are inlined.
std::string batch_program_c(std::span<const PreparedCase* const> cases);
/// The same program in two translation units, for libtcc: the runtime (harness_shared_runtime_c,
/// the same for every batch, so a runner compiles it once per process) and the cases over
/// harness_case_prelude_c, calling the runtime's shared entry. A small batch's compile is mostly
/// the runtime and the system headers; this pays for them once.
std::string batch_runtime_c();
std::string batch_cases_c(std::span<const PreparedCase* const> cases);

/// Many cases per program (batch_program_c), run by a long-lived runner process (the fork
/// server, started on first use and restarted when it dies: the cases of a batch it died on are
/// retried one by one, and a case it dies on alone is a toolchain error). A batch that does not
/// compile is retried case by case, so a compile error is the verdict of the case that has it.
class BatchedExecutor : public Executor {
 public:
  explicit BatchedExecutor(BatchOptions options = {});
  ~BatchedExecutor() override;
  BatchedExecutor(const BatchedExecutor&) = delete;
  BatchedExecutor& operator=(const BatchedExecutor&) = delete;

  std::vector<RawResult> run(std::span<const PreparedCase> cases) override;

  /// Runner processes started so far (1 after the first batch, more after restarts).
  int runner_starts() const;
  /// Batches whose cases did not compile against the shared runtime and were compiled whole.
  int whole_program_retries() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Whether batched execution is available for `compiler` here (tcc: this build has libtcc and a
/// runner executable; gcc/clang: the compiler is installed and a runner exists).
bool batched_execution_available(host::CompilerKind compiler);

}  // namespace aotfuzz::oracle
