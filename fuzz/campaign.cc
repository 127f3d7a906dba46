// The campaign driver: workers over an atomic case counter, deterministic claiming of findings,
// reduction and bundling, progress and statistics.
#include "fuzz/campaign.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "fuzz/bundle.h"
#include "generator/builder.h"
#include "generator/stats.h"
#include "ir/rng.h"
#include "ir/traversal.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A different stream for the pipeline options than for the graph.
constexpr std::uint64_t kOptionStream = 0x6f7074696f6e73ULL;  // "options"

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

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

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

nlohmann::json size_json(const ModuleSize& s) {
  return {{"ops", s.ops}, {"inputs", s.inputs}, {"annotations", s.annotations}, {"nodes", s.nodes}};
}

// One running campaign.
class Runner {
 public:
  Runner(const CampaignOptions& options, const CampaignCallbacks& callbacks)
      : opt_(options), cb_(callbacks) {}

  CampaignResult run() {
    t0_ = Clock::now();
    if (!opt_.findings_dir.empty()) result_.preexisting = load_bundle_signatures(opt_.findings_dir);
    const int jobs = std::max(1, opt_.jobs);
    std::vector<std::thread> threads;
    for (int t = 0; t < jobs; ++t) threads.emplace_back([this] { worker(); });
    {
      std::unique_lock lock(mu_);
      while (finished_workers_ < jobs) {
        cv_.wait_for(lock, cb_.progress_interval);
        if (finished_workers_ >= jobs) break;
        if (opt_.stop != nullptr && opt_.stop->load()) {
          result_.interrupted = true;
          stopping_ = true;
        }
        if (deadline_passed()) stopping_ = true;
        if (cb_.on_progress) {
          Progress p = snapshot_locked();
          lock.unlock();
          cb_.on_progress(p);
          lock.lock();
        }
      }
    }
    for (auto& t : threads) t.join();
    if (opt_.stop != nullptr && opt_.stop->load()) result_.interrupted = true;
    result_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_);
    result_.stats = stats_;
    if (cb_.on_progress) cb_.on_progress(snapshot_locked());
    return std::move(result_);
  }

 private:
  bool deadline_passed() const { return opt_.time_limit && Clock::now() - t0_ >= *opt_.time_limit; }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  Progress snapshot_locked() const {
    Progress p;
    p.elapsed_s = elapsed_s();
    p.cases = stats_.cases;
    p.finding_cases = stats_.finding_cases;
    p.unique_signatures = claimed_.size() + result_.known_seen.size();
    p.toolchain_errors = stats_.count(oracle::VerdictKind::kToolchainError);
    return p;
  }

  void worker() {
    for (;;) {
      if (opt_.stop != nullptr && opt_.stop->load()) stopping_ = true;
      if (deadline_passed()) stopping_ = true;
      const std::uint64_t k = next_.fetch_add(1);
      if (opt_.max_cases && k >= *opt_.max_cases) break;
      if (stopping_) {
        complete(k);
        break;
      }
      process(k);
    }
    std::lock_guard lock(mu_);
    ++finished_workers_;
    cv_.notify_all();
  }

  // Case k (local to the shard) is done with, finding claims included.
  void complete(std::uint64_t k) {
    std::lock_guard lock(mu_);
    if (k == watermark_) {
      ++watermark_;
      while (!done_above_.empty() && *done_above_.begin() == watermark_) {
        done_above_.erase(done_above_.begin());
        ++watermark_;
      }
    } else {
      done_above_.insert(k);
    }
    cv_.notify_all();
  }

  void process(std::uint64_t k) {
    const std::uint64_t index = shard_case(opt_.shard, k);
    CaseSpec spec;
    try {
      spec = make_case(opt_, index);
    } catch (const std::exception& e) {
      {
        std::lock_guard lock(mu_);
        ++stats_.generator_errors;
      }
      log("generator failed on case " + std::to_string(index) + ": " + e.what());
      complete(k);
      return;
    }
    oracle::CaseResult r = oracle::run_case(spec.module, spec.options);
    const double found_at = elapsed_s();
    if (cb_.on_case) {
      std::lock_guard out(out_mu_);
      cb_.on_case(spec, r);
    }
    std::optional<generator::GraphStats> gs;
    try {
      gs = generator::graph_stats(spec.module);
    } catch (const std::exception&) {
    }
    const std::size_t tuple_params = r.stages ? fused_tuple_params(r.stages->fused) : 0;
    std::size_t main_tuple_params = 0;
    for (const auto& p : spec.module.main()->params()) main_tuple_params += p->type()->is_tuple();
    {
      std::lock_guard lock(mu_);
      auto& s = stats_;
      ++s.cases;
      ++s.verdicts[static_cast<int>(r.verdict.kind())][static_cast<int>(r.verdict.stage)];
      if (gs) {
        s.ops += gs->ops;
        s.inputs += gs->inputs;
        s.regions += gs->regions;
        s.multi_output_regions += gs->multi_output_regions;
        s.tuples += gs->tuples;
        s.tuple_get_items += gs->tuple_get_items;
        s.host_ops_between_regions += gs->host_ops_between_regions;
        s.ends_on_tuples += gs->ends_on_tuples;
        s.multi_end_values += gs->multi_end_values;
        s.outputs += gs->outputs;
        s.cases_with_multi_output_region += gs->multi_output_regions > 0;
        s.cases_with_duplicate_outputs += gs->duplicate_outputs;
      }
      s.fused_tuple_params += tuple_params;
      s.cases_with_fused_tuple_param += tuple_params > 0;
      s.main_tuple_params += main_tuple_params;
      const auto& o = spec.options;
      s.merge_on += o.pipeline.merge;
      s.api_unpacked += o.codegen.api == aot::CodegenOptions::Api::kUnpacked;
      s.interface_c += o.codegen.interface == aot::CodegenOptions::Interface::kC;
      s.storage_reuse_on += o.codegen.storage_reuse;
      s.pipeline_us += static_cast<std::uint64_t>(r.pipeline_time.count());
      s.compile_us += static_cast<std::uint64_t>(r.compile_time.count());
      s.run_us += static_cast<std::uint64_t>(r.run_time.count());
      if (is_campaign_finding(r.verdict, opt_)) ++s.finding_cases;
    }
    if (!is_campaign_finding(r.verdict, opt_)) {
      complete(k);
      return;
    }
    // The lowest case of a signature owns it: wait until every lower case has been claimed.
    const std::string sig = oracle::signature(r.verdict);
    bool mine = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return watermark_ >= k; });
      if (result_.preexisting.count(sig)) {
        result_.known_seen.insert(sig);
      } else if (!claimed_.count(sig)) {
        claimed_[sig] = k;
        mine = true;
      }
    }
    complete(k);
    if (mine) handle_finding(spec, r, sig, found_at);
  }

  bool same(const ir::Module& m, const oracle::CaseOptions& o, const std::string& sig) {
    return oracle::signature(oracle::run_case(m, o).verdict) == sig;
  }

  // Options back to their defaults, one at a time, as long as the signature stays.
  oracle::CaseOptions canonical_options(const CaseSpec& spec, const std::string& sig) {
    oracle::CaseOptions o = spec.options;
    using Api = aot::CodegenOptions::Api;
    using Interface = aot::CodegenOptions::Interface;
    auto attempt = [&](auto change) {
      oracle::CaseOptions c = o;
      change(c);
      if (same(spec.module, c, sig)) o = c;
    };
    if (o.codegen.interface != Interface::kPacked) {
      attempt([](oracle::CaseOptions& c) { c.codegen.interface = Interface::kPacked; });
    }
    if (o.codegen.api != Api::kPacked && o.codegen.interface == Interface::kPacked) {
      attempt([](oracle::CaseOptions& c) { c.codegen.api = Api::kPacked; });
    }
    if (!o.pipeline.merge) attempt([](oracle::CaseOptions& c) { c.pipeline.merge = true; });
    if (!o.codegen.storage_reuse) {
      attempt([](oracle::CaseOptions& c) { c.codegen.storage_reuse = true; });
    }
    return o;
  }

  void handle_finding(const CaseSpec& spec, const oracle::CaseResult& r, const std::string& sig,
                      double found_at) {
    Finding f;
    f.signature = sig;
    f.case_index = spec.index;
    f.gen_seed = spec.gen_seed;
    f.summary = oracle::summary(r.verdict);
    f.found_after_s = found_at;
    log("new finding " + sig + " at case " + std::to_string(spec.index) + " after " +
        fmt_seconds(found_at) + "s: " + f.summary +
        (opt_.findings_dir.empty() || !opt_.reduce ? "" : " (reducing)"));
    oracle::CaseOptions o = spec.options;
    if (opt_.findings_dir.empty()) {
      f.flags = oracle::replay_flags(o);
      f.replay = gen_command(opt_, spec.gen_seed) + " | aotfuzz run /dev/stdin " + f.flags;
      publish(std::move(f));
      return;
    }
    ir::Module reduced = spec.module;
    if (opt_.reduce) {
      o = canonical_options(spec, sig);
      ReduceOptions ro;
      ro.jobs = opt_.reduce_jobs > 0 ? opt_.reduce_jobs : std::max(1, opt_.jobs);
      ro.time_limit = opt_.reduce_time;
      ro.stop = opt_.stop;
      f.reduction = reduce(spec.module, finding_predicate(o, sig), ro);
      if (f.reduction.steps == 0 && !f.reduction.minimal && o.pipeline.bugs.any()) {
        // The fixed pipeline fails too (a real bug as well?): keep the signature only.
        f.reduction = reduce(spec.module, same_signature(o, sig), ro);
      }
      reduced = f.reduction.module;
      f.reduction.module = ir::Module();
    } else {
      f.reduction.module = ir::Module();
      f.reduction.before = f.reduction.after = module_size(spec.module);
    }
    f.flags = oracle::replay_flags(o);
    try {
      Bundle b;
      b.signature = sig;
      b.options = o;
      b.original = spec.module;
      b.original_verdict = oracle::run_case(spec.module, o).verdict;
      b.reduced = reduced;
      b.reduced_result = oracle::run_case(reduced, o);
      b.header.push_back("origin: aotfuzz fuzz --seed " + std::to_string(opt_.seed) + ", case " +
                         std::to_string(spec.index) +
                         " (graph: " + gen_command(opt_, spec.gen_seed) + ")");
      const auto& red = f.reduction;
      b.header.push_back("reduced: ops " + std::to_string(red.before.ops) + " -> " +
                         std::to_string(red.after.ops) + ", inputs " +
                         std::to_string(red.before.inputs) + " -> " +
                         std::to_string(red.after.inputs) + ", " + std::to_string(red.steps) +
                         " steps" + (red.minimal ? " (1-minimal)" : ""));
      if (o.pipeline.bugs.any()) {
        oracle::CaseOptions fixed = o;
        fixed.pipeline.bugs = aot::BugSet();
        fixed.codegen.bugs = aot::BugSet();
        b.extra_replays.emplace_back(oracle::replay_flags(fixed),
                                     oracle::signature(oracle::run_case(reduced, fixed).verdict));
      }
      b.info = {
          {"campaign_seed", opt_.seed},
          {"case", spec.index},
          {"shard", std::to_string(opt_.shard.index) + "/" + std::to_string(opt_.shard.count)},
          {"gen_seed", spec.gen_seed},
          {"gen_command", gen_command(opt_, spec.gen_seed)},
          {"original_flags", oracle::replay_flags(spec.options)},
          {"reduction",
           {{"steps", red.steps},
            {"minimal", red.minimal},
            {"steps_per_pass", red.steps_per_pass},
            {"before", size_json(red.before)},
            {"after", size_json(red.after)}}}};
      auto w = write_bundle(opt_.findings_dir, b);
      f.bundle_dir = w.dir.string();
      f.bundle_written = w.written;
      f.replay = replay_command((w.dir / "reduced.relay").string(), o);
    } catch (const std::exception& e) {
      f.error = e.what();
      f.replay = gen_command(opt_, spec.gen_seed) + " | aotfuzz run /dev/stdin " + f.flags;
    }
    publish(std::move(f));
  }

  void publish(Finding f) {
    std::lock_guard out(out_mu_);
    {
      std::lock_guard lock(mu_);
      result_.findings.push_back(f);
    }
    if (cb_.on_finding) cb_.on_finding(f);
  }

  void log(const std::string& line) {
    std::lock_guard out(out_mu_);
    if (cb_.on_log) cb_.on_log(line);
  }

  const CampaignOptions& opt_;
  const CampaignCallbacks& cb_;
  Clock::time_point t0_;
  std::atomic<std::uint64_t> next_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // stats_, claimed_, result_, the watermark
  std::condition_variable cv_;
  std::uint64_t watermark_ = 0;
  std::set<std::uint64_t> done_above_;
  int finished_workers_ = 0;
  CampaignStats stats_;
  std::map<std::string, std::uint64_t> claimed_;
  CampaignResult result_;
  std::mutex out_mu_;  // serializes callbacks
};

}  // namespace

bool is_campaign_finding(const oracle::Verdict& verdict, const CampaignOptions& options) {
  if (oracle::is_finding(verdict)) return true;
  return verdict.kind() == oracle::VerdictKind::kInvalidInput && options.policy.merge_safe;
}

Predicate finding_predicate(const oracle::CaseOptions& options, const std::string& signature) {
  Predicate same = same_signature(options, signature);
  if (!options.pipeline.bugs.any()) return same;
  oracle::CaseOptions fixed = options;
  fixed.pipeline.bugs = aot::BugSet();
  fixed.codegen.bugs = aot::BugSet();
  return [same, fixed](const ir::Module& m) {
    return same(m) && oracle::run_case(m, fixed).verdict.kind() == oracle::VerdictKind::kPass;
  };
}

Shard parse_shard(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    throw CampaignError("--shard expects i/n, got '" + std::string(text) + "'");
  }
  auto i = parse_u64(text.substr(0, slash));
  auto n = parse_u64(text.substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) {
    throw CampaignError("--shard expects i/n with 0 <= i < n, got '" + std::string(text) + "'");
  }
  return Shard{*i, *n};
}

std::uint64_t shard_case(const Shard& shard, std::uint64_t k) {
  return k * shard.count + shard.index;
}

std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  ir::Rng rng(seed ^ mix64(index));
  return rng.next();
}

CaseSpec make_case(const CampaignOptions& options, std::uint64_t index) {
  CaseSpec s;
  s.index = index;
  s.gen_seed = case_seed(options.seed, index);
  ir::Rng rng(s.gen_seed);
  generator::GenPolicy policy =
      options.swarm ? generator::swarm(options.policy, rng) : options.policy;
  s.module = generator::generate(policy, rng);

  // Every draw happens whatever is fixed, so fixing one option leaves the others unchanged.
  ir::Rng orng(s.gen_seed ^ kOptionStream);
  const bool merge = orng.chance(0.5);
  const bool unpacked = orng.chance(0.5);
  const bool c_interface = orng.chance(0.5);
  const bool reuse = orng.chance(0.75);
  using Api = aot::CodegenOptions::Api;
  using Interface = aot::CodegenOptions::Interface;
  const auto& fixed = options.fixed;
  oracle::CaseOptions o = options.base;
  o.pipeline.merge = fixed.merge.value_or(merge);
  if (fixed.api) {
    o.codegen.api = *fixed.api;
  } else if (fixed.interface == Interface::kC) {
    o.codegen.api = Api::kUnpacked;
  } else {
    o.codegen.api = unpacked ? Api::kUnpacked : Api::kPacked;
  }
  if (fixed.interface) {
    o.codegen.interface = *fixed.interface;
  } else {
    o.codegen.interface =
        o.codegen.api == Api::kUnpacked && c_interface ? Interface::kC : Interface::kPacked;
  }
  o.codegen.storage_reuse = fixed.storage_reuse.value_or(reuse);
  o.codegen.mod_name = o.pipeline.mod_name;
  o.codegen.bugs = o.pipeline.bugs;
  s.options = std::move(o);
  return s;
}

std::string gen_command(const CampaignOptions& options, std::uint64_t gen_seed) {
  return "aotfuzz gen --seed " + std::to_string(gen_seed) + (options.swarm ? " --swarm" : "") +
         options.knob_flags;
}

std::uint64_t CampaignStats::count(oracle::VerdictKind kind) const {
  std::uint64_t n = 0;
  for (auto v : verdicts[static_cast<int>(kind)]) n += v;
  return n;
}

int CampaignResult::exit_code() const {
  if (!findings.empty() || !known_seen.empty()) return 1;
  if (stats.cases > 0 && stats.count(oracle::VerdictKind::kToolchainError) == stats.cases) return 3;
  return 0;
}

nlohmann::json to_json(const CampaignResult& r, const CampaignOptions& o) {
  using nlohmann::json;
  const auto& s = r.stats;
  const double secs = std::max(1e-9, r.elapsed.count() / 1000.0);
  json verdicts = json::object();
  json stages = json::object();
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
                          {"before", size_json(f.reduction.before)},
                          {"after", size_json(f.reduction.after)}}}});
  }
  std::vector<std::string> injected;
  for (const auto& row : aot::bug_table()) {
    if (o.base.pipeline.bugs.on(row.bug)) injected.emplace_back(row.name);
  }
  const double n = std::max<double>(1, static_cast<double>(s.cases));
  return {
      {"seed", o.seed},
      {"shard", std::to_string(o.shard.index) + "/" + std::to_string(o.shard.count)},
      {"jobs", o.jobs},
      {"swarm", o.swarm},
      {"policy", generator::describe(o.policy)},
      {"inject", injected},
      {"elapsed_s", secs},
      {"interrupted", r.interrupted},
      {"cases", s.cases},
      {"cases_per_s", static_cast<double>(s.cases) / secs},
      {"generator_errors", s.generator_errors},
      {"verdicts", verdicts},
      {"stages", stages},
      {"findings",
       {{"cases", s.finding_cases},
        {"unique", r.unique_signatures()},
        {"new", findings},
        {"known", r.known_seen}}},
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
        {"main_tuple_params", s.main_tuple_params},
        {"fused_tuple_params", s.fused_tuple_params},
        {"cases_with_fused_tuple_param", s.cases_with_fused_tuple_param}}},
      {"options",
       {{"merge", s.merge_on},
        {"no_merge", s.cases - std::min(s.cases, s.merge_on)},
        {"api_unpacked", s.api_unpacked},
        {"interface_c", s.interface_c},
        {"storage_reuse", s.storage_reuse_on}}},
      {"mean_time_us",
       {{"pipeline", static_cast<double>(s.pipeline_us) / n},
        {"compile", static_cast<double>(s.compile_us) / n},
        {"run", static_cast<double>(s.run_us) / n}}},
  };
}

std::string format_progress(const Progress& p) {
  char buf[160];
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.cases) / p.elapsed_s : 0;
  std::snprintf(buf, sizeof buf, "%.1fs  %llu cases  %.1f/s  %llu findings  %zu unique",
                p.elapsed_s, static_cast<unsigned long long>(p.cases), rate,
                static_cast<unsigned long long>(p.finding_cases), p.unique_signatures);
  std::string out = buf;
  if (p.toolchain_errors > 0)
    out += "  " + std::to_string(p.toolchain_errors) + " toolchain errors";
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
  out += "\nverdicts:";
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    const auto kind = static_cast<oracle::VerdictKind>(k);
    if (s.count(kind) == 0) continue;
    out += " " + std::string(oracle::verdict_kind_name(kind)) + " " + std::to_string(s.count(kind));
  }
  if (s.generator_errors) out += " (generator errors " + std::to_string(s.generator_errors) + ")";
  const double n = std::max<double>(1, static_cast<double>(s.cases));
  char feat[200];
  std::snprintf(feat, sizeof feat,
                "\nfeatures: %.0f%% of cases with a multi-output region, %.0f%% with a fused tuple "
                "parameter, %.1f ops per case",
                100.0 * static_cast<double>(s.cases_with_multi_output_region) / n,
                100.0 * static_cast<double>(s.cases_with_fused_tuple_param) / n,
                static_cast<double>(s.ops) / n);
  out += feat;
  out += "\nfindings: " + std::to_string(s.finding_cases) + " cases, " +
         std::to_string(r.unique_signatures()) + " unique signatures (" +
         std::to_string(r.findings.size()) + " new, " + std::to_string(r.known_seen.size()) +
         " already bundled)";
  for (const auto& f : r.findings) {
    out += "\n  " + f.signature + "  case " + std::to_string(f.case_index) + "  found after " +
           fmt_seconds(f.found_after_s) + "s  ops " + std::to_string(f.reduction.before.ops) +
           " -> " + std::to_string(f.reduction.after.ops) + ", inputs " +
           std::to_string(f.reduction.before.inputs) + " -> " +
           std::to_string(f.reduction.after.inputs);
    out += "\n    replay: " + f.replay;
  }
  for (const auto& sig : r.known_seen) out += "\n  " + sig + "  (bundle exists)";
  return out;
}

CampaignResult run_campaign(const CampaignOptions& options, const CampaignCallbacks& callbacks) {
  if (options.jobs < 1) throw CampaignError("--jobs must be at least 1");
  if (options.shard.count == 0 || options.shard.index >= options.shard.count) {
    throw CampaignError("shard index out of range");
  }
  // Resolve the compiler once: a lookup starts `cc -v`, a process per case otherwise.
  CampaignOptions resolved = options;
  if (!resolved.base.toolchain) {
    resolved.base.toolchain = resolved.base.compiler
                                  ? oracle::find_toolchain(*resolved.base.compiler)
                                  : oracle::default_toolchain();
  }
  Runner runner(resolved, callbacks);
  return runner.run();
}

}  // namespace aotfuzz::fuzz
