// Batched campaigns give the same verdicts as single-case ones: a fixed-seed campaign's signature
// counts agree, with nothing injected and with each catalogue bug injected.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aot/bugs.h"
#include "fuzz/campaign.h"
#include "oracle/executor.h"
#include "oracle/verdict.h"
#include "tests/support/bugs.h"

namespace aotfuzz::fuzz {
namespace {

// Cases per configuration: few enough for CI (the single-case side compiles one program per
// case); `aotfuzz bench --cases 5000 [--inject BUG]` compares far more.
constexpr std::uint64_t kCases = 80;

CampaignOptions parity_options(ExecutorChoice executor) {
  CampaignOptions o;
  o.seed = 9036;
  o.max_cases = kCases;
  o.jobs = 2;
  o.reduce = false;
  o.executor = executor;
  return o;
}

// Signature counts of a campaign's cases, sorted by signature.
std::vector<std::pair<std::string, std::uint64_t>> signature_counts(
    const CampaignOptions& options) {
  std::map<std::string, std::uint64_t> counts;
  std::mutex mu;
  CampaignCallbacks cb;
  cb.on_case = [&](const CaseSpec&, const oracle::CaseResult& r) {
    std::lock_guard lock(mu);
    ++counts[oracle::signature(r.verdict)];
  };
  run_campaign(options, cb);
  return {counts.begin(), counts.end()};
}

void expect_same_counts(const aot::BugSet& bugs, const std::string& what) {
  CampaignOptions batched = parity_options(ExecutorChoice::kBatched);
  CampaignOptions single = parity_options(ExecutorChoice::kSingle);
  batched.base.aot.bugs = single.base.aot.bugs = bugs;
  const auto b = signature_counts(batched);
  const auto s = signature_counts(single);
  EXPECT_EQ(b, s) << what;
  std::uint64_t total = 0;
  for (const auto& [sig, n] : b) total += n;
  EXPECT_EQ(total, kCases) << what;
}

TEST(ExecutorParity, BatchedCampaignHasTheSingleCaseSignatureCountsWithNothingInjected) {
  ASSERT_TRUE(oracle::batched_execution_available(host::CompilerKind::kTcc));
  expect_same_counts(aot::BugSet(), "nothing injected");
}

// One ctest test per catalogue bug, so that no single test holds a core for minutes.
class ExecutorParityWithABug : public testing::TestWithParam<aot::Bug> {};

TEST_P(ExecutorParityWithABug, BatchedCampaignHasTheSingleCaseSignatureCounts) {
  ASSERT_TRUE(oracle::batched_execution_available(host::CompilerKind::kTcc));
  aot::BugSet bugs;
  bugs.enable(GetParam());
  expect_same_counts(bugs, "--inject " + std::string(test_support::bug_name(GetParam())));
}

std::vector<aot::Bug> every_bug() {
  std::vector<aot::Bug> out;
  for (const auto& row : aot::bug_table()) out.push_back(row.bug);
  return out;
}

INSTANTIATE_TEST_SUITE_P(EachBugInjected, ExecutorParityWithABug, testing::ValuesIn(every_bug()),
                         [](const testing::TestParamInfo<aot::Bug>& info) {
                           std::string name(test_support::bug_name(info.param));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(ExecutorParity, ABatchedCampaignConfirmsItsFindingsAlone) {
  CampaignOptions o = parity_options(ExecutorChoice::kBatched);
  o.max_cases = 40;
  o.base.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const CampaignResult r = run_campaign(o);
  EXPECT_TRUE(r.batched);
  EXPECT_TRUE(r.harness_problems.empty());
  ASSERT_FALSE(r.findings.empty());
  for (const auto& f : r.findings) {
    // Replay lines carry no batch-only flag.
    EXPECT_EQ(f.replay.find("batch"), std::string::npos) << f.replay;
    EXPECT_EQ(f.replay.find("single"), std::string::npos) << f.replay;
  }
}

}  // namespace
}  // namespace aotfuzz::fuzz
