// A campaign's statistics: its counters, the one aggregation that adds them up, what a judged
// case adds to them, and the progress snapshot drawn from them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"

namespace aotfuzz::bundles {

/// Counters of a campaign (all cases of this run). Every member is a std::uint64_t count summed
/// over cases: operator+= adds them all as one array, so a new member must be one too.
struct CampaignStats {
  std::uint64_t cases = 0;
  std::uint64_t generator_errors = 0;
  /// Generated graphs over the memory budget (reference::over_memory_budget): skipped, not judged.
  std::uint64_t over_budget = 0;
  /// verdicts[kind][stage]
  std::array<std::array<std::uint64_t, oracle::kNumStages>, oracle::kNumVerdictKinds> verdicts{};
  /// Cases whose verdict was a finding (not only the unique ones).
  std::uint64_t finding_cases = 0;
  /// Generated graph features, summed over cases (generator::graph_stats).
  std::uint64_t ops = 0, inputs = 0, regions = 0, multi_output_regions = 0, tuples = 0,
                tuple_get_items = 0, host_ops_between_regions = 0, ends_on_tuples = 0,
                multi_end_values = 0, outputs = 0;
  /// Cases with at least one multi-output region / duplicate outputs.
  std::uint64_t cases_with_multi_output_region = 0, cases_with_duplicate_outputs = 0;
  /// Cases with a region of a target TVM lowers with a RelayToTIR hook (oracle::
  /// kHookLoweredTargets: the driver's UMA backend), the other path of BYOC than the ccompiler's.
  std::uint64_t cases_with_hook_lowered_region = 0;
  /// ... of which draw what the ccompiler cannot take: rank other than 2, int8, broadcasting, or
  /// the unpacked API.
  std::uint64_t hook_lowered_beyond_ccompiler = 0;
  /// Tuple-typed parameters of fused primitive functions (the #9036 shape), and cases with one.
  std::uint64_t fused_tuple_params = 0, cases_with_fused_tuple_param = 0;
  /// Tuple-typed parameters of @main.
  std::uint64_t main_tuple_params = 0;
  /// Pipeline options drawn.
  std::uint64_t merge_on = 0, api_unpacked = 0, interface_c = 0, storage_reuse_on = 0;
  /// The AoT executor's memory configuration drawn (oracle::MemoryOptions): cases with USMP, by
  /// its algorithm, with external pools, with I/O in the workspace, without linked parameters.
  std::uint64_t usmp_on = 0, usmp_greedy_by_size = 0, usmp_greedy_by_conflicts = 0,
                usmp_hill_climb = 0, pools_external = 0, workspace_io = 0, link_params_off = 0;
  /// Summed stage times, microseconds: pipeline (reference, passes and codegen, as run_case's
  /// pipeline_time), and the phases of a case: generation, passes (the reference and every
  /// pass, interpreted), codegen (C, harness, static checks), compile (a batch's compile time
  /// shared among its cases), run (the case's own process or child), waiting (for lower cases
  /// before claiming a finding).
  std::uint64_t pipeline_us = 0, compile_us = 0, run_us = 0;
  std::uint64_t generation_us = 0, passes_us = 0, codegen_us = 0, waiting_us = 0;

  std::uint64_t count(oracle::VerdictKind kind) const;
  /// Seconds per phase out of `worker_seconds` (elapsed time x jobs: every worker's wall time):
  /// generation, passes, codegen, compile, run, waiting, and "other", the worker time in none of
  /// them (judging and counting, the runner's pipes and forks, confirming findings, reductions,
  /// idle workers at the end). The one definition the summary, --stats and fuzzer_stats share.
  std::vector<std::pair<std::string, double>> phase_seconds(double worker_seconds) const;
  /// Adds every counter of `other`.
  CampaignStats& operator+=(const CampaignStats& other);
};

/// What one judged case adds to the counters: the case, its verdict, its graph's features (none
/// when generator::graph_stats refuses the graph), the pipeline options it was drawn, its phase
/// times (`generation_us`: its generation), and a finding case when `finding`.
CampaignStats case_stats(const ir::Module& module, const oracle::CaseOptions& options,
                         const oracle::CaseResult& result, std::uint64_t generation_us,
                         bool finding);

/// A snapshot for the progress line.
struct Progress {
  double elapsed_s = 0;
  std::uint64_t cases = 0;
  std::uint64_t finding_cases = 0;
  std::size_t unique_signatures = 0;
  std::uint64_t toolchain_errors = 0;
  /// Cases by verdict kind (all stages).
  std::array<std::uint64_t, oracle::kNumVerdictKinds> verdicts{};
  /// Seconds into the campaign of its last new unique finding; negative when none yet.
  double last_new_finding_s = -1;
};

/// The progress of a campaign `elapsed_s` seconds in, with these counters, `unique_signatures`
/// (new and known) and its last new finding (negative: none yet).
Progress progress_of(const CampaignStats& stats, double elapsed_s, std::size_t unique_signatures,
                     double last_new_finding_s);

/// The statistics as the --stats JSON and fuzzer_stats hold them.
nlohmann::json stats_json(const CampaignStats& stats);

}  // namespace aotfuzz::bundles
