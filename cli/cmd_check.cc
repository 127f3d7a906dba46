// `aotfuzz check`: the pre-merge gate. Replays the corpus, then runs a fixed-seed fuzz budget;
// a JUnit report and exit 1 on any unmet expectation or finding.
#include <cstdio>
#include <filesystem>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "fuzz/interrupt.h"
#include "fuzz/junit.h"
#include "fuzz/junit_suites.h"
#include "fuzz/replay.h"

namespace aotfuzz::cli {

namespace {

/// The gate's fixed default seed (TVM issue #9036).
constexpr std::uint64_t kCheckSeed = 9036;

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
  add_sut_flags(c.app, opts->fuzz.flags.sut, opts->fuzz.flags.tvm_home);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    if (!std::filesystem::is_directory(opts->corpus)) {
      throw CommandError(kBadInput, "check: no corpus directory '" + opts->corpus +
                                        "' (run from the repository root or pass --corpus)");
    }
    if (!opts->junit.empty()) check_output_file(opts->junit, "--junit", "check");
    if (!opts->sarif.empty()) check_output_file(opts->sarif, "--sarif", "check");
    if (!opts->fuzz.findings.empty()) check_output_dir(opts->fuzz.findings, "--findings", "check");
    const auto& stop = fuzz::install_interrupt_handler();
    std::printf("aotfuzz check: replaying %s\n", opts->corpus.c_str());
    fuzz::ReplayOverride override;
    if (opts->fuzz.flags.sut == "tvm") override.sut = make_sut("tvm", opts->fuzz.flags.tvm_home);
    auto replays = replay_and_print({opts->corpus}, opts->fuzz.jobs, /*quiet=*/true, override);
    bool failed = false;
    for (const auto& r : replays) failed |= !r.ok();
    std::vector<fuzz::JUnitSuite> suites = {fuzz::replay_suite(replays)};
    std::vector<fuzz::CampaignResult> campaigns;
    fuzz::JUnitSuite fuzz_suite;
    fuzz_suite.name = "fuzz";
    bool all_toolchain = opts->fuzz.time > 0;
    if (opts->fuzz.time > 0 && !stop.load()) {
      FuzzFlags f = opts->fuzz;
      f.time = opts->fuzz.time / opts->shards;
      for (int i = 0; i < opts->shards && !stop.load(); ++i) {
        f.shard = std::to_string(i) + "/" + std::to_string(opts->shards);
        fuzz::CampaignOptions o = campaign_options(app, f, /*seed_given=*/true);
        fuzz::CampaignResult r = run_campaign_with_output(o, f);
        fuzz_suite.cases.push_back(fuzz::fuzz_shard_case(r, o));
        campaigns.push_back(r);
        failed |= r.exit_code() == kFinding;
        all_toolchain &= r.exit_code() == kInternal;
      }
      suites.push_back(fuzz_suite);
    } else {
      all_toolchain = false;
    }
    if (!opts->sarif.empty()) {
      write_sarif(opts->sarif, replays, campaigns);
      std::printf("aotfuzz check: wrote %s\n", opts->sarif.c_str());
    }
    if (!opts->junit.empty()) {
      write_junit(opts->junit, suites);
      std::printf("aotfuzz check: wrote %s\n", opts->junit.c_str());
    }
    std::printf("aotfuzz check: %s\n", failed ? "FAILED" : "passed");
    if (failed) return static_cast<int>(kFinding);
    return static_cast<int>(all_toolchain ? kInternal : kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli
