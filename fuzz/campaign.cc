// A campaign: its parts wired together, the path of a judged case through them (counted, its
// finding claimed, then reduced and bundled), and the main thread's watch over the workers.
#include "fuzz/campaign.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bundles/bundle.h"
#include "bundles/campaign_stats.h"
#include "bundles/triage.h"
#include "fuzz/campaign_log.h"
#include "fuzz/campaign_report.h"
#include "fuzz/campaign_status.h"
#include "fuzz/case_counter.h"
#include "fuzz/finding_bundle.h"
#include "fuzz/finding_ledger.h"
#include "fuzz/finding_reduction.h"
#include "fuzz/journal_notes.h"
#include "fuzz/worker_pool.h"
#include "host/tempdir.h"
#include "oracle/executor.h"
#include "oracle/sut.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t micros_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

// What the system under test decides in a campaign.
struct SutRole {
  bool batchable = true;
  // A finding reduced by its signature alone waits for a later case that gives a cleaner repro.
  bool seeks_cleaner_repros = false;
};

SutRole sut_role(const oracle::CaseOptions& base) {
  const oracle::SystemUnderTest& system = oracle::system_of(base);
  SutRole role;
  role.batchable = system.batches_programs();
  // Only when the fixed system is another build (TVM's): with an injected bug the bundle must not
  // depend on which later cases a campaign killed and resumed happens to judge
  // (tests/fuzz/findings_after_kill9.py).
  const auto fixed = system.fixed_case(base);
  role.seeks_cleaner_repros = fixed && fixed->sut != base.sut;
  return role;
}

class Campaign final : public CaseSink {
 public:
  Campaign(const CampaignOptions& options, const CampaignCallbacks& callbacks)
      : Campaign(options, callbacks, restart_from(options.journal)) {}

  CampaignResult run() {
    if (const int n = host::remove_stale_temp_dirs(); n > 0) {
      log_.info("removed " + std::to_string(n) +
                " temporary directories of runs that no longer exist");
    }
    status_.start();
    std::vector<std::filesystem::path> unfinished;
    if (!opt_.findings_dir.empty()) {
      ledger_.set_preexisting(bundles::load_bundle_signatures(opt_.findings_dir));
      if (opt_.reduce) unfinished = bundles::incomplete_bundles(opt_.findings_dir);
      status_.open();
      // A first row at time 0: a monitor sees the campaign at once, and its plot starts there.
      write_status(/*with_hits=*/false);
    }
    // The bundles an earlier run left unreduced are finished before any new case, on a thread
    // of their own, while this thread keeps the status files at their interval.
    std::thread resumer;
    if (unfinished.empty()) {
      pool_.open();
    } else {
      resumer = std::thread([this, unfinished] {
        for (const auto& dir : unfinished) reducer_.resume_reduction(dir);
        pool_.open();
      });
    }
    const int jobs = std::max(1, opt_.jobs);
    pool_.start(jobs);
    watch_workers();
    pool_.join();
    if (resumer.joinable()) resumer.join();
    return result();
  }

 private:
  Campaign(const CampaignOptions& options, const CampaignCallbacks& callbacks,
           const Restart& restart)
      : opt_(options),
        cb_(callbacks),
        sut_(sut_role(options.base)),
        batch_compiler_(options.base.compiler.value_or(
            options.base.toolchain ? options.base.toolchain->kind : host::CompilerKind::kTcc)),
        // Sanitized programs and kept files need the single-program path.
        batched_(options.executor == ExecutorChoice::kBatched && !options.base.sanitize &&
                 !options.base.keep_files && sut_.batchable &&
                 oracle::batched_execution_available(batch_compiler_)),
        // A restarted child's clock, and so its time budget, go on from the supervisor's start.
        t0_(options.journal != nullptr
                ? Clock::time_point(std::chrono::milliseconds(options.journal->started_ms))
                : Clock::now()),
        log_(callbacks),
        notes_(options.journal),
        counter_(notes_, restart),
        ledger_(notes_, restart),
        bundles_(options),
        reducer_(options, bundles_, log_, sut_.seeks_cleaner_repros, deadline()),
        status_(options, notes_, log_, restart.recorded_hits),
        pool_(options, batched_, restart.first_case, restart.judged_before, deadline(), counter_,
              log_, *this, [this] { return worker_tools(); }) {}

  std::optional<Clock::time_point> deadline() const {
    if (!opt_.time_limit) return std::nullopt;
    return t0_ + *opt_.time_limit;
  }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  WorkerTools worker_tools() const {
    WorkerTools tools;
    if (batched_) {
      oracle::BatchOptions bo;
      bo.compiler = batch_compiler_;
      bo.toolchain = opt_.base.toolchain;
      bo.stop = opt_.stop;
      tools.executor = std::make_unique<oracle::BatchedExecutor>(bo);
    } else {
      // Support files (TVM's runtime piece, the harness's runtime) compiled once per worker.
      tools.executor = std::make_unique<oracle::SingleProgramExecutor>(true);
    }
    // Each worker has its own connection to the system under test (TVM: its own driver process).
    if (opt_.base.sut) tools.system = opt_.base.sut->for_worker();
    return tools;
  }

  void judged(std::uint64_t k, const CaseSpec& spec, const oracle::CaseResult& r,
              std::uint64_t generation_us) override {
    double found_at = elapsed_s();
    // Judged once its verdict gets here, where a finding is claimed: a child killed between the
    // probe and this point has judged nothing.
    notes_.culprit_judged(k);
    log_.judged(spec, r);
    const bool finding = reduce::is_campaign_finding(r.verdict, spec.merge_safe);
    const std::string sig = finding ? oracle::signature(r.verdict) : std::string();
    if (!counter_.counted_before(k)) {
      counter_.count(k, bundles::case_stats(spec.module, spec.options, r, generation_us, finding),
                     finding ? &sig : nullptr);
    }
    if (const auto* t = std::get_if<oracle::ToolchainError>(&r.verdict.detail);
        t != nullptr && t->system_unusable) {
      system_unusable(t->message);
    } else if (r.verdict.kind() == oracle::VerdictKind::kToolchainError &&
               !toolchain_warned_.exchange(true)) {
      // The environment, not the pipeline: said once, counted in the summary.
      log_.warn("toolchain error (not a finding; later ones are counted only): " +
                oracle::summary(r.verdict));
    }
    if (r.verdict.kind() == oracle::VerdictKind::kKnown) {
      // Counted, never a finding; said once per behaviour so that a user sees what is seen past.
      const std::string known = oracle::signature(r.verdict);
      std::lock_guard lock(known_mutex_);
      if (known_behaviours_seen_.insert(known).second) {
        log_.info("known " + known + " at case " + std::to_string(spec.index) +
                  " (not a finding; counted as known): " + oracle::summary(r.verdict));
      }
    }
    if (!finding) {
      ledger_.complete(k);
      return;
    }
    const bool mine = claim(k, spec, sig, found_at);
    ledger_.complete(k);
    if (mine) {
      new_finding(spec, r, sig, found_at);
    } else {
      reducer_.try_cleaner_repro(spec, sig, pool_.stopping());
    }
  }

  void dropped(std::uint64_t k) override { ledger_.complete(k); }

  // A system under test that cannot be used at all (a TVM that does not import) would give
  // every case the same toolchain-error until the budget ends: the campaign stops at the first.
  void system_unusable(const std::string& why) {
    std::lock_guard lock(environment_mutex_);
    if (!environment_failure_.empty()) return;
    // One line: the first, and the next when the first only introduces it ("... from HOME:").
    const std::size_t end = why.find('\n');
    environment_failure_ = why.substr(0, end);
    if (end != std::string::npos && !environment_failure_.empty() &&
        environment_failure_.back() == ':') {
      const std::size_t next = why.find('\n', end + 1);
      environment_failure_ +=
          " " + why.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1);
    }
    log_.warn("the system under test cannot be used, so the campaign stops (not a finding): " +
              why);
    pool_.request_stop();
  }

  // Whether case k's finding `sig` is new and its own: the lowest case of a signature owns it,
  // and a batched verdict must be confirmed first (`found_at` is then the time it was).
  bool claim(std::uint64_t k, const CaseSpec& spec, const std::string& sig, double& found_at) {
    const auto t0 = Clock::now();
    const bool unclaimed = ledger_.unclaimed(k, sig);
    counter_.add_waiting_us(micros_since(t0));
    if (!unclaimed) return false;
    // No other worker can claim `sig` while this one confirms it: every higher case waits for
    // this one to complete.
    if (batched_) {
      const std::optional<std::string> problem = unconfirmed_alone(spec, sig);
      found_at = elapsed_s();
      if (problem) {
        log_.harness_problem(*problem);
        return false;
      }
    }
    const std::size_t claimed = ledger_.claim(sig, k);
    if (opt_.stop_after_findings && claimed >= *opt_.stop_after_findings) pool_.request_stop();
    return true;
  }

  void new_finding(const CaseSpec& spec, const oracle::CaseResult& r, const std::string& sig,
                   double found_at) {
    Finding f;
    f.signature = sig;
    f.case_index = spec.index;
    f.gen_seed = spec.gen_seed;
    f.summary = oracle::summary(r.verdict);
    f.found_after_s = found_at;
    // Counted for the supervisor before anything else: a child killed while it writes the bundle
    // (another worker's case hung) and restarted with no time left must still exit 1.
    notes_.announced();
    log_.info("new finding " + sig + " at case " + std::to_string(spec.index) + " after " +
              format_seconds(found_at) + "s: " + f.summary +
              (opt_.findings_dir.empty() || !opt_.reduce ? "" : " (reducing)"));
    f.flags = oracle::replay_flags(spec.options);
    f.replay = bundles_.generator_replay(spec, f.flags);
    // A case that ran alone has the result a run of its own would give (a batched one was
    // confirmed alone, but its result is the batch's).
    const oracle::CaseResult* ran = batched_ ? nullptr : &r;
    if (!opt_.findings_dir.empty() &&
        bundles_.write_first(spec, f, /*complete=*/!opt_.reduce, ran)) {
      notes_.claimed(f, ledger_.claimed_case(sig));
      if (opt_.reduce && f.bundle_written) reducer_.reduce_new_finding(spec, f);
      if (f.bundle_written) triage(f);
    }
    publish(std::move(f));
  }

  // The new bundle on every configured TVM build, recorded in its verdict.json.
  void triage(const Finding& f) {
    if (opt_.triage_builds.empty() || f.bundle_dir.empty()) return;
    bundles::BundleSummary bundle;
    bundle.signature = f.signature;
    bundle.dir = f.bundle_dir;
    std::optional<bundles::TriageRow> row;
    {
      std::lock_guard lock(triage_mutex_);
      if (!triage_) triage_ = std::make_unique<bundles::Triage>(opt_.triage_builds);
      row = triage_->row(bundle);
    }
    if (!row) return;
    bundles::record_triage(bundle, *row);
    std::string cells;
    for (const bundles::TriageCell& c : row->cells) {
      cells += (cells.empty() ? "" : ", ") + c.build + " " +
               std::string(bundles::triage_outcome_name(c.outcome));
    }
    log_.info("triage " + f.signature + ": " + cells +
              (row->first ? " (reproduces on " + *row->first + " to " + *row->last + ")"
                          : " (reproduces on none)"));
  }

  void publish(Finding f) {
    notes_.claimed(f, ledger_.claimed_case(f.signature));
    log_.finding(f, [&] { ledger_.add_finding(f, elapsed_s()); });
  }

  // Until every worker has ended: the stop request and the deadline noticed, the progress line
  // drawn and the status files written at their intervals.
  void watch_workers() {
    const auto wait = std::min(cb_.progress_interval, opt_.status_interval);
    auto next_progress = Clock::now();
    auto next_status = Clock::now() + opt_.status_interval;
    while (!pool_.wait_finished(wait)) {
      if (stop_requested(opt_)) interrupted_ = true;
      pool_.check_stop();
      const bool progress_due = cb_.on_progress && Clock::now() >= next_progress;
      const bool status_due = status_.active() && Clock::now() >= next_status;
      if (progress_due) {
        next_progress = Clock::now() + cb_.progress_interval;
        cb_.on_progress(progress(counter_.totals()));
      }
      if (status_due) {
        write_status(/*with_hits=*/true);
        next_status = Clock::now() + opt_.status_interval;
      }
    }
  }

  bundles::Progress progress(const bundles::CampaignStats& stats) const {
    return progress_of(stats, elapsed_s(), ledger_.unique_signatures(),
                       ledger_.last_new_finding_s());
  }

  void write_status(bool with_hits) {
    const bundles::CampaignStats stats = counter_.totals();
    status_.write(progress(stats), stats);
    if (with_hits) status_.record_hits(counter_.signature_hits());
  }

  CampaignResult result() {
    CampaignResult r;
    r.interrupted = interrupted_ || stop_requested(opt_);
    r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_);
    r.stats = counter_.totals();
    r.batched = batched_;
    r.overlapped = pool_.overlapped();
    r.findings = ledger_.findings();
    r.known_seen = ledger_.known_seen();
    r.preexisting = ledger_.preexisting();
    r.signature_hits = counter_.signature_hits();
    r.harness_problems = log_.harness_problems();
    {
      std::lock_guard lock(environment_mutex_);
      r.environment_failure = environment_failure_;
    }
    const bundles::Progress last = progress(r.stats);
    if (cb_.on_progress) cb_.on_progress(last);
    status_.write(last, r.stats);
    status_.record_hits(r.signature_hits);
    return r;
  }

  const CampaignOptions& opt_;
  const CampaignCallbacks& cb_;
  const SutRole sut_;
  const host::CompilerKind batch_compiler_;
  const bool batched_;
  const Clock::time_point t0_;
  CampaignLog log_;
  JournalNotes notes_;
  CaseCounter counter_;
  FindingLedger ledger_;
  FindingBundles bundles_;
  FindingReducer reducer_;
  CampaignStatus status_;
  WorkerPool pool_;
  std::atomic<bool> toolchain_warned_{false};
  std::mutex environment_mutex_;
  std::string environment_failure_;
  std::mutex known_mutex_;
  std::mutex triage_mutex_;
  std::unique_ptr<bundles::Triage> triage_;
  std::set<std::string> known_behaviours_seen_;
  bool interrupted_ = false;  // main thread only
};

}  // namespace

CampaignResult run_campaign(const CampaignOptions& options, const CampaignCallbacks& callbacks) {
  if (options.jobs < 1) throw CampaignError("--jobs must be at least 1");
  if (options.shard.count == 0 || options.shard.index >= options.shard.count) {
    throw CampaignError("shard index out of range");
  }
  // Resolve the compiler once: a lookup starts `cc -v`, a process per case otherwise.
  CampaignOptions resolved = options;
  if (!resolved.base.toolchain) {
    resolved.base.toolchain = resolved.base.compiler ? host::find_toolchain(*resolved.base.compiler)
                                                     : host::default_toolchain();
  }
  Campaign campaign(resolved, callbacks);
  return campaign.run();
}

}  // namespace aotfuzz::fuzz
