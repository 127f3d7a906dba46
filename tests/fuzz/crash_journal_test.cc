// The supervisor of a campaign (fuzz/crash_journal.h): a child that dies or hangs inside a case's
// in-process steps is replaced by one that knows the culprit; a death elsewhere is retried a few
// times, then ends it.
#include "fuzz/crash_journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/journal_notes.h"

namespace aotfuzz::fuzz {
namespace {

using namespace std::chrono_literals;

struct Supervised {
  int code = 0;
  std::vector<std::string> log;
};

Supervised supervise(const std::function<int(CrashJournal&)>& campaign,
                     std::chrono::milliseconds budget = 10s) {
  Supervised s;
  SupervisorOptions o;
  o.in_process_budget = budget;
  s.code = run_supervised(campaign, o, [&](const std::string& line) { s.log.push_back(line); });
  return s;
}

TEST(Supervisor, AChildThatEndsGivesItsExitCodeWithoutARestart) {
  const Supervised s = supervise([](CrashJournal& j) { return j.children.load() == 1 ? 0 : 9; });
  EXPECT_EQ(s.code, 0);
  EXPECT_TRUE(s.log.empty());
}

TEST(Supervisor, ACrashInACaseRestartsWithTheCulpritAndTheWatermarkKept) {
  const Supervised s = supervise([](CrashJournal& j) {
    if (j.children.load() == 1) {
      j.done_below = 3;
      enter_worker_slot(&j, 1);
      InProcessSteps steps(&j, 1, 5);
      std::raise(SIGSEGV);
    }
    // The second child: case 5 is the culprit, cases below 3 are done.
    ++j.culprits_judged;
    return j.is_culprit(5) && !j.is_culprit(3) && j.done_below.load() == 3 ? 0 : 9;
  });
  EXPECT_EQ(s.code, 0);
  ASSERT_EQ(s.log.size(), 1u);
  EXPECT_NE(s.log[0].find("case 5 took the campaign down (it died of SIGSEGV)"), std::string::npos)
      << s.log[0];
}

TEST(Supervisor, TwoWorkersCrashingAtOnceStillNameACulprit) {
  // The first handler's record must be in place before the second crash can end the process.
  for (int round = 0; round < 5; ++round) {
    const Supervised s = supervise([](CrashJournal& j) {
      if (j.children.load() == 1) {
        std::atomic<int> ready{0};
        auto crash = [&](int slot) {
          enter_worker_slot(&j, slot);
          InProcessSteps steps(&j, slot, static_cast<std::uint64_t>(10 + slot));
          ++ready;
          while (ready.load() < 2) {
          }
          std::raise(SIGSEGV);
        };
        std::thread a(crash, 0), b(crash, 1);
        a.join();
        b.join();
      }
      j.culprits_judged = j.num_culprits.load();
      return j.is_culprit(10) || j.is_culprit(11) ? 0 : 9;
    });
    EXPECT_EQ(s.code, 0) << "round " << round << ": " << (s.log.empty() ? "" : s.log.back());
  }
}

TEST(Supervisor, AStackOverflowInACaseIsRecordedToo) {
  const Supervised s = supervise([](CrashJournal& j) {
    if (j.children.load() == 1) {
      enter_worker_slot(&j, 0);
      InProcessSteps steps(&j, 0, 2);
      // Recursion deeper than any stack: the guard page, then SIGSEGV.
      struct Deep {
        static int down(int n, int limit) {
          volatile char frame[1024];
          frame[0] = static_cast<char>(n);
          return n < limit ? down(n + 1, limit) + frame[0] : frame[0];
        }
      };
      return Deep::down(0, std::numeric_limits<int>::max());
    }
    ++j.culprits_judged;
    return j.is_culprit(2) ? 0 : 9;
  });
  EXPECT_EQ(s.code, 0);
}

TEST(Supervisor, ACaseOverItsBudgetIsKilledAndRestartedAsACulprit) {
  const auto t0 = std::chrono::steady_clock::now();
  const Supervised s = supervise(
      [](CrashJournal& j) {
        if (j.children.load() == 1) {
          InProcessSteps steps(&j, 0, 7);
          for (;;) ::pause();
        }
        ++j.culprits_judged;
        return j.is_culprit(7) ? 0 : 9;
      },
      300ms);
  EXPECT_EQ(s.code, 0);
  ASSERT_EQ(s.log.size(), 1u);
  EXPECT_NE(s.log[0].find("took more than 300 ms"), std::string::npos) << s.log[0];
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST(Supervisor, ACulpritNeverJudgedMakesTheExitCode1) {
  // A pipeline that hangs in every case: the time runs out before the culprit's probe ends.
  const Supervised s = supervise(
      [](CrashJournal& j) {
        if (j.children.load() == 1) {
          InProcessSteps steps(&j, 0, 7);
          for (;;) ::pause();
        }
        return 0;
      },
      300ms);
  EXPECT_EQ(s.code, 1);
  ASSERT_EQ(s.log.size(), 2u);
  EXPECT_NE(s.log[1].find("never judged"), std::string::npos) << s.log[1];
}

TEST(Supervisor, ADeathOutsideAnyCaseRestartsTheChild) {
  const Supervised s = supervise([](CrashJournal& j) -> int {
    if (j.children.load() == 1) std::abort();
    return 0;
  });
  EXPECT_EQ(s.code, 0);
  ASSERT_EQ(s.log.size(), 1u);
  EXPECT_NE(s.log[0].find("outside the in-process steps of a case"), std::string::npos) << s.log[0];
  EXPECT_NE(s.log[0].find("a heap broken by an earlier case"), std::string::npos) << s.log[0];
}

TEST(Supervisor, DeathsOutsideAnyCaseWithNoCrashInACaseStopWithExitCode3) {
  const Supervised s = supervise([](CrashJournal&) -> int { std::abort(); });
  EXPECT_EQ(s.code, 3);
  ASSERT_EQ(s.log.size(), static_cast<std::size_t>(kOutsideRestarts) + 1);
  EXPECT_NE(s.log.back().find("a bug of aotfuzz"), std::string::npos) << s.log.back();
}

TEST(Supervisor, DeathsOutsideAnyCaseAfterACrashInACaseAreThePipelinesAndTheExitCodeIs1) {
  // A broken heap: one crash inside a case, then only crashes in the harness's own code.
  const Supervised s = supervise([](CrashJournal& j) -> int {
    if (j.children.load() == 1) {
      enter_worker_slot(&j, 0);
      InProcessSteps steps(&j, 0, 6);
      std::raise(SIGSEGV);
    }
    std::raise(SIGSEGV);
    return 0;
  });
  EXPECT_EQ(s.code, 1);
  ASSERT_EQ(s.log.size(), static_cast<std::size_t>(kOutsideRestarts) + 2);
  EXPECT_NE(s.log.back().find("memory corruption in the pipeline"), std::string::npos)
      << s.log.back();
}

TEST(Supervisor, ACulpritThatCrashesItsChildAgainIsSkippedAndTheExitCodeIs1) {
  const Supervised s = supervise([](CrashJournal& j) -> int {
    if (!j.is_skipped(4)) {
      enter_worker_slot(&j, 0);
      InProcessSteps steps(&j, 0, 4);
      std::raise(SIGSEGV);
    }
    return 0;
  });
  EXPECT_EQ(s.code, 1);
  ASSERT_EQ(s.log.size(), 2u);
  EXPECT_NE(s.log[1].find("case 4 took the campaign down again"), std::string::npos) << s.log[1];
  EXPECT_NE(s.log[1].find("never alone"), std::string::npos) << s.log[1];
}

TEST(Supervisor, ASkippedCulpritThatStillCrashesStops) {
  const Supervised s = supervise([](CrashJournal& j) -> int {
    enter_worker_slot(&j, 0);
    InProcessSteps steps(&j, 0, 4);
    std::raise(SIGSEGV);
    return 0;
  });
  EXPECT_EQ(s.code, 3);
  ASSERT_EQ(s.log.size(), 3u);
  EXPECT_NE(s.log[2].find("stopping"), std::string::npos) << s.log[2];
}

TEST(Supervisor, AFindingOfAnEarlierChildMakesTheExitCode1) {
  const Supervised s = supervise([](CrashJournal& j) {
    if (j.children.load() == 1) {
      ++j.findings;
      enter_worker_slot(&j, 0);
      InProcessSteps steps(&j, 0, 1);
      std::raise(SIGBUS);
    }
    return 0;
  });
  EXPECT_EQ(s.code, 1);
}

TEST(Supervisor, OnceEveryCulpritSlotIsTakenEveryCaseIsProbedAndTheCampaignGoesOn) {
  // A pass that crashes on every graph: each child dies in its first case not yet a culprit.
  const Supervised s = supervise([](CrashJournal& j) -> int {
    if (j.probe_every_case.load()) return j.findings.load() > 0 ? 1 : 9;
    ++j.findings;
    const std::uint64_t next = static_cast<std::uint64_t>(j.num_culprits.load());
    enter_worker_slot(&j, 0);
    InProcessSteps steps(&j, 0, next);
    std::raise(SIGSEGV);
    return 0;
  });
  EXPECT_EQ(s.code, 1);
  ASSERT_EQ(s.log.size(), static_cast<std::size_t>(CrashJournal::kMaxCulprits) + 1);
  EXPECT_NE(s.log.back().find("every case's in-process steps run in a child process first"),
            std::string::npos)
      << s.log.back();
}

TEST(Supervisor, AStopAfterAFindingExits1WithTheJournalsSummary) {
  SupervisorOptions o;
  int summaries = 0;
  std::uint64_t hits = 0;
  o.on_stop = [&](const CrashJournal& j) {
    ++summaries;
    const CampaignResult r = result_of(j);
    hits = r.signature_hits.count("crash:fuse:SIGSEGV") ? r.signature_hits.at("crash:fuse:SIGSEGV")
                                                         : 0;
    EXPECT_EQ(r.findings.size(), 1u);
  };
  std::vector<std::string> log;
  // The same case takes every child down, even once skipped: the supervisor stops.
  const int code = run_supervised(
      [](CrashJournal& j) -> int {
        ++j.findings;
        if (auto* rec = j.record_of("crash:fuse:SIGSEGV")) {
          ++rec->hits;
          rec->claimed = true;
        }
        enter_worker_slot(&j, 0);
        InProcessSteps steps(&j, 0, 4);
        std::raise(SIGSEGV);
        return 0;
      },
      o, [&](const std::string& line) { log.push_back(line); });
  EXPECT_EQ(code, 1);
  EXPECT_EQ(summaries, 1);
  EXPECT_EQ(hits, 3u);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("stopping"), std::string::npos) << log.back();
}

TEST(InProcessSteps, MarkTheSlotWhileTheyLast) {
  CrashJournal j;
  {
    InProcessSteps steps(&j, 3, 41);
    EXPECT_EQ(j.slots[3].case_plus_one.load(), 42u);
  }
  EXPECT_EQ(j.slots[3].case_plus_one.load(), 0u);
  InProcessSteps none(nullptr, 3, 41);  // no journal: nothing to do
}

// A crash finding's reports (JUnit, SARIF) were empty after a restart: the journal lost what the
// finding said.
TEST(JournalNotes, AFindingOfAnEarlierChildKeepsItsSummary) {
  const auto j = std::make_unique<CrashJournal>();
  JournalNotes notes(j.get());
  Finding f;
  f.signature = "crash:fuse:SIGSEGV";
  f.summary = "crash at fuse: SIGSEGV";
  f.replay = "aotfuzz run findings/crash_fuse_SIGSEGV/reduced.relay --debug-fault fuse:crash";
  notes.claimed(f, 3);
  const CampaignResult r = result_of(*j);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].summary, f.summary);
  EXPECT_EQ(r.findings[0].replay, f.replay);
}

}  // namespace
}  // namespace aotfuzz::fuzz
