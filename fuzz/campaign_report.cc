// What a campaign reports: the --stats JSON, the progress line and the closing summary.
#include "fuzz/campaign_report.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "bundles/bundle.h"

namespace aotfuzz::fuzz {

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

nlohmann::json to_json(const reduce::ModuleSize& s) {
  return {{"ops", s.ops}, {"inputs", s.inputs}, {"annotations", s.annotations}, {"nodes", s.nodes}};
}

int CampaignResult::exit_code() const {
  if (!findings.empty() || !known_seen.empty()) return 1;
  // The environment ended the campaign before its budget: nothing was tested.
  if (!environment_failure.empty()) return 3;
  // Stopped before its budget (Ctrl-C, SIGTERM): a script must not take it for a clean run.
  if (interrupted) return 130;
  // Every case the environment had to compile and run failed there (a graph the reference
  // refuses as invalid input never gets that far): nothing was tested.
  const std::uint64_t toolchain = stats.count(oracle::VerdictKind::kToolchainError);
  if (toolchain > 0 && toolchain == stats.cases - stats.count(oracle::VerdictKind::kInvalidInput)) {
    return 3;
  }
  return 0;
}

namespace {

std::vector<std::pair<std::string, double>> phase_times_s(const CampaignResult& r,
                                                          const CampaignOptions& o) {
  return r.stats.phase_seconds(static_cast<double>(r.elapsed.count()) / 1000.0 *
                               std::max(1, o.jobs));
}

nlohmann::json phases_json(const CampaignResult& r, const CampaignOptions& o) {
  const auto times = phase_times_s(r, o);
  double total = 0;
  for (const auto& [name, secs] : times) total += secs;
  const double n = std::max<double>(1, static_cast<double>(r.stats.cases));
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, secs] : times) {
    j[name] = {{"total_s", secs},
               {"per_case_us", secs * 1e6 / n},
               {"share", total > 0 ? secs / total : 0.0}};
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const CampaignResult& r, const CampaignOptions& o) {
  using nlohmann::json;
  const auto& s = r.stats;
  const double secs = std::max(1e-9, r.elapsed.count() / 1000.0);
  json findings = json::array();
  for (const auto& f : r.findings) {
    findings.push_back({{"signature", f.signature},
                        {"case", f.case_index},
                        {"gen_seed", f.gen_seed},
                        {"summary", f.summary},
                        {"flags", f.flags},
                        {"bundle", f.bundle_dir},
                        {"replay", f.replay},
                        {"found_after_s", f.found_after_s},
                        {"reduction",
                         {{"steps", f.reduction.steps},
                          {"minimal", f.reduction.minimal},
                          {"elapsed_s", f.reduction.elapsed.count() / 1000.0},
                          {"before", to_json(f.reduction.before)},
                          {"after", to_json(f.reduction.after)}}}});
  }
  std::vector<std::string> injected;
  for (const auto& row : aot::bug_table()) {
    if (o.base.aot.bugs.on(row.bug)) injected.emplace_back(row.name);
  }
  const double n = std::max<double>(1, static_cast<double>(s.cases));
  json j = {
      {"seed", o.seed},
      {"shard", std::to_string(o.shard.index) + "/" + std::to_string(o.shard.count)},
      {"jobs", o.jobs},
      {"swarm", o.swarm},
      {"policy", generator::describe(o.policy)},
      {"inject", injected},
      {"elapsed_s", secs},
      {"interrupted", r.interrupted},
      {"cases_per_s", static_cast<double>(s.cases) / secs},
      {"generator_errors", s.generator_errors},
      {"over_budget", s.over_budget},
      {"findings",
       {{"cases", s.finding_cases},
        {"unique", r.unique_signatures()},
        {"new", findings},
        {"known", r.known_seen}}},
      {"mean_time_us",
       {{"pipeline", static_cast<double>(s.pipeline_us) / n},
        {"compile", static_cast<double>(s.compile_us) / n},
        {"run", static_cast<double>(s.run_us) / n}}},
      {"executor", r.batched      ? "batched"
                   : r.overlapped ? "overlapped"
                                  : "single"},
      {"phases", phases_json(r, o)},
      {"harness_problems", r.harness_problems},
  };
  j.update(bundles::stats_json(s));
  return j;
}

std::string format_progress(const bundles::Progress& p) {
  char buf[160];
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.cases) / p.elapsed_s : 0;
  std::snprintf(buf, sizeof buf, "%.1fs  %llu cases  %.1f/s  %llu findings  %zu unique",
                p.elapsed_s, static_cast<unsigned long long>(p.cases), rate,
                static_cast<unsigned long long>(p.finding_cases), p.unique_signatures);
  std::string out = buf;
  // Every verdict kind seen but pass, e.g. "[invalid-input 94, structure 3]".
  std::string kinds;
  for (int k = 1; k < oracle::kNumVerdictKinds; ++k) {
    const std::uint64_t n = p.verdicts[static_cast<std::size_t>(k)];
    if (n == 0) continue;
    if (!kinds.empty()) kinds += ", ";
    kinds += std::string(oracle::verdict_kind_name(static_cast<oracle::VerdictKind>(k))) + " " +
             std::to_string(n);
  }
  if (!kinds.empty()) out += "  [" + kinds + "]";
  if (p.last_new_finding_s >= 0) {
    std::snprintf(buf, sizeof buf, "  last new %.0fs ago", p.elapsed_s - p.last_new_finding_s);
    out += buf;
  }
  return out;
}

std::string format_summary(const CampaignResult& r, const CampaignOptions& o) {
  const auto& s = r.stats;
  const double secs = std::max(1e-9, r.elapsed.count() / 1000.0);
  char head[200];
  std::snprintf(head, sizeof head, "%llu cases in %.1fs (%.1f cases/s, %d jobs)",
                static_cast<unsigned long long>(s.cases), secs, static_cast<double>(s.cases) / secs,
                o.jobs);
  std::string out = "aotfuzz fuzz: seed " + std::to_string(o.seed) + ", shard " +
                    std::to_string(o.shard.index) + "/" + std::to_string(o.shard.count) + ": " +
                    head + (r.interrupted ? " (interrupted)" : "");
  if (!r.environment_failure.empty()) {
    out += "\nstopped early: the system under test cannot be used (" + r.environment_failure +
           "); not a finding";
  }
  {
    const auto times = phase_times_s(r, o);
    double total = 0;
    for (const auto& [name, t] : times) total += t;
    out += std::string("\nthroughput: ") + head + ", " +
           (r.batched      ? "batched"
            : r.overlapped ? "overlapped"
                           : "single-case") +
           "; time per phase:";
    for (const auto& [name, t] : times) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.0f%%", name.c_str(),
                    total > 0 ? 100.0 * t / total : 0.0);
      out += buf;
    }
  }
  out += "\nverdicts:";
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    const auto kind = static_cast<oracle::VerdictKind>(k);
    if (s.count(kind) == 0) continue;
    out += ' ';
    out += oracle::verdict_kind_name(kind);
    out += ' ';
    out += std::to_string(s.count(kind));
  }
  if (s.generator_errors) out += " (generator errors " + std::to_string(s.generator_errors) + ")";
  if (s.over_budget) {
    out += " (" + std::to_string(s.over_budget) + " graphs over the memory budget skipped)";
  }
  const double n = std::max<double>(1, static_cast<double>(s.cases));
  char feat[200];
  std::snprintf(feat, sizeof feat,
                "\nfeatures: %.0f%% of cases with a multi-output region, %.0f%% with a fused tuple "
                "parameter, %.1f ops per case",
                100.0 * static_cast<double>(s.cases_with_multi_output_region) / n,
                100.0 * static_cast<double>(s.cases_with_fused_tuple_param) / n,
                static_cast<double>(s.ops) / n);
  out += feat;
  if (s.cases_with_hook_lowered_region > 0) {
    // The other path of BYOC: how much of the campaign reached TVM's RelayToTIR hooks (UMA).
    out += ", " + std::to_string(s.cases_with_hook_lowered_region) +
           " cases with a hook-lowered (aotfuzz_uma) region (" +
           std::to_string(s.hook_lowered_beyond_ccompiler) +
           " beyond the ccompiler's limits: rank other than 2, int8, broadcasting or unpacked)";
  }
  if (s.usmp_on > 0) {
    // What the memory planner was asked, so that a campaign shows what it covered.
    out += "\nmemory: " + std::to_string(s.usmp_on) + " cases with USMP (greedy_by_size " +
           std::to_string(s.usmp_greedy_by_size) + ", greedy_by_conflicts " +
           std::to_string(s.usmp_greedy_by_conflicts) + ", hill_climb " +
           std::to_string(s.usmp_hill_climb) + "; pools internal " +
           std::to_string(s.usmp_on - std::min(s.usmp_on, s.pools_external)) + ", external " +
           std::to_string(s.pools_external) + "; workspace I/O " + std::to_string(s.workspace_io) +
           "), " + std::to_string(s.link_params_off) + " without linked parameters";
  }
  out += "\nfindings: " + std::to_string(s.finding_cases) + " cases, " +
         std::to_string(r.unique_signatures()) + " unique signatures (" +
         std::to_string(r.findings.size()) + " new, " + std::to_string(r.known_seen.size()) +
         " already bundled)";
  for (const auto& f : r.findings) {
    out += "\n  " + f.signature + "  case " + std::to_string(f.case_index) + "  found after " +
           format_seconds(f.found_after_s) + "s  ops " + std::to_string(f.reduction.before.ops) +
           " -> " + std::to_string(f.reduction.after.ops) + ", inputs " +
           std::to_string(f.reduction.before.inputs) + " -> " +
           std::to_string(f.reduction.after.inputs);
    out += "\n    replay: " + f.replay;
  }
  for (const auto& sig : r.known_seen) out += "\n  " + sig + "  (bundle exists)";
  if (std::any_of(r.findings.begin(), r.findings.end(),
                  [](const Finding& f) { return !f.bundle_dir.empty(); })) {
    out +=
        "\nto keep a finding as a regression test: copy its reduced.relay into "
        "corpus/regressions/ (`aotfuzz replay` and `aotfuzz check` replay it); once the bug is "
        "fixed, change its first `// replay: ... => SIGNATURE` line to `=> pass`";
  }
  for (const auto& p : r.harness_problems) out += "\nharness problem (not a finding): " + p;
  return out;
}

}  // namespace aotfuzz::fuzz
