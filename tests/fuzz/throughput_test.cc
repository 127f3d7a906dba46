// `aotfuzz bench` (fuzz/throughput.h): for a system whose programs are not batched, its own path
// and one case at a time, side by side, with the same signature counts and the workers' time in
// phases.
#include "fuzz/throughput.h"

#include <gtest/gtest.h>

#include <memory>

#include "fuzz/campaign_cases.h"
#include "oracle/case_flow.h"
#include "oracle/sut.h"
#include "tests/support/systems.h"

namespace aotfuzz::fuzz {
namespace {

using test_support::UnbatchedBuiltin;

TEST(Throughput, AnUnbatchedSystemIsMeasuredOnItsOwnPathAndOneCaseAtATimeSideBySide) {
  ThroughputOptions t;
  t.campaign.seed = 11;
  t.campaign.max_cases = 24;
  t.campaign.jobs = 2;
  auto system = std::make_shared<UnbatchedBuiltin>(/*overlapped=*/true);
  t.campaign.base.sut = system;
  t.rounds = 2;
  const ThroughputResult r = measure_throughput(t);
  // Its own path prepares in overlapped batches; one case at a time makes none.
  EXPECT_GT(system->batches_made(), 2);
  ASSERT_EQ(r.modes.size(), 2u);
  EXPECT_EQ(r.modes[0].mode, "default");
  EXPECT_EQ(r.modes[1].mode, "one-case");
  for (const auto& m : r.modes) {
    SCOPED_TRACE(m.mode);
    EXPECT_EQ(m.cases_per_s.size(), 2u);
    EXPECT_GT(m.median, 0);
    EXPECT_EQ(m.cases, 24u);
    std::uint64_t judged = 0;
    for (const auto& [signature, n] : m.signatures) judged += n;
    EXPECT_EQ(judged, 24u);
    double total = 0;
    bool own_step = false, compile = false;
    for (const auto& [name, share] : m.phase_shares) {
      EXPECT_GE(share, 0) << name;
      total += share;
      own_step |= name == "own step" && share > 0;
      compile |= name == "compile" && share > 0;
    }
    EXPECT_NEAR(total, 1.0, 1e-6);
    EXPECT_TRUE(own_step);
    EXPECT_TRUE(compile);
    EXPECT_GT(m.system_bound, 0);
  }
  // One case at a time, the own steps are part of each worker's time, so what they alone allow
  // is at least what the campaign made.
  EXPECT_GE(r.modes[1].system_bound, r.modes[1].cases_per_s.front());
  ASSERT_TRUE(r.same_signatures.has_value());
  EXPECT_TRUE(*r.same_signatures);
  const std::string text = format_throughput(r, t);
  EXPECT_NE(text.find("default / one-case: "), std::string::npos) << text;
  EXPECT_NE(text.find("signature counts default vs one-case: same"), std::string::npos) << text;
  EXPECT_NE(text.find("phases (default, workers' time): own step "), std::string::npos) << text;
  EXPECT_NE(text.find("bound by the system's own steps alone (one-case): "), std::string::npos)
      << text;
}

}  // namespace
}  // namespace aotfuzz::fuzz
