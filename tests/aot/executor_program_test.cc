// The executor program: what it holds per call, the bug switches applied in it, and that the
// emitted C makes exactly the calls it describes.
#include <gtest/gtest.h>

#include "aot/codegen.h"
#include "aot/executor_program.h"
#include "aot/storage_plan.h"
#include "oracle/static_arity.h"
#include "tests/support/modules.h"

namespace aotfuzz {
namespace {

using test_support::fused_of;
using test_support::generated;
using test_support::seed_9036;

aot::Options with_bug(aot::Bug bug, aot::Options o = {}) {
  o.bugs.enable(bug);
  return o;
}

TEST(ExecutorProgram, SlotsAreTheFlattenedArgumentsThenTheResultsOfEachPlannedStep) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const ir::Module fused = fused_of(generated(seed));
    const auto plan = aot::plan_storage(fused.main());
    const auto program = aot::build_executor_program(fused, {});
    ASSERT_EQ(program.calls.size(), plan.steps.size());
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
      std::vector<aot::BufferRef> want;
      for (const auto& arg : plan.steps[s].args) {
        for (const auto& t : arg) want.push_back(t.buffer);
      }
      for (const auto& t : plan.steps[s].results) want.push_back(t.buffer);
      std::vector<aot::BufferRef> got;
      for (const auto& slot : program.calls[s].slots) got.push_back(slot.buffer);
      EXPECT_EQ(got, want) << "seed " << seed << " call " << s;
      EXPECT_EQ(program.calls[s].num_args(), program.calls[s].callee_arity());
      EXPECT_EQ(program.calls[s].call, plan.steps[s].call);
    }
    EXPECT_EQ(program.workspace_bytes, plan.workspace_bytes);
  }
}

TEST(ExecutorProgram, NumArgsOfEveryCallEqualsTheArityTheIrGives) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const ir::Module fused = fused_of(generated(seed), seed % 2 == 0);
    const auto program = aot::build_executor_program(fused, {});
    const auto expected = aot::expected_call_arity(fused, {});
    ASSERT_EQ(program.calls.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(program.calls[i].callee, expected[i].callee);
      EXPECT_EQ(program.calls[i].num_args(), expected[i].num_args);
      EXPECT_EQ(program.calls[i].packed, expected[i].packed);
    }
  }
}

TEST(ExecutorProgram, TheArityItReportsAlongsideIsExpectedCallArity) {
  aot::Options unpacked;
  unpacked.api = aot::Options::Api::kUnpacked;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const ir::Module fused = fused_of(generated(seed), seed % 2 == 0);
    for (const auto& options : {aot::Options{}, unpacked}) {
      std::vector<aot::CallSiteInfo> arity{{"stale", 99, false}};
      const auto program = aot::build_executor_program(fused, options, &arity);
      EXPECT_EQ(arity, aot::expected_call_arity(fused, options));
      EXPECT_EQ(program.calls.size(), aot::build_executor_program(fused, options).calls.size());
    }
  }
}

TEST(ExecutorProgram, TupleArgFirstFieldOnlyPassesTwoArgumentsToTheFusedAddThatTakesThree) {
  const ir::Module fused = fused_of(seed_9036());
  const auto good = aot::build_executor_program(fused, {});
  const auto bad = aot::build_executor_program(fused, with_bug(aot::Bug::kTupleArgFirstFieldOnly));
  ASSERT_EQ(good.calls.size(), bad.calls.size());
  int changed = 0;
  for (std::size_t i = 0; i < good.calls.size(); ++i) {
    if (good.calls[i].slots.size() == bad.calls[i].slots.size()) continue;
    ++changed;
    EXPECT_FALSE(bad.calls[i].external);
    EXPECT_EQ(bad.calls[i].callee_arity(), 3);
    EXPECT_EQ(bad.calls[i].num_args(), 2);
    // The first field and the result stay; the second field is the one dropped.
    EXPECT_EQ(bad.calls[i].slots[0].buffer, good.calls[i].slots[0].buffer);
    EXPECT_EQ(bad.calls[i].slots[1].buffer, good.calls[i].slots[2].buffer);
  }
  EXPECT_EQ(changed, 1);
}

TEST(ExecutorProgram, StaleUnpackedArgTakesTheBufferThePreviousCallHadInThatSlot) {
  aot::Options unpacked;
  unpacked.api = aot::Options::Api::kUnpacked;
  const ir::Module fused = fused_of(seed_9036());
  const auto good = aot::build_executor_program(fused, unpacked);
  const auto bad =
      aot::build_executor_program(fused, with_bug(aot::Bug::kStaleUnpackedArg, unpacked));
  int stale = 0;
  for (std::size_t i = 1; i < good.calls.size(); ++i) {
    for (std::size_t k = 0; k < good.calls[i].slots.size(); ++k) {
      if (good.calls[i].slots[k].buffer == bad.calls[i].slots[k].buffer) continue;
      ++stale;
      EXPECT_FALSE(bad.calls[i].packed);
      ASSERT_LT(k, bad.calls[i - 1].slots.size());
      EXPECT_EQ(bad.calls[i].slots[k].buffer, bad.calls[i - 1].slots[k].buffer);
    }
  }
  EXPECT_EQ(stale, 1);
}

TEST(ExecutorProgram, TheEmittedExecutorMakesExactlyTheProgramsCalls) {
  std::vector<aot::Options> variants(4);
  variants[1].api = aot::Options::Api::kUnpacked;
  variants[2] = with_bug(aot::Bug::kTupleArgFirstFieldOnly);
  variants[3] = with_bug(aot::Bug::kStaleUnpackedArg, variants[1]);
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const ir::Module fused = fused_of(generated(seed));
    for (const auto& options : variants) {
      const auto program = aot::build_executor_program(fused, options);
      const auto sources = aot::generate_c(fused, options);
      const auto sites = oracle::static_arity(sources.file(aot::lib_file_name(options)));
      ASSERT_EQ(sites.size(), program.calls.size());
      for (std::size_t i = 0; i < sites.size(); ++i) {
        EXPECT_EQ(sites[i].callee, program.calls[i].callee);
        EXPECT_EQ(sites[i].num_args, program.calls[i].num_args());
        EXPECT_EQ(sites[i].packed, program.calls[i].packed);
      }
    }
  }
}

TEST(ExecutorProgram, TheStackHoldsEveryPackedCallsSlotsAndWhatItsCalleeReads) {
  const ir::Module fused = fused_of(seed_9036());
  const auto program =
      aot::build_executor_program(fused, with_bug(aot::Bug::kTupleArgFirstFieldOnly));
  std::size_t need = 0;
  for (const auto& c : program.calls) {
    if (c.packed)
      need = std::max({need, c.slots.size(), static_cast<std::size_t>(c.callee_arity())});
  }
  EXPECT_GT(need, 0u);
  EXPECT_EQ(program.stack_size, need);
  aot::Options unpacked;
  unpacked.api = aot::Options::Api::kUnpacked;
  // Only the external functions are packed in the unpacked API.
  const auto direct = aot::build_executor_program(fused, unpacked);
  for (const auto& c : direct.calls) EXPECT_EQ(c.packed, c.external);
}

}  // namespace
}  // namespace aotfuzz
