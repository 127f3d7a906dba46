// Unit tests for the parts of a campaign taken alone: the sum of its counters, the finding
// ledger's claims in case order, the rule a finding is reduced by, and the journal notes a
// restarted child goes on from.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "aot/bugs.h"
#include "bundles/bundle.h"
#include "bundles/campaign_stats.h"
#include "fuzz/campaign_log.h"
#include "fuzz/crash_journal.h"
#include "fuzz/finding_bundle.h"
#include "fuzz/finding_ledger.h"
#include "fuzz/finding_reduction.h"
#include "fuzz/journal_notes.h"
#include "ir/parser.h"
#include "host/tempdir.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"
#include "tests/support/modules.h"

namespace aotfuzz::fuzz {
namespace {

using test_support::load;

TEST(CampaignStats, SumAddsEveryCounterTheFirstTheLastAndTheVerdicts) {
  bundles::CampaignStats a;
  a.cases = 2;
  a.verdicts[1][2] = 3;
  a.waiting_us = 4;
  bundles::CampaignStats b;
  b.cases = 10;
  b.verdicts[1][2] = 20;
  b.verdicts[0][0] = 5;
  b.ops = 7;
  b.waiting_us = 40;
  a += b;
  EXPECT_EQ(a.cases, 12u);
  EXPECT_EQ(a.verdicts[1][2], 23u);
  EXPECT_EQ(a.verdicts[0][0], 5u);
  EXPECT_EQ(a.ops, 7u);
  EXPECT_EQ(a.waiting_us, 44u);
  EXPECT_EQ(a.generator_errors, 0u);
}

TEST(CampaignStats, ACaseCountsOnceWithItsVerdictOptionsAndTimes) {
  const ir::Module m = load("corpus/seed/tvm_9036_annotated.relay");
  oracle::CaseOptions o;
  o.aot.merge = true;
  o.aot.api = aot::Options::Api::kUnpacked;
  oracle::CaseResult r;
  r.verdict = oracle::Verdict{oracle::Stage::kCodegen, oracle::Mismatch{0, 1, "1", "2"}};
  r.pipeline_time = std::chrono::microseconds(50);
  r.codegen_time = std::chrono::microseconds(20);
  const bundles::CampaignStats s =
      bundles::case_stats(m, o, r, /*generation_us=*/9, /*finding=*/true);
  EXPECT_EQ(s.cases, 1u);
  EXPECT_EQ(s.finding_cases, 1u);
  EXPECT_EQ(s.count(r.verdict.kind()), 1u);
  EXPECT_EQ(s.merge_on, 1u);
  EXPECT_EQ(s.api_unpacked, 1u);
  EXPECT_EQ(s.generation_us, 9u);
  EXPECT_EQ(s.passes_us, 30u);
  EXPECT_EQ(s.codegen_us, 20u);
  EXPECT_GT(s.ops, 0u);
  EXPECT_EQ(s.inputs, m.main()->params().size());
}

TEST(CampaignStats, ACaseWithAUmaRegionCountsAsHookLoweredAndACcompilerCaseDoesNot) {
  oracle::CaseResult r;
  const bundles::CampaignStats uma = bundles::case_stats(load("tests/tvm/rows/uma_seed.relay"), {},
                                                         r, /*generation_us=*/0, /*finding=*/false);
  EXPECT_EQ(uma.cases_with_hook_lowered_region, 1u);
  const bundles::CampaignStats ccompiler = bundles::case_stats(
      load("corpus/seed/tvm_9036_annotated.relay"), {}, r, /*generation_us=*/0, /*finding=*/false);
  EXPECT_EQ(ccompiler.cases_with_hook_lowered_region, 0u);
}

TEST(CampaignStats, AUmaCaseCountsAsBeyondTheCcompilerOnlyWithWhatTheCcompilerCannotTake) {
  oracle::CaseResult r;
  const ir::Module seed = load("tests/tvm/rows/uma_seed.relay");  // rank 2 float32, no broadcast
  oracle::CaseOptions packed, unpacked;
  unpacked.aot.api = aot::Options::Api::kUnpacked;
  EXPECT_EQ(bundles::case_stats(seed, packed, r, 0, false).hook_lowered_beyond_ccompiler, 0u);
  EXPECT_EQ(bundles::case_stats(seed, unpacked, r, 0, false).hook_lowered_beyond_ccompiler, 1u);
  const auto graph = [](const std::string& x_type, const std::string& y_type) {
    return ir::parse_module("#[version = \"0.0.5\"]\ndef @main(%x: " + x_type + ", %y: " + y_type +
                            ") {\n  %0 = annotation.compiler_begin(%x, compiler=\"aotfuzz_uma\");\n"
                            "  %1 = annotation.compiler_begin(%y, compiler=\"aotfuzz_uma\");\n"
                            "  %2 = add(%0, %1);\n"
                            "  annotation.compiler_end(%2, compiler=\"aotfuzz_uma\")\n}\n");
  };
  for (const auto& [x, y] : std::vector<std::pair<std::string, std::string>>{
           {"Tensor[(2, 3, 4), float32]", "Tensor[(2, 3, 4), float32]"},
           {"Tensor[(3, 4), int8]", "Tensor[(3, 4), int8]"},
           {"Tensor[(3, 4), float32]", "Tensor[(1, 4), float32]"}}) {
    EXPECT_EQ(bundles::case_stats(graph(x, y), packed, r, 0, false).hook_lowered_beyond_ccompiler,
              1u)
        << x << " " << y;
  }
  EXPECT_EQ(bundles::case_stats(graph("Tensor[(3, 4), float32]", "Tensor[(3, 4), float32]"),
                                packed, r, 0, false)
                .hook_lowered_beyond_ccompiler,
            0u);
}

TEST(FindingLedger, TheLowestCaseOfASignatureOwnsItWhateverFinishesFirst) {
  JournalNotes notes(nullptr);
  FindingLedger ledger(notes, Restart{});
  // Case 2 has the signature; case 1 has it too but is still running.
  bool case2_unclaimed = true;
  std::thread later([&] { case2_unclaimed = ledger.unclaimed(2, "mismatch:fuse"); });
  ledger.complete(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(ledger.unclaimed(1, "mismatch:fuse"));
  ledger.claim("mismatch:fuse", 1);
  ledger.complete(1);
  later.join();
  EXPECT_FALSE(case2_unclaimed);
  EXPECT_EQ(ledger.claimed_case("mismatch:fuse"), 1u);
  EXPECT_EQ(ledger.unique_signatures(), 1u);
}

TEST(FindingLedger, ABundledSignatureIsKnownUnlessAnEarlierChildOfThisRunClaimedIt) {
  JournalNotes notes(nullptr);
  Restart restart;
  restart.claimed["arity:codegen:kernel"] = 0;
  FindingLedger ledger(notes, restart);
  ledger.set_preexisting({"arity:codegen:kernel", "mismatch:fuse"});
  EXPECT_FALSE(ledger.unclaimed(0, "mismatch:fuse"));
  EXPECT_FALSE(ledger.unclaimed(0, "arity:codegen:kernel"));
  EXPECT_EQ(ledger.known_seen(), std::set<std::string>{"mismatch:fuse"});
  EXPECT_EQ(ledger.preexisting(), std::set<std::string>{"mismatch:fuse"});
  EXPECT_EQ(ledger.unique_signatures(), 2u);
}

TEST(ReduceFinding, AFindingThatPassesWithoutItsBugIsReducedKeepingBoth) {
  oracle::CaseOptions o;
  o.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  reduce::ReduceOptions ro;
  ro.jobs = 2;
  const reduce::FindingReduction r = reduce::reduce_finding(
      load("corpus/seed/tvm_9036_annotated.relay"), o, "arity:codegen:kernel", ro);
  EXPECT_FALSE(r.signature_only);
  EXPECT_TRUE(reduce::reduction_kept(r.result));
  EXPECT_TRUE(reduce::finding_predicate(o, "arity:codegen:kernel")(r.result.module));
}

TEST(ReduceFinding, AFindingTheFixedSystemGivesTooIsReducedByItsSignatureAlone) {
  oracle::CaseOptions o;
  o.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const ir::Module m = load("corpus/conformance/cyclic_region_in_input.relay");
  const std::string sig = oracle::signature(oracle::run_case(m, o).verdict);
  ASSERT_EQ(sig, "invalid-input:partition");
  reduce::ReduceOptions ro;
  ro.jobs = 2;
  const reduce::FindingReduction r = reduce::reduce_finding(m, o, sig, ro);
  EXPECT_TRUE(r.signature_only);
  EXPECT_TRUE(reduce::reduction_kept(r.result));
  EXPECT_EQ(oracle::signature(oracle::run_case(r.result.module, o).verdict), sig);
}

TEST(FindingReducer, AReductionKeepsToTheCampaignsTimeAndIsLeftForTheNextCampaign) {
  host::TempDir dir("aotfuzz-parts-test");
  CampaignOptions o;
  o.findings_dir = dir.file("findings");
  o.base.in_process_only = true;
  o.base.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  o.base.aot.merge = true;
  CampaignCallbacks cb;
  CampaignLog log(cb);
  FindingBundles bundles(o);
  // The campaign's time is up: a new finding's reduction takes no step and says so.
  FindingReducer reducer(o, bundles, log, false,
                         std::chrono::steady_clock::now() - std::chrono::seconds(1));
  CaseSpec spec;
  spec.module = load("corpus/seed/tvm_9036_annotated.relay");
  spec.options = o.base;
  Finding f;
  f.signature = oracle::signature(oracle::run_case(spec.module, spec.options).verdict);
  ASSERT_EQ(f.signature, "arity:codegen:kernel");
  ASSERT_TRUE(bundles.write_first(spec, f, /*complete=*/false));
  reducer.reduce_new_finding(spec, f);
  EXPECT_TRUE(f.error.empty()) << f.error;
  EXPECT_EQ(bundles::incomplete_bundles(o.findings_dir).size(), 1u);
  // With time left the same reduction ends.
  FindingReducer in_time(o, bundles, log, false,
                         std::chrono::steady_clock::now() + std::chrono::minutes(5));
  in_time.reduce_new_finding(spec, f);
  EXPECT_TRUE(bundles::incomplete_bundles(o.findings_dir).empty());
}

TEST(JournalNotes, ARestartedChildGoesOnFromWhatTheDeadOneNoted) {
  auto journal = std::make_unique<CrashJournal>();
  journal->children = 1;
  JournalNotes notes(journal.get());
  bundles::CampaignStats totals;
  totals.cases = 3;
  const std::string sig = "mismatch:fuse";
  // Cases 0 and 2 done, case 3 counted (a finding) but not done, then the child dies.
  notes.done(1, 0);
  notes.done(1, 2);
  notes.counted(3, totals, &sig);
  Finding f;
  f.signature = sig;
  f.case_index = 3;
  notes.claimed(f, 3);
  EXPECT_EQ(restart_from(journal.get()).first_case, 0u) << "a first child restarts nothing";
  journal->children = 2;
  const Restart r = restart_from(journal.get());
  EXPECT_EQ(r.first_case, 1u);
  EXPECT_EQ(r.judged_before, std::set<std::uint64_t>{2});
  EXPECT_EQ(r.counted_before, std::set<std::uint64_t>{3});
  EXPECT_EQ(r.stats.cases, 3u);
  EXPECT_EQ(r.signature_hits.at(sig), 1u);
  EXPECT_EQ(r.claimed.at(sig), 3u);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].case_index, 3u);
}

}  // namespace
}  // namespace aotfuzz::fuzz
