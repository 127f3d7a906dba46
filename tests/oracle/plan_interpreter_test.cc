// The plan interpreter against the real thing (the compiled executor run out of process) and on
// hand-broken programs: stale stack slots, NULL handles, clobbered inputs, unwritten outputs.
#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <memory>

#include "aot/codegen.h"
#include "aot/executor_program.h"
#include "host/toolchain.h"
#include "oracle/case_flow.h"
#include "oracle/oracle.h"
#include "oracle/plan_interpreter.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"
#include "tests/support/bugs.h"
#include "tests/support/modules.h"

namespace aotfuzz {
namespace {

using test_support::fused_of;
using test_support::generated;
using test_support::seed_9036;

oracle::CaseOptions case_with(std::optional<aot::Bug> bug, bool merge = true,
                              bool unpacked = false) {
  oracle::CaseOptions o;
  o.aot.merge = merge;
  if (bug) o.aot.bugs.enable(*bug);
  if (unpacked) o.aot.api = aot::Options::Api::kUnpacked;
  return o;
}

TEST(PlanInterpreter, GivesTheCompiledProgramsVerdictAndOutputsOnGeneratedGraphs) {
  if (!host::default_toolchain()) GTEST_SKIP() << "no C compiler";
  const std::vector<std::optional<aot::Bug>> bugs = {std::nullopt,
                                                     aot::Bug::kTupleArgFirstFieldOnly,
                                                     aot::Bug::kStaleUnpackedArg,
                                                     aot::Bug::kReuseLiveStorage,
                                                     aot::Bug::kIntermediateInOutput,
                                                     aot::Bug::kDroppedDuplicateOutput};
  int findings = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const ir::Module m = generated(seed * 7 + 3, 20);
    for (const auto& bug : bugs) {
      const auto options = case_with(bug, seed % 2 == 0, (seed / 2) % 2 == 1);
      const auto in = oracle::run_case_in_process(m, options);
      const auto out = oracle::run_case(m, options);
      ASSERT_EQ(oracle::signature(in.verdict), oracle::signature(out.verdict))
          << "seed " << seed << " bug " << (bug ? test_support::bug_name(*bug) : "none")
          << "\n  in process: " << oracle::summary(in.verdict)
          << "\n  compiled: " << oracle::summary(out.verdict);
      if (in.verdict.kind() == oracle::VerdictKind::kPass) {
        ASSERT_EQ(in.actual.size(), out.actual.size());
        for (std::size_t i = 0; i < in.actual.size(); ++i) {
          EXPECT_FALSE(reference::first_mismatch(out.actual[i], in.actual[i]).has_value());
        }
      }
      findings += oracle::is_finding(in.verdict);
    }
  }
  EXPECT_GT(findings, 0) << "no injected bug showed: the comparison above proved little";
}

TEST(PlanInterpreter, FindsTheArityBugOfIssue9036OnTheSeedGraph) {
  const auto bad =
      oracle::run_case_in_process(seed_9036(), case_with(aot::Bug::kTupleArgFirstFieldOnly));
  ASSERT_EQ(bad.verdict.kind(), oracle::VerdictKind::kArity) << oracle::summary(bad.verdict);
  const auto& arity = std::get<oracle::Arity>(bad.verdict.detail);
  EXPECT_EQ(arity.callee_kind, oracle::CalleeKind::kKernel);
  EXPECT_EQ(arity.expected_args, 3);
  EXPECT_EQ(arity.actual_args, 2);
  EXPECT_EQ(bad.verdict.stage, oracle::Stage::kCodegen);

  const auto good = oracle::run_case_in_process(seed_9036(), case_with(std::nullopt));
  ASSERT_EQ(good.verdict.kind(), oracle::VerdictKind::kPass) << oracle::summary(good.verdict);
  ASSERT_EQ(good.actual.size(), good.expected.size());
  for (std::size_t i = 0; i < good.actual.size(); ++i) {
    EXPECT_TRUE(reference::bitwise_equal(good.actual[i], good.expected[i]));
  }
}

// The #9036 program run anyway. The fused add takes (field 0, field 1, output) but is passed
// (field 0, output): it reads the output buffer as field 1 and writes its result through slot 2,
// which still holds the DLTensor the external call put there: the input %w1.
TEST(PlanInterpreter, ACalleeReadingPastNumArgsUsesTheHandleThePreviousCallLeftInThatSlot) {
  const ir::Module annotated = seed_9036();
  const ir::Module fused = fused_of(annotated);
  aot::Options options;
  options.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const auto program = aot::build_executor_program(fused, options);
  ASSERT_EQ(program.calls.size(), 2u);
  ASSERT_TRUE(program.calls[0].external);
  ASSERT_EQ(program.calls[0].num_args(), 5);  // %x, %w0, %w1, then two results
  ASSERT_EQ(program.calls[0].slots[2].buffer, (aot::BufferRef{aot::BufferKind::kInput, 2}));
  ASSERT_EQ(program.calls[1].num_args(), 2);
  ASSERT_EQ(program.calls[1].callee_arity(), 3);

  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(annotated.main(), 7));
  ASSERT_EQ(run.verdict.kind(), oracle::VerdictKind::kInputClobbered)
      << oracle::summary(run.verdict);
  EXPECT_EQ(std::get<oracle::InputClobbered>(run.verdict.detail).input_index, 2);

  // Without the bug the same program shape passes and computes the reference.
  const auto good = aot::build_executor_program(fused, {});
  const auto inputs = reference::make_inputs(annotated.main(), 7);
  const auto ok = oracle::interpret_program(fused, good, inputs);
  ASSERT_EQ(ok.verdict.kind(), oracle::VerdictKind::kPass) << oracle::summary(ok.verdict);
  EXPECT_TRUE(reference::bitwise_equal(ok.outputs[0], reference::run_main(annotated, inputs)));
}

TEST(PlanInterpreter, ASlotNoCallHasWrittenIsANullHandleCrashInTheCallee) {
  const ir::Module fused = fused_of(seed_9036());
  auto program = aot::build_executor_program(fused, {});
  program.calls[0].slots.pop_back();  // the external function's last result slot is never set
  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(fused.main(), 1));
  ASSERT_EQ(run.verdict.kind(), oracle::VerdictKind::kCrash) << oracle::summary(run.verdict);
  const auto& crash = std::get<oracle::Crash>(run.verdict.detail);
  EXPECT_EQ(crash.signal, SIGSEGV);
  EXPECT_EQ(crash.callee_kind, oracle::CalleeKind::kExternal);
  EXPECT_NE(crash.stderr_tail.find("NULL"), std::string::npos) << crash.stderr_tail;
}

TEST(PlanInterpreter, AResultSlotOnAnInputBufferClobbersThatInput) {
  const ir::Module fused = fused_of(seed_9036());
  auto program = aot::build_executor_program(fused, {});
  program.calls.back().slots.back().buffer = {aot::BufferKind::kInput, 2};
  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(fused.main(), 1));
  ASSERT_EQ(run.verdict.kind(), oracle::VerdictKind::kInputClobbered)
      << oracle::summary(run.verdict);
  EXPECT_EQ(std::get<oracle::InputClobbered>(run.verdict.detail).input_index, 2);
}

TEST(PlanInterpreter, AnOutputNoCallWritesIsReportedUnwritten) {
  const ir::Module fused = fused_of(seed_9036());
  auto program = aot::build_executor_program(fused, {});
  // The last call writes into the workspace instead of output 0.
  program.calls.back().slots.back().buffer = program.calls[0].slots.back().buffer;
  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(fused.main(), 1));
  ASSERT_EQ(run.verdict.kind(), oracle::VerdictKind::kOutputUnwritten)
      << oracle::summary(run.verdict);
  EXPECT_EQ(std::get<oracle::OutputUnwritten>(run.verdict.detail).output_index, 0);
  EXPECT_EQ(run.verdict.stage, oracle::Stage::kCodegen);
}

TEST(PlanInterpreter, ADirectCallWithTheWrongArgumentCountDoesNotCompile) {
  const ir::Module fused = fused_of(seed_9036());
  aot::Options unpacked;
  unpacked.api = aot::Options::Api::kUnpacked;
  auto program = aot::build_executor_program(fused, unpacked);
  ASSERT_FALSE(program.calls.back().packed);
  program.calls.back().slots.erase(program.calls.back().slots.begin());
  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(fused.main(), 1));
  EXPECT_EQ(run.verdict.kind(), oracle::VerdictKind::kCompileError) << oracle::summary(run.verdict);
}

TEST(PlanInterpreter, ReadingPastTheEndOfAnOutputBufferIsACrash) {
  // A (2) output read where the callee expects (2, 3): the output ends at its guard page.
  const ir::Module fused = fused_of(seed_9036());
  auto program = aot::build_executor_program(fused, {});
  auto& kernel = program.calls.back();
  kernel.callee_inputs[0] = ir::TypeNode::tensor({1000, 1000}, ir::DType::kFloat32);
  kernel.slots[0].buffer = {aot::BufferKind::kOutput, 0};
  const auto run =
      oracle::interpret_program(fused, program, reference::make_inputs(fused.main(), 1));
  ASSERT_EQ(run.verdict.kind(), oracle::VerdictKind::kCrash) << oracle::summary(run.verdict);
  EXPECT_NE(std::get<oracle::Crash>(run.verdict.detail).stderr_tail.find("past the end"),
            std::string::npos);
}

TEST(PlanInterpreter, RefusesInputsThatDoNotMatchMain) {
  const ir::Module fused = fused_of(seed_9036());
  const auto program = aot::build_executor_program(fused, {});
  EXPECT_THROW(oracle::interpret_program(fused, program, {}), ir::Error);
}

// The PlanExecutor seam: a prepared case whose executor program is swapped for a broken one,
// run, and judged by judge_case, the judge of compiled programs.
struct PlanSeam {
  ir::Module annotated = seed_9036();
  oracle::CaseOptions options = case_with(std::nullopt);
  oracle::CaseResult result;
  std::optional<oracle::PreparedCase> prepared =
      oracle::prepare_plan_case(annotated, options, result);

  oracle::RawResult run_with(const std::function<void(aot::ExecutorProgram&)>& edit) {
    auto plan = std::make_shared<oracle::PlanCase>(*prepared->plan);
    edit(plan->program);
    prepared->plan = plan;
    oracle::PlanExecutor executor;
    return executor.run(std::span<const oracle::PreparedCase>(&*prepared, 1)).front();
  }
  oracle::Verdict judged(const oracle::RawResult& raw) {
    oracle::judge_case(annotated, options, *prepared, raw, result);
    return result.verdict;
  }
};

TEST(PlanExecutor, ACorrectProgramsReportIsJudgedByTheJudgeOfCompiledPrograms) {
  PlanSeam seam;
  ASSERT_TRUE(seam.prepared) << oracle::summary(seam.result.verdict);
  auto raw = seam.run_with([](aot::ExecutorProgram&) {});
  ASSERT_FALSE(raw.settled);
  ASSERT_TRUE(raw.report);
  EXPECT_TRUE(raw.report->completed);
  EXPECT_EQ(seam.judged(raw).kind(), oracle::VerdictKind::kPass);
  // The judge reads the report, not a stdout no program printed: a changed output byte in the
  // report is a mismatch.
  ASSERT_FALSE(raw.report->outputs.empty());
  raw.report->outputs[0][0] ^= 0x40;
  const oracle::Verdict v = seam.judged(raw);
  EXPECT_EQ(v.kind(), oracle::VerdictKind::kMismatch) << oracle::summary(v);
  EXPECT_EQ(v.stage, oracle::Stage::kCodegen);
}

TEST(PlanExecutor, AWriteIntoAnInputExitsAsTheHarnessWouldAndIsJudgedInputClobbered) {
  PlanSeam seam;
  const auto raw = seam.run_with([](aot::ExecutorProgram& program) {
    program.calls.back().slots.back().buffer = {aot::BufferKind::kInput, 2};
  });
  ASSERT_TRUE(raw.report);
  EXPECT_EQ(raw.run.exit_code, oracle::kInputClobberedExit);
  const oracle::Verdict v = seam.judged(raw);
  ASSERT_EQ(v.kind(), oracle::VerdictKind::kInputClobbered) << oracle::summary(v);
  EXPECT_EQ(std::get<oracle::InputClobbered>(v.detail).input_index, 2);
}

TEST(PlanExecutor, AnUnwrittenOutputIsJudgedAtCodegenAsFromAHarnessReport) {
  PlanSeam seam;
  const auto raw = seam.run_with([](aot::ExecutorProgram& program) {
    program.calls.back().slots.back().buffer = program.calls[0].slots.back().buffer;
  });
  ASSERT_TRUE(raw.report);
  ASSERT_EQ(raw.report->unwritten.size(), 1u);
  const oracle::Verdict v = seam.judged(raw);
  EXPECT_EQ(v.kind(), oracle::VerdictKind::kOutputUnwritten) << oracle::summary(v);
  EXPECT_EQ(v.stage, oracle::Stage::kCodegen);
}

TEST(PlanExecutor, ACrashIsSettledWithTheCalleeThatCrashed) {
  PlanSeam seam;
  const auto raw = seam.run_with(
      [](aot::ExecutorProgram& program) { program.calls[0].slots.pop_back(); });
  ASSERT_TRUE(raw.settled);
  const oracle::Verdict v = seam.judged(raw);
  ASSERT_EQ(v.kind(), oracle::VerdictKind::kCrash) << oracle::summary(v);
  EXPECT_EQ(std::get<oracle::Crash>(v.detail).callee_kind, oracle::CalleeKind::kExternal);
}

TEST(PlanExecutor, ACaseWithoutAnExecutorProgramIsAToolchainErrorNeverAFinding) {
  oracle::PreparedCase compiled_only;
  compiled_only.mod_name = "default";
  oracle::PlanExecutor executor;
  const auto raw = executor.run(std::span<const oracle::PreparedCase>(&compiled_only, 1));
  ASSERT_EQ(raw.size(), 1u);
  ASSERT_TRUE(raw[0].settled);
  EXPECT_EQ(raw[0].settled->kind(), oracle::VerdictKind::kToolchainError);
  EXPECT_FALSE(oracle::is_finding(*raw[0].settled));
}

}  // namespace
}  // namespace aotfuzz
