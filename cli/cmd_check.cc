// `aotfuzz check`: the pre-merge gate. Replays the corpus, then runs a fixed-seed fuzz budget;
// a JUnit report and exit 1 on any unmet expectation or finding.
#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "bundles/replay.h"
#include "fuzz/crash_journal.h"
#include "host/interrupt.h"
#include "host/tempdir.h"
#include "report/junit.h"
#include "report/junit_suites.h"

namespace aotfuzz::cli {

namespace {

/// The gate's fixed default seed (TVM issue #9036).
constexpr std::uint64_t kCheckSeed = 9036;

}  // namespace

namespace {

// Runs one shard's campaign as `fuzz` runs its own: in a child that a supervisor restarts when a
// case's in-process steps crash or hang (fuzz/crash_journal.h), so a pass that kills the process
// is a finding of the gate rather than the end of it. The child hands what the reports need back
// through a file.
report::ShardOutcome run_shard_supervised(fuzz::CampaignOptions o, const FuzzFlags& f,
                                          const std::atomic<bool>& stop) {
  const host::TempDir handoff("aotfuzz-check");
  const std::string file = handoff.file("shard.json").string();
  fuzz::SupervisorOptions so;
  so.in_process_budget = o.base.in_process_budget;
  so.stop = &stop;
  const int code = fuzz::run_supervised(
      [&](fuzz::CrashJournal& journal) {
        o.journal = &journal;
        const fuzz::CampaignResult r = run_campaign_with_output(o, f);
        std::ofstream out(file, std::ios::binary);
        out << report::to_json(report::shard_outcome(r, o)).dump() << "\n";
        out.close();
        return out ? r.exit_code() : static_cast<int>(kInternal);
      },
      so, [](const std::string& line) { std::fprintf(stderr, "aotfuzz: %s\n", line.c_str()); });
  report::ShardOutcome outcome;
  try {
    std::ifstream in(file, std::ios::binary);
    outcome = report::shard_outcome_from_json(nlohmann::json::parse(in));
  } catch (const std::exception&) {
    outcome.junit.classname = "fuzz";
    outcome.junit.name = "fuzz shard " + std::to_string(o.shard.index) + "/" +
                         std::to_string(o.shard.count) + " (seed " + std::to_string(o.seed) + ")";
    outcome.junit.failed = true;
    outcome.junit.message = "the campaign's process ended without a result (see the log)";
  }
  // The supervisor counts what earlier children of the shard found, and how the last one ended.
  outcome.exit_code = code;
  if (code == kFinding && !outcome.junit.failed) {
    outcome.junit.failed = true;
    outcome.junit.message = "findings of a case that took the campaign's process down";
  }
  outcome.junit.error = code == kInternal && !outcome.junit.failed;
  if (outcome.junit.error && outcome.junit.message.empty()) {
    outcome.junit.message = "could not run (the environment, not a finding)";
  }
  return outcome;
}

}  // namespace

Command register_check(CLI::App& parent) {
  struct Opts {
    std::string corpus = "corpus";
    std::string junit;
    std::string sarif;
    int shards = 1;
    FuzzFlags fuzz;
  };
  auto opts = std::make_shared<Opts>();
  opts->fuzz.time = 60;
  opts->fuzz.seed = kCheckSeed;
  opts->fuzz.findings = "check-findings";
  Command c;
  c.app = parent.add_subcommand(
      "check", "Pre-merge gate: replay the corpus, then fuzz a fixed-seed budget (JUnit report)");
  c.app->add_option("--corpus", opts->corpus, "Corpus directory to replay (default: corpus)");
  c.app->add_option("--junit", opts->junit, "Write a JUnit XML report");
  c.app->add_option("--sarif", opts->sarif,
                    "Write a SARIF 2.1.0 log: unmet expectations and findings, each with the "
                    "command that replays it");
  c.app
      ->add_option("--shards", opts->shards,
                   "Split the fuzz budget into this many shards (one test case each)")
      ->check(CLI::Range(1, 1024));
  add_fuzz_flags(c.app, opts->fuzz, /*full=*/false);
  // The gate's own defaults and budget, in place of a campaign's.
  c.app->get_option("--time")->description(
      "Seconds of the fixed-seed fuzz budget after the replay (default 60; with --cases only "
      "when given too)");
  c.app->get_option("--seed")->description("Campaign seed (default 9036)");
  c.app
      ->add_option("--cases", opts->fuzz.cases,
                   "Fuzz this many cases (split among the shards) instead of a time budget: the "
                   "gate then judges the same cases on any machine")
      ->transform(unsigned_decimal(1));
  // A testing aid, as for run and fuzz: kept out of the help (docs/fuzzing.md describes it).
  add_pipeline_flags(c.app, opts->fuzz.flags, oracle::kCheck);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    // The system the flags choose checks every line of the corpus and runs the campaign
    // (case_options refuses a home without it, as bad input).
    const auto system = chosen_system(opts->fuzz.flags);
    if (!std::filesystem::is_directory(opts->corpus)) {
      throw CommandError(kBadInput, "check: no corpus directory '" + opts->corpus +
                                        "' (run from the repository root or pass --corpus)");
    }
    try {
      bundles::collect_relay_files({opts->corpus});
    } catch (const bundles::ReplayError& e) {
      throw CommandError(kBadInput, std::string("check: ") + e.what());
    }
    if (!opts->junit.empty()) check_output_file(opts->junit, "--junit", "check");
    if (!opts->sarif.empty()) check_output_file(opts->sarif, "--sarif", "check");
    if (!opts->fuzz.findings.empty()) check_output_dir(opts->fuzz.findings, "--findings", "check");
    const auto& stop = host::install_interrupt_handler();
    // Everything the replays and campaigns put in temporary files lives under one root.
    const host::ScopedTempRoot temp_root;
    std::printf("aotfuzz check: replaying %s\n", opts->corpus.c_str());
    bundles::ReplayOverride override;
    override.sut = system;
    // Ctrl-C stops the replay between lines, as it stops a campaign between cases.
    override.stop = &stop;
    auto replays = replay_and_print({opts->corpus}, opts->fuzz.jobs, /*quiet=*/true, override);
    bool failed = false, cannot_run = false;
    for (const auto& r : replays) {
      failed |= r.failed();
      cannot_run |= r.cannot_run();
    }
    std::vector<report::JUnitSuite> suites = {report::replay_suite(replays)};
    std::vector<fuzz::Finding> findings;
    report::JUnitSuite fuzz_suite;
    fuzz_suite.name = "fuzz";
    // --cases replaces the default time budget; an explicit --time still bounds it.
    const bool by_cases = opts->fuzz.cases > 0;
    const double time = by_cases && app->get_option("--time")->count() == 0 ? 0 : opts->fuzz.time;
    const bool fuzzing = time > 0 || by_cases;
    bool all_toolchain = fuzzing;
    if (cannot_run) {
      // The replays could not compile or run what they must (no C compiler, a TVM that does not
      // import): a campaign in the same environment would test nothing either.
      std::printf(
          "aotfuzz check: the environment cannot run the corpus; the fuzz budget is "
          "skipped\n");
    } else if (fuzzing && !stop.load()) {
      FuzzFlags f = opts->fuzz;
      f.time = time / opts->shards;
      const auto shards = static_cast<std::uint64_t>(opts->shards);
      for (int i = 0; i < opts->shards && !stop.load(); ++i) {
        f.shard = std::to_string(i) + "/" + std::to_string(opts->shards);
        // Shard i holds the cases k with k = i (mod n): its share of the first N.
        if (by_cases)
          f.cases = (opts->fuzz.cases + shards - 1 - static_cast<std::uint64_t>(i)) / shards;
        if (by_cases && f.cases == 0) continue;
        fuzz::CampaignOptions o = campaign_options(app, f, /*seed_given=*/true);
        report::ShardOutcome r = run_shard_supervised(o, f, stop);
        fuzz_suite.cases.push_back(r.junit);
        findings.insert(findings.end(), r.findings.begin(), r.findings.end());
        failed |= r.exit_code == kFinding;
        all_toolchain &= r.exit_code == kInternal;
      }
      suites.push_back(fuzz_suite);
    } else {
      all_toolchain = false;
    }
    if (!opts->sarif.empty()) {
      write_sarif(opts->sarif, replays, findings);
      std::printf("aotfuzz check: wrote %s\n", opts->sarif.c_str());
    }
    if (!opts->junit.empty()) {
      write_junit(opts->junit, suites);
      std::printf("aotfuzz check: wrote %s\n", opts->junit.c_str());
    }
    // Stopped before its budget with nothing found, the gate has not passed: as a campaign,
    // 130 and not 0, which a script would take for a pass.
    const bool interrupted = stop.load();
    const bool environment = cannot_run || all_toolchain;
    std::printf("aotfuzz check: %s\n",
                failed        ? "FAILED"
                : interrupted ? "interrupted before its budget"
                : environment ? "could not run (the environment failed, not the pipeline)"
                              : "passed");
    if (failed) return static_cast<int>(kFinding);
    if (interrupted) return static_cast<int>(kInterrupted);
    return static_cast<int>(environment ? kInternal : kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli
