// The campaign driver: worker threads over an atomic case counter, deterministic claiming of
// findings, their reduction and bundling, and the counters reports are made from.
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
#include "fuzz/campaign_report.h"
#include "generator/builder.h"
#include "generator/stats.h"
#include "ir/rng.h"
#include "ir/traversal.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

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
    const std::size_t tuple_params = r.stages ? fused_tuple_params(r.stages->output()) : 0;
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
      s.merge_on += o.aot.merge;
      s.api_unpacked += o.aot.api == aot::Options::Api::kUnpacked;
      s.interface_c += o.aot.interface == aot::Options::Interface::kC;
      s.storage_reuse_on += o.aot.storage_reuse;
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
    using Api = aot::Options::Api;
    using Interface = aot::Options::Interface;
    auto attempt = [&](auto change) {
      oracle::CaseOptions c = o;
      change(c);
      if (same(spec.module, c, sig)) o = c;
    };
    if (o.aot.interface != Interface::kPacked) {
      attempt([](oracle::CaseOptions& c) { c.aot.interface = Interface::kPacked; });
    }
    if (o.aot.api != Api::kPacked && o.aot.interface == Interface::kPacked) {
      attempt([](oracle::CaseOptions& c) { c.aot.api = Api::kPacked; });
    }
    if (!o.aot.merge) attempt([](oracle::CaseOptions& c) { c.aot.merge = true; });
    if (!o.aot.storage_reuse) {
      attempt([](oracle::CaseOptions& c) { c.aot.storage_reuse = true; });
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
        format_seconds(found_at) + "s: " + f.summary +
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
      if (f.reduction.steps == 0 && !f.reduction.minimal && o.aot.bugs.any()) {
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
      if (o.aot.bugs.any()) {
        oracle::CaseOptions fixed = o;
        fixed.aot.bugs = aot::BugSet();
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
            {"before", to_json(red.before)},
            {"after", to_json(red.after)}}}};
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
  if (!options.aot.bugs.any()) return same;
  oracle::CaseOptions fixed = options;
  fixed.aot.bugs = aot::BugSet();
  return [same, fixed](const ir::Module& m) {
    return same(m) && oracle::run_case(m, fixed).verdict.kind() == oracle::VerdictKind::kPass;
  };
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
