// The bisection model (bundles/bisect.h) without git or builds: which candidate the search builds
// next, how skipped steps leave an answer open, the PR number of a subject, and bisect.json's
// refusal of outcomes recorded for another setup.
#include "bundles/bisect.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "host/tempdir.h"

namespace aotfuzz::bundles {
namespace {

// Candidates c0..c(n-1), the newer end the last of them (as git rev-list lists it).
BisectRange range_of(int n, BisectKind kind = BisectKind::kIntroduced) {
  BisectRange r;
  r.kind = kind;
  r.older = "old";
  for (int i = 0; i < n; ++i) r.candidates.push_back("c" + std::to_string(i));
  r.newer = r.candidates.back();
  return r;
}

BisectStep step(StepOutcome outcome) {
  BisectStep s;
  s.outcome = outcome;
  s.seconds = 10;
  return s;
}

TEST(BisectSearch, BuildsTheMiddleCandidateAndNeverTheNewerEnd) {
  const BisectRange r = range_of(5);
  const SearchPoint p = search_point(r, {});
  EXPECT_EQ(p.lo, -1);
  EXPECT_EQ(p.hi, 4) << "the newer end is known newer without a build";
  ASSERT_TRUE(p.next);
  EXPECT_EQ(*p.next, 1u);
  EXPECT_EQ(p.left, 5u);
  EXPECT_EQ(p.untested, 4u);

  BisectSteps steps = {{"c1", step(StepOutcome::kPasses)}, {"c2", step(StepOutcome::kReproduces)}};
  const SearchPoint done = search_point(r, steps);
  EXPECT_FALSE(done.next);
  const BisectAnswer a = bisect_answer(r, steps);
  ASSERT_TRUE(a.commit);
  EXPECT_EQ(*a.commit, "c2");
}

TEST(BisectSearch, AFixIsTheFirstCommitWhereTheFindingNoLongerReproduces) {
  const BisectRange r = range_of(4, BisectKind::kFixed);
  // Another signature is not the original finding: fixed, as far as this finding goes.
  const BisectSteps steps = {{"c0", step(StepOutcome::kReproduces)},
                             {"c1", step(StepOutcome::kReproduces)},
                             {"c2", step(StepOutcome::kOtherSignature)}};
  const BisectAnswer a = bisect_answer(r, steps);
  ASSERT_TRUE(a.commit);
  EXPECT_EQ(*a.commit, "c2");
}

TEST(BisectSearch, SkippedStepsCountNeitherWayAndTheSearchMovesToANeighbour) {
  const BisectRange r = range_of(6);
  BisectSteps steps = {{"c2", step(StepOutcome::kCannotBuild)}};
  const SearchPoint p = search_point(r, steps);
  ASSERT_TRUE(p.next);
  EXPECT_TRUE(*p.next == 1u || *p.next == 3u) << *p.next;
  EXPECT_EQ(p.lo, -1);
  EXPECT_EQ(p.hi, 5);
}

TEST(BisectAnswer, SkippedCommitsBeforeTheFirstNewerOneLeaveItOpenAmongThem) {
  const BisectRange r = range_of(5);
  const BisectSteps steps = {{"c0", step(StepOutcome::kPasses)},
                             {"c1", step(StepOutcome::kCannotBuild)},
                             {"c2", step(StepOutcome::kDoesNotImport)},
                             {"c3", step(StepOutcome::kReproduces)}};
  EXPECT_FALSE(search_point(r, steps).next);
  const BisectAnswer a = bisect_answer(r, steps);
  EXPECT_FALSE(a.commit);
  EXPECT_EQ(a.could_be, (std::vector<std::string>{"c1", "c2", "c3"}));
  EXPECT_FALSE(a.maybe_outside_paths);
}

TEST(BisectAnswer, WithoutTheNewerEndAmongTheCandidatesTheChangeMayBeOutsideThePaths) {
  BisectRange r = range_of(3);
  r.newer = "outside";  // --paths left the newer end out
  const BisectSteps steps = {{"c0", step(StepOutcome::kPasses)},
                             {"c1", step(StepOutcome::kPasses)},
                             {"c2", step(StepOutcome::kPasses)}};
  const BisectAnswer a = bisect_answer(r, steps);
  EXPECT_FALSE(a.commit);
  EXPECT_TRUE(a.could_be.empty());
  EXPECT_TRUE(a.maybe_outside_paths);
}

TEST(BisectAnswer, AnAnswerNextToTheOlderEndWaitsForThatEndsOwnStep) {
  const BisectRange r = range_of(4);
  BisectSteps steps = {{"c0", step(StepOutcome::kReproduces)},
                       {"c1", step(StepOutcome::kReproduces)},
                       {"c2", step(StepOutcome::kReproduces)}};
  EXPECT_FALSE(search_point(r, steps).next);
  // Every step reproduced: the answer c0 rests on the older end alone, never judged.
  EXPECT_EQ(ends_to_verify(r, steps), (std::vector<std::string>{"old"}));
  BisectAnswer a = bisect_answer(r, steps);
  EXPECT_FALSE(a.commit);
  EXPECT_EQ(a.unconfirmed_ends, (std::vector<std::string>{"old"}));
  EXPECT_FALSE(a.ends_contradicted);
  // It reproduces there too: the ends were swapped, and no commit is the answer.
  steps["old"] = step(StepOutcome::kReproduces);
  EXPECT_TRUE(ends_to_verify(r, steps).empty());
  a = bisect_answer(r, steps);
  EXPECT_FALSE(a.commit);
  EXPECT_TRUE(a.ends_contradicted);
  // A skipped end confirms nothing either.
  steps["old"] = step(StepOutcome::kCannotBuild);
  a = bisect_answer(r, steps);
  EXPECT_FALSE(a.commit);
  EXPECT_FALSE(a.ends_contradicted);
  EXPECT_EQ(a.unconfirmed_ends.size(), 1u);
  // It passes there, as given: c0 is the answer.
  steps["old"] = step(StepOutcome::kPasses);
  a = bisect_answer(r, steps);
  ASSERT_TRUE(a.commit);
  EXPECT_EQ(*a.commit, "c0");
  EXPECT_TRUE(a.unconfirmed_ends.empty());
}

TEST(BisectAnswer, AnAnswerThatIsTheNewerEndWaitsForItsOwnStep) {
  const BisectRange r = range_of(3, BisectKind::kFixed);
  BisectSteps steps = {{"c0", step(StepOutcome::kReproduces)},
                       {"c1", step(StepOutcome::kReproduces)}};
  EXPECT_FALSE(search_point(r, steps).next);
  EXPECT_EQ(ends_to_verify(r, steps), (std::vector<std::string>{"c2"}));
  EXPECT_FALSE(bisect_answer(r, steps).commit);
  steps["c2"] = step(StepOutcome::kReproduces);  // "absent", yet it reproduces
  EXPECT_TRUE(bisect_answer(r, steps).ends_contradicted);
  steps["c2"] = step(StepOutcome::kPasses);
  const BisectAnswer a = bisect_answer(r, steps);
  ASSERT_TRUE(a.commit);
  EXPECT_EQ(*a.commit, "c2");
}

TEST(BisectProgress, EstimatesTimeLeftAsTheLongestStepTimesStepsLeft) {
  BisectSteps steps = {{"a", step(StepOutcome::kPasses)}, {"b", step(StepOutcome::kPasses)}};
  EXPECT_FALSE(step_estimate_seconds({}));
  // Two cached builds, then one from cold: the estimate is the cold build, not the mean.
  steps["c"] = step(StepOutcome::kReproduces);
  steps["c"].seconds = 3600;
  ASSERT_TRUE(step_estimate_seconds(steps));
  EXPECT_DOUBLE_EQ(*step_estimate_seconds(steps), 3600.0);
  const std::string line =
      bisect_progress_line(3, 7, "0123456789abcdef", "[Relay] x (#1)", 600.0, 3);
  EXPECT_EQ(line,
            "bisect: step 3, 7 candidates left, building 0123456789ab [Relay] x (#1); up to about "
            "30m00s left (3 steps of up to 10m00s, the longest step so far)");
  EXPECT_NE(bisect_progress_line(1, 7, "0123456789abcdef", "s", std::nullopt, 3).find("unknown"),
            std::string::npos);
}

TEST(PrNumber, IsTheLastParenthesisedHashNumberOfTheSubject) {
  EXPECT_EQ(pr_number("Ensure AOT passes all intermediary storages to function calls (#9064)"),
            9064);
  EXPECT_EQ(pr_number("Revert \"[Relay] x (#100)\" (#101)"), 101);
  EXPECT_EQ(pr_number("[Relay] a change without a number"), std::nullopt);
  EXPECT_EQ(pr_number("see (#) and (#12a)"), std::nullopt);
}

TEST(BisectRecord, OutcomesAreReusedForTheSameSetupAndRefusedForAnother) {
  host::TempDir dir("aotfuzz-bisect-record");
  const auto record = dir.file("bisect.json");
  const auto setup = bisect_setup("g.relay", "graph", "sut-error:merge", "--sut tvm", {}, true);
  EXPECT_TRUE(load_bisect_steps(record, setup).empty()) << "no record yet: no steps";
  BisectSteps steps = {{"c1", step(StepOutcome::kDoesNotImport)}};
  steps["c1"].detail = "ImportError";
  save_bisect_record(record, setup, nlohmann::json::object(), steps, nullptr);
  const BisectSteps back = load_bisect_steps(record, setup);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.at("c1").outcome, StepOutcome::kDoesNotImport);
  EXPECT_EQ(back.at("c1").detail, "ImportError");
  const auto other =
      bisect_setup("g.relay", "graph", "sut-error:merge", "--sut tvm", {"patch"}, true);
  EXPECT_THROW(load_bisect_steps(record, other), std::invalid_argument);
}

}  // namespace
}  // namespace aotfuzz::bundles
