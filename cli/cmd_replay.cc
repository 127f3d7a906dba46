// `aotfuzz replay FILE|DIR...`: replay corpus files against the verdicts their headers expect.
#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "bundles/replay.h"
#include "host/interrupt.h"
#include "report/junit.h"
#include "report/junit_suites.h"
#include "report/sarif.h"
#include "systems/systems.h"

namespace aotfuzz::cli {

std::vector<bundles::FileReplay> replay_and_print(const std::vector<std::string>& paths, int jobs,
                                                   bool quiet,
                                                   const bundles::ReplayOverride& override) {
  std::vector<std::string> files;
  try {
    files = bundles::collect_relay_files(paths);
  } catch (const bundles::ReplayError& e) {
    throw CommandError(kBadInput, std::string("replay: ") + e.what());
  }
  // A malformed header is bad input, found before anything runs: one line, file:line first.
  for (const auto& file : files) {
    try {
      bundles::parse_replay_lines(read_file(file), file);
    } catch (const bundles::ReplayError& e) {
      throw CommandError(kBadInput, std::string("replay: ") + e.what());
    }
  }
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto results = bundles::replay_files(files, jobs, override);
  std::size_t passed = 0, failed = 0, cannot_run = 0, not_run = 0;
  std::string environment;  // the first reason, said once in the total
  for (const auto& r : results) {
    const bool ran = !r.interrupted || !r.runs.empty() || !r.error.empty();
    if (r.ok()) {
      ++passed;
    } else if (r.failed()) {
      ++failed;
    } else if (r.cannot_run()) {
      ++cannot_run;
      for (const auto& run : r.runs) {
        if (run.environment && environment.empty()) environment = run.summary;
      }
    } else {
      ++not_run;
    }
    // A file the stop request came before says nothing; one cut short says so.
    if (!ran) continue;
    if (!quiet || !r.ok()) std::printf("%s\n", report::replay_status_line(r).c_str());
    if (r.failed() || r.cannot_run()) std::printf("%s", r.failure_text().c_str());
  }
  std::printf("replay: %zu files, %zu passed, %zu failed", results.size(), passed, failed);
  if (cannot_run > 0) {
    std::printf(", %zu could not run (the environment, not the pipeline: %s)", cannot_run,
                environment.c_str());
  }
  if (not_run > 0) std::printf(", %zu not run (interrupted)", not_run);
  std::printf("\n");
  std::fflush(stdout);
  return results;
}

int replay_exit_code(const std::vector<bundles::FileReplay>& results) {
  bool interrupted = false, environment = false;
  for (const auto& r : results) {
    if (r.failed()) return kFinding;
    interrupted |= r.interrupted;
    environment |= r.cannot_run();
  }
  if (interrupted) return kInterrupted;
  return environment ? kInternal : kOk;
}

void write_sarif(const std::string& path, const std::vector<bundles::FileReplay>& replays,
                 const std::vector<fuzz::Finding>& findings) {
  std::ofstream out(path, std::ios::binary);
  out << report::sarif_log(AOTFUZZ_VERSION, replays, findings).dump(2) << "\n";
  if (!out) throw CommandError(kInternal, "cannot write " + path);
}

void write_junit(const std::string& path, const std::vector<report::JUnitSuite>& suites) {
  std::ofstream out(path, std::ios::binary);
  out << report::junit_xml(suites);
  if (!out) throw CommandError(kInternal, "cannot write " + path);
}

Command register_replay(CLI::App& parent) {
  struct Opts {
    std::vector<std::string> paths;
    std::string junit;
    std::string sarif;
    int jobs = 0;
    bool quiet = false;
    PipelineFlags system;
    bool no_run = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "replay", "Replay corpus files against their `// replay: <flags> => <signature>` lines");
  c.app->add_option("PATHS", opts->paths, "Files or directories (searched for *.relay)")
      ->required();
  c.app->add_option("--junit", opts->junit, "Write a JUnit XML report");
  c.app->add_option("--sarif", opts->sarif,
                    "Write a SARIF 2.1.0 log: one result per unmet expectation, at its file and "
                    "line, with the command that replays it");
  c.app->add_option("--jobs,-j", opts->jobs, "Files replayed in parallel (default: cores)")
      ->check(jobs_range());
  c.app->add_flag("--quiet,-q", opts->quiet, "Print only failures and the total");
  add_pipeline_flags(c.app, opts->system, oracle::kReplay);
  c.app->add_flag("--no-run", opts->no_run,
                  "Compile and run nothing: stages and static checks only (--sut tvm: compare "
                  "the partitioned modules)");
  c.run = [opts] {
    bundles::ReplayOverride override;
    // The system the flags choose runs every line (case_options refuses a home without it).
    override.sut = chosen_system(opts->system);
    override.no_run = opts->no_run;
    if (!opts->junit.empty()) check_output_file(opts->junit, "--junit", "replay");
    if (!opts->sarif.empty()) check_output_file(opts->sarif, "--sarif", "replay");
    // Ctrl-C stops the replay between lines: what ran is reported, the rest is not run.
    override.stop = &host::install_interrupt_handler();
    auto results = replay_and_print(opts->paths, opts->jobs, opts->quiet, override);
    if (!opts->junit.empty()) write_junit(opts->junit, {report::replay_suite(results)});
    if (!opts->sarif.empty()) write_sarif(opts->sarif, results, {});
    return replay_exit_code(results);
  };
  return c;
}

}  // namespace aotfuzz::cli
