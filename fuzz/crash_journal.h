// Campaigns that survive their own pipeline. A campaign runs the in-process steps of its cases
// (generation, the reference, the passes, the C code, judging) in its own process: a fork per case
// would halve its throughput. So a pass that crashes or loops forever would end the campaign and
// lose the case. run_supervised runs the campaign in a child process and watches it through a
// journal in shared memory: each worker notes the case whose in-process steps it is in and since
// when, and a fatal signal's handler notes which worker died. When the child dies or a case
// overruns its in-process budget, the supervisor starts a new child that goes on from the first
// case not done, with the counters and elapsed time so far; it judges the culprit case through the
// probe (oracle/in_process_probe.h, a verdict crash:<pass>:<SIGNAL> or timeout:<pass>) and reports,
// bundles and reduces it like any other finding.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "fuzz/campaign_types.h"

namespace aotfuzz::fuzz {

/// Lives in memory shared by the supervisor and its campaign child; lock-free atomics and plain
/// data only. The child writes, the supervisor reads once the child is gone (or to spot a hang).
struct CrashJournal {
  static constexpr int kSlots = 1024;  // --jobs is at most 1024
  static constexpr int kMaxCulprits = 256;
  struct Slot {
    /// Shard-local case number plus one whose in-process steps the worker is in; 0: none.
    std::atomic<std::uint64_t> case_plus_one{0};
    /// When it entered them (steady clock, milliseconds).
    std::atomic<std::int64_t> since_ms{0};
    /// The case's own budget (oracle::in_process_budget_for), once its graph is known; 0: the
    /// campaign's --in-process-time.
    std::atomic<std::int64_t> budget_ms{0};
  };
  Slot slots[kSlots];
  /// The worker slot whose thread took a fatal signal (-1: none, or a thread without a slot).
  std::atomic<int> crashed_slot{-1};
  std::atomic<int> crashed_signal{0};
  /// Every shard-local case below this one is done (the campaign's watermark).
  std::atomic<std::uint64_t> done_below{0};
  /// Cases above the watermark that were done, and that were counted in `stats` (entries below
  /// the watermark are stale), so that a restart neither judges a done case again nor counts a
  /// case twice. Written under the campaign's lock.
  static constexpr int kMaxAbove = 8192;
  int num_done_above = 0;
  std::uint64_t done_above[kMaxAbove];
  int num_counted_above = 0;
  std::uint64_t counted_above[kMaxAbove];
  /// Cases that took a campaign child down: judged through the probe from then on.
  std::atomic<int> num_culprits{0};
  std::atomic<std::uint64_t> culprits[kMaxCulprits];
  /// Culprits that took a child down again although their probe did not crash (their crash
  /// depends on the process: memory corruption): skipped from then on.
  std::atomic<int> num_skipped{0};
  std::atomic<std::uint64_t> skipped[kMaxCulprits];
  /// Culprits whose probe ended normally: their crash depends on the process (memory corruption).
  std::atomic<int> unreproduced{0};
  /// Culprits whose verdict reached the point where findings are claimed, in any child.
  std::atomic<int> culprits_judged{0};
  /// Children started so far (the first is 1).
  std::atomic<int> children{0};
  /// Unique findings claimed by all children (counted when announced, before their bundle).
  std::atomic<std::uint64_t> findings{0};
  /// Once kMaxCulprits cases took children down (a pass that crashes on most graphs): every
  /// case's in-process steps are probed in a child process first, so the campaign goes on to its
  /// budget, slower, instead of stopping.
  std::atomic<bool> probe_every_case{false};
  /// What the children of this run know of each finding signature, so that a restarted child
  /// neither takes a bundle of an earlier child for an earlier run's nor loses its hits. Written
  /// under the campaign's lock.
  struct SignatureRecord {
    char signature[256];
    /// Finding cases with this signature, all children; of those, how many are in seen.json.
    std::uint64_t hits;
    std::uint64_t recorded;
    /// A child of this run claimed it (shard-local case claimed_k) and wrote its first bundle;
    /// the fields below describe that finding as it was last reported.
    bool claimed;
    std::uint64_t claimed_k;
    std::uint64_t case_index;
    double found_after_s;
    std::uint64_t ops_before, ops_after, inputs_before, inputs_after;
    bool bundle_written;
    char bundle_dir[1024];
    char replay[2048];
    /// oracle::summary of the finding's verdict (reports say what crashed where from it).
    char summary[1024];
  };
  static constexpr int kMaxSignatures = 128;
  int num_signatures = 0;
  SignatureRecord signatures[kMaxSignatures];
  /// The record of `signature`, made if there is room; nullptr when there is none.
  SignatureRecord* record_of(const std::string& signature);
  /// When the supervisor started (steady clock, milliseconds): a restarted campaign's clock and
  /// time budget go on from there.
  std::int64_t started_ms = 0;
  /// The counters of the children so far (copied under the campaign's lock; read only once the
  /// writer is gone).
  bundles::CampaignStats stats;

  bool is_culprit(std::uint64_t k) const;
  bool is_skipped(std::uint64_t k) const;
};

/// The finding a record describes (its reduction sizes, bundle and replay line as last noted).
Finding finding_of(const CrashJournal::SignatureRecord& record);
/// What the children of a supervised campaign have counted and found so far.
CampaignResult result_of(const CrashJournal& journal);

/// A worker's slot for the in-process steps of one case: notes the case on entry, clears it on
/// exit. Without a journal it does nothing.
class InProcessSteps {
 public:
  InProcessSteps(CrashJournal* journal, int slot, std::uint64_t k);
  ~InProcessSteps();
  /// The case's graph is known: its steps may take `budget`.
  void set_budget(std::chrono::milliseconds budget);
  InProcessSteps(const InProcessSteps&) = delete;
  InProcessSteps& operator=(const InProcessSteps&) = delete;

 private:
  CrashJournal::Slot* slot_ = nullptr;
};

/// For the calling thread: its journal slot (what the fatal-signal handler records) and an
/// alternate signal stack, so that a stack overflow in a pass is recorded too.
void enter_worker_slot(CrashJournal* journal, int slot);

/// What the supervisor does.
struct SupervisorOptions {
  /// A case still in its in-process steps after this long is a hang: the child is killed.
  std::chrono::milliseconds in_process_budget{10'000};
  /// Checks of the journal for hangs.
  std::chrono::milliseconds poll_interval{20};
  /// Stop request of the supervisor's own process (forwarded to the child as SIGTERM).
  const std::atomic<bool>* stop = nullptr;
  /// Called when the supervisor stops the campaign itself (no child's own summary was printed):
  /// the summary of the journal so far.
  std::function<void(const CrashJournal&)> on_stop;
};

/// Deaths of a campaign child outside any case that run_supervised answers with a restart.
inline constexpr int kOutsideRestarts = 2;

/// Runs `campaign(journal)` in a child process, again after each death of a child by a crash or
/// hang inside a case's in-process steps (at most CrashJournal::kMaxCulprits times), and returns
/// the exit code of the last child: raised to 1 when an earlier child published a finding, a
/// culprit was skipped, or a culprit was never judged (the time ran out first). The child has a
/// fatal-signal handler that records the crashing worker and dies with its parent. `log` gets one
/// line per restart and the reason of a stop. A culprit that takes a child down a second time (it
/// did not crash alone) is skipped, said in the log; a third time or a failure to fork ends it
/// with exit code 3. A death outside any case restarts the child kOutsideRestarts times (a heap
/// broken by the pipeline often fails in the harness's own code); once more ends it, with exit
/// code 1 when cases took children down before (memory corruption in the pipeline), else 3 (a
/// crash of the harness's own code).
int run_supervised(const std::function<int(CrashJournal&)>& campaign,
                   const SupervisorOptions& options,
                   const std::function<void(const std::string&)>& log);

}  // namespace aotfuzz::fuzz
