// host::Child: a child that answers, one that hangs past its deadline and is killed, one that
// dies by a signal, one that closes its end early; its group, its signals, its stderr.
#include "host/child.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace aotfuzz::host {
namespace {

using namespace std::chrono_literals;
using Clock = Child::Clock;

ChildSpec sh(const std::string& script) { return ChildSpec{.argv = {"/bin/sh", "-c", script}}; }

// Everything the child writes until it closes its end, or until `within` passes.
std::string read_all(Child& child, std::chrono::milliseconds within, ChildIo* last = nullptr) {
  std::string out;
  const auto deadline = Clock::now() + within;
  ChildIo io = ChildIo::kOk;
  while ((io = child.read_some(out, deadline)) == ChildIo::kOk) {
  }
  if (last != nullptr) *last = io;
  return out;
}

// Whether process `pid` is gone or a zombie, within a second.
bool process_is_dead(int pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Child, AChildThatAnswersIsReadToItsEndAndExitsWithItsCode) {
  Child child;
  ASSERT_TRUE(child.start(sh("read line; echo \"got $line\"; exit 7"))) << child.error();
  EXPECT_EQ(child.write("hello\n", Clock::now() + 5s), ChildIo::kOk);
  ChildIo last = ChildIo::kOk;
  EXPECT_EQ(read_all(child, 5s, &last), "got hello\n");
  EXPECT_EQ(last, ChildIo::kClosed);
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->exited());
  EXPECT_EQ(status->exit_code, 7);
  EXPECT_FALSE(child.running());
}

TEST(Child, ItsWholeInputArrivesAndClosingItIsEndOfFile) {
  Child child;
  const std::string input(1 << 20, 'x');
  ASSERT_TRUE(child.start(sh("wc -c")));
  EXPECT_EQ(child.write(input, Clock::now() + 10s), ChildIo::kOk);
  child.close_input();
  EXPECT_EQ(std::stoul(read_all(child, 10s)), input.size());
}

TEST(Child, ReadExactReadsAcrossWritesAndIsShortWhenTheChildEnds) {
  Child child;
  ASSERT_TRUE(child.start(sh("printf ab; sleep 0.1; printf cd")));
  std::string out;
  EXPECT_EQ(child.read_exact(out, 3, Clock::now() + 5s), ChildIo::kOk);
  EXPECT_EQ(out, "abc");
  EXPECT_EQ(child.read_exact(out, 2, Clock::now() + 5s), ChildIo::kClosed);
  EXPECT_EQ(out, "d");
}

TEST(Child, AChildThatHangsPastTheDeadlineIsTimedOutThenKilled) {
  Child child;
  ASSERT_TRUE(child.start(sh("sleep 30")));
  const auto t0 = Clock::now();
  std::string out;
  EXPECT_EQ(child.read_some(out, Clock::now() + 200ms), ChildIo::kTimedOut);
  EXPECT_GE(Clock::now() - t0, 190ms);
  const int pid = child.pid();
  const ChildStatus status = child.kill();
  EXPECT_LT(Clock::now() - t0, 5s);
  EXPECT_TRUE(status.killed);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_FALSE(child.running());
  EXPECT_TRUE(process_is_dead(pid));
}

TEST(Child, AWriteToAChildThatNeverReadsTimesOut) {
  Child child;
  ASSERT_TRUE(child.start(sh("sleep 30")));
  // More than the socket buffers hold.
  EXPECT_EQ(child.write(std::string(std::size_t{32} << 20, 'x'), Clock::now() + 300ms),
            ChildIo::kTimedOut);
}

TEST(Child, AStopRequestEndsAWaitWithinMilliseconds) {
  Child child;
  ASSERT_TRUE(child.start(sh("sleep 30")));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    stop = true;
  });
  const auto t0 = Clock::now();
  EXPECT_EQ(child.wait_readable(Clock::now() + 20s, &stop), ChildIo::kCancelled);
  EXPECT_LT(Clock::now() - t0, 2s);
  stopper.join();
}

TEST(Child, AChildThatDiesByASignalIsThatSignalNotAKill) {
  Child child;
  ASSERT_TRUE(child.start(sh("printf partial; kill -SEGV $$")));
  ChildIo last = ChildIo::kOk;
  EXPECT_EQ(read_all(child, 5s, &last), "partial");
  EXPECT_EQ(last, ChildIo::kClosed);
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(status->exited());
  EXPECT_EQ(status->signal, SIGSEGV);
  EXPECT_FALSE(status->killed);
}

TEST(Child, AChildThatClosesEarlyIsClosedForWritesWithoutASigpipeHere) {
  Child child;
  // Its stdin and stdout closed at once, then it goes on a moment before its exit.
  ASSERT_TRUE(child.start(sh("exec 0<&- 1>&-; sleep 0.2; exit 3")));
  EXPECT_EQ(child.write(std::string(std::size_t{8} << 20, 'x'), Clock::now() + 10s),
            ChildIo::kClosed);
  ChildIo last = ChildIo::kOk;
  EXPECT_EQ(read_all(child, 5s, &last), "");
  EXPECT_EQ(last, ChildIo::kClosed);
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 3);
}

TEST(Child, AChildStillRunningIsNotReapedByAShortWait) {
  Child child;
  ASSERT_TRUE(child.start(sh("sleep 30")));
  EXPECT_FALSE(child.wait_for(50ms).has_value());
  EXPECT_TRUE(child.running());
}

TEST(Child, KillEndsWhatTheChildStartedInItsGroup) {
  Child child;
  ASSERT_TRUE(child.start(sh("sleep 30 & echo $!; wait")));
  std::string out;
  const auto deadline = Clock::now() + 5s;
  while (out.find('\n') == std::string::npos &&
         child.read_some(out, deadline) == ChildIo::kOk) {
  }
  const int grandchild = std::stoi(out);
  ASSERT_GT(grandchild, 0);
  child.kill();
  EXPECT_TRUE(process_is_dead(grandchild));
}

TEST(Child, ItRunsInAProcessGroupOfItsOwn) {
  Child child;
  ASSERT_TRUE(child.start(sh("cut -d' ' -f5 /proc/$$/stat")));
  const std::string pgid = read_all(child, 5s);
  EXPECT_EQ(std::stoi(pgid), child.pid());
  ASSERT_TRUE(child.wait_for(5s).has_value());
}

TEST(Child, ASignalTheCallerIgnoresIsAtItsDefaultInTheChild) {
  const auto old = std::signal(SIGINT, SIG_IGN);
  Child child;
  const bool started = child.start(sh("kill -INT $$; exit 0"));
  std::signal(SIGINT, old);
  ASSERT_TRUE(started);
  read_all(child, 5s);
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->signal, SIGINT);
}

TEST(Child, CapturedStderrKeepsItsLastBytes) {
  Child child;
  ChildSpec spec = sh("i=0; while [ $i -lt 2000 ]; do echo line$i >&2; i=$((i+1)); done; echo out");
  spec.capture_stderr = true;
  spec.stderr_cap = 64;
  ASSERT_TRUE(child.start(spec));
  EXPECT_EQ(read_all(child, 10s), "out\n");
  ASSERT_TRUE(child.wait_for(5s).has_value());
  const std::string err = child.take_stderr();
  EXPECT_LE(err.size(), 64U);
  EXPECT_NE(err.find("line1999\n"), std::string::npos);
}

TEST(Child, TheEnvironmentIsTheGivenOneOrOursWithAdditions) {
  ::setenv("AOTFUZZ_TEST_CHILD_OURS", "ours", 1);
  Child given;
  ChildSpec spec = sh("echo \"$AOTFUZZ_TEST_CHILD_OURS|$FOO\"");
  spec.env = std::map<std::string, std::string>{{"FOO", "given"}};
  ASSERT_TRUE(given.start(spec));
  EXPECT_EQ(read_all(given, 5s), "|given\n");
  Child added;
  spec.env.reset();
  spec.extra_env = {"FOO=added"};
  ASSERT_TRUE(added.start(spec));
  EXPECT_EQ(read_all(added, 5s), "ours|added\n");
  ::unsetenv("AOTFUZZ_TEST_CHILD_OURS");
}

TEST(Child, AProgramThatDoesNotExistIsNotStartedAndSaysWhy) {
  Child child;
  EXPECT_FALSE(child.start(ChildSpec{.argv = {"/no/such/aotfuzz-program"}}));
  EXPECT_NE(child.error().find("/no/such/aotfuzz-program"), std::string::npos);
  EXPECT_FALSE(child.running());
  EXPECT_FALSE(child.start(ChildSpec{.argv = {"no-such-aotfuzz-program-in-path"}}));
  EXPECT_FALSE(child.error().empty());
}

}  // namespace
}  // namespace aotfuzz::host
