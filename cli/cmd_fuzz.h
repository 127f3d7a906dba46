// Pieces shared by `aotfuzz fuzz`, `replay` and `check`: campaign flags (cmd_fuzz.cc), corpus
// replay with output and JUnit writing (cmd_replay.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"
#include "bundles/replay.h"
#include "fuzz/campaign.h"
#include "report/junit.h"

namespace aotfuzz::cli {

/// The campaign's command-line flags.
struct FuzzFlags {
  double time = 0;
  std::uint64_t cases = 0;
  std::uint64_t stop_after_findings = 0;
  int jobs = 0;
  std::uint64_t seed = 0;
  std::string shard = "0/1";
  std::string findings = "findings";
  std::vector<std::string> knobs;
  int size = 0;
  bool swarm = true;
  bool reduce = true;
  double reduce_time = 120;
  std::string stats;
  bool single_case = false;
  /// --triage-build LABEL=DIR (repeatable) and --triage-builds FILE.
  std::vector<std::string> triage_build;
  std::string triage_builds_file;
  /// --corpus DIR|FILE (repeatable): the user's graphs, mutated in every other case.
  std::vector<std::string> corpus;
  /// No progress line, and the log level warn unless --log-level says otherwise.
  bool quiet = false;
  /// spdlog's level names: trace, debug, info, warn, error, critical, off.
  std::string log_level;
  PipelineFlags flags;
};

/// Registers the campaign flags on `app`: --time, --jobs, --seed, --findings, --quiet,
/// --log-level, and with `full`
/// also --cases, --stop-after-findings, --shard, --knob, --size, --swarm, --reduce, --reduce-time,
/// --stats, --triage-build(s) and the pipeline flags.
void add_fuzz_flags(CLI::App* app, FuzzFlags& flags, bool full);

/// The campaign options the flags describe: pipeline flags given on the command line are fixed,
/// the others drawn per case; the seed comes from the clock unless `seed_given`; the C compiler
/// is resolved once. Throws CommandError on bad flags or a missing compiler.
fuzz::CampaignOptions campaign_options(CLI::App* app, FuzzFlags flags, bool seed_given);

/// Runs a campaign with SIGINT/SIGTERM handling, the progress line and the log (spdlog, at the
/// level of `flags`) on stderr, findings and their replay lines on stdout, and the summary on
/// stdout.
fuzz::CampaignResult run_campaign_with_output(fuzz::CampaignOptions options,
                                              const FuzzFlags& flags);

/// Replays the .relay files under `paths` on `jobs` threads (0: all cores), printing a status
/// line per file (only failures and files that could not run when `quiet`), their details and
/// a total (in cmd_replay.cc), with `override` imposed on every line (bundles::ReplayOverride).
/// Throws CommandError for a path that does not exist.
std::vector<bundles::FileReplay> replay_and_print(const std::vector<std::string>& paths, int jobs,
                                                   bool quiet,
                                                   const bundles::ReplayOverride& override = {});

/// The exit code of replayed files: 1 if any failed, else 130 if interrupted, else 3 if the
/// environment could not run a line, else 0.
int replay_exit_code(const std::vector<bundles::FileReplay>& results);

/// Writes a JUnit XML report; throws CommandError when the file cannot be written.
void write_junit(const std::string& path, const std::vector<report::JUnitSuite>& suites);
/// Writes fuzz::sarif_log of `replays` and `findings` to `path`; CommandError when it cannot.
void write_sarif(const std::string& path, const std::vector<bundles::FileReplay>& replays,
                 const std::vector<fuzz::Finding>& findings);

}  // namespace aotfuzz::cli
