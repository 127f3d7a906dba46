// `aotfuzz fuzz`: a campaign of generated cases on all cores, with live progress, automatic
// reduction of unique findings into bundles, a closing summary and optional JSON statistics.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <thread>

#include "aotfuzz_commit.h"
#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "bundles/replay.h"
#include "fuzz/campaign.h"
#include "fuzz/campaign_report.h"
#include "fuzz/crash_journal.h"
#include "generator/policy.h"
#include "host/interrupt.h"
#include "host/shell_words.h"
#include "host/tempdir.h"
#include "ir/error.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace aotfuzz::cli {

namespace {

std::uint64_t seed_from_time() {
  auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::uint64_t z = t ^ (static_cast<std::uint64_t>(::getpid()) << 32);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) % 1'000'000'000'000ULL;  // short enough to type
}

}  // namespace

// This process's argument vector as one pasteable line (/proc/self/cmdline: the command line as
// the kernel holds it, with no state of ours to keep); "" where it cannot be read.
std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t end = all.find('\0', pos);
    const std::string word = all.substr(pos, end == std::string::npos ? end : end - pos);
    line += (line.empty() ? "" : " ") + host::shell_quote(word);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return line;
}

// The graphs of --corpus, each parsed and verified now: a file that is no graph is bad input
// (file:line:col), not a case.
std::vector<fuzz::CorpusGraph> load_corpus(const std::vector<std::string>& paths,
                                           const std::string& command) {
  std::vector<fuzz::CorpusGraph> out;
  if (paths.empty()) return out;
  std::vector<std::string> files;
  try {
    files = bundles::collect_relay_files(paths);
  } catch (const bundles::ReplayError& e) {
    throw CommandError(kBadInput, command + ": --corpus: " + e.what());
  }
  if (files.empty()) {
    throw CommandError(kBadInput, command + ": --corpus: no .relay file in " + paths.front());
  }
  for (const auto& file : files) {
    fuzz::CorpusGraph g;
    g.path = std::filesystem::absolute(file).lexically_normal().string();
    g.module = load_module(file);
    out.push_back(std::move(g));
  }
  return out;
}

fuzz::CampaignOptions campaign_options(CLI::App* app, FuzzFlags f, bool seed_given) {
  fuzz::CampaignOptions o;
  o.policy = policy_from_flags(f.knobs, f.size, app->get_name());
  try {
    o.shard = fuzz::parse_shard(f.shard);
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, std::string(app->get_name()) + ": " + e.what());
  }
  // --interface c alone implies the API it needs.
  std::vector<std::string> words = f.flags.words;
  const auto interface = std::find(words.begin(), words.end(), "--interface");
  if (interface != words.end() && std::next(interface) != words.end() &&
      *std::next(interface) == "c" && !given(app, "--api")) {
    words.insert(words.begin(), {"--api", "unpacked"});
  }
  o.base = case_options(words);  // validates bug names and api/interface
  within_system_limits(o.policy, f.knobs, oracle::system_of(o.base), app->get_name());
  o.knob_flags = knob_flags(o.policy);
  o.profiles = system_profiles(o.policy, f.knobs, oracle::system_of(o.base), app->get_name());
  o.seed = seed_given ? f.seed : seed_from_time();
  if (f.time > 0) {
    o.time_limit = std::chrono::milliseconds(static_cast<std::int64_t>(f.time * 1000));
  }
  if (f.cases > 0) o.max_cases = f.cases;
  if (f.stop_after_findings > 0) o.stop_after_findings = f.stop_after_findings;
  if (!o.time_limit && !o.max_cases) o.time_limit = std::chrono::seconds(60);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  o.jobs = f.jobs > 0 ? f.jobs : static_cast<int>(cores);
  o.swarm = f.swarm;
  o.reduce = f.reduce;
  o.reduce_time = std::chrono::milliseconds(static_cast<std::int64_t>(f.reduce_time * 1000));
  // Absolute: the bundle paths in replay lines, verdict.json and the report then work from any
  // directory, not only the one the campaign ran in.
  if (!f.findings.empty())
    o.findings_dir = std::filesystem::absolute(f.findings).lexically_normal();
  o.executor = f.single_case ? fuzz::ExecutorChoice::kSingle : fuzz::ExecutorChoice::kBatched;
  o.corpus = load_corpus(f.corpus, app->get_name());
  o.command_line = own_command_line();
  o.version = std::string(AOTFUZZ_VERSION) + " (commit " + AOTFUZZ_COMMIT + ")";
  o.triage_builds = triage_builds(f.triage_build, f.triage_builds_file, app->get_name());
  if (!o.triage_builds.empty() &&
      oracle::system_of(o.base).spec().name != systems::built_system_name()) {
    throw CommandError(kBadInput, std::string(app->get_name()) +
                                      ": --triage-build and --triage-builds need --sut tvm");
  }
  if (!o.triage_builds.empty() && o.findings_dir.empty()) {
    throw CommandError(
        kBadInput, std::string(app->get_name()) + ": --triage-build needs a findings directory");
  }

  // Options given on the command line are fixed (their knobs 0 or 1, over the user's and the
  // system's); the rest are drawn per case.
  const auto flag_given = [app](const oracle::CaseFlagRow& row) {
    return given(app, "--" + std::string(row.name));
  };
  fuzz::fix_drawn_knobs(o.policy, o.base, flag_given);
  for (auto& profile : o.profiles) fuzz::fix_drawn_knobs(profile.policy, o.base, flag_given);
  // Fail early (exit 3) when no compiler is there, rather than with a toolchain-error per case.
  // The compiler stays unset unless given, so replay lines work with whatever is installed.
  if (o.base.compiler) {
    const auto tc = host::locate_toolchain(*o.base.compiler);
    if (auto* why = std::get_if<std::string>(&tc)) throw CommandError(kInternal, *why);
  } else {
    const auto tc = host::locate_default_toolchain();
    if (auto* why = std::get_if<std::string>(&tc)) {
      throw CommandError(kInternal, "no C compiler found: " + *why);
    }
  }
  return o;
}

void add_fuzz_flags(CLI::App* app, FuzzFlags& f, bool full) {
  // The last of repeated budget flags wins, so scripts can prepend defaults.
  const auto last = CLI::MultiOptionPolicy::TakeLast;
  app->add_option("--time", f.time,
                  "Seconds to fuzz (default 60 when --cases is not given); reductions keep to "
                  "it too, and the next campaign on the findings directory finishes a bundle "
                  "one cut short")
      ->multi_option_policy(last)
      ->check(positive_seconds());
  app->add_option("--jobs,-j", f.jobs, "Worker threads (default: all cores)")
      ->multi_option_policy(last)
      ->check(jobs_range());
  app->add_option("--seed", f.seed, "Campaign seed (default: from the clock; always printed)")
      ->multi_option_policy(last)
      ->transform(unsigned_decimal(0));
  app->add_option("--findings", f.findings,
                  "Findings directory: one bundle per signature, resumable (default: ./findings; "
                  "check: ./check-findings)")
      ->multi_option_policy(last);
  app->add_flag("--quiet,-q", f.quiet,
                "No progress line, and only warnings and errors in the log (the findings and "
                "the summary still print)");
  app->add_option("--log-level", f.log_level,
                  "Log level on stderr: trace, debug, info (default), warn, error, critical, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  if (!full) return;
  app->add_option("--cases", f.cases, "Number of cases of this shard")
      ->transform(unsigned_decimal(1));
  app->add_option("--stop-after-findings", f.stop_after_findings,
                  "Stop taking new cases once this many new unique findings are confirmed")
      ->transform(unsigned_decimal(1));
  app->add_option("--shard", f.shard, "Run the cases k with k = i (mod n)");
  add_policy_flags(app, f.knobs, f.size);
  add_flag_pair(app, "swarm", f.swarm, "Swarm testing: features on/off per case (default on)");
  add_flag_pair(app, "reduce", f.reduce, "Reduce each unique finding (default on)");
  app->add_option("--reduce-time", f.reduce_time, "Seconds one reduction may take (default 120)")
      ->check(positive_seconds());
  app->add_option("--stats", f.stats, "Write statistics as JSON to this file");
  app->add_option("--corpus", f.corpus,
                  "Start from your own graphs too (AFL++'s -i): the .relay files of DIR (or a "
                  "file; repeatable), each mutated in every other case as the text fuzz targets "
                  "mutate them; the other cases are generated as without it");
  app->add_option("--triage-build", f.triage_build,
                  "With --sut tvm: replay each new finding, once reduced, on this TVM build too, "
                  "LABEL=DIR (repeatable, oldest first); its row of the triage matrix goes into "
                  "its verdict.json and the log");
  app->add_option("--triage-builds", f.triage_builds_file,
                  "With --sut tvm: the triage builds from a file, one `LABEL DIR` per line");
  app->add_flag("--single-case", f.single_case,
                "Compile and run every case as its own program (default: batches of cases in "
                "one program, run by a fork server per worker); with --sut tvm, one case at a "
                "time (default: TVM builds the next cases while the worker runs others)");
  add_pipeline_flags(app, f.flags, oracle::kFuzz);
}

// The compiler the campaign's programs are built with, as resolved on this machine.
std::string resolved_compiler(const fuzz::CampaignOptions& options) {
  if (const auto own = oracle::system_of(options.base).default_compiler();
      own && !options.base.compiler) {
    return std::string(host::compiler_kind_name(*own)) + " (the system under test's own)";
  }
  if (options.base.compiler) return std::string(host::compiler_kind_name(*options.base.compiler));
  if (const auto tc = host::default_toolchain()) {
    return std::string(host::compiler_kind_name(tc->kind)) + " (the default here)";
  }
  return "none found";
}

/// Terminal output of a running campaign: a \r-updated line on a terminal, a plain line every
/// 10 s otherwise; findings and logs interleave cleanly with it.
class ProgressPrinter {
 public:
  ProgressPrinter(bool show_progress, spdlog::level::level_enum level)
      : tty_(::isatty(STDERR_FILENO) != 0),
        show_progress_(show_progress),
        log_("aotfuzz", std::make_shared<spdlog::sinks::stderr_sink_mt>()) {
    log_.set_pattern("%n: %v");
    log_.set_level(level);
    log_.flush_on(spdlog::level::trace);
  }

  void progress(const bundles::Progress& p) {
    if (!show_progress_) return;
    std::lock_guard lock(mu_);
    if (tty_) {
      std::fprintf(stderr, "\r%s\033[K", fuzz::format_progress(p).c_str());
      dirty_ = true;
    } else if (p.elapsed_s >= next_plain_) {
      std::fprintf(stderr, "aotfuzz: %s\n", fuzz::format_progress(p).c_str());
      next_plain_ = p.elapsed_s + 10;
    }
    std::fflush(stderr);
  }

  /// Prints a line on `stream`; once stdout is closed (EPIPE: SIGPIPE is ignored in main.cc), the
  /// lines meant for it go to stderr, so findings and the summary still reach the user.
  void line(std::FILE* stream, const std::string& text) {
    std::lock_guard lock(mu_);
    clear_locked();
    if (stream == stdout && !stdout_closed_) {
      std::fprintf(stdout, "%s\n", text.c_str());
      if (std::fflush(stdout) == 0 || errno != EPIPE) return;
      stdout_closed_ = true;
      std::clearerr(stdout);
    }
    if (stream == stdout) stream = stderr;
    std::fprintf(stream, "%s\n", text.c_str());
    std::fflush(stream);
  }

  /// A log line at `level`, below the progress line.
  void log(spdlog::level::level_enum level, const std::string& text) {
    if (!log_.should_log(level)) return;
    std::lock_guard lock(mu_);
    clear_locked();
    log_.log(level, level >= spdlog::level::warn ? "warning: " + text : text);
  }

  void finish() {
    std::lock_guard lock(mu_);
    if (tty_ && dirty_) std::fprintf(stderr, "\n");
    dirty_ = false;
  }

 private:
  void clear_locked() {
    if (tty_ && dirty_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      dirty_ = false;
    }
  }
  bool tty_;
  bool show_progress_;
  spdlog::logger log_;
  bool dirty_ = false;
  bool stdout_closed_ = false;
  double next_plain_ = 10;
  std::mutex mu_;
};

fuzz::CampaignResult run_campaign_with_output(fuzz::CampaignOptions options,
                                              const FuzzFlags& flags) {
  options.stop = &host::install_interrupt_handler();
  const auto level = flags.log_level.empty()
                         ? (flags.quiet ? spdlog::level::warn : spdlog::level::info)
                         : spdlog::level::from_str(flags.log_level);
  ProgressPrinter printer(!flags.quiet, level);
  fuzz::CampaignCallbacks cb;
  cb.on_progress = [&](const bundles::Progress& p) { printer.progress(p); };
  cb.on_log = [&](fuzz::LogLevel l, const std::string& s) {
    printer.log(l == fuzz::LogLevel::kWarning ? spdlog::level::warn : spdlog::level::info, s);
  };
  cb.on_finding = [&](const fuzz::Finding& f) {
    std::string text =
        "finding: " + f.signature + " (case " + std::to_string(f.case_index) + "): " + f.summary;
    if (!f.bundle_dir.empty()) {
      text += "\n  bundle: " + f.bundle_dir + (f.bundle_written ? "" : " (written by another run)");
    }
    if (!f.error.empty()) text += "\n  bundle not written: " + f.error;
    text += "\nreplay: " + f.replay;
    printer.line(stdout, text);
  };
  std::string budget;
  if (options.time_limit) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " %gs", options.time_limit->count() / 1000.0);
    budget += buf;
  }
  if (options.max_cases) budget += " " + std::to_string(*options.max_cases) + " cases";
  // Which build the findings belong to, in the log and in every bundle.
  options.system_identity = oracle::system_of(options.base).identity();
  const std::string header =
      "aotfuzz fuzz: seed " + std::to_string(options.seed) + " (shard " +
      std::to_string(options.shard.index) + "/" + std::to_string(options.shard.count) + ", " +
      std::to_string(options.jobs) + " jobs," + budget + ", compiler " +
      resolved_compiler(options) + ", findings " +
      (options.findings_dir.empty() ? "(none)" : options.findings_dir.string()) + ")" +
      (options.system_identity.empty() ? "" : "\nsystem: " + options.system_identity);
  // A campaign restarted by its supervisor goes on under the header already printed.
  if (options.journal == nullptr || options.journal->children.load() <= 1) {
    printer.line(stdout, header);
  }
  fuzz::CampaignResult r = fuzz::run_campaign(options, cb);
  printer.finish();
  printer.line(stdout, fuzz::format_summary(r, options));
  return r;
}

Command register_fuzz(CLI::App& parent) {
  auto f = std::make_shared<FuzzFlags>();
  Command c;
  c.app = parent.add_subcommand("fuzz", "Run a fuzzing campaign (default: 60 s on all cores)");
  add_fuzz_flags(c.app, *f, /*full=*/true);
  CLI::App* app = c.app;
  c.run = [f, app] {
    fuzz::CampaignOptions o = campaign_options(app, *f, given(app, "--seed"));
    if (!f->findings.empty()) check_output_dir(f->findings, "--findings", "fuzz");
    if (!f->stats.empty()) check_output_file(f->stats, "--stats", "fuzz");
    // The campaign runs in a child process that a supervisor restarts when a case's in-process
    // steps crash or hang (fuzz/crash_journal.h); the child prints, bundles and writes the stats.
    // Everything the campaign's processes put in temporary files lives under one root.
    const host::ScopedTempRoot temp_root;
    fuzz::SupervisorOptions so;
    so.in_process_budget = o.base.in_process_budget;
    so.stop = &host::install_interrupt_handler();
    so.on_stop = [&o](const fuzz::CrashJournal& journal) {
      std::printf("%s\n", fuzz::format_summary(fuzz::result_of(journal), o).c_str());
      std::fflush(stdout);
    };
    return fuzz::run_supervised(
        [&](fuzz::CrashJournal& journal) {
          o.journal = &journal;
          fuzz::CampaignResult r = run_campaign_with_output(o, *f);
          if (!f->stats.empty()) {
            std::ofstream out(f->stats);
            out << fuzz::to_json(r, o).dump(2) << "\n";
            if (!out) {
              std::fprintf(stderr, "aotfuzz: cannot write %s\n", f->stats.c_str());
              return static_cast<int>(kInternal);
            }
          }
          return r.exit_code();
        },
        so, [](const std::string& line) { std::fprintf(stderr, "aotfuzz: %s\n", line.c_str()); });
  };
  return c;
}

}  // namespace aotfuzz::cli
