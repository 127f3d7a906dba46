// Unit tests for reduce_file, the `aotfuzz reduce FILE` logic: where the flags and the signature
// come from, the retry for injected bugs, and the reduced file's header.
#include <gtest/gtest.h>

#include "aot/bugs.h"
#include "bundles/replay.h"
#include "ir/printer.h"
#include "oracle/verdict.h"
#include "reduce/reduce_file.h"
#include "tests/support/files.h"
#include "tests/support/modules.h"

namespace aotfuzz::reduce {
namespace {

using test_support::load;
using test_support::read_text;
using test_support::source_path;

const char* const kSeed = "corpus/seed/tvm_9036_annotated.relay";

ReduceFileRequest request_for(const std::string& header) {
  ReduceFileRequest r;
  r.file = "seed.relay";
  r.text = header + read_text(source_path(kSeed));
  r.module = load(kSeed);
  r.reduce.jobs = 2;
  return r;
}

TEST(FirstFindingLine, SkipsPassAndInvalidInputLines) {
  const std::vector<bundles::ReplayLine> lines = {{3, "--merge", "pass"},
                                                   {4, "--no-merge", "invalid-input:merge"},
                                                   {5, "--inject merge-siblings", "mismatch:merge"},
                                                   {6, "--no-merge", "arity:codegen:kernel"}};
  const auto line = bundles::first_finding_line(lines);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->line, 5);
  EXPECT_EQ(line->flags, "--inject merge-siblings");
}

TEST(FirstFindingLine, IsEmptyWhenEveryLineExpectsNoFinding) {
  EXPECT_FALSE(
      bundles::first_finding_line({{1, "--merge", "pass:run"}, {2, "", "invalid-input"}}));
  EXPECT_FALSE(bundles::first_finding_line({}));
}

TEST(PlanReduction, WithoutCommandLineFlagsTakesTheFlagsOfTheFilesFirstFinding) {
  ReduceFileRequest r = request_for(
      "// replay: --merge => pass\n"
      "// replay: --merge --inject tuple-arg-first-field => arity:codegen:kernel\n");
  r.signature = "arity:codegen:kernel";
  const ReductionPlan plan = plan_reduction(r);
  ASSERT_TRUE(plan.flags_from.has_value());
  EXPECT_EQ(plan.flags_from->line, 2);
  EXPECT_EQ(plan.flags, "--merge --inject tuple-arg-first-field");
  EXPECT_TRUE(plan.options.aot.bugs.on(aot::Bug::kTupleArgFirstFieldOnly));
}

TEST(PlanReduction, CommandLineFlagsWinOverTheFilesHeader) {
  ReduceFileRequest r =
      request_for("// replay: --merge --inject tuple-arg-first-field => arity:codegen:kernel\n");
  r.flags_given = true;
  r.options.aot.merge = false;
  r.signature = "mismatch:codegen";
  const ReductionPlan plan = plan_reduction(r);
  EXPECT_FALSE(plan.flags_from.has_value());
  EXPECT_FALSE(plan.options.aot.bugs.any());
  EXPECT_EQ(plan.flags, oracle::replay_flags(r.options));
}

TEST(PlanReduction, MalformedHeaderIsAReduceFileError) {
  ReduceFileRequest r = request_for("// replay: --merge pass\n");
  EXPECT_THROW(plan_reduction(r), ReduceFileError);
}

TEST(PlanReduction, FileThatGivesNoFindingAndNoSignatureIsRefused) {
  ReduceFileRequest r = request_for("");
  r.flags_given = true;
  try {
    plan_reduction(r);
    FAIL() << "expected ReduceFileError";
  } catch (const ReduceFileError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to reduce"), std::string::npos) << e.what();
  }
}

TEST(PlanReduction, WithoutASignatureKeepsTheVerdictTheFileGives) {
  ReduceFileRequest r = request_for("");
  r.flags_given = true;
  r.options.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  EXPECT_EQ(plan_reduction(r).signature, "arity:codegen:kernel");
}

TEST(ReduceFile, ReducesTheSeedAndWritesAHeaderThatReplaysTheFinding) {
  ReduceFileRequest r = request_for("");
  r.flags_given = true;
  r.options.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const ReductionPlan plan = plan_reduction(r);
  const ReducedFile out = reduce_file(r, plan);
  EXPECT_GT(out.result.steps, 0u);
  EXPECT_LE(out.result.after.ops, out.result.before.ops);
  const auto lines = bundles::parse_replay_lines(out.text, "reduced.relay");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].expected, "arity:codegen:kernel");
  EXPECT_EQ(lines[0].flags, plan.flags);
  EXPECT_NE(out.text.find("// origin: reduced by `aotfuzz reduce` from seed.relay"),
            std::string::npos);
  EXPECT_EQ(oracle::signature(oracle::run_case(out.result.module, plan.options).verdict),
            "arity:codegen:kernel");
}

TEST(ReduceFile, ASignatureTheFileDoesNotGiveIsRefused) {
  ReduceFileRequest r = request_for("");
  r.flags_given = true;
  r.signature = "crash:run:SIGSEGV";
  EXPECT_THROW(reduce_file(r, plan_reduction(r)), ReduceFileError);
}

TEST(ReducedFileHeader, SaysWhereItCameFromHowMuchShrankAndHowToReplay) {
  ReduceResult r;
  r.before.ops = 7;
  r.after.ops = 2;
  r.before.inputs = 3;
  r.after.inputs = 1;
  r.steps = 4;
  r.minimal = true;
  const auto header = reduced_file_header("in.relay", r, "mismatch:fuse", "--no-merge");
  ASSERT_EQ(header.size(), 4u);
  EXPECT_EQ(header[0], "origin: reduced by `aotfuzz reduce` from in.relay");
  EXPECT_EQ(header[1], "reduced: ops 7 -> 2, inputs 3 -> 1, 4 steps (1-minimal)");
  EXPECT_EQ(header[2], "finding: mismatch:fuse");
  EXPECT_EQ(header[3], "replay: --no-merge => mismatch:fuse");
}

}  // namespace
}  // namespace aotfuzz::reduce
