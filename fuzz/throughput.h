// `aotfuzz bench`: cases per second of the same fixed-seed cases three ways, side by side: the
// batched campaign, the single-case campaign, and the floor of one compiler process and one
// program process per case (the emitted sources only, no pipeline work timed). For a system whose
// programs are not batched (TVM), two ways: its own path (its work for some cases overlapping the
// programs of others, SystemUnderTest::preparing_batch) and one case at a time, each with its
// phases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/campaign.h"

namespace aotfuzz::fuzz {

/// What to measure.
struct ThroughputOptions {
  /// Campaign seed, cases, jobs, policy, compiler (base.compiler) and injected bugs; findings are
  /// neither reduced nor bundled.
  CampaignOptions campaign;
  /// Measurement rounds, each batched then single then floor; rates are the medians.
  int rounds = 1;
  /// Skip the single-case campaign and the floor (the batched rate only).
  bool batched_only = false;
};

/// One mode's measurement.
struct ModeThroughput {
  std::string mode;  ///< "batched", "single", "floor"; "default", "one-case" (no batches)
  std::vector<double> cases_per_s;  ///< one per round
  double median = 0;
  std::uint64_t cases = 0;
  /// Verdict signature counts ("pass" 812, ...) of the first round (campaign modes).
  std::vector<std::pair<std::string, std::uint64_t>> signatures;
  /// Shares of the workers' time in the first round (campaign modes): the system's own steps
  /// (CaseResult::system_steps), the rest of preparing, codegen, compile, run, and other.
  std::vector<std::pair<std::string, double>> phase_shares;
  /// What the system's own steps alone allow (first round, campaign modes): cases per second if
  /// each of the jobs did nothing but them, at the speed they were measured (0: no own steps).
  /// TVM's lane is bounded by TVM's work per graph, which no change to aotfuzz makes faster.
  double system_bound = 0;
};

struct ThroughputResult {
  /// The compiler the cases used ("tcc", "gcc", "clang").
  std::string compiler;
  std::vector<ModeThroughput> modes;
  /// Whether the two campaign modes gave the same signature counts.
  std::optional<bool> same_signatures;
};

/// Runs the measurement. Throws CampaignError on bad options.
ThroughputResult measure_throughput(const ThroughputOptions& options);

/// The printed report (lines, no trailing newline).
std::string format_throughput(const ThroughputResult& result, const ThroughputOptions& options);

}  // namespace aotfuzz::fuzz
