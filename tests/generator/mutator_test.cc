// The custom mutator's graph edits: every result verifies and round-trips through the text form,
// every kind applies somewhere in the corpus, and a bug-free pipeline finds nothing wrong with the
// graphs they make (so the text targets' findings are the pipeline's, not the mutator's).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>

#include "generator/mutator.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "oracle/plan_interpreter.h"
#include "tests/support/modules.h"

namespace aotfuzz {
namespace {

using generator::GraphMutation;
using test_support::annotated_corpus;
using test_support::generated;

void expect_round_trips(const ir::Module& m) {
  ir::verify(m);
  const std::string text = ir::print_module(m);
  EXPECT_EQ(ir::print_module(ir::parse_module(text)), text);
}

TEST(GraphMutator, EveryKindAppliesToSomeCorpusGraphAndItsResultsVerify) {
  const auto corpus = annotated_corpus();
  ASSERT_GE(corpus.size(), 10u);
  std::map<GraphMutation, int> applied;
  for (std::size_t g = 0; g < corpus.size(); ++g) {
    for (int k = 0; k < static_cast<int>(GraphMutation::kCount); ++k) {
      const auto kind = static_cast<GraphMutation>(k);
      for (std::uint64_t seed = 0; seed < 4; ++seed) {
        ir::Rng rng(g * 1000 + k * 10 + seed);
        const auto out = generator::mutate_graph(corpus[g], kind, rng);
        if (!out) continue;
        ++applied[kind];
        expect_round_trips(*out);
        EXPECT_NE(ir::print_module(*out), ir::print_module(corpus[g]))
            << generator::graph_mutation_name(kind) << " changed nothing";
      }
    }
  }
  for (int k = 0; k < static_cast<int>(GraphMutation::kCount); ++k) {
    EXPECT_GT(applied[static_cast<GraphMutation>(k)], 0)
        << generator::graph_mutation_name(static_cast<GraphMutation>(k)) << " never applied";
  }
}

TEST(GraphMutator, RemovingTheOnlyRegionLeavesNoAnnotation) {
  const ir::Module m = ir::parse_module(R"(
def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%a, compiler="ccompiler");
  %1 = annotation.compiler_begin(%b, compiler="ccompiler");
  %2 = add(%0, %1);
  annotation.compiler_end(%2, compiler="ccompiler")
})");
  ir::Rng rng(1);
  const auto out = generator::mutate_graph(m, GraphMutation::kRemoveRegion, rng);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(ir::print_module(*out).find("annotation"), std::string::npos) << ir::print_module(*out);
}

TEST(GraphMutator, ExposingAValueGivesItsRegionAnotherOutput) {
  const ir::Module m = ir::parse_module(R"(
def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%a, compiler="ccompiler");
  %1 = annotation.compiler_begin(%b, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = add(%2, %1);
  annotation.compiler_end(%3, compiler="ccompiler")
})");
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    ir::Rng rng(seed);
    const auto out = generator::mutate_graph(m, GraphMutation::kExposeValue, rng);
    ASSERT_TRUE(out.has_value());
    EXPECT_TRUE((*out).main()->body()->type()->is_tuple());
    const std::string text = ir::print_module(*out);
    std::size_t ends = 0;
    for (auto at = text.find("compiler_end("); at != std::string::npos;
         at = text.find("compiler_end(", at + 1)) {
      ++ends;
    }
    EXPECT_EQ(ends, 2u) << text;
  }
}

TEST(GraphMutator, CrossingPutsBothGraphsSideBySide) {
  const auto corpus = annotated_corpus();
  ASSERT_GE(corpus.size(), 2u);
  int crossed = 0;
  for (std::size_t i = 0; i + 1 < corpus.size(); ++i) {
    ir::Rng rng(i);
    const auto out = generator::cross_graphs(corpus[i], corpus[i + 1], rng);
    if (!out) continue;
    ++crossed;
    expect_round_trips(*out);
    EXPECT_EQ(out->main()->params().size(),
              corpus[i].main()->params().size() + corpus[i + 1].main()->params().size());
  }
  EXPECT_GT(crossed, 0);
}

RC_GTEST_PROP(GraphMutator, ChainsOfMutationsStayValidAndPassABugFreePipeline,
              (std::uint64_t seed)) {
  ir::Module m = generated(seed, 8);
  ir::Rng rng(seed);
  for (int step = 0; step < 6; ++step) {
    if (auto next = generator::mutate_graph(m, rng)) m = *next;
    ir::verify(m);
  }
  const std::string text = ir::print_module(m);
  RC_ASSERT(ir::print_module(ir::parse_module(text)) == text);
  for (bool merge : {true, false}) {
    oracle::CaseOptions options;
    options.aot.merge = merge;
    const auto r = oracle::run_case_in_process(m, options);
    RC_ASSERT_FALSE(oracle::is_finding(r.verdict));
  }
}

}  // namespace
}  // namespace aotfuzz
