// The probe (oracle/in_process_probe.h): a body run in a forked child ends, dies or hangs, and a
// case whose pass crashes or hangs is a verdict naming that pass, not the end of this process.
#include "oracle/in_process_probe.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <stdexcept>

#include "ir/parser.h"
#include "oracle/oracle.h"

namespace aotfuzz::oracle {
namespace {

using namespace std::chrono_literals;
using Kind = ForkedOutcome::Kind;

const char* const kSeedGraph = R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%2, %x)
}
)";

TEST(RunForked, ABodyThatReturnsEndsWithItsLastMark) {
  const ForkedOutcome o = run_forked(
      [](const StageMark& mark) {
        mark(Stage::kMerge);
        mark(Stage::kFuse);
      },
      5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
  EXPECT_EQ(o.last_mark, Stage::kFuse);
}

TEST(RunForked, AnExceptionOutOfTheBodyCountsAsAnEnd) {
  const ForkedOutcome o = run_forked(
      [](const StageMark& mark) {
        mark(Stage::kPartition);
        throw std::runtime_error("a verdict, not a crash");
      },
      5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
}

TEST(RunForked, ACrashIsItsSignalAtTheStepItWasIn) {
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS}) {
    const ForkedOutcome o = run_forked(
        [sig](const StageMark& mark) {
          mark(Stage::kPartition);
          std::raise(sig);
        },
        5s);
    EXPECT_EQ(o.kind, Kind::kDied) << sig;
    EXPECT_EQ(o.signal, sig);
    EXPECT_EQ(o.last_mark, Stage::kPartition) << sig;
  }
}

TEST(RunForked, AnExitStatusOtherThanZeroIsADeathWithoutASignal) {
  const ForkedOutcome o = run_forked([](const StageMark&) { ::_exit(7); }, 5s);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.signal, 0);
  EXPECT_EQ(o.exit_code, 7);
}

TEST(RunForked, ABodyStillRunningAtTheBudgetIsKilledAsTimedOut) {
  const auto t0 = std::chrono::steady_clock::now();
  const ForkedOutcome o = run_forked(
      [](const StageMark& mark) {
        mark(Stage::kFuse);
        for (;;) ::pause();
      },
      300ms);
  EXPECT_EQ(o.kind, Kind::kTimedOut);
  EXPECT_EQ(o.last_mark, Stage::kFuse);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(RunForked, ASigkillFromElsewhereIsTheEnvironmentNotACrash) {
  const ForkedOutcome o = run_forked([](const StageMark&) { ::kill(::getpid(), SIGKILL); }, 5s);
  EXPECT_EQ(o.kind, Kind::kKilled);
}

TEST(RunForked, InterruptsAreIgnoredInTheChild) {
  const ForkedOutcome o = run_forked(
      [](const StageMark& mark) {
        std::raise(SIGINT);
        std::raise(SIGTERM);
        mark(Stage::kCodegen);
      },
      5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
  EXPECT_EQ(o.last_mark, Stage::kCodegen);
}

TEST(NextStage, IsTheNextEnabledPassThenCodegen) {
  aot::Options o;
  EXPECT_EQ(next_stage(Stage::kAnnotated, o), Stage::kMerge);
  EXPECT_EQ(next_stage(Stage::kMerge, o), Stage::kPartition);
  EXPECT_EQ(next_stage(Stage::kFuse, o), Stage::kCodegen);
  o.merge = false;
  EXPECT_EQ(next_stage(Stage::kAnnotated, o), Stage::kPartition);
}

TEST(ProbeInProcess, ACorrectCaseIsNoVerdictOfTheProbe) {
  CaseOptions o;
  EXPECT_EQ(probe_in_process(ir::parse_module(kSeedGraph), o), std::nullopt);
}

TEST(ProbeInProcess, APassThatCrashesIsACrashVerdictOfThatPass) {
  for (const char* pass : {"merge", "partition", "fuse"}) {
    CaseOptions o;
    o.aot.debug_fault = aot::Options::DebugFault::kCrash;
    o.aot.debug_fault_pass = pass;
    const auto v = probe_in_process(ir::parse_module(kSeedGraph), o);
    ASSERT_TRUE(v) << pass;
    EXPECT_EQ(signature(*v), "crash:" + std::string(pass) + ":SIGSEGV");
  }
}

TEST(ProbeInProcess, APassThatHangsIsATimeoutOfThatPassAfterTheBudget) {
  CaseOptions o;
  o.aot.debug_fault = aot::Options::DebugFault::kHang;
  o.aot.debug_fault_pass = "partition";
  o.in_process_budget = 500ms;
  const auto v = probe_in_process(ir::parse_module(kSeedGraph), o);
  ASSERT_TRUE(v);
  EXPECT_EQ(signature(*v), "timeout:partition");
  EXPECT_EQ(std::get<Timeout>(v->detail).limit_ms, 500);
}

TEST(ProbeInProcess, AFaultInAPassThatDoesNotRunIsNoVerdict) {
  CaseOptions o;
  o.aot.merge = false;
  o.aot.debug_fault = aot::Options::DebugFault::kCrash;
  o.aot.debug_fault_pass = "merge";
  EXPECT_EQ(probe_in_process(ir::parse_module(kSeedGraph), o), std::nullopt);
}

TEST(RunCase, IsolatedACrashingPassIsTheVerdictAndThisProcessGoesOn) {
  CaseOptions o;
  o.isolate_in_process = true;
  o.aot.debug_fault = aot::Options::DebugFault::kCrash;
  o.aot.debug_fault_pass = "fuse";
  const CaseResult r = run_case(ir::parse_module(kSeedGraph), o);
  EXPECT_EQ(signature(r.verdict), "crash:fuse:SIGSEGV");
  EXPECT_TRUE(is_finding(r.verdict));
  // Its replay flags carry the fault, so the replay line reproduces it.
  EXPECT_NE(replay_flags(o).find("--debug-fault fuse:crash"), std::string::npos);
}

TEST(RunCase, IsolatedACorrectCaseGetsTheVerdictItGetsInProcess) {
  CaseOptions o;
  const ir::Module m = ir::parse_module(kSeedGraph);
  const CaseResult plain = run_case(m, o);
  o.isolate_in_process = true;
  const CaseResult isolated = run_case(m, o);
  EXPECT_EQ(isolated.verdict, plain.verdict);
  EXPECT_EQ(signature(isolated.verdict), "pass:run");
  EXPECT_EQ(isolated.files, plain.files);
}

}  // namespace
}  // namespace aotfuzz::oracle
