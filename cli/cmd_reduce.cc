// `aotfuzz reduce FILE`: minimize a graph while its verdict signature stays the same.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "fuzz/bundle.h"
#include "fuzz/campaign.h"
#include "fuzz/interrupt.h"
#include "fuzz/reducer.h"
#include "fuzz/replay.h"
#include "oracle/verdict.h"

namespace aotfuzz::cli {
namespace {

bool any_pipeline_flag(CLI::App* app) {
  for (const char* name :
       {"--merge", "--mod-name", "--api", "--interface", "--storage-reuse", "--check-num-args",
        "--inject", "--cc", "--sanitize", "--input-seed", "--ulp"}) {
    if (given(app, name)) return true;
  }
  return false;
}

std::string size_text(const fuzz::ModuleSize& s) {
  return std::to_string(s.ops) + " ops, " + std::to_string(s.inputs) + " inputs, " +
         std::to_string(s.annotations) + " annotations";
}

}  // namespace

Command register_reduce(CLI::App& parent) {
  struct Opts {
    std::string file;
    std::string out;
    std::string signature;
    PipelineFlags flags;
    int jobs = 0;
    double time = 0;
    std::vector<std::string> passes;
    bool list_passes = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "reduce", "Minimize a graph, keeping its verdict signature (graph-aware steps)");
  c.app->add_option("FILE", opts->file, "Relay text file");
  c.app->add_option("--out,-o", opts->out, "Write the reduced graph here (default: stdout)");
  c.app->add_option("--signature", opts->signature,
                    "Keep this signature (default: the file's verdict with these flags)");
  c.app->add_option("--jobs,-j", opts->jobs, "Candidates evaluated in parallel (default: cores)");
  c.app->add_option("--time", opts->time, "Stop after this many seconds (default: no limit)");
  c.app->add_option("--passes", opts->passes, "Only these reduction passes (see --list-passes)")
      ->delimiter(',');
  c.app->add_flag("--list-passes", opts->list_passes, "List the reduction passes and exit");
  add_pipeline_flags(c.app, opts->flags, /*toolchain=*/true);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    if (opts->list_passes) {
      for (const auto& row : fuzz::reduction_pass_table()) {
        std::printf("%-22s %s\n", std::string(row.name).c_str(),
                    std::string(row.description).c_str());
      }
      return kOk;
    }
    if (opts->file.empty()) throw CommandError(kBadInput, "reduce: FILE is required");
    ir::Module m = load_module(opts->file);
    oracle::CaseOptions options = case_options(opts->flags);
    std::string flags_text = oracle::replay_flags(options);
    std::string target = opts->signature;
    // Without flags, a bundle or corpus file says how it fails: take its first finding line.
    if (!any_pipeline_flag(app)) {
      std::vector<fuzz::ReplayLine> lines;
      try {
        lines = fuzz::parse_replay_lines(read_file(opts->file), opts->file);
      } catch (const fuzz::ReplayError& e) {
        throw CommandError(kBadInput, e.what());
      }
      for (const auto& line : lines) {
        if (fuzz::signature_matches("pass", line.expected) ||
            fuzz::signature_matches("invalid-input", line.expected)) {
          continue;
        }
        options = fuzz::parse_case_flags(line.flags);
        flags_text = line.flags;
        std::fprintf(stderr, "reduce: using the flags of %s:%d: %s\n", opts->file.c_str(),
                     line.line, line.flags.c_str());
        break;
      }
    }
    const oracle::Verdict original = oracle::run_case(m, options).verdict;
    if (target.empty()) {
      if (!oracle::is_finding(original)) {
        throw CommandError(kBadInput, "reduce: " + opts->file + " gives " +
                                          oracle::summary(original) +
                                          " with these flags: nothing to reduce (use --signature)");
      }
      target = oracle::signature(original);
    }
    fuzz::ReduceOptions ro;
    ro.jobs = opts->jobs > 0 ? opts->jobs
                             : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ro.time_limit = std::chrono::milliseconds(static_cast<std::int64_t>(opts->time * 1000));
    ro.stop = &fuzz::install_interrupt_handler();
    for (const auto& name : opts->passes) {
      auto pass = fuzz::parse_reduction_pass(name);
      if (!pass) throw CommandError(kBadInput, "reduce: unknown pass '" + name + "'");
      ro.passes.push_back(*pass);
    }
    ro.on_step = [](fuzz::ReductionPass pass, const ir::Module& now) {
      auto s = fuzz::module_size(now);
      std::fprintf(
          stderr, "reduce: %-22s -> %s\n",
          std::string(fuzz::reduction_pass_table()[static_cast<unsigned>(pass)].name).c_str(),
          size_text(s).c_str());
    };
    std::fprintf(stderr, "reduce: %s: keeping %s (flags: %s), %d jobs\n", opts->file.c_str(),
                 target.c_str(), flags_text.c_str(), ro.jobs);
    // With injected bugs, candidates must also pass without them (a repro of the injected bug).
    fuzz::ReduceResult r = fuzz::reduce(m, fuzz::finding_predicate(options, target), ro);
    if (r.steps == 0 && !r.minimal && options.pipeline.bugs.any()) {
      r = fuzz::reduce(m, fuzz::same_signature(options, target), ro);
    }
    if (r.evaluated == 1 && r.steps == 0 && !r.minimal) {
      throw CommandError(kBadInput, "reduce: " + opts->file + " does not give " + target);
    }
    std::fprintf(
        stderr,
        "reduce: %zu steps in %.1fs (%zu runs, %zu cache hits, %zu candidates rejected)%s\n"
        "reduce: before: %s\nreduce: after:  %s\n",
        r.steps, r.elapsed.count() / 1000.0, r.evaluated, r.cache_hits, r.rejected,
        r.minimal ? ", 1-minimal" : " (cut short)", size_text(r.before).c_str(),
        size_text(r.after).c_str());
    std::vector<std::string> header = {
        "origin: reduced by `aotfuzz reduce` from " + opts->file,
        "reduced: ops " + std::to_string(r.before.ops) + " -> " + std::to_string(r.after.ops) +
            ", inputs " + std::to_string(r.before.inputs) + " -> " +
            std::to_string(r.after.inputs) + ", " + std::to_string(r.steps) + " steps" +
            (r.minimal ? " (1-minimal)" : ""),
        "finding: " + target, fuzz::format_replay_line(flags_text, target).substr(3)};
    const std::string text = fuzz::relay_with_header(r.module, header);
    if (opts->out.empty()) {
      std::cout << text;
    } else {
      std::ofstream out(opts->out, std::ios::binary);
      out << text;
      if (!out) throw CommandError(kInternal, "cannot write " + opts->out);
      std::fprintf(stderr, "reduce: wrote %s\nreplay: aotfuzz run %s %s\n", opts->out.c_str(),
                   opts->out.c_str(), flags_text.c_str());
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
