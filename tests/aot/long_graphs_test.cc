// The passes on graphs of 20,000 to 100,000 nodes: every pass is iterative, so depth costs no
// stack, and merging, partitioning and fusing stay correct at that size. These take seconds
// under the sanitizers, hence their own executable with the ctest label `slow`.
#include <gtest/gtest.h>

#include <string>

#include "aot/fuse_ops.h"
#include "aot/pipeline.h"
#include "ir/module.h"
#include "tests/support/graphs.h"

namespace aotfuzz::aot {
namespace {

using test_support::annotated_chain;
using test_support::count_calls;
using test_support::host_chain;

constexpr int kLongChain = 100000;

TEST(LongGraphs, OneRegionOfAHundredThousandOpsPassesEveryStage) {
  const ir::Module m = annotated_chain(kLongChain, false, [](int) { return std::string("a"); });
  const Stages stages = run_passes(m);
  ASSERT_EQ(stages.at(aot::Stage::kPartition).size(), 2u);
  const ir::Function& outlined = stages.at(aot::Stage::kPartition).functions()[1].second;
  EXPECT_EQ(outlined->params().size(), 1u);  // x, entering through two begins
  EXPECT_EQ(count_calls(outlined->body()), static_cast<std::size_t>(kLongChain));
  EXPECT_EQ(count_calls(stages.output().main()->body()), 1u);
}

TEST(LongGraphs, AlternatingTargetsMergeOnlyWhatRestrictionsAllow) {
  // a, a, b, a, a, b, ...: each pair of a's merges; the b between pairs keeps them apart.
  const ir::Module m =
      annotated_chain(kLongChain, true, [](int i) { return std::string(i % 3 == 2 ? "b" : "a"); });
  const Stages stages = run_passes(m);
  const std::size_t regions = static_cast<std::size_t>((kLongChain + 2) / 3 + (kLongChain + 1) / 3);
  EXPECT_EQ(stages.at(aot::Stage::kPartition).size(), 1 + regions);
  EXPECT_EQ(count_calls(stages.output().main()->body()), regions);
}

TEST(LongGraphs, AHostChainFusesIntoKernelsOfTvmsMaximumSize) {
  const Stages stages = run_passes(host_chain(kLongChain));
  // Runs of 256 adds (kDefaultMaxFuseDepth), the last one shorter.
  EXPECT_EQ(count_calls(stages.output().main()->body()),
            static_cast<std::size_t>((kLongChain + 255) / 256));
  // Three distinct kernels: the first run (add(%x, %x) first: one parameter), the full runs after
  // it (two parameters) and the shorter last run.
  KernelNames names(stages.output(), "default");
  EXPECT_EQ(names.kernels().size(), 3u);
}

TEST(LongGraphs, HostOpsBetweenRegionsStayApart) {
  // One function per region makes this the slowest shape (verify() walks every function), so
  // it is shorter; the depth of the other long graphs already covers the stack.
  constexpr int kOps = 20000;
  const ir::Module m =
      annotated_chain(kOps, true, [](int i) { return std::string(i % 2 ? "" : "a"); });
  const Stages stages = run_passes(m);
  EXPECT_EQ(stages.at(aot::Stage::kPartition).size(), 1 + static_cast<std::size_t>(kOps / 2));
  EXPECT_EQ(count_calls(stages.output().main()->body()), static_cast<std::size_t>(kOps));
}

}  // namespace
}  // namespace aotfuzz::aot
