// Tests of the resource model (reference/footprint.h): bytes from types alone, before anything
// is allocated, and the one-line refusal of a graph over the budget.
#include "reference/footprint.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "tests/support/modules.h"

namespace aotfuzz::reference {
namespace {

TEST(Footprint, CountsParametersAndOpResultsButNotAnnotations) {
  // Three 400-byte inputs and three 400-byte adds; the annotations hold nothing of their own.
  const ir::Module m = test_support::seed_9036();
  EXPECT_EQ(tensor_bytes_needed(m), 6u * 400u);
}

TEST(Footprint, TuplesCountTheirFieldsOnceAndDtypesTheirWidth) {
  const ir::Module m = ir::parse_module(R"(
def @main(%p: (Tensor[(4), int8], Tensor[(2, 2), int32])) {
  %0 = %p.0;
  %1 = add(%0, %0);
  (%1, %p)
})");
  // The parameter's 4 + 16 bytes, the add's 4; the tuples and the TupleGetItem nothing.
  EXPECT_EQ(tensor_bytes_needed(m), 24u);
}

TEST(Footprint, TheLargestTensorsTheParserTakesAreCountedExactly) {
  // 2^31 float32 elements: 8 GiB for the parameter and 8 GiB for the add, no overflow.
  const ir::Module m = ir::parse_module(R"(
def @main(%x: Tensor[(2147483648), float32]) {
  add(%x, %x)
})");
  EXPECT_EQ(tensor_bytes_needed(m), std::uint64_t{16} << 30);
  const auto why = over_memory_budget(m, kDefaultMemoryBudget);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("16384 MiB"), std::string::npos) << *why;
}

TEST(Footprint, TheBudgetRefusesWithOneLineNamingBothFiguresAndTheFlag) {
  // Eight 1 GiB inputs: the graph of the report that grew to 24 GB before the OOM killer came.
  std::string params, sum = "%x0";
  for (int i = 0; i < 8; ++i) {
    params += std::string(i == 0 ? "" : ", ") + "%x" + std::to_string(i) +
              ": Tensor[(268435456), float32]";
    if (i > 0) sum = "add(" + sum + ", %x" + std::to_string(i) + ")";
  }
  const ir::Module m = ir::parse_module("def @main(" + params + ") {\n  " + sum + "\n}");
  const auto why = over_memory_budget(m, kDefaultMemoryBudget);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->find('\n'), std::string::npos);
  EXPECT_NE(why->find("15360 MiB"), std::string::npos) << *why;  // 8 inputs + 7 adds
  EXPECT_NE(why->find("256 MiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("--memory-budget"), std::string::npos) << *why;
  EXPECT_FALSE(over_memory_budget(m, 0).has_value()) << "0 is no budget";
  EXPECT_FALSE(over_memory_budget(m, std::uint64_t{16} << 30).has_value());
}

}  // namespace
}  // namespace aotfuzz::reference
