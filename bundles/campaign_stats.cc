// A campaign's statistics: the counters as one array for their sum, and a case's share of them.
#include "bundles/campaign_stats.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <optional>
#include <type_traits>

#include "generator/stats.h"
#include "ir/traversal.h"

namespace aotfuzz::bundles {
namespace {

// The counters seen as one array: a sum that no new counter can be left out of. No padding may
// hide between them, or the array would not be the counters.
constexpr std::size_t kNumCounters = sizeof(CampaignStats) / sizeof(std::uint64_t);
using Counters = std::array<std::uint64_t, kNumCounters>;
static_assert(std::has_unique_object_representations_v<CampaignStats> &&
                  sizeof(Counters) == sizeof(CampaignStats),
              "every member of CampaignStats must be a std::uint64_t count");

// Tuple-typed parameters of the primitive functions in a fused @main.
std::size_t fused_tuple_params(const ir::Module& fused) {
  std::size_t n = 0;
  for (const auto& node : fused.main()->body_order()) {
    if (const auto* fn = ir::as<ir::FunctionNode>(node)) {
      for (const auto& p : fn->params()) n += p->type()->is_tuple() ? 1 : 0;
    }
  }
  return n;
}

// Whether an annotation of @main names a target TVM lowers with a RelayToTIR hook.
bool has_hook_lowered_region(const ir::Module& module) {
  for (const auto& node : module.main()->body_order()) {
    const auto target = ir::annotation_target(node.get());
    if (target &&
        std::find(std::begin(oracle::kHookLoweredTargets), std::end(oracle::kHookLoweredTargets),
                  *target) != std::end(oracle::kHookLoweredTargets)) {
      return true;
    }
  }
  return false;
}

// Whether a graph with a hook-lowered region draws what the ccompiler cannot take (the TVM
// lane's limits, tvm/system.cc): a tensor of rank other than 2, int8, a broadcasting op, or the
// unpacked API, which calls a ccompiler function with the wrong signature.
bool beyond_ccompiler(const ir::Module& module, const oracle::CaseOptions& options) {
  if (options.aot.api == aot::Options::Api::kUnpacked) return true;
  for (const auto& node : module.main()->body_order()) {
    const auto& type = node->type();
    if (!type->is_tuple() && (type->shape().size() != 2 || type->dtype() == ir::DType::kInt8)) {
      return true;
    }
    if (const auto* call = ir::as<ir::CallNode>(node.get()); call && call->op()) {
      for (const auto& arg : call->args()) {
        if (!arg->type()->is_tuple() && arg->type()->shape() != type->shape()) return true;
      }
    }
  }
  return false;
}

std::uint64_t micros(std::chrono::microseconds t) { return static_cast<std::uint64_t>(t.count()); }

}  // namespace

std::uint64_t CampaignStats::count(oracle::VerdictKind kind) const {
  std::uint64_t n = 0;
  for (auto v : verdicts[static_cast<int>(kind)]) n += v;
  return n;
}

std::vector<std::pair<std::string, double>> CampaignStats::phase_seconds(
    double worker_seconds) const {
  std::vector<std::pair<std::string, double>> out{
      {"generation", static_cast<double>(generation_us) / 1e6},
      {"passes", static_cast<double>(passes_us) / 1e6},
      {"codegen", static_cast<double>(codegen_us) / 1e6},
      {"compile", static_cast<double>(compile_us) / 1e6},
      {"run", static_cast<double>(run_us) / 1e6},
      {"waiting", static_cast<double>(waiting_us) / 1e6},
  };
  double known = 0;
  for (const auto& [name, secs] : out) known += secs;
  out.emplace_back("other", std::max(0.0, worker_seconds - known));
  return out;
}

CampaignStats& CampaignStats::operator+=(const CampaignStats& other) {
  Counters sum = std::bit_cast<Counters>(*this);
  const Counters add = std::bit_cast<Counters>(other);
  for (std::size_t i = 0; i < kNumCounters; ++i) sum[i] += add[i];
  *this = std::bit_cast<CampaignStats>(sum);
  return *this;
}

CampaignStats case_stats(const ir::Module& module, const oracle::CaseOptions& options,
                         const oracle::CaseResult& result, std::uint64_t generation_us,
                         bool finding) {
  CampaignStats s;
  s.cases = 1;
  ++s.verdicts[static_cast<int>(result.verdict.kind())][static_cast<int>(result.verdict.stage)];
  s.finding_cases = finding ? 1 : 0;
  std::optional<generator::GraphStats> g;
  try {
    g = generator::graph_stats(module);
  } catch (const std::exception&) {
  }
  if (g) {
    s.ops = g->ops;
    s.inputs = g->inputs;
    s.regions = g->regions;
    s.multi_output_regions = g->multi_output_regions;
    s.tuples = g->tuples;
    s.tuple_get_items = g->tuple_get_items;
    s.host_ops_between_regions = g->host_ops_between_regions;
    s.ends_on_tuples = g->ends_on_tuples;
    s.multi_end_values = g->multi_end_values;
    s.outputs = g->outputs;
    s.cases_with_multi_output_region = g->multi_output_regions > 0;
    s.cases_with_duplicate_outputs = g->duplicate_outputs;
  }
  s.cases_with_hook_lowered_region = has_hook_lowered_region(module);
  s.hook_lowered_beyond_ccompiler =
      s.cases_with_hook_lowered_region && beyond_ccompiler(module, options);
  s.fused_tuple_params = result.stages ? fused_tuple_params(result.stages->output()) : 0;
  s.cases_with_fused_tuple_param = s.fused_tuple_params > 0;
  for (const auto& p : module.main()->params()) s.main_tuple_params += p->type()->is_tuple();
  s.merge_on = options.aot.merge;
  s.api_unpacked = options.aot.api == aot::Options::Api::kUnpacked;
  s.interface_c = options.aot.interface == aot::Options::Interface::kC;
  s.storage_reuse_on = options.aot.storage_reuse;
  const oracle::MemoryOptions& m = options.memory;
  s.usmp_on = m.usmp;
  s.usmp_greedy_by_size = m.usmp && m.usmp_algorithm == "greedy_by_size";
  s.usmp_greedy_by_conflicts = m.usmp && m.usmp_algorithm == "greedy_by_conflicts";
  s.usmp_hill_climb = m.usmp && m.usmp_algorithm == "hill_climb";
  s.pools_external = m.pools == oracle::MemoryOptions::Pools::kExternal;
  s.workspace_io = m.workspace_io;
  s.link_params_off = !m.link_params;
  s.generation_us = generation_us;
  s.passes_us = micros(result.pipeline_time - result.codegen_time);
  s.codegen_us = micros(result.codegen_time);
  s.pipeline_us = micros(result.pipeline_time);
  s.compile_us = micros(result.compile_time);
  s.run_us = micros(result.run_time);
  return s;
}

Progress progress_of(const CampaignStats& stats, double elapsed_s, std::size_t unique_signatures,
                     double last_new_finding_s) {
  Progress p;
  p.elapsed_s = elapsed_s;
  p.cases = stats.cases;
  p.finding_cases = stats.finding_cases;
  p.unique_signatures = unique_signatures;
  p.toolchain_errors = stats.count(oracle::VerdictKind::kToolchainError);
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    p.verdicts[static_cast<std::size_t>(k)] = stats.count(static_cast<oracle::VerdictKind>(k));
  }
  p.last_new_finding_s = last_new_finding_s;
  return p;
}

nlohmann::json stats_json(const CampaignStats& s) {
  using nlohmann::json;
  json verdicts = json::object();
  // Every stage of the pipeline, even one nothing was attributed to: the keys are the stage list.
  json stages = json::object();
  for (int st = 0; st < oracle::kNumStages; ++st) {
    stages[std::string(oracle::stage_name(static_cast<oracle::Stage>(st)))] = std::uint64_t{0};
  }
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    const auto kind = static_cast<oracle::VerdictKind>(k);
    json per_stage = json::object();
    for (int st = 0; st < oracle::kNumStages; ++st) {
      const auto n = s.verdicts[k][st];
      if (n == 0) continue;
      const std::string stage(oracle::stage_name(static_cast<oracle::Stage>(st)));
      per_stage[stage] = n;
      stages[stage] = stages.value(stage, std::uint64_t{0}) + n;
    }
    verdicts[std::string(oracle::verdict_kind_name(kind))] = {{"total", s.count(kind)},
                                                              {"stages", per_stage}};
  }
  return {
      {"cases", s.cases},
      {"verdicts", verdicts},
      {"stages", stages},
      {"features",
       {{"ops", s.ops},
        {"inputs", s.inputs},
        {"outputs", s.outputs},
        {"regions", s.regions},
        {"multi_output_regions", s.multi_output_regions},
        {"cases_with_multi_output_region", s.cases_with_multi_output_region},
        {"tuples", s.tuples},
        {"tuple_get_items", s.tuple_get_items},
        {"ends_on_tuples", s.ends_on_tuples},
        {"multi_end_values", s.multi_end_values},
        {"host_ops_between_regions", s.host_ops_between_regions},
        {"cases_with_duplicate_outputs", s.cases_with_duplicate_outputs},
        {"cases_with_hook_lowered_region", s.cases_with_hook_lowered_region},
        {"hook_lowered_beyond_ccompiler", s.hook_lowered_beyond_ccompiler},
        {"main_tuple_params", s.main_tuple_params},
        {"fused_tuple_params", s.fused_tuple_params},
        {"cases_with_fused_tuple_param", s.cases_with_fused_tuple_param}}},
      {"options",
       {{"merge", s.merge_on},
        {"no_merge", s.cases - std::min(s.cases, s.merge_on)},
        {"api_unpacked", s.api_unpacked},
        {"interface_c", s.interface_c},
        {"storage_reuse", s.storage_reuse_on},
        {"usmp", s.usmp_on},
        {"usmp_greedy_by_size", s.usmp_greedy_by_size},
        {"usmp_greedy_by_conflicts", s.usmp_greedy_by_conflicts},
        {"usmp_hill_climb", s.usmp_hill_climb},
        {"pools_external", s.pools_external},
        {"workspace_io", s.workspace_io},
        {"no_link_params", s.link_params_off}}},
  };
}

}  // namespace aotfuzz::bundles
