// The per-stage reference check (oracle/stages.h): a stage whose module computes other values
// than the reference is a mismatch of that stage, with that stage's values as the actual ones.
#include <gtest/gtest.h>

#include "aot/bugs.h"
#include "oracle/oracle.h"
#include "tests/support/modules.h"

namespace aotfuzz::oracle {
namespace {

TEST(Stages, AMismatchOfAStageKeepsThatStagesOutputsAsTheActualValues) {
  const ir::Module m = test_support::load("corpus/regressions/swapped-output-order.relay");
  CaseOptions o;
  o.in_process_only = true;
  o.aot.bugs.enable(aot::Bug::kSwappedOutputOrder);
  const CaseResult r = run_case(m, o);
  ASSERT_EQ(signature(r.verdict), "mismatch:partition");
  // The values a bundle's actual.txt shows: the partitioned module's, not nothing.
  ASSERT_EQ(r.actual.size(), r.expected.size());
  const auto& mismatch = std::get<Mismatch>(r.verdict.detail);
  EXPECT_FALSE(r.actual.empty());
  EXPECT_NE(mismatch.expected, mismatch.actual);
}

}  // namespace
}  // namespace aotfuzz::oracle
