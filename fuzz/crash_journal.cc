// The supervisor of a campaign, its journal in shared memory and the child's fatal-signal handler.
#include "fuzz/crash_journal.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <thread>

#include "host/process.h"

namespace aotfuzz::fuzz {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A signal handler reaches no object: the journal of this process and the slot of this thread
// have to be where it can find them.
CrashJournal* g_journal = nullptr;
thread_local int t_slot = -1;

extern "C" void on_fatal_signal(int sig) {
  // Recorded before the default action is restored: when two workers crash at once, the second
  // may die of the default action, and the first record must already be there.
  if (g_journal != nullptr) {
    int none = -1;
    if (g_journal->crashed_slot.compare_exchange_strong(none, t_slot)) {
      g_journal->crashed_signal.store(sig, std::memory_order_relaxed);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};

void install_crash_recorder(CrashJournal* journal) {
  g_journal = journal;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NODEFER | SA_ONSTACK;
  for (int sig : kFatalSignals) sigaction(sig, &sa, nullptr);
}

// The shared journal: an anonymous shared mapping, so that it outlives the child that writes it.
struct SharedJournal {
  SharedJournal() {
    void* p = ::mmap(nullptr, sizeof(CrashJournal), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    journal = new (p) CrashJournal();
  }
  ~SharedJournal() {
    journal->~CrashJournal();
    ::munmap(journal, sizeof(CrashJournal));
  }
  SharedJournal(const SharedJournal&) = delete;
  SharedJournal& operator=(const SharedJournal&) = delete;
  CrashJournal* journal;
};

}  // namespace

bool CrashJournal::is_culprit(std::uint64_t k) const {
  const int n = num_culprits.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (culprits[i].load(std::memory_order_relaxed) == k) return true;
  }
  return false;
}

CrashJournal::SignatureRecord* CrashJournal::record_of(const std::string& signature) {
  for (int i = 0; i < num_signatures; ++i) {
    if (signature == signatures[i].signature) return &signatures[i];
  }
  if (num_signatures >= kMaxSignatures || signature.size() >= sizeof(signatures[0].signature)) {
    return nullptr;
  }
  SignatureRecord& r = signatures[num_signatures++];
  std::memset(&r, 0, sizeof r);
  std::memcpy(r.signature, signature.data(), signature.size());
  return &r;
}

Finding finding_of(const CrashJournal::SignatureRecord& rec) {
  Finding f;
  f.signature = rec.signature;
  f.case_index = rec.case_index;
  f.found_after_s = rec.found_after_s;
  f.reduction.before.ops = rec.ops_before;
  f.reduction.after.ops = rec.ops_after;
  f.reduction.before.inputs = rec.inputs_before;
  f.reduction.after.inputs = rec.inputs_after;
  f.bundle_written = rec.bundle_written;
  f.bundle_dir = rec.bundle_dir;
  f.replay = rec.replay;
  f.summary = rec.summary;
  return f;
}

CampaignResult result_of(const CrashJournal& j) {
  CampaignResult r;
  r.stats = j.stats;
  for (int i = 0; i < j.num_signatures; ++i) {
    const auto& rec = j.signatures[i];
    r.signature_hits[rec.signature] = rec.hits;
    if (rec.claimed) r.findings.push_back(finding_of(rec));
  }
  r.elapsed = std::chrono::milliseconds(now_ms() - j.started_ms);
  return r;
}

bool CrashJournal::is_skipped(std::uint64_t k) const {
  const int n = num_skipped.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (skipped[i].load(std::memory_order_relaxed) == k) return true;
  }
  return false;
}

InProcessSteps::InProcessSteps(CrashJournal* journal, int slot, std::uint64_t k) {
  if (journal == nullptr || slot < 0 || slot >= CrashJournal::kSlots) return;
  slot_ = &journal->slots[slot];
  slot_->since_ms.store(now_ms(), std::memory_order_relaxed);
  slot_->budget_ms.store(0, std::memory_order_relaxed);
  slot_->case_plus_one.store(k + 1, std::memory_order_release);
}

void InProcessSteps::set_budget(std::chrono::milliseconds budget) {
  if (slot_ != nullptr) slot_->budget_ms.store(budget.count(), std::memory_order_relaxed);
}

InProcessSteps::~InProcessSteps() {
  if (slot_ != nullptr) slot_->case_plus_one.store(0, std::memory_order_release);
}

void enter_worker_slot(CrashJournal* journal, int slot) {
  if (journal == nullptr) return;
  t_slot = slot;
  // A sanitizer runtime gives each thread an alternate stack of its own and unmaps it when the
  // thread ends: that one is kept.
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;
  // Freed with the thread's exit: the stack is needed for as long as the thread runs.
  thread_local std::unique_ptr<char[]> alt_stack;
  constexpr std::size_t kAltStackBytes = 64 * 1024;
  alt_stack = std::make_unique<char[]>(kAltStackBytes);
  stack_t ss{};
  ss.ss_sp = alt_stack.get();
  ss.ss_size = kAltStackBytes;
  ::sigaltstack(&ss, nullptr);
}

int run_supervised(const std::function<int(CrashJournal&)>& campaign,
                   const SupervisorOptions& options,
                   const std::function<void(const std::string&)>& log) {
  SharedJournal shared;
  CrashJournal& j = *shared.journal;
  int outside_deaths = 0;
  j.started_ms = now_ms();
  // The supervisor ends the campaign: its summary so far, and exit 1 once a finding is bundled
  // (a CI gate reads 3 as broken infrastructure, and the finding is real).
  auto stop_campaign = [&](int code) {
    if (options.on_stop) options.on_stop(j);
    return j.findings.load() > 0 ? 1 : code;
  };
  for (;;) {
    j.crashed_slot = -1;
    j.crashed_signal = 0;
    for (auto& slot : j.slots) slot.case_plus_one = 0;
    ++j.children;
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      log("cannot fork the campaign's process: " + std::string(std::strerror(errno)));
      return stop_campaign(3);
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(3);
      install_crash_recorder(&j);
      int code = 3;
      try {
        code = campaign(j);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "aotfuzz: %s\n", e.what());
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    // Watch the child: forward a stop request once, kill it when a case overruns its budget.
    int status = 0;
    bool forwarded = false;
    std::optional<std::uint64_t> hung;
    std::int64_t hung_budget_ms = 0;
    for (;;) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) return 3;
      if (options.stop != nullptr && options.stop->load() && !forwarded) {
        ::kill(pid, SIGTERM);
        forwarded = true;
      }
      if (!hung) {
        const std::int64_t now = now_ms();
        for (const auto& slot : j.slots) {
          const std::uint64_t c = slot.case_plus_one.load(std::memory_order_acquire);
          const std::int64_t own = slot.budget_ms.load(std::memory_order_relaxed);
          const std::int64_t budget = own > 0 ? own : options.in_process_budget.count();
          if (c != 0 && now - slot.since_ms.load() > budget) {
            hung = c - 1;
            hung_budget_ms = budget;
            ::kill(pid, SIGKILL);
            break;
          }
        }
      }
      std::this_thread::sleep_for(options.poll_interval);
    }
    const std::uint64_t findings = j.findings.load();
    if (!hung && WIFEXITED(status)) {
      const int code = WEXITSTATUS(status);
      // A skipped culprit counts as judged: its second crash is the verdict.
      const int unjudged = j.num_culprits.load() - j.culprits_judged.load() - j.num_skipped.load();
      if (code == 0 && unjudged > 0 && findings == 0) {
        log(std::to_string(unjudged) + " of the cases that took the campaign down " +
            (unjudged == 1 ? "was" : "were") +
            " never judged: the campaign ended first (a pipeline that hangs or crashes in "
            "every case, most likely; the lines above name the cases)");
      }
      return code == 0 && (findings > 0 || j.num_skipped.load() > 0 || unjudged > 0) ? 1 : code;
    }
    std::uint64_t culprit = 0;
    std::string how;
    if (hung) {
      culprit = *hung;
      how = "its in-process steps took more than " + std::to_string(hung_budget_ms) + " ms";
    } else {
      const int sig = WTERMSIG(status);
      const int slot = j.crashed_slot.load();
      const std::uint64_t c =
          slot >= 0 && slot < CrashJournal::kSlots ? j.slots[slot].case_plus_one.load() : 0;
      if (c == 0) {
        const std::string died = "the campaign's process died of " + host::signal_name(sig) +
                                 " outside the in-process steps of a case";
        if (sig == SIGKILL) {
          log(died + " (killed: out of memory?); stopping");
          return stop_campaign(3);
        }
        if (forwarded || (options.stop != nullptr && options.stop->load())) return 130;
        // A pipeline that writes past a block breaks the heap for whatever allocates next, often
        // the harness's own code: the next child's crash may well come inside the case at fault.
        if (++outside_deaths <= kOutsideRestarts) {
          log(died + ": a heap broken by an earlier case, most likely; it goes on from case " +
              std::to_string(j.done_below.load()));
          continue;
        }
        if (j.num_culprits.load() > 0) {
          log(died + ", " + std::to_string(outside_deaths) +
              " times, after cases that took it down: memory corruption in the pipeline, most "
              "likely; run the campaign with the ASan build (cmake --preset asan) for a report; "
              "stopping");
          return stop_campaign(1);
        }
        log(died + ", " + std::to_string(outside_deaths) +
            " times: a bug of aotfuzz, or memory corruption that never showed inside a case (the "
            "ASan build, cmake --preset asan, tells them apart); stopping");
        return stop_campaign(3);
      }
      culprit = c - 1;
      how = "it died of " + host::signal_name(sig);
    }
    if (forwarded || (options.stop != nullptr && options.stop->load())) return 130;
    if (j.is_culprit(culprit)) {
      const int skipped = j.num_skipped.load();
      if (j.is_skipped(culprit) || skipped >= CrashJournal::kMaxCulprits) {
        log("case " + std::to_string(culprit) + " took the campaign down again (" + how +
            "); stopping");
        return stop_campaign(3);
      }
      // Its probe ended normally, then it crashed the campaign's process: a memory error of the
      // pipeline whose effect depends on the heap. A finding without a repro of its own.
      j.skipped[skipped] = culprit;
      j.num_skipped = skipped + 1;
      log("case " + std::to_string(culprit) + " took the campaign down again (" + how +
          ") but never alone: memory corruption in the pipeline? Replay it with the ASan build "
          "(cmake --preset asan). The campaign skips it and goes on from case " +
          std::to_string(j.done_below.load()));
      continue;
    }
    const int n = j.num_culprits.load();
    if (n >= CrashJournal::kMaxCulprits) {
      if (j.probe_every_case.load()) {
        log("case " + std::to_string(culprit) + " took the campaign down (" + how +
            ") although every case is probed first; stopping");
        return stop_campaign(3);
      }
      // A fuzzer keeps fuzzing through crashes: from here on each case is probed first.
      j.probe_every_case = true;
      log(std::to_string(n) + " cases took the campaign down (" + how + "); from case " +
          std::to_string(j.done_below.load()) +
          " on, every case's in-process steps run in a child process first (slower)");
      continue;
    }
    j.culprits[n] = culprit;
    j.num_culprits = n + 1;
    log("case " + std::to_string(culprit) + " took the campaign down (" + how +
        "); it goes on from case " + std::to_string(j.done_below.load()) +
        ", judging that case in a child process");
  }
}

}  // namespace aotfuzz::fuzz
