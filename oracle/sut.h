// The system-under-test seam: what compiles a case's graph. The builtin pipeline (aot/) is one;
// Apache TVM (tvm/) is another. A system is made once, from its spec, where the command line or a
// replay line names it (systems/); everything below asks the system, never which one it is.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/executor.h"
#include "oracle/stages.h"

namespace aotfuzz::oracle {

/// A system as a replay line names it: `--sut NAME` and what that system needs (a TVM's home;
/// a build with the bug fixed, that a reduced finding must pass on).
struct SutSpec {
  std::string name = "builtin";
  std::string home;
  std::string fixed_home;
  bool operator==(const SutSpec&) const = default;
};

/// Cases whose system's own work goes on out of process while the worker that added them does
/// other work (runs the programs of the cases before them).
class PreparingBatch {
 public:
  virtual ~PreparingBatch() = default;
  /// The in-process steps of the next case, now, in the calling thread (r is filled as far as
  /// they go); returns its index for finish. `annotated` and `options` need not outlive the call.
  virtual std::size_t add(const ir::Module& annotated, const CaseOptions& options,
                          CaseResult& r) = 0;
  /// Hands the added cases' work to the system, which does it in the background.
  virtual void submit() = 0;
  /// Waits until the system's work for case i is done: time out of this process, which a
  /// supervisor watching in-process steps must not count.
  virtual void wait(std::size_t i) = 0;
  /// Case i once the system's work for it is done (waiting for it): what prepare
  /// would have given, with the same r that add filled.
  virtual std::optional<PreparedCase> finish(std::size_t i, CaseResult& r) = 0;
};

class SystemUnderTest {
 public:
  virtual ~SystemUnderTest() = default;

  /// What made this system.
  virtual const SutSpec& spec() const = 0;

  /// prepare_case's work on this system (oracle/case_flow.h states what it settles).
  virtual std::optional<PreparedCase> prepare(const ir::Module& annotated,
                                              const CaseOptions& options, CaseResult& r,
                                              const CaseReference* reference,
                                              const StageMark* mark) const = 0;

  /// Whether prepare runs the system's own code in this process, where its crash or hang would
  /// take the caller down (the probe and a campaign's supervisor guard such steps). A system
  /// behind a driver process contains its faults itself.
  virtual bool prepares_in_process() const = 0;

  /// A batch to prepare cases in while the worker runs others (a system whose work is out of
  /// process); nullptr: the system's cases are prepared one at a time by prepare. The batch's
  /// verdicts are prepare's.
  virtual std::unique_ptr<PreparingBatch> preparing_batch() const { return nullptr; }

  /// Whether the executor may put this system's programs in one batch with other cases'.
  virtual bool batches_programs() const = 0;

  /// The same case on the system without the bug (the builtin pipeline without injected bugs,
  /// TVM's fixed build); nullopt when there is none to compare with.
  virtual std::optional<CaseOptions> fixed_case(const CaseOptions& options) const = 0;

  /// The system for one of a campaign's workers: its own connections, so that workers do not
  /// wait on each other.
  virtual std::shared_ptr<const SystemUnderTest> for_worker() const = 0;

  /// Why the system cannot be used as specified (a TVM home that is none), as one line;
  /// commands check it before their work, so that a mistyped path is bad input, not a verdict.
  virtual std::optional<std::string> problem() const { return std::nullopt; }

  /// Why the system cannot take `options` (an injected bug, which only the builtin pipeline
  /// has; a compiler its C does not build with), as one line; nullopt when it can. The command
  /// line and the replay parser both refuse such options with this line.
  virtual std::optional<std::string> refuses(const CaseOptions& options) const {
    return std::nullopt;
  }

  /// The generation knobs (NAME, VALUE) a campaign on this system sets unless the user does: the
  /// system's stated limits, drawn inside so that they do not drown new findings, and its shares
  /// of the options drawn per case (p_unpacked, ...; a flag given fixes those anyway).
  virtual std::vector<std::pair<std::string, std::string>> generation_knobs() const { return {}; }

  /// Where one set of limits does not fit every codegen the system has (TVM's ccompiler compiles
  /// rank 2 float32 only; its UMA backend any rank, int8, broadcasting and the unpacked API), a
  /// campaign draws each case's graph under one of these profiles: knobs set over
  /// generation_knobs(), unless the user sets them, with a relative weight. Empty: one profile.
  struct GenerationProfile {
    std::string name;
    double weight = 1;
    std::vector<std::pair<std::string, std::string>> knobs;
  };
  virtual std::vector<GenerationProfile> generation_profiles() const { return {}; }

  /// What exactly is under test, in one line for campaign headers and bundles ("TVM 0.18.0,
  /// commit 7b3a22e4..., at DIR"); may start the system's compiler process to ask it. Empty when
  /// the name says it all.
  virtual std::string identity() const { return ""; }

  /// The C compiler the system's programs are built with when none is named (TVM's own tests
  /// use gcc); nullopt: the fastest installed one.
  virtual std::optional<host::CompilerKind> default_compiler() const { return std::nullopt; }
  /// The case flag that names the directory of the system's build (`spec().home`) in replay
  /// lines; empty for a system without builds.
  virtual std::string_view home_flag() const { return {}; }
};

/// The builtin pipeline: stateless, shared by every case whose options name no other system.
const std::shared_ptr<const SystemUnderTest>& builtin_system();

/// The system of a case: options.sut, or the builtin pipeline.
const SystemUnderTest& system_of(const CaseOptions& options);

/// The words of a replay line that make `system` again, its home under its home_flag() (empty for
/// the builtin pipeline).
std::string sut_replay_flags(const SystemUnderTest& system);

}  // namespace aotfuzz::oracle
