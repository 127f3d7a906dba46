// `aotfuzz reduce FILE`: minimize a graph while its verdict signature stays the same.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "bundles/bundle.h"
#include "bundles/replay.h"
#include "fuzz/campaign.h"
#include "host/interrupt.h"
#include "oracle/verdict.h"
#include "reduce/reduce_file.h"
#include "reduce/reducer.h"

namespace aotfuzz::cli {
namespace {

std::string size_text(const reduce::ModuleSize& s) {
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
  c.app->add_option("--jobs,-j", opts->jobs, "Candidates evaluated in parallel (default: cores)")
      ->check(jobs_range());
  c.app->add_option("--time", opts->time, "Stop after this many seconds (default: no limit)")
      ->check(positive_seconds());
  c.app->add_option("--passes", opts->passes, "Only these reduction passes (see --list-passes)")
      ->delimiter(',');
  c.app->add_flag("--list-passes", opts->list_passes, "List the reduction passes and exit");
  add_pipeline_flags(c.app, opts->flags, oracle::kReduce);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    if (opts->list_passes) {
      for (const auto& row : reduce::reduction_pass_table()) {
        std::printf("%-22s %s\n", std::string(row.name).c_str(),
                    std::string(row.description).c_str());
      }
      return kOk;
    }
    if (opts->file.empty()) throw CommandError(kBadInput, "reduce: FILE is required");
    reduce::ReduceFileRequest request;
    request.file = opts->file;
    request.text = read_file(opts->file);
    request.module = load_module(opts->file);
    request.options = case_options(opts->flags);
    request.flags_given = any_pipeline_flag(app);
    request.settings = setting_flags(opts->flags);
    // The reduction may take minutes; its result must not be lost to a bad path at the end.
    if (!opts->out.empty()) check_output_file(opts->out, "--out", "reduce");
    request.signature = opts->signature;
    reduce::ReduceOptions& ro = request.reduce;
    ro.jobs = opts->jobs > 0 ? opts->jobs
                             : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ro.time_limit = std::chrono::milliseconds(static_cast<std::int64_t>(opts->time * 1000));
    ro.stop = &host::install_interrupt_handler();
    for (const auto& name : opts->passes) {
      auto pass = reduce::parse_reduction_pass(name);
      if (!pass) throw CommandError(kBadInput, "reduce: unknown pass '" + name + "'");
      ro.passes.push_back(*pass);
    }
    ro.on_step = [](reduce::ReductionPass pass, const ir::Module& now) {
      std::fprintf(
          stderr, "reduce: %-22s -> %s\n",
          std::string(reduce::reduction_pass_table()[static_cast<unsigned>(pass)].name).c_str(),
          size_text(reduce::module_size(now)).c_str());
    };
    reduce::ReductionPlan plan;
    reduce::ReducedFile reduced;
    try {
      plan = reduce::plan_reduction(request);
      if (plan.flags_from) {
        std::fprintf(stderr, "reduce: using the flags of %s:%d: %s\n", opts->file.c_str(),
                     plan.flags_from->line, plan.flags.c_str());
      }
      std::fprintf(stderr, "reduce: %s: keeping %s (flags: %s), %d jobs\n", opts->file.c_str(),
                   plan.signature.c_str(), plan.flags.c_str(), ro.jobs);
      reduced = reduce::reduce_file(request, plan);
    } catch (const reduce::ReduceFileError& e) {
      throw CommandError(kBadInput, e.what());
    }
    const reduce::ReduceResult& r = reduced.result;
    std::fprintf(
        stderr,
        "reduce: %zu steps in %.1fs (%zu runs, %zu cache hits, %zu candidates rejected)%s\n"
        "reduce: before: %s\nreduce: after:  %s\n",
        r.steps, r.elapsed.count() / 1000.0, r.evaluated, r.cache_hits, r.rejected,
        r.minimal ? ", 1-minimal" : " (cut short)", size_text(r.before).c_str(),
        size_text(r.after).c_str());
    const std::string& text = reduced.text;
    const std::string& flags_text = plan.flags;
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
