// The campaign driver: worker threads over an atomic case counter, deterministic claiming of
// findings, their reduction and bundling, and the counters reports are made from.
#include "fuzz/campaign.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include "fuzz/bundle.h"
#include "fuzz/campaign_report.h"
#include "fuzz/crash_journal.h"
#include "fuzz/replay.h"
#include "fuzz/status_files.h"
#include "generator/builder.h"
#include "generator/stats.h"
#include "host/tempdir.h"
#include "ir/parser.h"
#include "ir/rng.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/in_process_probe.h"
#include "reference/footprint.h"

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

std::uint64_t micros_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

// One running campaign.
class Runner {
 public:
  Runner(const CampaignOptions& options, const CampaignCallbacks& callbacks)
      : opt_(options), cb_(callbacks) {
    batch_compiler_ = opt_.base.compiler.value_or(opt_.base.toolchain ? opt_.base.toolchain->kind
                                                                      : host::CompilerKind::kTcc);
    // Sanitized programs and kept files need the single-program path.
    // TVM's programs are built from TVM's files by the single-program path.
    batched_ = opt_.executor == ExecutorChoice::kBatched && !opt_.base.sanitize &&
               !opt_.base.keep_files && oracle::system_of(opt_.base).batches_programs() &&
               oracle::batched_execution_available(batch_compiler_);
  }

  CampaignResult run() {
    t0_ = Clock::now();
    if (CrashJournal* j = opt_.journal; j != nullptr) {
      t0_ = Clock::time_point(std::chrono::milliseconds(j->started_ms));
      if (j->children.load() > 1) {
        // A restart: the cases below the watermark and those noted above it are done, their
        // counters carried over.
        next_ = watermark_ = j->done_below.load();
        for (int i = 0; i < j->num_done_above; ++i) {
          if (j->done_above[i] >= watermark_) judged_before_.insert(j->done_above[i]);
        }
        for (int i = 0; i < j->num_counted_above; ++i) {
          const std::uint64_t c = j->counted_above[i];
          if (c >= watermark_ && !judged_before_.count(c)) counted_before_.insert(c);
        }
        stats_ = j->stats;
        restore_signatures(*j);
      }
    }
    if (const int n = host::remove_stale_temp_dirs(); n > 0) {
      log("removed " + std::to_string(n) + " temporary directories of runs that no longer exist");
    }
    start_time_ = std::time(nullptr);
    std::vector<std::filesystem::path> unfinished;
    if (!opt_.findings_dir.empty()) {
      result_.preexisting = load_bundle_signatures(opt_.findings_dir);
      // The bundles an earlier child of this run wrote are this run's findings.
      for (const auto& [sig, k] : claimed_) result_.preexisting.erase(sig);
      if (opt_.reduce) unfinished = incomplete_bundles(opt_.findings_dir);
      status_.emplace(opt_.findings_dir);
      // A first row at time 0: a monitor sees the campaign at once, and its plot starts there.
      write_status(snapshot_locked(), stats_);
    }
    const int jobs = std::max(1, opt_.jobs);
    std::vector<std::thread> threads;
    // The bundles an earlier run left unreduced are finished before any new case, on a thread
    // of their own, while this thread keeps the status files at their interval.
    resuming_ = !unfinished.empty();
    if (resuming_) {
      threads.emplace_back([this, unfinished] {
        for (const auto& dir : unfinished) resume_reduction(dir);
        std::lock_guard lock(mu_);
        resuming_ = false;
        cv_.notify_all();
      });
    }
    for (int t = 0; t < jobs; ++t) threads.emplace_back([this, t] { worker(t); });
    {
      std::unique_lock lock(mu_);
      auto next_status = Clock::now() + opt_.status_interval;
      // Every completed case wakes this loop (a thousand times a second): the progress line is
      // drawn at its interval only.
      auto next_progress = Clock::now();
      const auto wait = std::min(cb_.progress_interval, opt_.status_interval);
      while (finished_workers_ < jobs) {
        cv_.wait_for(lock, wait);
        if (finished_workers_ >= jobs) break;
        if (opt_.stop != nullptr && opt_.stop->load()) {
          result_.interrupted = true;
          stopping_ = true;
        }
        if (deadline_passed()) stopping_ = true;
        const bool status_due = status_ && Clock::now() >= next_status;
        const bool progress_due = cb_.on_progress && Clock::now() >= next_progress;
        if (progress_due || status_due) {
          if (progress_due) next_progress = Clock::now() + cb_.progress_interval;
          const Progress p = snapshot_locked();
          const CampaignStats stats = stats_;
          std::map<std::string, std::uint64_t> hits;
          if (status_due) hits = result_.signature_hits;
          lock.unlock();
          if (progress_due) cb_.on_progress(p);
          if (status_due) {
            write_status(p, stats);
            record_hits(hits);
            next_status = Clock::now() + opt_.status_interval;
          }
          lock.lock();
        }
      }
    }
    for (auto& t : threads) t.join();
    if (opt_.stop != nullptr && opt_.stop->load()) result_.interrupted = true;
    result_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_);
    result_.stats = stats_;
    result_.batched = batched_;
    const Progress last = snapshot_locked();
    if (cb_.on_progress) cb_.on_progress(last);
    if (status_) {
      write_status(last, stats_);
      record_hits(result_.signature_hits);
    }
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
    for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
      p.verdicts[static_cast<std::size_t>(k)] = stats_.count(static_cast<oracle::VerdictKind>(k));
    }
    p.last_new_finding_s = last_new_finding_s_;
    return p;
  }

  // The status files: a failure to write them is logged once and never stops the campaign.
  void write_status(const Progress& p, const CampaignStats& stats) {
    StatusSnapshot s;
    s.progress = p;
    s.stats = stats;
    s.seed = opt_.seed;
    s.jobs = opt_.jobs;
    s.start_time = start_time_;
    s.now = std::time(nullptr);
    s.last_new_finding =
        p.last_new_finding_s < 0 ? 0 : start_time_ + static_cast<std::time_t>(p.last_new_finding_s);
    try {
      status_->update(s);
    } catch (const std::exception& e) {
      if (!status_failed_) warn(std::string("cannot write the status files: ") + e.what());
      status_failed_ = true;
    }
  }

  // Each bundle of a signature this campaign saw gets the hits not yet recorded in its seen.json.
  // A bundle still being written (its verdict.json not yet there) gets them at a later update.
  void record_hits(const std::map<std::string, std::uint64_t>& hits_now) {
    const std::time_t now = std::time(nullptr);
    for (const auto& [sig, hits] : hits_now) {
      auto recorded = recorded_hits_.find(sig);
      const bool first = recorded == recorded_hits_.end();
      if (!first && recorded->second >= hits) continue;
      const std::filesystem::path dir = opt_.findings_dir / bundle_dir_name(sig);
      if (!std::filesystem::exists(dir / "verdict.json")) continue;
      try {
        record_seen(dir, hits - (first ? 0 : recorded->second), now, first);
        recorded_hits_[sig] = hits;
        if (opt_.journal != nullptr) {
          std::lock_guard lock(mu_);
          if (auto* rec = opt_.journal->record_of(sig)) rec->recorded = hits;
        }
      } catch (const std::exception& e) {
        warn("cannot update " + (dir / "seen.json").string() + ": " + e.what());
      }
    }
  }

  void worker(int slot) {
    enter_worker_slot(opt_.journal, slot);
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !resuming_; });
    }
    // Each worker owns its executor (a batched one starts its own runner process).
    std::unique_ptr<oracle::Executor> executor = make_executor();
    // Each worker has its own connection to the system under test (TVM: its own driver).
    const std::shared_ptr<const oracle::SystemUnderTest> system =
        oracle::system_of(opt_.base).for_worker();
    // Batches start small, so that the first verdicts (and findings) come early, and grow to
    // kBatchCases, which amortizes a batch's fixed costs.
    std::uint64_t chunk = batched_ ? kFirstBatchCases : 1;
    for (;;) {
      if (opt_.stop != nullptr && opt_.stop->load()) stopping_ = true;
      if (deadline_passed()) stopping_ = true;
      const std::uint64_t k0 = next_.fetch_add(chunk);
      if (opt_.max_cases && k0 >= *opt_.max_cases) break;
      std::uint64_t k1 = k0 + chunk;
      if (opt_.max_cases) k1 = std::min(k1, *opt_.max_cases);
      if (stopping_) {
        for (std::uint64_t k = k0; k < k1; ++k) complete(k);
        break;
      }
      process_chunk(k0, k1, *executor, system, slot);
      if (batched_) chunk = std::min(kBatchCases, chunk * 2);
    }
    std::lock_guard lock(mu_);
    ++finished_workers_;
    cv_.notify_all();
  }

  std::unique_ptr<oracle::Executor> make_executor() const {
    if (!batched_) return std::make_unique<oracle::SingleProgramExecutor>();
    oracle::BatchOptions bo;
    bo.compiler = batch_compiler_;
    bo.toolchain = opt_.base.toolchain;
    bo.stop = opt_.stop;
    return std::make_unique<oracle::BatchedExecutor>(bo);
  }

  // Appends case k to a journal list of cases above the watermark (under mu_); a full list drops
  // the entries the watermark has passed.
  void note_above(std::uint64_t* list, int& n, std::uint64_t k) {
    if (n == CrashJournal::kMaxAbove) {
      int kept = 0;
      for (int i = 0; i < n; ++i) {
        if (list[i] >= watermark_) list[kept++] = list[i];
      }
      n = kept;
    }
    if (n < CrashJournal::kMaxAbove) list[n++] = k;
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
    if (CrashJournal* j = opt_.journal; j != nullptr) {
      j->done_below.store(watermark_);
      if (k >= watermark_) note_above(j->done_above, j->num_done_above, k);
    }
    cv_.notify_all();
  }

  // One case of a chunk on its way through the phases.
  struct Item {
    std::uint64_t k = 0;
    bool generated = false;
    CaseSpec spec;
    oracle::CaseResult result;
    std::optional<oracle::PreparedCase> prepared;
    std::uint64_t gen_us = 0;
  };

  // Cases [k0, k1): generated and prepared in process, the compiled ones run through the
  // executor in one call, then judged and counted in case order.
  void process_chunk(std::uint64_t k0, std::uint64_t k1, oracle::Executor& executor,
                     const std::shared_ptr<const oracle::SystemUnderTest>& system, int slot) {
    std::vector<Item> items(k1 - k0);
    std::vector<oracle::PreparedCase> to_run;
    std::vector<std::size_t> run_item;
    for (std::uint64_t k = k0; k < k1; ++k) {
      Item& it = items[k - k0];
      it.k = k;
      const std::uint64_t index = shard_case(opt_.shard, k);
      // A stop request (SIGTERM) is honoured within a case, not at the end of a batch.
      if (opt_.stop != nullptr && opt_.stop->load()) continue;
      // Judged and counted by a campaign process that a later case took down.
      if (!judged_before_.empty() && judged_before_.count(k)) continue;
      if (opt_.journal != nullptr && opt_.journal->is_skipped(k)) continue;
      if (opt_.journal != nullptr &&
          (opt_.journal->is_culprit(k) || opt_.journal->probe_every_case.load())) {
        judge_culprit(it, k, index, slot);
        continue;
      }
      InProcessSteps steps(opt_.journal, slot, k);
      const auto t0 = Clock::now();
      try {
        it.spec = make_case(opt_, index);
        it.generated = true;
      } catch (const std::exception& e) {
        {
          std::lock_guard lock(mu_);
          ++stats_.generator_errors;
        }
        warn("generator failed on case " + std::to_string(index) + ": " + e.what());
        continue;
      }
      it.gen_us = micros_since(t0);
      // Knobs can ask for graphs too large to hold: not the pipeline's fault, so not judged.
      if (auto why = reference::over_memory_budget(it.spec.module, opt_.base.memory_budget)) {
        it.generated = false;
        bool first = false;
        {
          std::lock_guard lock(mu_);
          first = stats_.over_budget++ == 0;
        }
        if (first)
          log("case " + std::to_string(index) + " skipped, and any others like it: " + *why);
        continue;
      }
      it.spec.options.sut = system;
      try {
        it.prepared = oracle::prepare_case(it.spec.module, it.spec.options, it.result);
      } catch (const std::bad_alloc&) {
        // The machine, not the pipeline: the case is dropped, the campaign goes on.
        it.generated = false;
        harness_problem("case " + std::to_string(index) + ": out of memory while preparing it (" +
                        oracle::replay_flags(it.spec.options) + ")");
        continue;
      }
      if (it.prepared) {
        to_run.push_back(std::move(*it.prepared));
        run_item.push_back(k - k0);
      }
    }
    if (!to_run.empty()) {
      try {
        const auto raws = executor.run(to_run);
        for (std::size_t j = 0; j < to_run.size(); ++j) {
          Item& it = items[run_item[j]];
          // Stopped before it ran: neither judged nor counted, as if never started.
          if (raws[j].cancelled) {
            it.generated = false;
            continue;
          }
          InProcessSteps steps(opt_.journal, slot, it.k);
          oracle::judge_case(it.spec.module, it.spec.options, to_run[j], raws[j], it.result);
        }
      } catch (const std::bad_alloc&) {
        for (std::size_t j : run_item) items[j].generated = false;
        harness_problem("cases " + std::to_string(k0) + ".." + std::to_string(k1 - 1) +
                        ": out of memory while running them");
      }
    }
    for (auto& it : items) {
      if (!it.generated) {
        complete(it.k);
        continue;
      }
      finish(it.k, it.spec, it.result, it.gen_us);
    }
  }

  // A case that took an earlier campaign child down (or any case, once too many did): its
  // in-process steps are probed in a child process first, so that its crash or hang is its
  // verdict. When they do not crash there (a memory error whose effect depends on the heap), it
  // is judged in this process under its slot: a second crash makes the supervisor skip it.
  void judge_culprit(Item& it, std::uint64_t k, std::uint64_t index, int slot) {
    it.spec = make_case(opt_, index);
    it.generated = true;
    it.spec.options.isolate_in_process = true;
    if (auto v = oracle::probe_in_process(it.spec.module, it.spec.options)) {
      it.result.verdict = std::move(*v);
      return;
    }
    if (opt_.journal->is_culprit(k)) {
      ++opt_.journal->unreproduced;
      warn("case " + std::to_string(index) + " took the campaign down but does not crash alone (" +
           gen_command(opt_, it.spec.gen_seed) + " | aotfuzz run /dev/stdin " +
           oracle::replay_flags(it.spec.options) + "); judging it in this process");
    }
    InProcessSteps steps(opt_.journal, slot, k);
    oracle::CaseOptions o = it.spec.options;
    o.isolate_in_process = false;
    it.result = oracle::run_case(it.spec.module, o);
  }

  void finish(std::uint64_t k, const CaseSpec& spec, const oracle::CaseResult& r,
              std::uint64_t gen_us) {
    double found_at = elapsed_s();
    // Judged once its verdict gets here, where a finding is claimed: a child killed between the
    // probe and this point has judged nothing.
    if (opt_.journal != nullptr && opt_.journal->is_culprit(k)) ++opt_.journal->culprits_judged;
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
    // Counted by a campaign process that died before the case was done: judged again (a finding
    // must still be claimed), not counted again.
    const bool counted_before = !counted_before_.empty() && counted_before_.count(k);
    if (!counted_before) {
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
      s.generation_us += gen_us;
      s.passes_us += static_cast<std::uint64_t>((r.pipeline_time - r.codegen_time).count());
      s.codegen_us += static_cast<std::uint64_t>(r.codegen_time.count());
      s.pipeline_us += static_cast<std::uint64_t>(r.pipeline_time.count());
      s.compile_us += static_cast<std::uint64_t>(r.compile_time.count());
      s.run_us += static_cast<std::uint64_t>(r.run_time.count());
      if (is_campaign_finding(r.verdict, spec.merge_safe)) {
        ++s.finding_cases;
        const std::string sig = oracle::signature(r.verdict);
        ++result_.signature_hits[sig];
        if (opt_.journal != nullptr) {
          if (auto* rec = opt_.journal->record_of(sig)) ++rec->hits;
        }
      }
      if (CrashJournal* j = opt_.journal; j != nullptr) {
        j->stats = stats_;
        note_above(j->counted_above, j->num_counted_above, k);
      }
    }
    if (r.verdict.kind() == oracle::VerdictKind::kToolchainError &&
        !toolchain_warned_.exchange(true)) {
      // The environment, not the pipeline: said once, counted in the summary.
      warn("toolchain error (not a finding; later ones are counted only): " +
           oracle::summary(r.verdict));
    }
    if (!is_campaign_finding(r.verdict, spec.merge_safe)) {
      complete(k);
      return;
    }
    // The lowest case of a signature owns it: wait until every lower case has been claimed.
    const std::string sig = oracle::signature(r.verdict);
    bool mine = false;
    {
      const auto t0 = Clock::now();
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return watermark_ >= k; });
      stats_.waiting_us += micros_since(t0);
      if (result_.preexisting.count(sig)) {
        result_.known_seen.insert(sig);
      } else if (!claimed_.count(sig)) {
        mine = true;
      }
    }
    // Confirmation: a batched verdict becomes a finding only when the case alone, compiled and
    // run as its own program with the same options (what the replay line does), agrees. No other
    // worker can claim `sig` meanwhile: every higher case waits for this one to complete.
    if (mine && batched_) {
      const oracle::CaseResult alone = oracle::run_case(spec.module, spec.options);
      const std::string alone_sig = oracle::signature(alone.verdict);
      found_at = elapsed_s();
      if (alone_sig != sig) {
        mine = false;
        const std::string problem = "case " + std::to_string(spec.index) + ": batched " + sig +
                                    " but alone " + alone_sig + " (" +
                                    oracle::replay_flags(spec.options) + ")";
        {
          std::lock_guard lock(mu_);
          result_.harness_problems.push_back(problem);
        }
        warn("harness problem, not a finding: " + problem);
      }
    }
    if (mine) {
      std::lock_guard lock(mu_);
      claimed_[sig] = k;
      if (opt_.stop_after_findings && claimed_.size() >= *opt_.stop_after_findings) {
        stopping_ = true;
      }
    }
    complete(k);
    if (mine) {
      handle_finding(spec, r, sig, found_at);
    } else {
      try_cleaner_repro(spec, sig);
    }
  }

  // A TVM finding whose graph fails on the fixed TVM too (it holds a second bug) was reduced for
  // its signature alone, so its repro does not show that the fix removes it. A later case with
  // the signature whose graph passes on the fixed TVM replaces it, reduced to keep both.
  void try_cleaner_repro(const CaseSpec& spec, const std::string& sig) {
    {
      std::lock_guard lock(mu_);
      auto it = needs_cleaner_.find(sig);
      if (it == needs_cleaner_.end() || it->second.busy) return;
      if (it->second.attempts >= kCleanerAttempts || stopping_) return;
      it->second.busy = true;
      ++it->second.attempts;
    }
    bool replaced = false;
    try {
      const auto fixed = oracle::fixed_options(spec.options);
      if (fixed &&
          oracle::run_case(spec.module, *fixed).verdict.kind() == oracle::VerdictKind::kPass) {
        const oracle::CaseOptions o = canonical_options(spec, sig);
        ReduceOptions ro;
        ro.jobs = opt_.reduce_jobs > 0 ? opt_.reduce_jobs : std::max(1, opt_.jobs);
        ro.time_limit = opt_.reduce_time;
        ro.stop = opt_.stop;
        ReduceResult red = reduce(spec.module, finding_predicate(o, sig), ro);
        if (red.steps > 0 || red.minimal) {
          const ir::Module reduced = red.module;
          const bool interrupted = opt_.stop != nullptr && opt_.stop->load();
          write_finding(spec, sig, o, reduced, red, !interrupted, /*replace=*/true);
          log("case " + std::to_string(spec.index) + " gives " + sig +
              " and passes on the fixed build: its reduction (ops " +
              std::to_string(red.before.ops) + " -> " + std::to_string(red.after.ops) +
              ") replaces the bundle");
          replaced = true;
        }
      }
    } catch (const std::exception& e) {
      warn("cannot replace the bundle of " + sig + ": " + e.what());
    }
    std::lock_guard lock(mu_);
    if (replaced) {
      needs_cleaner_.erase(sig);
    } else {
      needs_cleaner_[sig].busy = false;
    }
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
    // Counted for the supervisor before anything else: a child killed while it writes the bundle
    // (another worker's case hung) and restarted with no time left must still exit 1.
    if (opt_.journal != nullptr) ++opt_.journal->findings;
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
    // The finding is on disk before reduction starts: a kill at any later moment leaves this
    // bundle (the original graph, marked not fully reduced), which the next campaign on the
    // directory reduces further.
    f.reduction.before = f.reduction.after = module_size(spec.module);
    f.flags = oracle::replay_flags(o);
    try {
      auto w = write_finding(spec, sig, o, spec.module, f.reduction, /*complete=*/!opt_.reduce,
                             /*replace=*/false);
      f.bundle_dir = w.dir.string();
      f.bundle_written = w.written;
      f.replay = replay_command((w.dir / "reduced.relay").string(), o);
    } catch (const std::exception& e) {
      f.error = e.what();
      f.replay = gen_command(opt_, spec.gen_seed) + " | aotfuzz run /dev/stdin " + f.flags;
      publish(std::move(f));
      return;
    }
    note_in_journal(f, claimed_k(sig));
    if (opt_.reduce && f.bundle_written) {
      o = canonical_options(spec, sig);
      ReduceOptions ro;
      ro.jobs = opt_.reduce_jobs > 0 ? opt_.reduce_jobs : std::max(1, opt_.jobs);
      ro.time_limit = opt_.reduce_time;
      ro.stop = opt_.stop;
      f.reduction = reduce(spec.module, finding_predicate(o, sig), ro);
      if (f.reduction.steps == 0 && !f.reduction.minimal && oracle::fixed_options(o)) {
        // The fixed pipeline fails too (a real bug as well?): keep the signature only, until a
        // later case gives a cleaner repro (try_cleaner_repro).
        f.reduction = reduce(spec.module, same_signature(o, sig), ro);
        // Only when the fixed system is another build (TVM's): with an injected bug the bundle must
        // not depend on which later cases a campaign killed and resumed happens to judge
        // (tests/fuzz/findings_after_kill9.py).
        if (const auto fixed = oracle::fixed_options(o); fixed && fixed->sut != o.sut) {
          std::lock_guard lock(mu_);
          needs_cleaner_[sig];
        }
      }
      const ir::Module reduced = f.reduction.module;
      f.reduction.module = ir::Module();
      f.flags = oracle::replay_flags(o);
      const bool interrupted = opt_.stop != nullptr && opt_.stop->load();
      try {
        auto w = write_finding(spec, sig, o, reduced, f.reduction, !interrupted, /*replace=*/true);
        f.replay = replay_command((w.dir / "reduced.relay").string(), o);
      } catch (const std::exception& e) {
        f.error = e.what();
      }
    }
    publish(std::move(f));
  }

  // Reduces further a bundle an earlier campaign left not fully reduced (killed or stopped), from
  // its best graph so far, and replaces it.
  void resume_reduction(const std::filesystem::path& dir) {
    if (opt_.stop != nullptr && opt_.stop->load()) return;
    try {
      std::ifstream in(dir / "verdict.json");
      const auto j = nlohmann::json::parse(in);
      const std::string sig = j.at("signature").get<std::string>();
      const oracle::CaseOptions o = parse_case_flags(j.at("flags").get<std::string>());
      CaseSpec spec;
      spec.module = ir::parse_module(read_text_file(dir / "original.relay"));
      spec.options = o;
      spec.index = j.at("info").value("case", std::uint64_t{0});
      spec.gen_seed = j.at("info").value("gen_seed", std::uint64_t{0});
      const ir::Module best = ir::parse_module(read_text_file(dir / "reduced.relay"));
      log("resuming the reduction of " + sig + " (" + dir.string() + ")");
      ReduceOptions ro;
      ro.jobs = opt_.reduce_jobs > 0 ? opt_.reduce_jobs : std::max(1, opt_.jobs);
      ro.time_limit = opt_.reduce_time;
      ro.stop = opt_.stop;
      ReduceResult red = reduce(best, finding_predicate(o, sig), ro);
      red.before = module_size(spec.module);
      const ir::Module reduced = red.module;
      const bool interrupted = opt_.stop != nullptr && opt_.stop->load();
      const nlohmann::json prior = j.at("info");
      write_finding(spec, sig, o, reduced, red, !interrupted, /*replace=*/true, &prior);
      log("reduced " + sig + ": ops " + std::to_string(red.before.ops) + " -> " +
          std::to_string(red.after.ops));
    } catch (const std::exception& e) {
      warn("cannot resume the reduction in " + dir.string() + ": " + e.what());
    }
  }

  // The bundle of a finding: `reduced` (the original graph itself before reduction) under
  // options `o`, with `complete` saying whether its reduction has ended.
  // `prior`: the info of the bundle being resumed (its origin and campaign), else this campaign's.
  BundleWriteResult write_finding(const CaseSpec& spec, const std::string& sig,
                                  const oracle::CaseOptions& o, const ir::Module& reduced,
                                  const ReduceResult& red, bool complete, bool replace,
                                  const nlohmann::json* prior = nullptr) {
    Bundle b;
    b.signature = sig;
    b.options = o;
    b.original = spec.module;
    b.reduced = reduced;
    b.reduced_result = oracle::run_case(reduced, o);
    // Before reduction the two are one graph: run it once.
    b.original_verdict = ir::structural_equal(reduced, spec.module)
                             ? b.reduced_result.verdict
                             : oracle::run_case(spec.module, o).verdict;
    const std::string origin = prior != nullptr && prior->contains("origin")
                                   ? (*prior)["origin"].get<std::string>()
                                   : "aotfuzz fuzz --seed " + std::to_string(opt_.seed) +
                                         ", case " + std::to_string(spec.index) +
                                         " (graph: " + gen_command(opt_, spec.gen_seed) + ")";
    b.header.push_back("origin: " + origin);
    b.reduced_header.push_back(
        "reduced: ops " + std::to_string(red.before.ops) + " -> " + std::to_string(red.after.ops) +
        ", inputs " + std::to_string(red.before.inputs) + " -> " +
        std::to_string(red.after.inputs) + ", " + std::to_string(red.steps) + " steps" +
        (red.minimal ? " (1-minimal)" : "") + (complete ? "" : " (not fully reduced)"));
    if (const auto fixed = oracle::fixed_options(o)) {
      b.extra_replays.emplace_back(oracle::replay_flags(*fixed),
                                   oracle::signature(oracle::run_case(reduced, *fixed).verdict));
    }
    if (prior != nullptr) {
      b.info = *prior;
    } else {
      b.info = {
          {"origin", origin},
          {"campaign_seed", opt_.seed},
          {"case", spec.index},
          {"shard", std::to_string(opt_.shard.index) + "/" + std::to_string(opt_.shard.count)},
          {"gen_seed", spec.gen_seed},
          {"gen_command", gen_command(opt_, spec.gen_seed)},
          {"original_flags", oracle::replay_flags(spec.options)}};
    }
    b.info["reduction"] = {{"steps", red.steps},
                           {"minimal", red.minimal},
                           {"complete", complete},
                           {"steps_per_pass", red.steps_per_pass},
                           {"before", to_json(red.before)},
                           {"after", to_json(red.after)}};
    return write_bundle(opt_.findings_dir, b, replace);
  }

  void publish(Finding f) {
    note_in_journal(f, claimed_k(f.signature));
    std::lock_guard out(out_mu_);
    {
      std::lock_guard lock(mu_);
      result_.findings.push_back(f);
      last_new_finding_s_ = elapsed_s();
    }
    if (cb_.on_finding) cb_.on_finding(f);
  }

  std::uint64_t claimed_k(const std::string& sig) {
    std::lock_guard lock(mu_);
    auto it = claimed_.find(sig);
    return it == claimed_.end() ? 0 : it->second;
  }

  // A finding of this child, as far as it got: a restarted child counts it as this run's.
  void note_in_journal(const Finding& f, std::uint64_t k) {
    if (opt_.journal == nullptr) return;
    std::lock_guard lock(mu_);
    auto* rec = opt_.journal->record_of(f.signature);
    if (rec == nullptr) return;
    rec->claimed = true;
    rec->claimed_k = k;
    rec->case_index = f.case_index;
    rec->found_after_s = f.found_after_s;
    rec->ops_before = f.reduction.before.ops;
    rec->ops_after = f.reduction.after.ops;
    rec->inputs_before = f.reduction.before.inputs;
    rec->inputs_after = f.reduction.after.inputs;
    rec->bundle_written = f.bundle_written;
    auto copy = [](char* to, std::size_t n, const std::string& from) {
      const std::size_t len = std::min(n - 1, from.size());
      std::memcpy(to, from.data(), len);
      to[len] = '\0';
    };
    copy(rec->bundle_dir, sizeof rec->bundle_dir, f.bundle_dir);
    copy(rec->replay, sizeof rec->replay, f.replay);
  }

  // A restarted child: the findings and hits of the earlier children of this run.
  void restore_signatures(const CrashJournal& j) {
    CampaignResult earlier = result_of(j);
    result_.signature_hits = std::move(earlier.signature_hits);
    result_.findings = std::move(earlier.findings);
    for (const Finding& f : result_.findings) {
      last_new_finding_s_ = std::max(last_new_finding_s_, f.found_after_s);
    }
    for (int i = 0; i < j.num_signatures; ++i) {
      const auto& rec = j.signatures[i];
      if (rec.recorded > 0) recorded_hits_[rec.signature] = rec.recorded;
      if (rec.claimed) claimed_[rec.signature] = rec.claimed_k;
    }
  }

  void harness_problem(const std::string& problem) {
    {
      std::lock_guard lock(mu_);
      result_.harness_problems.push_back(problem);
    }
    warn("harness problem, not a finding: " + problem);
  }

  void log(const std::string& line) { log(LogLevel::kInfo, line); }
  void warn(const std::string& line) { log(LogLevel::kWarning, line); }
  void log(LogLevel level, const std::string& line) {
    std::lock_guard out(out_mu_);
    if (cb_.on_log) cb_.on_log(level, line);
  }

  static constexpr std::uint64_t kFirstBatchCases = 4;
  // A batch's fixed costs (a fork, libtcc's start and the system headers, the child's buffers)
  // still showed between 64, 128, 256 and 512 cases; a batch of 512 takes about half a second.
  static constexpr std::uint64_t kBatchCases = 512;

  const CampaignOptions& opt_;
  const CampaignCallbacks& cb_;
  Clock::time_point t0_;
  std::atomic<std::uint64_t> next_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> toolchain_warned_{false};
  std::mutex mu_;  // stats_, claimed_, result_, the watermark
  std::condition_variable cv_;
  std::uint64_t watermark_ = 0;
  std::set<std::uint64_t> done_above_;
  // Of a restart (read-only once the workers run): cases an earlier campaign process judged and
  // completed, and cases it counted but did not complete.
  std::set<std::uint64_t> judged_before_;
  std::set<std::uint64_t> counted_before_;
  int finished_workers_ = 0;
  bool resuming_ = false;
  std::map<std::string, std::uint64_t>
      recorded_hits_;  // hits in seen.json (main thread only)  // an earlier run's reductions are
                       // being finished (under mu_)
  CampaignStats stats_;
  bool batched_ = false;
  host::CompilerKind batch_compiler_ = host::CompilerKind::kTcc;
  std::map<std::string, std::uint64_t> claimed_;
  // Signatures whose bundle fails on the fixed build too, and the later cases tried for a
  // cleaner repro.
  struct CleanerSearch {
    int attempts = 0;
    bool busy = false;
  };
  static constexpr int kCleanerAttempts = 8;
  std::map<std::string, CleanerSearch> needs_cleaner_;
  CampaignResult result_;
  double last_new_finding_s_ = -1;
  std::time_t start_time_ = 0;
  std::optional<StatusFiles> status_;  // with a findings directory
  bool status_failed_ = false;
  std::mutex out_mu_;  // serializes callbacks
};

}  // namespace

bool is_campaign_finding(const oracle::Verdict& verdict, bool merge_safe) {
  if (oracle::is_finding(verdict)) return true;
  return verdict.kind() == oracle::VerdictKind::kInvalidInput && merge_safe;
}

Predicate finding_predicate(const oracle::CaseOptions& options, const std::string& signature) {
  Predicate same = same_signature(options, signature);
  const auto fixed_or_none = oracle::fixed_options(options);
  if (!fixed_or_none) return same;
  const oracle::CaseOptions fixed = *fixed_or_none;
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
                                  ? host::find_toolchain(*resolved.base.compiler)
                                  : host::default_toolchain();
  }
  Runner runner(resolved, callbacks);
  return runner.run();
}

}  // namespace aotfuzz::fuzz
