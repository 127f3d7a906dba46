// Tests of the out-of-process runner: exit statuses, signals, timeouts that kill whole process
// groups, output caps, rlimits, environment, and no leftovers (zombies, processes, temp files).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "host/process.h"
#include "host/tempdir.h"
#include "oracle/verdict.h"
#include "tests/support/files.h"
#include "tests/support/processes.h"

namespace aotfuzz::host {
namespace {

using oracle::verdict_from_run;
using oracle::VerdictKind;
using oracle::Timeout;
using oracle::signature;

using namespace std::chrono_literals;
using test_support::child_program;
using test_support::count_entries;

class Process : public ::testing::Test {
 protected:
  void SetUp() override {
    if (child_program().empty()) GTEST_SKIP() << "no C compiler to build the child program";
  }
  static RunResult child(std::vector<std::string> args, const RunLimits& limits = RunLimits()) {
    args.insert(args.begin(), child_program());
    return run_process(args, limits);
  }
};

// A process that is gone or a zombie (reparented to an init that has not reaped it yet) is dead.
bool process_is_dead(int pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

int first_line_as_pid(const std::string& text) {
  std::istringstream in(text);
  int pid = 0;
  in >> pid;
  return pid;
}

TEST_F(Process, ReportsTheExitCode) {
  for (int code : {0, 1, 42, 255}) {
    RunResult r = child({"exit", std::to_string(code)});
    EXPECT_EQ(r.kind, ExitKind::kExited);
    EXPECT_EQ(r.exit_code, code);
    EXPECT_EQ(r.exited_ok(), code == 0);
    EXPECT_EQ(verdict_from_run(r, RunLimits()), std::nullopt);
  }
}

TEST_F(Process, CapturesStdoutAndStderrSeparately) {
  RunResult r = child({"streams"});
  EXPECT_EQ(r.stdout_text, "to stdout\n");
  EXPECT_EQ(r.stderr_text, "to stderr\n");
  EXPECT_FALSE(r.stdout_truncated);
  EXPECT_FALSE(r.stderr_truncated);
}

TEST_F(Process, ASegfaultIsSignalSigsegvAndACrashVerdict) {
  RunResult r = child({"segv"});
  EXPECT_EQ(r.kind, ExitKind::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(signal_name(r.signal), "SIGSEGV");
  EXPECT_EQ(r.describe(), "signaled SIGSEGV");
  auto v = verdict_from_run(r, RunLimits());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(signature(*v), "crash:run:SIGSEGV");
  EXPECT_EQ(exit_code(*v), 1);
}

TEST_F(Process, AnAbortIsSignalSigabrt) {
  RunResult r = child({"abort"});
  EXPECT_EQ(r.kind, ExitKind::kSignaled);
  EXPECT_EQ(r.signal, SIGABRT);
}

TEST_F(Process, AnInfiniteLoopIsKilledAtTheTimeout) {
  RunLimits limits;
  limits.timeout = 1000ms;
  RunResult r = child({"spin"}, limits);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut) << r.describe();
  EXPECT_GE(r.elapsed, 1000ms);
  EXPECT_LT(r.elapsed, 3000ms);
  EXPECT_TRUE(process_is_dead(r.pid));
  auto v = verdict_from_run(r, limits);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(signature(*v), "timeout:run");
  EXPECT_EQ(std::get<Timeout>(v->detail).limit_ms, 1000);
}

TEST_F(Process, AStopRequestKillsTheChildWithinMillisecondsAndSaysItWasCancelled) {
  std::atomic<bool> stop{false};
  RunLimits limits;
  limits.timeout = 20'000ms;
  limits.cancel = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  RunResult r = child({"spin"}, limits);
  stopper.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut) << r.describe();
  EXPECT_GE(r.elapsed, 200ms);
  EXPECT_LT(r.elapsed, 5000ms);
  EXPECT_NE(r.message.find("stop request"), std::string::npos) << r.message;
  EXPECT_TRUE(process_is_dead(r.pid));
  // A flag that stays clear changes nothing.
  std::atomic<bool> never{false};
  limits.cancel = &never;
  RunResult ok = child({"exit", "3"}, limits);
  EXPECT_FALSE(ok.cancelled);
  EXPECT_EQ(ok.exit_code, 3) << ok.describe();
}

TEST_F(Process, TheCpuLimitEndsABusyLoopAsATimeout) {
  // A generous wall clock: on a loaded machine one CPU second can take many wall seconds. The
  // signal shows which limit fired.
  RunLimits limits;
  limits.timeout = 120s;
  limits.cpu_seconds = 1;
  RunResult r = child({"spin"}, limits);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut) << r.describe();
  EXPECT_EQ(r.signal, SIGXCPU);
  EXPECT_NE(r.message.find("CPU"), std::string::npos) << r.message;
}

TEST_F(Process, AFloodOfOutputIsCappedAndStillTerminates) {
  RunLimits limits;
  limits.output_cap = 1 << 20;
  RunResult r = child({"flood", "100"}, limits);
  EXPECT_EQ(r.kind, ExitKind::kExited) << r.describe();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text.size(), std::size_t{1} << 20);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stderr_text, "flooded\n");
  EXPECT_FALSE(r.stderr_truncated);
}

TEST_F(Process, AGrandchildIsKilledWithItsParentAtTheTimeout) {
  RunLimits limits;
  limits.timeout = 500ms;
  RunResult r = child({"fork-sleep"}, limits);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut) << r.describe();
  EXPECT_LT(r.elapsed, 3000ms);
  int grandchild = first_line_as_pid(r.stdout_text);
  ASSERT_GT(grandchild, 0) << r.stdout_text;
  EXPECT_TRUE(process_is_dead(grandchild));
}

TEST_F(Process, AGrandchildLeftBehindByAnExitingChildIsKilledAndDoesNotStallUs) {
  RunResult r = child({"fork-exit"});
  EXPECT_EQ(r.kind, ExitKind::kExited) << r.describe();
  EXPECT_EQ(r.exit_code, 0);
  // Well under the default 10 s timeout, which is where awaiting the grandchild would end.
  EXPECT_LT(r.elapsed, 5s) << "the grandchild holds stdout open; it must be killed, not awaited";
  int grandchild = first_line_as_pid(r.stdout_text);
  ASSERT_GT(grandchild, 0) << r.stdout_text;
  EXPECT_TRUE(process_is_dead(grandchild));
}

TEST_F(Process, TheAddressSpaceLimitStopsAHugeMalloc) {
  RunLimits tight;
  tight.address_space = std::uint64_t{256} << 20;
  EXPECT_EQ(child({"malloc", "1024"}, tight).exit_code, 7);
  RunLimits unlimited;
  unlimited.address_space = 0;
  EXPECT_EQ(child({"malloc", "1024"}, unlimited).exit_code, 0)
      << "without the limit the same allocation succeeds, so the limit is what stopped it";
}

TEST_F(Process, TheResidentMemoryWatchEndsAProgramThatKeepsTouchingMemory) {
  RunLimits watched;
  watched.address_space = 0;
  watched.resident_bytes = std::uint64_t{64} << 20;
  watched.timeout = 20s;
  const RunResult r = child({"touch", "512"}, watched);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut) << r.describe();
  EXPECT_NE(r.message.find("resident memory"), std::string::npos) << r.message;
  EXPECT_LT(r.elapsed, 10s) << "killed when it passed the limit, not at the wall-clock limit";
  // Under the limit the same program is only stopped by the wall clock.
  watched.resident_bytes = std::uint64_t{1} << 30;
  watched.timeout = 1500ms;
  const RunResult under = child({"touch", "16"}, watched);
  EXPECT_EQ(under.kind, ExitKind::kTimedOut);
  EXPECT_EQ(under.message.find("resident memory"), std::string::npos) << under.message;
}

TEST_F(Process, TheFileSizeLimitRaisesSigxfsz) {
  TempDir dir("aotfuzz-test-fsize");
  RunLimits limits;
  limits.file_size = std::uint64_t{1} << 20;
  limits.working_dir = dir.path().string();
  RunResult big = child({"write-file", "big.bin", "2048"}, limits);
  EXPECT_EQ(big.kind, ExitKind::kSignaled) << big.describe();
  EXPECT_EQ(big.signal, SIGXFSZ);
  RunResult small = child({"write-file", "small.bin", "512"}, limits);
  EXPECT_TRUE(small.exited_ok()) << small.describe();
  EXPECT_EQ(std::filesystem::file_size(dir.file("small.bin")), 512u * 1024u);
}

TEST_F(Process, LimitsAreAppliedInTheChild) {
  RunLimits limits;
  limits.timeout = 3s;
  limits.address_space = std::uint64_t{512} << 20;
  limits.file_size = std::uint64_t{8} << 20;
  limits.processes = 777;
  RunResult r = child({"limits"}, limits);
  ASSERT_TRUE(r.exited_ok()) << r.describe();
  EXPECT_NE(r.stdout_text.find("core 0\n"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("cpu 4\n"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("as " + std::to_string(512u << 20) + "\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("fsize " + std::to_string(8u << 20) + "\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("nproc 777\n"), std::string::npos) << r.stdout_text;
}

TEST_F(Process, TheWorkingDirectoryIsApplied) {
  TempDir dir("aotfuzz-test-cwd");
  RunLimits limits;
  limits.working_dir = dir.path().string();
  RunResult r = child({"pwd"}, limits);
  EXPECT_EQ(r.stdout_text, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_F(Process, ABadWorkingDirectoryFailsInsteadOfRunningElsewhere) {
  RunLimits limits;
  limits.working_dir = "/nonexistent/aotfuzz/dir";
  RunResult r = child({"pwd"}, limits);
  EXPECT_FALSE(r.exited_ok());
  EXPECT_EQ(r.stdout_text, "");
}

TEST_F(Process, TheEnvironmentIsExactlyTheGivenOne) {
  ::setenv("AOTFUZZ_TEST_SECRET", "leak", 1);
  RunLimits limits;
  limits.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
  RunResult r = child({"env"}, limits);
  ::unsetenv("AOTFUZZ_TEST_SECRET");
  std::istringstream in(r.stdout_text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"ONLY=this", "PATH=/usr/bin:/bin"}));
}

// Boost.Process's environment operator[] read past the end of entries (ASan: heap-buffer-overflow)
// once a variable with a value too long for std::string's inline buffer followed another: the
// build script of `aotfuzz bisect`, given the user's whole environment, met it at once.
TEST_F(Process, AVariableWithALongValueAfterAnotherArrivesIntact) {
  RunLimits limits;
  limits.env = {{"PATH", "/usr/bin:/bin"},
                {"AOTFUZZ_A", "/x"},
                {"AOTFUZZ_B_LONGER", "/a/value/longer/than/fifteen/chars"}};
  RunResult r = child({"env"}, limits);
  std::istringstream in(r.stdout_text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"AOTFUZZ_A=/x",
                                             "AOTFUZZ_B_LONGER=/a/value/longer/than/fifteen/chars",
                                             "PATH=/usr/bin:/bin"}));
}

TEST_F(Process, TheDefaultEnvironmentIsMinimal) {
  auto env = RunLimits::minimal_environment();
  EXPECT_TRUE(env.count("PATH"));
  EXPECT_EQ(env.at("LC_ALL"), "C");
  for (const auto& [key, value] : env) {
    EXPECT_TRUE(key == "PATH" || key == "LC_ALL" || key == "TMPDIR") << key;
  }
}

TEST_F(Process, StdinIsEmpty) {
  RunResult r = child({"stdin"});
  EXPECT_EQ(r.stdout_text, "0\n");
}

TEST_F(Process, IgnoredSignalsAreResetToDefaults) {
  auto old = std::signal(SIGPIPE, SIG_IGN);
  RunResult r = child({"sigpipe"});
  std::signal(SIGPIPE, old);
  EXPECT_EQ(r.stdout_text, "default\n");
}

TEST_F(Process, AMissingExecutableFailsToStartAndIsAToolchainError) {
  RunResult r = run_process({"/nonexistent/aotfuzz/program"});
  EXPECT_EQ(r.kind, ExitKind::kStartFailed);
  EXPECT_FALSE(r.message.empty());
  auto v = verdict_from_run(r, RunLimits());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), VerdictKind::kToolchainError);
  EXPECT_EQ(exit_code(*v), 3);
  EXPECT_EQ(run_process({"aotfuzz-no-such-program-anywhere"}).kind, ExitKind::kStartFailed);
}

TEST_F(Process, AnEmptyArgumentVectorIsRejected) {
  EXPECT_THROW(run_process({}), std::invalid_argument);
}

TEST_F(Process, ABareNameIsLookedUpInPath) {
  RunResult r = run_process({"true"});
  EXPECT_TRUE(r.exited_ok()) << r.describe();
}

TEST_F(Process, ConcurrentRunsFromManyThreadsAreIndependent) {
  constexpr int kThreads = 4, kRuns = 5;
  std::vector<std::vector<int>> codes(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        RunResult r = child({"exit", std::to_string(t * 10 + i)});
        codes[t].push_back(r.kind == ExitKind::kExited ? r.exit_code : -1);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kRuns; ++i) EXPECT_EQ(codes[t][i], t * 10 + i);
  }
}

TEST_F(Process, NoZombiesOrTemporaryFilesAreLeftBehind) {
  test_support::ScopedTmpdir tmp;
  ASSERT_EQ(count_entries(tmp.path()), 0u);
  RunLimits quick;
  quick.timeout = 300ms;
  quick.env = RunLimits::minimal_environment();  // now with the dedicated TMPDIR
  child({"exit", "0"}, quick);
  child({"segv"}, quick);
  child({"spin"}, quick);
  child({"fork-sleep"}, quick);
  child({"flood", "3"}, quick);
  run_process({"/nonexistent/aotfuzz/program"}, quick);
  EXPECT_EQ(count_entries(tmp.path()), 0u);
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "an unreaped child is left";
  EXPECT_EQ(errno, ECHILD);
}

// Where pidfd_open is unavailable the runner polls the child's state instead; the same
// guarantees must hold.
TEST_F(Process, WithoutPidfdExitsSignalsTimeoutsAndGrandchildrenAreStillHandled) {
  detail::force_wait_fallback(true);
  RunResult code = child({"exit", "42"});
  RunResult segv = child({"segv"});
  RunResult flood = child({"flood", "20"});
  RunLimits quick;
  quick.timeout = 500ms;
  RunResult spin = child({"spin"}, quick);
  RunResult fork = child({"fork-sleep"}, quick);
  RunResult left = child({"fork-exit"});
  detail::force_wait_fallback(false);
  EXPECT_EQ(code.exit_code, 42);
  EXPECT_LT(code.elapsed, 1s);
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_TRUE(flood.exited_ok());
  EXPECT_TRUE(flood.stdout_truncated);
  EXPECT_EQ(spin.kind, ExitKind::kTimedOut);
  EXPECT_LT(spin.elapsed, 3000ms);
  EXPECT_EQ(fork.kind, ExitKind::kTimedOut);
  EXPECT_TRUE(process_is_dead(first_line_as_pid(fork.stdout_text)));
  EXPECT_TRUE(left.exited_ok());
  EXPECT_LT(left.elapsed, 5s);
  EXPECT_TRUE(process_is_dead(first_line_as_pid(left.stdout_text)));
}

TEST(CompanionProgram, TheEnvironmentThenTheSiblingThenTheBuildTree) {
  test_support::ScopedTmpdir tmp;
  const std::string exe = (tmp.path() / "tool").string();
  std::ofstream(exe) << "#!/bin/sh\n";
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  ::unsetenv("AOTFUZZ_TEST_COMPANION");
  // No such program beside the test binary: the build tree's path, when executable.
  EXPECT_EQ(companion_program("AOTFUZZ_TEST_COMPANION", "no-such-aotfuzz-tool", exe.c_str()), exe);
  EXPECT_EQ(companion_program("AOTFUZZ_TEST_COMPANION", "no-such-aotfuzz-tool",
                              (tmp.path() / "missing").c_str()),
            "");
  EXPECT_EQ(companion_program("AOTFUZZ_TEST_COMPANION", "no-such-aotfuzz-tool", nullptr), "");
  ::setenv("AOTFUZZ_TEST_COMPANION", "/named/by/the/user", 1);
  EXPECT_EQ(companion_program("AOTFUZZ_TEST_COMPANION", "no-such-aotfuzz-tool", exe.c_str()),
            "/named/by/the/user");
  ::unsetenv("AOTFUZZ_TEST_COMPANION");
  // The test binary's own name is a sibling of itself.
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(companion_program("AOTFUZZ_TEST_COMPANION", self.filename().c_str(), exe.c_str()),
            self.string());
}

TEST(ProcessNames, SignalsHaveTheirConventionalNames) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGBUS), "SIGBUS");
  EXPECT_EQ(signal_name(SIGFPE), "SIGFPE");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGXCPU), "SIGXCPU");
  EXPECT_EQ(signal_name(SIGRTMIN + 1), "SIG" + std::to_string(SIGRTMIN + 1));
}

}  // namespace
}  // namespace aotfuzz::host
