// What a campaign's parts, its supervisor and its reports share: the options a campaign is run
// with, its cases, its findings, its result and its callbacks. Plain data, so that none of them
// needs the campaign itself (fuzz/campaign.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bundles/campaign_stats.h"
#include "bundles/triage_build.h"
#include "generator/policy.h"
#include "ir/error.h"
#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"
#include "reduce/reducer.h"

namespace aotfuzz::fuzz {

struct CrashJournal;

/// Bad campaign options (a malformed shard, an impossible option combination).
class CampaignError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// `--shard i/n`: this run takes the cases k with k ≡ i (mod n).
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

/// How cases are compiled and run.
enum class ExecutorChoice {
  /// Many cases per program, run by a runner process per worker (oracle::BatchedExecutor);
  /// falls back to kSingle where it is not available (no runner, sanitizers, kept files).
  kBatched,
  /// One compiled program per case (oracle::run_case), as `aotfuzz run` does.
  kSingle,
};

/// A graph of the user's that a campaign mutates (`fuzz --corpus`).
struct CorpusGraph {
  std::string path;  ///< absolute, for replay lines
  ir::Module module;
};

/// Everything a campaign is run with.
struct CampaignOptions {
  std::uint64_t seed = 1;
  /// Stop after this many cases of this shard (nullopt: no case budget).
  std::optional<std::uint64_t> max_cases;
  /// Stop taking new cases after this long (nullopt: no time budget). Reductions keep to it too:
  /// one it cuts short leaves its bundle marked not fully reduced, for the next campaign.
  std::optional<std::chrono::milliseconds> time_limit;
  /// Stop taking new cases once this many new unique signatures are claimed (nullopt: never),
  /// as libFuzzer stops at its first crash: for CI gates and time-to-find measurements.
  std::optional<std::uint64_t> stop_after_findings;
  /// Worker threads (at least 1).
  int jobs = 1;
  Shard shard;
  /// The graphs' knobs, and those of the options drawn per case (p_merge, ...): a flag given on
  /// the command line fixes its knob to 0 or 1 (fix_drawn_knobs).
  generator::GenPolicy policy;
  /// Swarm testing: each case switches policy features off at random (generator::swarm).
  bool swarm = true;
  /// The `--knob` flags that produced `policy`, repeated in origin lines (`aotfuzz gen` syntax).
  std::string knob_flags;
  /// The system's generation profiles (SystemUnderTest::generation_profiles), each `policy` with
  /// its knobs applied: each case draws one by weight from a stream of its own and is generated
  /// and drawn with it instead of `policy`. Empty: every case takes `policy` (no draw).
  struct Profile {
    std::string name;
    double weight = 1;
    generator::GenPolicy policy;
    std::string knob_flags;
  };
  std::vector<Profile> profiles;
  /// The user's graphs (`--corpus`): every odd case mutates one of them (generator::mutant), in
  /// turn; the even cases are generated as without it.
  std::vector<CorpusGraph> corpus;
  /// The campaign's command line and aotfuzz's version and commit, for fuzzer_stats.
  std::string command_line;
  std::string version;
  /// What exactly was under test (SystemUnderTest::identity: a TVM build's version and commit),
  /// recorded in each bundle; empty for the builtin pipeline.
  std::string system_identity;
  /// mod_name, injected bugs, compiler, sanitize, ulp, num_args checks, input seed, limits; the
  /// options drawn per case are drawn over it.
  oracle::CaseOptions base;
  /// Where bundles go; empty: findings are reported but not reduced nor written. The campaign
  /// also keeps fuzzer_stats and plot_data there, and each bundle's seen.json
  /// (bundles/status_files.h).
  std::filesystem::path findings_dir;
  /// How often fuzzer_stats and plot_data are rewritten.
  std::chrono::milliseconds status_interval{5000};
  bool reduce = true;
  /// Time limit of one finding's reduction.
  std::chrono::milliseconds reduce_time{120'000};
  /// Threads of a reduction (0: jobs).
  int reduce_jobs = 0;
  /// TVM builds each new finding's bundle is replayed on once it is reduced (`--triage-build`):
  /// its row of the triage matrix goes into its verdict.json and the log.
  std::vector<bundles::TriageBuild> triage_builds;
  /// Stop request (SIGINT): no new cases, reductions return their best so far.
  const std::atomic<bool>* stop = nullptr;
  /// Batched by default; a batched finding is confirmed by running the case alone before it is
  /// claimed, reduced or bundled.
  ExecutorChoice executor = ExecutorChoice::kBatched;
  /// Set when the campaign runs under a supervisor (fuzz/crash_journal.h): workers note their
  /// cases' in-process steps there, and a campaign restarted after a crash goes on from the
  /// journal (its first case not done, counters, elapsed time), judging the cases that crashed
  /// earlier children through the probe.
  CrashJournal* journal = nullptr;
};

/// Whether the campaign's stop request (SIGINT, SIGTERM) has come.
inline bool stop_requested(const CampaignOptions& options) {
  return options.stop != nullptr && options.stop->load();
}

/// One generated case: fully determined by (seed, index) and the options.
struct CaseSpec {
  std::uint64_t index = 0;
  /// `aotfuzz gen --seed <gen_seed> [--swarm] <knobs>` prints the same graph.
  std::uint64_t gen_seed = 0;
  /// The index of the campaign's profile the case was drawn with (CampaignOptions::profiles).
  std::size_t profile = 0;
  ir::Module module;
  oracle::CaseOptions options;
  /// The case's policy had merge_safe (swarm drops it for some cases): its graph must not be
  /// refused, so a refusal is a finding.
  bool merge_safe = true;
  /// The corpus graph the case mutates (CampaignOptions::corpus), else empty.
  std::string corpus_file;
};

/// A unique finding, after reduction and bundling.
struct Finding {
  std::string signature;
  std::uint64_t case_index = 0;
  std::uint64_t gen_seed = 0;
  std::string summary;  ///< oracle::summary of the original verdict
  std::string flags;    ///< replay flags (after canonicalizing options)
  /// The bundle directory ("" when no findings directory was given or writing failed).
  std::string bundle_dir;
  bool bundle_written = false;  ///< false: another campaign wrote this signature first
  std::string replay;           ///< the one-line replay command
  std::string error;            ///< why the bundle could not be written
  double found_after_s = 0;
  reduce::ReduceResult reduction;  ///< (module dropped to save memory; sizes, steps, time kept)
};

/// What a run did.
struct CampaignResult {
  bundles::CampaignStats stats;
  /// Unique findings new to this run, in the order they were found.
  std::vector<Finding> findings;
  /// Signatures seen again that bundles from an earlier run already hold.
  std::set<std::string> known_seen;
  /// Finding cases by signature (every case, not only the first of each).
  std::map<std::string, std::uint64_t> signature_hits;
  /// Signatures of the bundles present at the start.
  std::set<std::string> preexisting;
  std::chrono::milliseconds elapsed{0};
  bool interrupted = false;
  /// Whether the cases ran batched (CampaignOptions::executor, where available).
  bool batched = false;
  /// Whether the system's work for some cases overlapped the programs of others (a system
  /// whose programs are not batched, SystemUnderTest::preparing_batch).
  bool overlapped = false;
  /// Batched verdicts that running the case alone did not reproduce: problems of the harness,
  /// never findings (one line each: case, both signatures, options).
  std::vector<std::string> harness_problems;
  /// Why the campaign stopped early because the system under test cannot be used at all (a TVM
  /// that does not import; oracle::ToolchainError::system_unusable), or "".
  std::string environment_failure;
  /// 1 if any finding (new or known), else 3 if the system under test cannot be used, else 130
  /// if interrupted, 3 if every case was a toolchain error, else 0.
  int exit_code() const;
  /// Unique signatures seen (new and known).
  std::size_t unique_signatures() const { return findings.size() + known_seen.size(); }
};

/// How much a log line of a campaign matters: warnings are about the environment or the
/// harness (files that cannot be written, a generator failure), info about the campaign's work.
enum class LogLevel { kInfo, kWarning };

/// Observers of a running campaign.
struct CampaignCallbacks {
  /// Called on the calling thread every `progress_interval`, and once at the end.
  std::function<void(const bundles::Progress&)> on_progress;
  std::chrono::milliseconds progress_interval{250};
  /// A new unique finding, once its bundle is written (calls are serialized).
  std::function<void(const Finding&)> on_finding;
  /// Every case once run (calls are serialized; for tests and tracing).
  std::function<void(const CaseSpec&, const oracle::CaseResult&)> on_case;
  /// Log lines: info ("new finding ... at case k") and warnings (calls are serialized).
  std::function<void(LogLevel, const std::string&)> on_log;
};

}  // namespace aotfuzz::fuzz
