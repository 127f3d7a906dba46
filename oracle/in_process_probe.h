// Crashes and hangs of the in-process steps of a case (the reference, the passes, the C code)
// would take the harness down with them; the probe runs those steps in a forked child first, so
// that they become verdicts: crash:<stage>:<SIGNAL> or timeout:<stage>, the stage being the step
// the child was in. `aotfuzz run`, replay, reduction and a campaign's confirmations use it
// (CaseOptions::isolate_in_process); a campaign's own in-process steps are guarded by its
// supervisor instead (fuzz/crash_journal.h), a fork per case being too dear there.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"

namespace aotfuzz::oracle {

/// How a forked body ended.
struct ForkedOutcome {
  enum class Kind {
    kEnded,     ///< returned (or threw): exit status 0
    kDied,      ///< killed by a signal other than SIGKILL, or exited with another status
    kTimedOut,  ///< still running at the budget: killed by us
    kKilled,    ///< SIGKILL not sent by us (the kernel's out-of-memory killer, an operator)
    kNoFork,    ///< fork() or pipe() failed: the environment, nothing was run
  };
  Kind kind = Kind::kEnded;
  int signal = 0;     ///< kDied: the signal, 0 for an abnormal exit status
  int exit_code = 0;  ///< kDied without a signal
  /// The last stage the body marked before it ended (kAnnotated when it marked none).
  Stage last_mark = Stage::kAnnotated;
};

/// Called by the body as it enters each step.
using StageMark = std::function<void(Stage)>;

/// Runs `body` in a forked child of this process with `budget` of wall-clock time. The child
/// ignores SIGINT and SIGTERM (the caller decides when to stop), has the default action for
/// fatal signals (a crash handler of the caller is not inherited), dies with its parent, and
/// never returns into the caller's code: it ends with _exit. An exception out of `body` counts
/// as kEnded.
ForkedOutcome run_forked(const std::function<void(const StageMark&)>& body,
                         std::chrono::milliseconds budget);

/// The stage of the first step after `stage` under `options`: the next enabled pass, else codegen.
Stage next_stage(Stage stage, const aot::Options& options);

/// prepare_case's steps on `annotated` in a forked child (run_forked, options.in_process_budget):
/// the verdict when they crash (crash at the pass, or codegen, they were in), hang (timeout) or
/// are killed (toolchain-error: the machine, not the pipeline); nullopt when they end, whatever
/// their outcome, and for systems under test that do not run in this process (--sut tvm).
/// A crash of the harness's own reference interpreter is a toolchain-error naming it.
std::optional<Verdict> probe_in_process(const ir::Module& annotated, const CaseOptions& options);

}  // namespace aotfuzz::oracle
