// The structural oracle (oracle/structure.h): bugs that change modules but not values are found
// at their own stage, refusals are compared both ways, and nothing else is flagged.
#include "oracle/structure.h"

#include <gtest/gtest.h>

#include "aot/bugs.h"
#include "ir/parser.h"
#include "oracle/oracle.h"
#include "oracle/stages.h"
#include "tests/support/modules.h"

namespace aotfuzz::oracle {
namespace {

const aot::PassInfo& pass(std::string_view name) { return *aot::find_pass(name); }

CaseResult in_process(const ir::Module& m, CaseOptions options) {
  options.in_process_only = true;
  return run_case(m, options);
}

TEST(Structure, EachStructureOnlyBugIsFoundAtItsOwnStageAndOnlyByTheStructuralCheck) {
  for (aot::Bug bug : {aot::Bug::kFuseStopsAtTupleGetItem, aot::Bug::kMergeVisitOrder,
                       aot::Bug::kPartitionNumbering, aot::Bug::kUnboundConstants,
                       aot::Bug::kUnboundConstantTuples}) {
    const auto& row = aot::bug_table()[static_cast<std::size_t>(bug)];
    SCOPED_TRACE(std::string(row.name));
    const ir::Module m =
        test_support::load("corpus/regressions/" + std::string(row.name) + ".relay");
    CaseOptions options;
    options.aot.bugs.enable(bug);
    const CaseResult found = in_process(m, options);
    EXPECT_EQ(found.verdict.kind(), VerdictKind::kStructure) << summary(found.verdict);
    EXPECT_EQ(stage_name(found.verdict.stage), row.stage);
    options.check_structure = false;
    EXPECT_EQ(in_process(m, options).verdict.kind(), VerdictKind::kPass);
  }
}

TEST(Structure, TheUnbuggedPipelineAgreesWithTheReferenceOnTheSeedGraph) {
  for (bool merge : {true, false}) {
    CaseOptions options;
    options.aot.merge = merge;
    EXPECT_EQ(in_process(test_support::seed_9036(), options).verdict.kind(), VerdictKind::kPass);
  }
}

TEST(Structure, APipelineRefusalThatTvmsRulesDoNotMakeIsAStructureVerdict) {
  const ir::Module m = test_support::seed_9036();
  const auto v = check_structure(pass("partition"), m, nullptr, "made-up refusal", aot::Options{});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(signature(*v), "structure:partition");
  const std::string& diff = std::get<Structure>(v->detail).diff;
  EXPECT_NE(diff.find("made-up refusal"), std::string::npos) << diff;
  EXPECT_NE(diff.find("tvmgen_default_ccompiler_main_0"), std::string::npos) << diff;
}

TEST(Structure, AModuleWhereTvmsRulesRefuseIsAStructureVerdictAndTwoRefusalsAgree) {
  // A region that is cyclic through a host add: TVM's PartitionGraph recurses forever.
  const ir::Module cyclic = ir::parse_module(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  %3 = add(%2, %2);
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = add(%1, %4);
  annotation.compiler_end(%5, compiler="ccompiler")
})",
                                             "cyclic.relay");
  const ir::Module some_module = test_support::seed_9036();
  const auto v = check_structure(pass("partition"), cyclic, &some_module, "", aot::Options{});
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(std::get<Structure>(v->detail).diff.find("recurses forever"), std::string::npos);
  EXPECT_FALSE(check_structure(pass("partition"), cyclic, nullptr, "refused", aot::Options{}));
}

TEST(Structure, AModuleThatDiffersGivesAUnifiedDiffOfTheTwo) {
  const ir::Module m = test_support::seed_9036();
  const ir::Module unchanged = m;  // not what PartitionGraph makes of it
  const auto v = check_structure(pass("partition"), m, &unchanged, "", aot::Options{});
  ASSERT_TRUE(v.has_value());
  const std::string& diff = std::get<Structure>(v->detail).diff;
  EXPECT_EQ(diff.rfind("--- pipeline/partitioned\n+++ tvm-v0.8-rules/partitioned\n", 0), 0u)
      << diff;
  EXPECT_NE(diff.find("+def @tvmgen_default_ccompiler_main_0"), std::string::npos) << diff;
}

TEST(Structure, OnlyPassesWithAReferenceAreChecked) {
  for (const auto& row : aot::pass_table()) EXPECT_NE(reference_pass(row.name), nullptr);
  EXPECT_EQ(reference_pass("noop"), nullptr);
}

}  // namespace
}  // namespace aotfuzz::oracle
