// `aotfuzz bench`: batched campaign vs single-case campaign vs the one-process-per-case floor, on
// the same fixed-seed cases, with the ratios.
#include <cstdio>
#include <thread>

#include "cli/common.h"
#include "fuzz/campaign_cases.h"
#include "fuzz/throughput.h"
#include "ir/error.h"
#include "oracle/executor.h"

namespace aotfuzz::cli {

Command register_bench(CLI::App& parent) {
  struct Opts {
    std::uint64_t cases = 1000;
    std::uint64_t seed = 9036;
    int jobs = 0;
    int rounds = 1;
    bool batched_only = false;
    PipelineFlags flags;
    std::vector<std::string> knobs;
    int size = 0;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "bench",
      "Cases per second: batched campaign, single-case campaign, one process per case (--sut "
      "tvm: the system's own path and one case at a time, with the phases)");
  c.app->add_option("--cases", opts->cases, "Cases per mode and round (default 1000)")
      ->transform(unsigned_decimal(1));
  c.app->add_option("--seed", opts->seed, "Campaign seed (default 9036)")
      ->transform(unsigned_decimal(0));
  c.app->add_option("--jobs,-j", opts->jobs, "Worker threads (default: all cores)")
      ->check(jobs_range());
  c.app->add_option("--rounds", opts->rounds, "Rounds of the three modes; medians are printed")
      ->check(CLI::Range(1, 1000));
  c.app->add_flag("--batched-only", opts->batched_only,
                  "Measure the batched campaign only (--sut tvm: the system's own path only)");
  add_policy_flags(c.app, opts->knobs, opts->size);
  add_pipeline_flags(c.app, opts->flags, oracle::kBench);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    fuzz::ThroughputOptions t;
    t.campaign.base = case_options(opts->flags);
    t.campaign.policy = policy_from_flags(opts->knobs, opts->size, "bench");
    const oracle::SystemUnderTest& system = oracle::system_of(t.campaign.base);
    within_system_limits(t.campaign.policy, opts->knobs, system, "bench");
    // As in a campaign: the options given are fixed, the others drawn per case.
    fuzz::fix_drawn_knobs(
        t.campaign.policy, t.campaign.base,
        [app](const oracle::CaseFlagRow& row) { return given(app, "--" + std::string(row.name)); });
    t.campaign.seed = opts->seed;
    t.campaign.max_cases = opts->cases;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    t.campaign.jobs = opts->jobs > 0 ? opts->jobs : static_cast<int>(cores);
    t.campaign.knob_flags = knob_flags(t.campaign.policy);
    t.rounds = opts->rounds;
    t.batched_only = opts->batched_only;
    const auto kind = t.campaign.base.compiler.value_or(host::CompilerKind::kTcc);
    const auto found = t.campaign.base.compiler ? host::locate_toolchain(kind)
                                                : host::locate_default_toolchain();
    if (auto* why = std::get_if<std::string>(&found)) {
      throw CommandError(kInternal, "bench: no C compiler found: " + *why);
    }
    if (system.batches_programs() &&
        !oracle::batched_execution_available(std::get<host::Toolchain>(found).kind)) {
      throw CommandError(kInternal,
                         "bench: batched execution is not available (aotfuzz-runner "
                         "missing, or tcc without libtcc)");
    }
    const fuzz::ThroughputResult r = fuzz::measure_throughput(t);
    std::printf("%s\n", fuzz::format_throughput(r, t).c_str());
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
