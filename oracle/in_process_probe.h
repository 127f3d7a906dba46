// Crashes and hangs of the in-process steps of a case (the reference, the passes, the C code)
// would take the harness down with them; the probe runs those steps in a child process first
// (aotfuzz-probe, oracle/probe), so that they become verdicts: crash:<stage>:<SIGNAL> or
// timeout:<stage>, the stage being the step the child was in. `aotfuzz run`, replay, reduction
// and a campaign's confirmations use it (CaseOptions::isolate_in_process); a campaign's own
// in-process steps are guarded by its supervisor instead (fuzz/crash_journal.h), a process per
// case being too dear there.
//
// A case is prepared once: the child answers with what it prepared (the stages, the C, the
// harness, the expected arities and outputs, or the verdict that settled the case), and the
// caller runs and judges that (prepare_isolated), rather than doing the same steps again.
//
// The child is a new program, not a fork: a fork of a process with threads (replay's workers, a
// campaign's) may inherit a lock that another thread held at that moment, AddressSanitizer's
// allocator among them, and would hang on it: a false timeout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/stages.h"
#include "oracle/verdict.h"

namespace aotfuzz::oracle {

/// How a spawned child ended.
struct SpawnedOutcome {
  enum class Kind {
    kEnded,     ///< exit status 0
    kDied,      ///< killed by a signal other than SIGKILL, or exited with another status
    kTimedOut,  ///< still running at the budget: killed by us
    kKilled,    ///< SIGKILL not sent by us (the kernel's out-of-memory killer, an operator)
    kNoSpawn,   ///< the child could not be started: the environment, nothing was run
  };
  Kind kind = Kind::kEnded;
  int signal = 0;     ///< kDied: the signal, 0 for an abnormal exit status
  int exit_code = 0;  ///< kDied without a signal
  /// The last stage the child marked (a byte on its stdout) before it ended; kAnnotated when it
  /// marked none.
  Stage last_mark = Stage::kAnnotated;
  /// Whether it marked any stage (a child that marked none may not have started at all).
  bool marked = false;
  /// What it wrote after kProbeAnswerTag: its answer (empty when it wrote no tag).
  std::string answer;
  /// Whether it wrote kProbeAnswerTag.
  bool answered = false;
};

/// The byte on aotfuzz-probe's stdout after its marks (each a Stage, all below it) that starts its
/// answer (encode_probe_answer), which runs to the end of the stream.
inline constexpr unsigned char kProbeAnswerTag = 0xFF;

/// Runs `argv` (no shell; argv[0] a path) as a host::Child with `input` on its stdin and its
/// stdout read as stage marks then, after kProbeAnswerTag, its answer, for at most `budget` of
/// wall-clock time. stderr is inherited.
SpawnedOutcome run_spawned(const std::vector<std::string>& argv, std::string_view input,
                           std::chrono::milliseconds budget);

/// The exit status of aotfuzz-probe when it cannot read the case it was given.
inline constexpr int kProbeRefusedExit = 125;

/// The aotfuzz-probe executable: $AOTFUZZ_PROBE, else next to this executable, else the build
/// tree's; empty when there is none.
std::string probe_path();

/// What aotfuzz-probe runs: the reference, then prepare_case into `r`, marking each step as it
/// enters it; returns prepare_case's case. The passes stop where prepare_case stops (a mismatch,
/// a refusal), as they do in the caller.
std::optional<PreparedCase> probe_steps(const ir::Module& annotated, const CaseOptions& options,
                                        const StageMark& mark, CaseResult& r);

/// What aotfuzz-probe answers: `r` and `prepared` as probe_steps left them, and the work it
/// counted. A JSON header, then the large parts it names as blobs of bytes: the modules of the
/// stages as their text (a stage that repeats the one before it as nothing), the C, the tensors'
/// bytes; the verdicts as to_json gives them. Not carried: the
/// fields of `prepared` that come from the options (finish_prepared_case sets them again) and a
/// plan (PlanExecutor's cases are never probed).
std::string encode_probe_answer(const CaseResult& r, const std::optional<PreparedCase>& prepared,
                                const PrepareWork& work);

/// An answer read back.
struct ProbeAnswer {
  CaseResult result;
  std::optional<PreparedCase> prepared;
  PrepareWork work;
};
/// The inverse of encode_probe_answer for the case of `annotated` (the stages' first module,
/// which the answer leaves out). Throws std::runtime_error on bytes that are no answer.
ProbeAnswer decode_probe_answer(std::string_view bytes, const ir::Module& annotated);

/// The wall-clock time the in-process steps of `annotated` may take: options.in_process_budget
/// plus time in proportion to the tensor bytes the graph holds (the reference interprets the graph
/// once per stage, each a walk over every element), so that a large graph inside the memory
/// budget is judged, never taken for a hang.
std::chrono::milliseconds in_process_budget_for(const ir::Module& annotated,
                                                const CaseOptions& options);

/// prepare_case's steps on `annotated` in aotfuzz-probe (run_spawned, in_process_budget_for,
/// the case as its text and replay flags): the verdict when they crash (crash at the pass, or
/// codegen, they were in), hang (timeout) or are killed (toolchain-error: the machine, not the
/// pipeline); nullopt when they end, whatever their outcome, and for systems under test that do
/// not run in this process (--sut tvm). A crash of the harness's own reference interpreter is a
/// toolchain-error naming it.
std::optional<Verdict> probe_in_process(const ir::Module& annotated, const CaseOptions& options);

/// prepare_case of `annotated` by aotfuzz-probe, into `r`: the case to run, or nullopt when the
/// case is settled (r.verdict), by the child's preparation (a mismatch, a static arity, ...) or
/// by the probe (the crash, hang or kill probe_in_process names). The child's work is added to
/// probe_work(). For a system that does not prepare in this process, and when
/// the child ends without answering (it ran out of memory), prepare_case in this process.
std::optional<PreparedCase> prepare_isolated(const ir::Module& annotated,
                                             const CaseOptions& options, CaseResult& r);

/// The work aotfuzz-probe children did for the cases whose preparation they answered to this
/// process (prepare_work() counts this process's own).
PrepareWork probe_work();

}  // namespace aotfuzz::oracle
