// The probe (oracle/in_process_probe.h): a child process ends, dies or hangs, and a
// case whose pass crashes or hangs is a verdict naming that pass, not the end of this process.
#include "oracle/in_process_probe.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "oracle/case_flags.h"
#include "oracle/case_flow.h"
#include "oracle/oracle.h"
#include "tests/support/files.h"

namespace aotfuzz::oracle {
namespace {

using namespace std::chrono_literals;
using Kind = SpawnedOutcome::Kind;

const char* const kSeedGraph = R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%2, %x)
}
)";

// A shell script as the child: its marks are the bytes it prints.
std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

std::string mark_bytes(std::initializer_list<Stage> stages) {
  std::string out = "printf '";
  for (Stage s : stages) out += "\\" + std::to_string(static_cast<unsigned>(s));
  return out + "'";
}

TEST(RunSpawned, AChildThatEndsEndsWithItsLastMark) {
  const SpawnedOutcome o = run_spawned(sh(mark_bytes({Stage::kMerge, Stage::kFuse})), "", 5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
  EXPECT_EQ(o.last_mark, Stage::kFuse);
}

TEST(RunSpawned, TheAnswerFollowsTheMarksToTheEndOfTheOutputAndIsNoMark) {
  // After the tag, a byte that would be a mark (codegen) is the answer's.
  const std::string codegen = std::to_string(static_cast<unsigned>(Stage::kCodegen));
  const SpawnedOutcome o =
      run_spawned(sh(mark_bytes({Stage::kMerge, Stage::kFuse}) + "; printf '\\377ok\\" +
                     codegen + "'"),
                  "", 5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
  EXPECT_EQ(o.last_mark, Stage::kFuse);
  EXPECT_TRUE(o.answered);
  EXPECT_EQ(o.answer, "ok" + std::string(1, static_cast<char>(Stage::kCodegen)));
  const SpawnedOutcome none = run_spawned(sh(mark_bytes({Stage::kFuse})), "", 5s);
  EXPECT_FALSE(none.answered);
  EXPECT_EQ(none.answer, "");
}

TEST(RunSpawned, TheChildReadsItsWholeInputOnStdin) {
  const std::string input(1 << 20, 'x');
  const SpawnedOutcome o = run_spawned(sh("test \"$(wc -c)\" -eq " + std::to_string(input.size()) +
                                          " && " + mark_bytes({Stage::kCodegen})),
                                       input, 10s);
  EXPECT_EQ(o.kind, Kind::kEnded);
  EXPECT_EQ(o.last_mark, Stage::kCodegen);
}

TEST(RunSpawned, AChildThatLeavesItsInputUnreadIsNoSigpipeHere) {
  const SpawnedOutcome o = run_spawned(sh("exit 0"), std::string(1 << 20, 'x'), 5s);
  EXPECT_EQ(o.kind, Kind::kEnded);
}

TEST(RunSpawned, ACrashIsItsSignalAtTheStepItWasIn) {
  for (const char* sig : {"SEGV", "ABRT", "FPE", "BUS"}) {
    const SpawnedOutcome o =
        run_spawned(sh(mark_bytes({Stage::kPartition}) + "; kill -" + sig + " $$"), "", 5s);
    EXPECT_EQ(o.kind, Kind::kDied) << sig;
    EXPECT_EQ(o.signal, std::string(sig) == "SEGV"   ? SIGSEGV
                        : std::string(sig) == "ABRT" ? SIGABRT
                        : std::string(sig) == "FPE"  ? SIGFPE
                                                     : SIGBUS);
    EXPECT_EQ(o.last_mark, Stage::kPartition) << sig;
  }
}

TEST(RunSpawned, AnExitStatusOtherThanZeroIsADeathWithoutASignal) {
  const SpawnedOutcome o = run_spawned(sh("exit 7"), "", 5s);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.signal, 0);
  EXPECT_EQ(o.exit_code, 7);
}

TEST(RunSpawned, AChildStillRunningAtTheBudgetIsKilledAsTimedOut) {
  const auto t0 = std::chrono::steady_clock::now();
  const SpawnedOutcome o =
      run_spawned(sh(mark_bytes({Stage::kFuse}) + "; exec sleep 60"), "", 1000ms);
  EXPECT_EQ(o.kind, Kind::kTimedOut);
  EXPECT_EQ(o.last_mark, Stage::kFuse);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(RunSpawned, ASigkillFromElsewhereIsTheEnvironmentNotACrash) {
  const SpawnedOutcome o = run_spawned(sh("kill -KILL $$"), "", 5s);
  EXPECT_EQ(o.kind, Kind::kKilled);
}

TEST(RunSpawned, AChildInterruptingItsProcessGroupDoesNotReachTheCaller) {
  // Were the child in this process's group, this test would die of the SIGINT.
  const SpawnedOutcome o = run_spawned(sh("kill -INT 0"), "", 5s);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.signal, SIGINT);
}

TEST(RunSpawned, AProgramThatDoesNotExistIsNotStartedRatherThanACrash) {
  const SpawnedOutcome o = run_spawned({"/nonexistent/aotfuzz-probe"}, "", 5s);
  EXPECT_EQ(o.kind, Kind::kNoSpawn);
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

TEST(ProbeInProcess, APassThatWritesPastAHeapBlockIsACrashOfThatPass) {
  // With the fast allocator the write would break a neighbouring block and nothing else; the
  // probe's checking allocator (or AddressSanitizer) aborts inside the pass.
  CaseOptions o;
  o.aot.debug_fault = aot::Options::DebugFault::kOverflow;
  o.aot.debug_fault_pass = "partition";
  const auto v = probe_in_process(ir::parse_module(kSeedGraph), o);
  ASSERT_TRUE(v);
  EXPECT_EQ(signature(*v).rfind("crash:partition:", 0), 0u) << signature(*v);
  EXPECT_NE(replay_flags(o).find("--debug-fault partition:overflow"), std::string::npos);
}

TEST(ProbeInProcess, AnExceptionThatIsNoPassErrorIsACrashOfThatPassNotAHarnessFailure) {
  CaseOptions o;
  o.aot.debug_fault = aot::Options::DebugFault::kThrow;
  o.aot.debug_fault_pass = "fuse";
  const auto v = probe_in_process(ir::parse_module(kSeedGraph), o);
  ASSERT_TRUE(v);
  EXPECT_EQ(signature(*v), "crash:fuse:SIGABRT");
  EXPECT_NE(replay_flags(o).find("--debug-fault fuse:throw"), std::string::npos);
}

TEST(ProbeInProcess, APassThatHangsIsATimeoutOfThatPassAfterTheBudget) {
  CaseOptions o;
  o.aot.debug_fault = aot::Options::DebugFault::kHang;
  o.aot.debug_fault_pass = "partition";
  o.in_process_budget = 3s;
  const auto v = probe_in_process(ir::parse_module(kSeedGraph), o);
  ASSERT_TRUE(v);
  EXPECT_EQ(signature(*v), "timeout:partition");
  EXPECT_EQ(std::get<Timeout>(v->detail).limit_ms, 3000);
}

// One n x n float32 add in a region: 8 n^2 bytes of tensors.
ir::Module square_add(int n) {
  const std::string dims = std::to_string(n) + ", " + std::to_string(n);
  return ir::parse_module("def @main(%x: Tensor[(" + dims + R"(), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  annotation.compiler_end(%1, compiler="ccompiler")
})");
}

TEST(InProcessBudget, GrowsInProportionToTheTensorsAGraphHolds) {
  CaseOptions o;
  o.in_process_budget = 3s;
  EXPECT_EQ(in_process_budget_for(ir::parse_module(kSeedGraph), o), 3s);
  const auto one = in_process_budget_for(square_add(1024), o) - 3s;   // 8 MiB
  const auto four = in_process_budget_for(square_add(2048), o) - 3s;  // 32 MiB
  EXPECT_GT(one, 0s);
  EXPECT_EQ(four, 4 * one);
}

TEST(ProbeInProcess, ALargeGraphInsideTheMemoryBudgetIsJudgedNotTakenForAHang) {
  // Far less than the steps on a million elements take, and no hang: the graph's own share of the
  // budget lets them end.
  CaseOptions o;
  o.in_process_budget = 50ms;
  EXPECT_EQ(probe_in_process(square_add(1024), o), std::nullopt);
}

TEST(ProbeInProcess, AFaultInAPassThatDoesNotRunIsNoVerdict) {
  CaseOptions o;
  o.aot.merge = false;
  o.aot.debug_fault = aot::Options::DebugFault::kCrash;
  o.aot.debug_fault_pass = "merge";
  EXPECT_EQ(probe_in_process(ir::parse_module(kSeedGraph), o), std::nullopt);
}

TEST(ProbeInProcess, ThePassesStopAtAMismatchAsTheyDoInProcess) {
  // The partition pass is wrong here, so fuse never runs: its hang is no verdict.
  const ir::Module m = ir::parse_module(R"(
def @main(%x0: Tensor[(1), float32]) {
  %0 = annotation.compiler_begin(%x0, compiler="ccompiler");
  %1 = annotation.compiler_begin(%x0, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  %4 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%3, %4)
}
)");
  CaseOptions o;
  o.aot.bugs.enable(aot::Bug::kRegionOutputOffByOne);
  o.aot.debug_fault = aot::Options::DebugFault::kHang;
  o.aot.debug_fault_pass = "fuse";
  o.in_process_budget = 5s;
  EXPECT_EQ(probe_in_process(m, o), std::nullopt);
  o.isolate_in_process = true;
  EXPECT_EQ(signature(run_case(m, o).verdict), "mismatch:partition");
}

TEST(ProbeInProcess, ThreadsStartingProbesAtOnceNeverHang) {
  // Probes from several threads at once, as replay's workers start them: each child is a new
  // program, so no child inherits a lock another thread held (the hang a fork gave).
  const ir::Module m = ir::parse_module(kSeedGraph);
  std::atomic<int> verdicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      CaseOptions o;
      o.in_process_only = true;
      o.in_process_budget = 20s;
      for (int i = 0; i < 10; ++i) {
        if (probe_in_process(m, o)) ++verdicts;
        CaseResult r;
        (void)prepare_case(m, o, r);  // allocating in this process while others start children
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(verdicts.load(), 0);
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

// The founding graph (corpus/seed), as `aotfuzz run` reads it.
ir::Module seed_graph() {
  return ir::parse_module(test_support::read_text(
      test_support::source_path("corpus/seed/tvm_9036_annotated.relay")));
}

// The work of one isolated run_case: the probe's child's, and this process's.
struct RunWork {
  PrepareWork probe, own;
};
RunWork work_of_run(const ir::Module& m, const CaseOptions& o, CaseResult* result = nullptr) {
  auto delta = [](const PrepareWork& after, const PrepareWork& before) {
    return PrepareWork{after.c_generations - before.c_generations,
                       after.reference_runs - before.reference_runs};
  };
  const PrepareWork probe0 = probe_work(), own0 = prepare_work();
  CaseResult r = run_case(m, o);
  const RunWork work{delta(probe_work(), probe0), delta(prepare_work(), own0)};
  if (result != nullptr) *result = std::move(r);
  return work;
}

TEST(RunCase, IsolatedTheSeedGraphIsPreparedOnceWithItsCGeneratedOncePerCodegen) {
  // `aotfuzz run corpus/seed/tvm_9036_annotated.relay`: its defaults, the determinism oracle on.
  const CaseOptions o = parse_case_flags("");
  ASSERT_TRUE(o.isolate_in_process);
  ASSERT_TRUE(o.check_determinism);
  CaseResult r;
  const RunWork work = work_of_run(seed_graph(), o, &r);
  EXPECT_EQ(signature(r.verdict), "pass:run");
  // In the probe's child: the case's C and the determinism oracle's copy, each once; the
  // reference, then merge, partition and fuse, each interpreted once. Here: nothing again.
  EXPECT_EQ(work.probe.c_generations, 2U);
  EXPECT_EQ(work.probe.reference_runs, 4U);
  EXPECT_EQ(work.own.c_generations, 0U);
  EXPECT_EQ(work.own.reference_runs, 0U);
  const RunWork without = work_of_run(seed_graph(), parse_case_flags("--no-determinism"));
  EXPECT_EQ(without.probe.c_generations + without.own.c_generations, 1U);
}

TEST(RunCase, IsolatedAStaticArityFindingIsTheProbesVerdictAsInProcess) {
  CaseOptions o = parse_case_flags("--inject tuple-arg-first-field --mod-name my_mod");
  CaseResult isolated;
  const RunWork work = work_of_run(seed_graph(), o, &isolated);
  EXPECT_EQ(signature(isolated.verdict), "arity:codegen:kernel");
  EXPECT_EQ(work.probe.c_generations, 2U);
  EXPECT_EQ(work.own.c_generations, 0U);
  o.isolate_in_process = false;
  const CaseResult plain = run_case(seed_graph(), o);
  EXPECT_EQ(isolated.verdict, plain.verdict);
  EXPECT_EQ(isolated.files, plain.files);
}

// Every part of a prepared case a caller reads, compared field by field.
void expect_same_values(const std::vector<reference::Value>& a,
                        const std::vector<reference::Value>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(reference::bitwise_equal(a[i], b[i])) << i;
    EXPECT_TRUE(ir::type_equal(a[i].type(), b[i].type())) << i;
  }
}

void expect_round_trip(const ir::Module& m, const CaseOptions& o) {
  CaseResult r;
  const std::optional<PreparedCase> prepared = prepare_case(m, o, r);
  const PrepareWork work{3, 5};
  const ProbeAnswer a = decode_probe_answer(encode_probe_answer(r, prepared, work), m);
  EXPECT_EQ(a.result.verdict, r.verdict);
  EXPECT_EQ(a.work.c_generations, 3U);
  EXPECT_EQ(a.work.reference_runs, 5U);
  EXPECT_EQ(a.result.files, r.files);
  expect_same_values(a.result.inputs, r.inputs);
  expect_same_values(a.result.expected, r.expected);
  expect_same_values(a.result.actual, r.actual);
  EXPECT_EQ(a.result.pipeline_time, r.pipeline_time);
  EXPECT_EQ(a.result.codegen_time, r.codegen_time);
  ASSERT_EQ(a.result.stages.has_value(), r.stages.has_value());
  if (r.stages) {
    EXPECT_EQ(a.result.stages->failed, r.stages->failed);
    for (int i = 0; i < aot::kNumModuleStages; ++i) {
      const auto stage = static_cast<Stage>(i);
      EXPECT_EQ(ir::print_module(a.result.stages->at(stage)), ir::print_module(r.stages->at(stage)))
          << stage_name(stage);
    }
  }
  ASSERT_EQ(a.prepared.has_value(), prepared.has_value());
  if (!prepared) return;
  const PreparedCase& p = *a.prepared;
  EXPECT_EQ(p.mod_name, prepared->mod_name);
  EXPECT_EQ(p.sources, prepared->sources);
  EXPECT_EQ(p.header_name, prepared->header_name);
  EXPECT_EQ(p.harness_case, prepared->harness_case);
  ASSERT_EQ(p.inputs.size(), prepared->inputs.size());
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    EXPECT_EQ(p.inputs[i].type, prepared->inputs[i].type);
    EXPECT_EQ(p.inputs[i].bytes, prepared->inputs[i].bytes);
  }
  EXPECT_EQ(p.expected_args, prepared->expected_args);
  EXPECT_EQ(p.instead_of_pass, prepared->instead_of_pass);
  EXPECT_EQ(p.main_c, prepared->main_c);
  EXPECT_EQ(p.defines, prepared->defines);
  EXPECT_EQ(p.program_files(), prepared->program_files());
}

TEST(ProbeAnswer, APreparedCaseRoundTripsWithItsStagesValuesAndC) {
  expect_round_trip(seed_graph(), CaseOptions{});
  CaseOptions unpacked;
  unpacked.aot.merge = false;
  unpacked.aot.api = aot::Options::Api::kUnpacked;
  unpacked.aot.interface = aot::Options::Interface::kC;
  expect_round_trip(seed_graph(), unpacked);
}

TEST(ProbeAnswer, ACaseSettledWhilePreparingRoundTripsWithItsVerdictAndActualOutputs) {
  // A partition that loses a region's output: a mismatch whose actual outputs a bundle shows.
  const ir::Module m = ir::parse_module(R"(
def @main(%x0: Tensor[(1), float32]) {
  %0 = annotation.compiler_begin(%x0, compiler="ccompiler");
  %1 = annotation.compiler_begin(%x0, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  %4 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%3, %4)
}
)");
  CaseOptions o;
  o.aot.bugs.enable(aot::Bug::kRegionOutputOffByOne);
  CaseResult r;
  ASSERT_FALSE(prepare_case(m, o, r).has_value());
  ASSERT_EQ(signature(r.verdict), "mismatch:partition");
  ASSERT_FALSE(r.actual.empty());
  expect_round_trip(m, o);
}

TEST(ProbeAnswer, ATupleInputRoundTripsAsATuple) {
  const ir::Module m = ir::parse_module(R"(
def @main(%t: (Tensor[(2), float32], Tensor[(3), int8])) {
  %0 = annotation.compiler_begin(%t, compiler="ccompiler");
  %1 = %0.0;
  %2 = add(%1, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  (%3, %t.1)
}
)");
  CaseResult r;
  (void)prepare_case(m, CaseOptions{}, r);
  ASSERT_EQ(r.inputs.size(), 1U);
  ASSERT_TRUE(r.inputs[0].is_tuple());
  expect_round_trip(m, CaseOptions{});
}

TEST(ProbeAnswer, BytesThatAreNoAnswerAreRefused) {
  EXPECT_THROW(decode_probe_answer("not an answer", seed_graph()), std::runtime_error);
  EXPECT_THROW(decode_probe_answer("", seed_graph()), std::runtime_error);
}

}  // namespace
}  // namespace aotfuzz::oracle
