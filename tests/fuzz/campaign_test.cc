// Unit tests for campaigns: deterministic cases, per-case option draws, shard partitioning, the
// statistics JSON, bundles (atomic, complete, resumable without duplicates) and findings that do
// not depend on the number of jobs. Cases run in-process (no C compiler) unless they must not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "bundles/bundle.h"
#include "bundles/replay.h"
#include "bundles/status_files.h"
#include "fuzz/campaign.h"
#include "fuzz/campaign_cases.h"
#include "fuzz/campaign_report.h"
#include "fuzz/crash_journal.h"
#include "generator/mutator.h"
#include "generator/policy.h"
#include "host/tempdir.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "oracle/case_flags.h"
#include "oracle/oracle.h"
#include "tests/support/files.h"
#include "tests/support/systems.h"

namespace aotfuzz::fuzz {
namespace {

namespace fs = std::filesystem;

CampaignOptions in_process(std::uint64_t seed, std::uint64_t cases) {
  CampaignOptions o;
  o.seed = seed;
  o.max_cases = cases;
  o.jobs = 2;
  o.base.in_process_only = true;
  return o;
}

CampaignOptions with_9036_bug(CampaignOptions o) {
  o.base.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  o.policy.p_merge = 1;
  return o;
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(Campaign, AnInterruptedCampaignExits130UnlessItFoundSomething) {
  CampaignResult r;
  r.stats.cases = 10;
  r.interrupted = true;
  EXPECT_EQ(r.exit_code(), 130);
  r.known_seen.insert("arity:codegen:kernel");
  EXPECT_EQ(r.exit_code(), 1);
  r.known_seen.clear();
  r.interrupted = false;
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Campaign, DrawsTheProgressLineAtItsIntervalNotOncePerCase) {
  CampaignOptions o = in_process(3, 3000);
  o.max_cases.reset();
  o.time_limit = std::chrono::milliseconds(1'200);
  CampaignCallbacks cb;
  cb.progress_interval = std::chrono::milliseconds(250);
  int calls = 0;
  cb.on_progress = [&](const bundles::Progress&) { ++calls; };
  const CampaignResult r = run_campaign(o, cb);
  ASSERT_GT(r.stats.cases, 100u);
  // One call per 250 ms of the run (which ends after the cases in flight), and one at the end:
  // a few calls, never one per case.
  const auto quarters = static_cast<int>(r.elapsed.count() / 250);
  EXPECT_LE(calls, quarters + 2) << r.stats.cases << " cases in " << r.elapsed.count() << " ms";
  EXPECT_LT(static_cast<std::uint64_t>(calls), r.stats.cases / 20);
  EXPECT_GE(calls, 2);
}

TEST(Campaign, ExitsThreeWhenEveryCaseThatReachedTheCompilerWasAToolchainError) {
  auto with = [](std::uint64_t toolchain, std::uint64_t invalid, std::uint64_t pass) {
    CampaignResult r;
    r.stats.cases = toolchain + invalid + pass;
    auto count = [&](oracle::VerdictKind kind, oracle::Stage stage) -> std::uint64_t& {
      return r.stats.verdicts[static_cast<int>(kind)][static_cast<int>(stage)];
    };
    count(oracle::VerdictKind::kToolchainError, oracle::Stage::kRun) = toolchain;
    count(oracle::VerdictKind::kInvalidInput, oracle::Stage::kAnnotated) = invalid;
    count(oracle::VerdictKind::kPass, oracle::Stage::kRun) = pass;
    return r.exit_code();
  };
  EXPECT_EQ(with(20, 0, 0), 3);
  EXPECT_EQ(with(19, 1, 0), 3);  // the refused graph never needed the compiler
  EXPECT_EQ(with(19, 0, 1), 0);  // one case ran: the environment works
  EXPECT_EQ(with(0, 5, 0), 0);   // nothing needed the compiler
  EXPECT_EQ(with(0, 0, 0), 0);
}

TEST(Campaign, CaseIsFullyDeterminedBySeedAndIndex) {
  CampaignOptions o = in_process(7, 1);
  CaseSpec a = make_case(o, 12);
  CaseSpec b = make_case(o, 12);
  EXPECT_EQ(a.gen_seed, b.gen_seed);
  EXPECT_TRUE(ir::structural_equal(a.module, b.module));
  EXPECT_EQ(oracle::replay_flags(a.options), oracle::replay_flags(b.options));
  EXPECT_NE(case_seed(7, 12), case_seed(7, 13));
  EXPECT_NE(case_seed(7, 12), case_seed(8, 12));
  // The origin command regenerates the same graph.
  EXPECT_EQ(gen_command(o, a), "aotfuzz gen --seed " + std::to_string(a.gen_seed) + " --swarm");
}

// Every compiler_begin of the module names `target`.
bool all_regions_for(const ir::Module& m, const std::string& target) {
  for (const auto& node : m.main()->body_order()) {
    if (auto t = ir::annotation_target(node.get()); t && *t != target) return false;
  }
  return true;
}

TEST(Campaign, ProfilesGiveEachCaseTheGraphOfOneOfThemAndItsOriginTheirKnobs) {
  const CampaignOptions plain = in_process(5, 1);
  CampaignOptions o = plain;
  for (const std::string target : {"ccompiler", "aotfuzz_uma"}) {
    CampaignOptions::Profile p{target, 1, o.policy, " --knob targets=" + target + ":1"};
    generator::set_knob(p.policy, "targets", target + ":1");
    o.profiles.push_back(p);
  }
  o.swarm = false;
  std::set<std::size_t> drawn;
  for (std::uint64_t i = 0; i < 48; ++i) {
    const CaseSpec a = make_case(o, i);
    drawn.insert(a.profile);
    EXPECT_TRUE(all_regions_for(a.module, o.profiles[a.profile].name)) << i;
    EXPECT_EQ(gen_command(o, a), "aotfuzz gen --seed " + std::to_string(a.gen_seed) +
                                     " --knob targets=" + o.profiles[a.profile].name + ":1");
    const CaseSpec again = make_case(o, i);
    EXPECT_EQ(again.profile, a.profile);
    EXPECT_TRUE(ir::structural_equal(again.module, a.module)) << i;
    // The profile's stream is its own: the options drawn are those of a campaign without it.
    EXPECT_EQ(oracle::replay_flags(a.options), oracle::replay_flags(make_case(plain, i).options));
  }
  EXPECT_EQ(drawn, (std::set<std::size_t>{0, 1}));
  // A weight of 0 is never drawn.
  o.profiles[0].weight = 0;
  for (std::uint64_t i = 0; i < 16; ++i) EXPECT_EQ(make_case(o, i).profile, 1u) << i;
}

TEST(Campaign, ACorpusGivesEveryOtherCaseAMutantOfItsGraphsAndLeavesTheOthersAsTheyWere) {
  const CampaignOptions plain = in_process(3, 1);
  CampaignOptions o = plain;
  const ir::Module seed_graph = ir::parse_module(
      test_support::read_text(test_support::source_path("corpus/seed/tvm_9036_annotated.relay")));
  o.corpus = {{"/x/seed graph.relay", seed_graph}};
  int changed = 0;
  for (std::uint64_t i = 0; i < 16; ++i) {
    const CaseSpec a = make_case(o, i);
    const CaseSpec b = make_case(plain, i);
    EXPECT_EQ(oracle::replay_flags(a.options), oracle::replay_flags(b.options)) << i;
    if (i % 2 == 0) {
      EXPECT_TRUE(a.corpus_file.empty()) << i;
      EXPECT_TRUE(ir::structural_equal(a.module, b.module)) << i;
      continue;
    }
    EXPECT_EQ(a.corpus_file, "/x/seed graph.relay");
    EXPECT_FALSE(a.merge_safe);
    EXPECT_TRUE(ir::structural_equal(a.module, generator::mutant(seed_graph, a.gen_seed))) << i;
    changed += ir::structural_equal(a.module, seed_graph) ? 0 : 1;
    EXPECT_EQ(gen_command(o, a), "aotfuzz gen --seed " + std::to_string(a.gen_seed) +
                                     " --mutate '/x/seed graph.relay'");
  }
  EXPECT_GT(changed, 4);
}

TEST(Campaign, DrawsPipelineOptionsPerCaseUnlessFixed) {
  CampaignOptions o = in_process(3, 1);
  std::set<bool> merges, reuses;
  std::set<std::string> apis;
  for (std::uint64_t k = 0; k < 200; ++k) {
    CaseSpec s = make_case(o, k);
    merges.insert(s.options.aot.merge);
    reuses.insert(s.options.aot.storage_reuse);
    apis.insert(oracle::replay_flags(s.options));
    if (s.options.aot.interface == aot::Options::Interface::kC) {
      EXPECT_EQ(s.options.aot.api, aot::Options::Api::kUnpacked) << k;
    }
  }
  EXPECT_EQ(merges.size(), 2u);
  EXPECT_EQ(reuses.size(), 2u);
  EXPECT_GE(apis.size(), 6u);  // merge x {packed, unpacked, unpacked+c} x reuse

  CampaignOptions fixed = o;
  fixed.base = oracle::parse_case_flags("--no-merge --api unpacked --interface c");
  fixed.base.in_process_only = true;
  fix_drawn_knobs(fixed.policy, fixed.base, [](const oracle::CaseFlagRow& row) {
    return row.name == "merge" || row.name == "interface";
  });
  for (std::uint64_t k = 0; k < 50; ++k) {
    CaseSpec s = make_case(fixed, k);
    EXPECT_FALSE(s.options.aot.merge);
    EXPECT_EQ(s.options.aot.interface, aot::Options::Interface::kC);
    EXPECT_EQ(s.options.aot.api, aot::Options::Api::kUnpacked);
    // Fixing options does not change the graph nor the other draws.
    CaseSpec free = make_case(o, k);
    EXPECT_TRUE(ir::structural_equal(s.module, free.module));
    EXPECT_EQ(s.options.aot.storage_reuse, free.options.aot.storage_reuse);
  }
}

TEST(Campaign, DrawsTheUnpackedApiAsOftenAsItsKnobSays) {
  auto unpacked_cases = [](double share) {
    CampaignOptions o = in_process(5, 1);
    o.policy.p_unpacked = share;
    int n = 0;
    for (std::uint64_t k = 0; k < 400; ++k) {
      n += make_case(o, k).options.aot.api == aot::Options::Api::kUnpacked ? 1 : 0;
    }
    return n;
  };
  // Binomial(400, p): each bound is more than five standard deviations away.
  const int half = unpacked_cases(0.5);
  EXPECT_GT(half, 150);
  EXPECT_LT(half, 250);
  const int tenth = unpacked_cases(0.1);
  EXPECT_GT(tenth, 10);
  EXPECT_LT(tenth, 75);
  EXPECT_EQ(unpacked_cases(0.0), 0);
  EXPECT_EQ(unpacked_cases(1.0), 400);
}

TEST(Campaign, DrawsTheMemoryConfigurationOnlyWhereItsKnobsAreSetAndAlwaysOneTvmBuilds) {
  CampaignOptions builtin = in_process(8, 1);
  for (std::uint64_t k = 0; k < 200; ++k) {
    EXPECT_TRUE(make_case(builtin, k).options.memory.is_default()) << k;
  }
  CampaignOptions o = builtin;
  o.policy.p_unpacked = 1;
  o.policy.p_usmp = 0.75;
  o.policy.p_usmp_algorithm = 1;
  o.policy.p_external_pools = 0.5;
  o.policy.p_workspace_io = 1;
  o.policy.p_workspace_alignment = 0.5;
  o.policy.p_constant_alignment = 0.5;
  o.policy.p_no_link_params = 0.5;
  std::set<std::string> algorithms;
  std::set<int> alignments;
  int usmp = 0, external = 0, workspace_io = 0;
  for (std::uint64_t k = 0; k < 400; ++k) {
    const oracle::CaseOptions c = make_case(o, k).options;
    EXPECT_EQ(oracle::memory_options_problem(c), std::nullopt) << k;
    usmp += c.memory.usmp;
    if (c.memory.usmp) algorithms.insert(c.memory.usmp_algorithm);
    external += c.memory.pools == oracle::MemoryOptions::Pools::kExternal;
    workspace_io += c.memory.workspace_io;
    alignments.insert(c.memory.workspace_alignment);
    alignments.insert(c.memory.constant_alignment);
  }
  // Binomial(400, 0.75) and (300, 0.5): each bound is more than five standard deviations away.
  EXPECT_GT(usmp, 250);
  EXPECT_LT(usmp, 350);
  EXPECT_GT(external, 100);
  EXPECT_LT(external, usmp);
  EXPECT_GT(workspace_io, 50);
  EXPECT_EQ(algorithms,
            (std::set<std::string>{"greedy_by_size", "greedy_by_conflicts", "hill_climb"}));
  EXPECT_EQ(alignments, (std::set<int>{4, 8, 16, 32, 64}));
}

// Verdict signatures by case, of a campaign of `o`.
std::map<std::uint64_t, std::string> signatures_by_case(const CampaignOptions& o, bool overlapped) {
  std::map<std::uint64_t, std::string> out;
  std::mutex mu;
  CampaignCallbacks cb;
  cb.on_case = [&](const CaseSpec& spec, const oracle::CaseResult& r) {
    std::lock_guard lock(mu);
    out[spec.index] = oracle::signature(r.verdict);
  };
  EXPECT_EQ(run_campaign(o, cb).overlapped, overlapped);
  return out;
}

TEST(Campaign, PreparesInOverlappedBatchesWhereTheSystemCanAndGivesEachCaseItsOwnVerdict) {
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.base.in_process_only = false;
  o.base.compiler = host::CompilerKind::kTcc;
  auto system = std::make_shared<test_support::UnbatchedBuiltin>(/*overlapped=*/true);
  o.base.sut = system;
  const auto overlapped = signatures_by_case(o, true);
  const int batches = system->batches_made();
  CampaignOptions alone = o;
  alone.executor = ExecutorChoice::kSingle;
  const auto one_by_one = signatures_by_case(alone, false);
  EXPECT_GT(batches, 2);
  // One case at a time makes no batch.
  EXPECT_EQ(system->batches_made(), batches);
  ASSERT_EQ(overlapped.size(), 60u);
  EXPECT_EQ(overlapped, one_by_one);
  std::set<std::string> kinds;
  for (const auto& [k, sig] : overlapped) kinds.insert(sig);
  EXPECT_GT(kinds.size(), 1u) << "the cases should not all end alike: " << *kinds.begin();
}

TEST(Campaign, EveryCaseFlagMarkedDrawnIsFixedWhenGivenAndNoOtherIs) {
  CampaignOptions o = in_process(3, 1);
  // A base unlike every draw's default, so that a fixed value shows in each case.
  o.base = oracle::parse_case_flags(
      "--no-merge --api unpacked --interface c --no-storage-reuse --max-fuse-depth 7 "
      "--no-determinism --no-warnings");
  // Every draw's knob strictly between 0 and 1 (the memory rows' are 0 unless a system sets
  // them), so that fixing one shows.
  for (const auto& row : oracle::case_flag_table()) {
    if (row.draw.drawn()) generator::set_knob(o.policy, row.draw.knob, "0.5");
  }
  for (const auto& row : oracle::case_flag_table()) {
    SCOPED_TRACE(std::string(row.name));
    CampaignOptions fixed = o;
    fix_drawn_knobs(fixed.policy, o.base, [&](const oracle::CaseFlagRow& r) { return &r == &row; });
    EXPECT_EQ(generator::describe(fixed.policy) != generator::describe(o.policy), row.draw.drawn());
    if (!row.draw.drawn()) continue;
    // The knob it names is fixed to 0 or 1.
    const std::string knob = generator::get_knob(fixed.policy, row.draw.knob);
    EXPECT_TRUE(knob == "0" || knob == "1") << knob;
    for (std::uint64_t k = 0; k < 64; ++k) {
      EXPECT_EQ(row.print(make_case(fixed, k).options), row.print(o.base)) << k;
    }
  }
}

TEST(Campaign, TheWarningsOracleChecksAboutOneCaseIn512UnlessFixed) {
  CampaignOptions o = in_process(3, 1);
  int checked = 0;
  for (std::uint64_t k = 0; k < 20'480; ++k) checked += make_case(o, k).options.check_warnings;
  EXPECT_GE(checked, 20);
  EXPECT_LE(checked, 65);
  CampaignOptions all = o;
  all.policy.p_warnings = 1;
  for (std::uint64_t k = 0; k < 20; ++k) {
    const CaseSpec s = make_case(all, k);
    EXPECT_TRUE(s.options.check_warnings);
    // The replay line carries the choice: an unchecked case replays with --no-warnings.
    EXPECT_EQ(oracle::replay_flags(s.options).find("--no-warnings"), std::string::npos);
    const CaseSpec drawn = make_case(o, k);
    EXPECT_EQ(oracle::replay_flags(drawn.options).find("--no-warnings") != std::string::npos,
              !drawn.options.check_warnings);
  }
}

TEST(Campaign, ShardsPartitionTheCaseIndices) {
  EXPECT_EQ(parse_shard("2/5").index, 2u);
  EXPECT_EQ(parse_shard("2/5").count, 5u);
  EXPECT_THROW(parse_shard("5/5"), CampaignError);
  EXPECT_THROW(parse_shard("1/0"), CampaignError);
  EXPECT_THROW(parse_shard("x"), CampaignError);
  std::set<std::uint64_t> all;
  for (std::uint64_t i = 0; i < 3; ++i) {
    CampaignOptions o = in_process(11, 7);
    o.shard = {i, 3};
    std::set<std::uint64_t> seen;
    CampaignCallbacks cb;
    cb.on_case = [&](const CaseSpec& s, const oracle::CaseResult&) { seen.insert(s.index); };
    CampaignResult r = run_campaign(o, cb);
    EXPECT_EQ(r.stats.cases, 7u);
    ASSERT_EQ(seen.size(), 7u);
    for (auto idx : seen) {
      EXPECT_EQ(idx % 3, i);
      EXPECT_TRUE(all.insert(idx).second) << idx << " ran in two shards";
    }
  }
  for (std::uint64_t idx = 0; idx < 21; ++idx) EXPECT_TRUE(all.count(idx)) << idx;
}

TEST(Campaign, StatsJsonCountsVerdictsStagesThroughputAndFeatures) {
  CampaignOptions o = in_process(5, 30);
  CampaignResult r = run_campaign(o);
  auto j = to_json(r, o);
  EXPECT_EQ(j["seed"], 5u);
  EXPECT_EQ(j["cases"], 30u);
  EXPECT_GT(j["cases_per_s"].get<double>(), 0);
  std::uint64_t total = 0;
  for (const auto& [kind, v] : j["verdicts"].items()) {
    total += v["total"].get<std::uint64_t>();
    std::uint64_t by_stage = 0;
    for (const auto& [stage, n] : v["stages"].items()) by_stage += n.get<std::uint64_t>();
    EXPECT_EQ(by_stage, v["total"].get<std::uint64_t>()) << kind;
  }
  EXPECT_EQ(total, 30u);
  EXPECT_EQ(j["verdicts"]["pass"]["total"], 30u);  // nothing injected
  EXPECT_EQ(j["stages"]["codegen"], 30u);          // in-process cases end after codegen
  for (const char* f :
       {"ops", "inputs", "regions", "multi_output_regions", "tuples", "fused_tuple_params",
        "cases_with_fused_tuple_param", "main_tuple_params"}) {
    EXPECT_TRUE(j["features"].contains(f)) << f;
  }
  EXPECT_GT(j["features"]["ops"].get<std::uint64_t>(), 30u);
  EXPECT_GT(j["features"]["cases_with_multi_output_region"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(
      j["options"]["merge"].get<std::uint64_t>() + j["options"]["no_merge"].get<std::uint64_t>(),
      30u);
  EXPECT_EQ(j["findings"]["unique"], 0u);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Campaign, FindingIsBundledAtomicallyAndAResumedCampaignAddsNoDuplicate) {
  host::TempDir dir("aotfuzz-campaign-test");
  const fs::path findings = dir.file("findings");
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.findings_dir = findings;
  std::vector<Finding> reported;
  CampaignCallbacks cb;
  cb.on_finding = [&](const Finding& f) { reported.push_back(f); };
  CampaignResult first = run_campaign(o, cb);
  ASSERT_EQ(first.findings.size(), 1u) << format_summary(first, o);
  ASSERT_EQ(reported.size(), 1u);
  const Finding& f = first.findings[0];
  EXPECT_EQ(f.signature, "arity:codegen:kernel");
  EXPECT_TRUE(f.bundle_written);
  EXPECT_EQ(first.exit_code(), 1);
  EXPECT_EQ(entries(findings), (std::set<std::string>{"arity_codegen_kernel", "campaigns",
                                                      "fuzzer_stats", "plot_data"}));
  const fs::path bundle = findings / "arity_codegen_kernel";
  EXPECT_EQ(f.bundle_dir, bundle.string());
  for (const char* name : {"original.relay", "reduced.relay", "verdict.json", "inputs.txt",
                           "expected.txt", "actual.txt", "reduced.dot", "replay.txt", "c"}) {
    EXPECT_TRUE(fs::exists(bundle / name)) << name;
  }
  EXPECT_TRUE(fs::exists(bundle / "c" / "main.c"));
  EXPECT_EQ(test_support::read_text((bundle / "replay.txt").string()), f.replay + "\n");
  EXPECT_NE(f.replay.find("aotfuzz run " + (bundle / "reduced.relay").string()), std::string::npos);
  EXPECT_NE(f.replay.find("--inject tuple-arg-first-field"), std::string::npos);
  // The reduced file carries its origin and both regression expectations.
  const std::string reduced = test_support::read_text((bundle / "reduced.relay").string());
  EXPECT_NE(reduced.find("// origin: aotfuzz fuzz --seed 1, case " + std::to_string(f.case_index)),
            std::string::npos);
  EXPECT_NE(reduced.find("// reduced: ops "), std::string::npos) << reduced;
  // The original graph is the graph as found: no word of a reduction in its header.
  const std::string original = test_support::read_text((bundle / "original.relay").string());
  EXPECT_NE(original.find("// origin: "), std::string::npos) << original;
  EXPECT_EQ(original.find("reduced:"), std::string::npos) << original;
  auto lines = bundles::parse_replay_lines(reduced, "reduced.relay");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].expected, "arity:codegen:kernel");
  EXPECT_EQ(systems::parse_case_flags(lines[1].flags).aot.bugs.any(), false);
  EXPECT_TRUE(bundles::signature_matches("pass", lines[1].expected));
  EXPECT_LE(f.reduction.after.ops, 3u);
  EXPECT_EQ(bundles::load_bundle_signatures(findings),
            std::set<std::string>{"arity:codegen:kernel"});

  // Resume: the same campaign again finds the signature but writes nothing new.
  const auto before = fs::last_write_time(bundle / "verdict.json");
  CampaignResult second = run_campaign(o);
  EXPECT_TRUE(second.findings.empty());
  EXPECT_EQ(second.known_seen, std::set<std::string>{"arity:codegen:kernel"});
  EXPECT_EQ(second.exit_code(), 1);
  EXPECT_EQ(entries(findings), (std::set<std::string>{"arity_codegen_kernel", "campaigns",
                                                      "fuzzer_stats", "plot_data"}));
  EXPECT_EQ(fs::last_write_time(bundle / "verdict.json"), before);
}

TEST(Campaign, AFindingsDirectoryReplacedByAFileMidCampaignLosesNoFinding) {
  host::TempDir dir("aotfuzz-campaign-test");
  const fs::path findings = dir.file("findings");
  CampaignOptions o = with_9036_bug(in_process(1, 300));
  o.base.aot.bugs.enable(aot::Bug::kSwappedOutputOrder);
  o.findings_dir = findings;
  o.reduce = false;
  std::vector<Finding> announced;
  CampaignCallbacks cb;
  cb.on_finding = [&](const Finding& f) {
    announced.push_back(f);
    if (announced.size() == 1) {
      // The directory vanishes under the campaign (a user's `rm -rf`, a full disk's cleanup).
      // Another worker may be writing a bundle into it meanwhile: removed until it stays gone.
      for (bool replaced = false; !replaced;) {
        std::error_code ec;
        fs::remove_all(findings, ec);
        std::ofstream file(findings);
        replaced = static_cast<bool>(file << "not a directory\n");
      }
    }
  };
  CampaignResult r = run_campaign(o, cb);
  ASSERT_GE(announced.size(), 2u) << format_summary(r, o);
  EXPECT_EQ(r.findings.size(), announced.size());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_TRUE(announced[0].error.empty()) << announced[0].error;
  for (std::size_t i = 1; i < announced.size(); ++i) {
    const Finding& f = announced[i];
    // Said, not lost: why the bundle is missing, and a replay line that needs no bundle.
    EXPECT_FALSE(f.error.empty()) << f.signature;
    EXPECT_NE(f.replay.find("aotfuzz gen --seed " + std::to_string(f.gen_seed)), std::string::npos)
        << f.replay;
  }
  EXPECT_TRUE(fs::is_regular_file(findings));
}

TEST(Campaign, AFindingIsOnDiskBeforeItsReductionAndTheNextCampaignFinishesIt) {
  host::TempDir dir("aotfuzz-campaign-test");
  const fs::path findings = dir.file("findings");
  const fs::path bundle = findings / "arity_codegen_kernel";
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.findings_dir = findings;
  // Stopped the moment the finding is announced, before its reduction could take a step.
  std::atomic<bool> stop{false};
  o.stop = &stop;
  bool bundle_before_reduction = false;
  CampaignCallbacks cb;
  cb.on_log = [&](LogLevel, const std::string& line) {
    if (line.rfind("new finding", 0) == 0) stop = true;
  };
  cb.on_finding = [&](const Finding&) { bundle_before_reduction = fs::exists(bundle); };
  CampaignResult first = run_campaign(o, cb);
  ASSERT_EQ(first.findings.size(), 1u) << format_summary(first, o);
  EXPECT_TRUE(bundle_before_reduction);
  EXPECT_EQ(bundles::incomplete_bundles(findings), std::vector<fs::path>{bundle});
  const std::string unfinished = test_support::read_text((bundle / "reduced.relay").string());
  EXPECT_NE(unfinished.find("(not fully reduced)"), std::string::npos) << unfinished;
  // Still a valid, replayable bundle: its replay line gives the signature.
  auto lines = bundles::parse_replay_lines(unfinished, "reduced.relay");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].expected, "arity:codegen:kernel");

  // The next campaign on the directory finishes the reduction and replaces the bundle.
  stop = false;
  o.stop = nullptr;
  std::vector<std::string> logs;
  CampaignCallbacks cb2;
  // A monitor sees the second campaign while it finishes the first one's reduction: its first
  // plot row (no case yet) follows the first campaign's rows.
  const std::size_t rows_before =
      bundles::parse_plot_data(test_support::read_text((findings / "plot_data").string())).size();
  std::vector<bundles::PlotRow> rows_while_resuming;
  cb2.on_log = [&](LogLevel, const std::string& line) {
    logs.push_back(line);
    if (line.rfind("resuming the reduction of", 0) == 0) {
      rows_while_resuming =
          bundles::parse_plot_data(test_support::read_text((findings / "plot_data").string()));
    }
  };
  CampaignResult second = run_campaign(o, cb2);
  ASSERT_EQ(rows_while_resuming.size(), rows_before + 1);
  EXPECT_EQ(rows_while_resuming.back().cases, 0u);
  EXPECT_TRUE(second.findings.empty());
  EXPECT_TRUE(bundles::incomplete_bundles(findings).empty());
  EXPECT_EQ(entries(findings), (std::set<std::string>{"arity_codegen_kernel", "campaigns",
                                                      "fuzzer_stats", "plot_data"}));
  const std::string done = test_support::read_text((bundle / "reduced.relay").string());
  EXPECT_EQ(done.find("(not fully reduced)"), std::string::npos) << done;
  EXPECT_NE(done.find("// origin: aotfuzz fuzz --seed 1, case"), std::string::npos) << done;
  EXPECT_LE(ir::parse_module(done).main()->body_order().size(),
            ir::parse_module(unfinished).main()->body_order().size());
  bool resumed = false;
  for (const auto& l : logs) resumed |= l.rfind("resuming the reduction of", 0) == 0;
  EXPECT_TRUE(resumed);
}

TEST(Campaign, AResumedReductionWritesItsOwnFilesAndKeepsEverythingElseOfTheBundle) {
  host::TempDir dir("aotfuzz-campaign-test");
  const fs::path findings = dir.file("findings");
  const fs::path bundle = findings / "arity_codegen_kernel";
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.findings_dir = findings;
  std::atomic<bool> stop{false};
  o.stop = &stop;
  CampaignCallbacks cb;
  cb.on_log = [&](LogLevel, const std::string& line) {
    if (line.rfind("new finding", 0) == 0) stop = true;
  };
  ASSERT_EQ(run_campaign(o, cb).findings.size(), 1u);
  ASSERT_EQ(bundles::incomplete_bundles(findings), std::vector<fs::path>{bundle});
  // What the user and the other commands added to the bundle since.
  std::ofstream(bundle / "notes.txt") << "seen on the board too\n";
  std::ofstream(bundle / "bisect.json") << "{\"steps\": {}}\n";
  auto verdict = nlohmann::json::parse(test_support::read_text((bundle / "verdict.json").string()));
  verdict["triage"] = {{"first_reproducing", "v0.18"}};
  std::ofstream(bundle / "verdict.json") << verdict.dump(2);
  const bundles::SeenRecord seen_before = bundles::read_seen(bundle);
  ASSERT_GE(seen_before.hits, 1u);

  stop = false;
  o.stop = nullptr;
  std::vector<std::string> logs;
  CampaignCallbacks cb2;
  cb2.on_log = [&](LogLevel, const std::string& line) { logs.push_back(line); };
  run_campaign(o, cb2);
  ASSERT_TRUE(bundles::incomplete_bundles(findings).empty());
  EXPECT_NE(std::find_if(
                logs.begin(), logs.end(),
                [](const std::string& l) { return l.rfind("resuming the reduction of", 0) == 0; }),
            logs.end());
  EXPECT_EQ(test_support::read_text((bundle / "notes.txt").string()), "seen on the board too\n");
  EXPECT_TRUE(fs::exists(bundle / "bisect.json"));
  const auto after =
      nlohmann::json::parse(test_support::read_text((bundle / "verdict.json").string()));
  EXPECT_EQ(after.at("triage").at("first_reproducing"), "v0.18") << after.dump();
  EXPECT_TRUE(after.at("info").at("reduction").at("complete").get<bool>());
  const bundles::SeenRecord seen_after = bundles::read_seen(bundle);
  EXPECT_GE(seen_after.hits, seen_before.hits);
  EXPECT_EQ(seen_after.first_seen, seen_before.first_seen);
  EXPECT_GE(seen_after.campaigns, seen_before.campaigns);
  // Only the reduction's files and the user's are there: no temporary left behind.
  for (const auto& name : entries(bundle)) {
    EXPECT_NE(name.rfind(".tmp-", 0), 0u) << name;
  }
}

TEST(Campaign, ANewFindingWhoseReductionOutlastsStatusUpdatesKeepsItsSeenCounts) {
  host::TempDir dir("aotfuzz-campaign-test");
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.findings_dir = dir.file("findings");
  // A status update (and its seen.json hits) at every turn of the main thread, so several fall
  // between the finding's first bundle and its reduced one.
  o.status_interval = std::chrono::milliseconds(1);
  const CampaignResult r = run_campaign(o, {});
  ASSERT_EQ(r.findings.size(), 1u) << format_summary(r, o);
  const std::string sig = r.findings[0].signature;
  const bundles::SeenRecord seen =
      bundles::read_seen(o.findings_dir / bundles::bundle_dir_name(sig));
  EXPECT_EQ(seen.campaigns, 1u);
  EXPECT_EQ(seen.hits, r.signature_hits.at(sig));
}

TEST(WriteBundle, AReplacementKeepsWhatOthersWroteAndDropsOnlyItsOwnStaleFiles) {
  host::TempDir dir("aotfuzz-campaign-test");
  bundles::Bundle b;
  b.signature = "arity:codegen:kernel";
  b.original = b.reduced =
      ir::parse_module("def @main(%x: Tensor[(2), float32]) {\n  add(%x, %x)\n}\n");
  b.reduced_result = oracle::run_case(b.reduced, {});
  b.original_verdict = b.reduced_result.verdict;
  const fs::path at = bundles::write_bundle(dir.path(), b).dir;
  std::ofstream(at / "structure.diff") << "from an earlier verdict\n";
  std::ofstream(at / "seen.json") << "{\"hits\": 7}\n";
  std::ofstream(at / "c" / "stale.c") << "int stale;\n";
  b.info["note"] = "second";
  const bundles::BundleWriteResult w = bundles::write_bundle(dir.path(), b, /*replace=*/true);
  EXPECT_TRUE(w.written);
  EXPECT_FALSE(fs::exists(at / "structure.diff")) << "the writer's own, and stale";
  EXPECT_FALSE(fs::exists(at / "c" / "stale.c")) << "c/ is the writer's, whole";
  EXPECT_EQ(test_support::read_text((at / "seen.json").string()), "{\"hits\": 7}\n");
  const auto j = nlohmann::json::parse(test_support::read_text((at / "verdict.json").string()));
  EXPECT_EQ(j.at("info").at("note"), "second");
}

TEST(Campaign, AFindingCountsForTheSupervisorFromTheMomentItIsAnnounced) {
  // A supervised child can be killed right after announcing a finding (another worker's case
  // overran its budget); with no time left, its restart judges nothing, and only the journal's
  // count makes the campaign exit 1.
  host::TempDir dir("aotfuzz-campaign-test");
  CampaignOptions o = with_9036_bug(in_process(1, 60));
  o.findings_dir = dir.file("findings");
  auto journal = std::make_unique<CrashJournal>();
  journal->children = 1;
  journal->started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  o.journal = journal.get();
  std::optional<std::uint64_t> counted_when_announced;
  CampaignCallbacks cb;
  cb.on_log = [&](LogLevel, const std::string& line) {
    if (line.rfind("new finding", 0) == 0 && !counted_when_announced) {
      counted_when_announced = journal->findings.load();
    }
  };
  const CampaignResult r = run_campaign(o, cb);
  ASSERT_TRUE(counted_when_announced) << format_summary(r, o);
  EXPECT_GE(*counted_when_announced, 1u);
  EXPECT_EQ(journal->findings.load(), r.findings.size());
}

TEST(Bundles, LeftoversOfKilledCampaignsAreNeitherBundlesNorKept) {
  host::TempDir dir("aotfuzz-bundle-test");
  const fs::path findings = dir.path();
  // A campaign killed while writing leaves only its temporary directory behind.
  fs::create_directories(findings / ".tmp-999999999-abc123");
  std::ofstream(findings / ".tmp-999999999-abc123" / "verdict.json")
      << R"({"signature": "crash:run:SIGSEGV"})";
  // One of a live process (ours) stays; so does a directory that is not a complete bundle.
  const std::string mine = ".tmp-" + std::to_string(::getpid()) + "-xyz";
  fs::create_directories(findings / mine);
  fs::create_directories(findings / "half");
  fs::create_directories(findings / "ok");
  std::ofstream(findings / "ok" / "verdict.json") << R"({"signature": "mismatch:codegen"})";
  EXPECT_EQ(bundles::load_bundle_signatures(findings), std::set<std::string>{"mismatch:codegen"});
  EXPECT_FALSE(fs::exists(findings / ".tmp-999999999-abc123"));
  EXPECT_TRUE(fs::exists(findings / mine));
  EXPECT_TRUE(bundles::load_bundle_signatures(findings / "missing").empty());
}

TEST(Bundles, DirectoryNamesKeepOnlySafeCharacters) {
  EXPECT_EQ(bundles::bundle_dir_name("arity:codegen:kernel"), "arity_codegen_kernel");
  EXPECT_EQ(bundles::bundle_dir_name("crash:run:external:SIGSEGV"), "crash_run_external_SIGSEGV");
  EXPECT_EQ(bundles::bundle_dir_name("../x y"), "___x_y");
}

TEST(Campaign, FindingsDoNotDependOnTheNumberOfJobs) {
  std::map<std::string, std::pair<std::uint64_t, std::string>> by_jobs[2];
  for (int run = 0; run < 2; ++run) {
    host::TempDir dir("aotfuzz-campaign-test");
    CampaignOptions o = with_9036_bug(in_process(21, 40));
    o.base.aot.bugs.enable(aot::Bug::kSwappedOutputOrder);
    o.jobs = run == 0 ? 1 : 3;
    o.findings_dir = dir.file("findings");
    CampaignResult r = run_campaign(o);
    for (const auto& f : r.findings) {
      by_jobs[run][f.signature] = {
          f.case_index,
          test_support::read_text((fs::path(f.bundle_dir) / "reduced.relay").string())};
    }
  }
  EXPECT_FALSE(by_jobs[0].empty());
  EXPECT_EQ(by_jobs[0], by_jobs[1]);
}

}  // namespace
}  // namespace aotfuzz::fuzz
