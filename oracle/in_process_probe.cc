// The probe: prepare_case's steps in a forked child, each step announced over a pipe.
#include "oracle/in_process_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "aot/pipeline.h"
#include "oracle/case_flow.h"
#include "oracle/stages.h"

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void child(int fd, pid_t parent, const std::function<void(const StageMark&)>& body) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    std::signal(sig, SIG_DFL);
  }
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  const StageMark mark = [fd](Stage stage) {
    const auto byte = static_cast<unsigned char>(stage);
    while (::write(fd, &byte, 1) < 0 && errno == EINTR) {
    }
  };
  try {
    body(mark);
  } catch (...) {
  }
  ::_exit(0);
}

}  // namespace

ForkedOutcome run_forked(const std::function<void(const StageMark&)>& body,
                         std::chrono::milliseconds budget) {
  ForkedOutcome out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.kind = ForkedOutcome::Kind::kNoFork;
    return out;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    out.kind = ForkedOutcome::Kind::kNoFork;
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], parent, body);
  }
  ::close(fds[1]);
  const auto deadline = Clock::now() + budget;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    unsigned char buf[64];
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of file: the child is gone
    out.last_mark = static_cast<Stage>(buf[got - 1]);
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    out.kind = ForkedOutcome::Kind::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.kind = out.signal == SIGKILL ? ForkedOutcome::Kind::kKilled : ForkedOutcome::Kind::kDied;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    out.kind = ForkedOutcome::Kind::kDied;
    out.exit_code = WEXITSTATUS(status);
  }
  return out;
}

Stage next_stage(Stage stage, const aot::Options& options) {
  for (const auto& row : aot::pass_table()) {
    if (row.stage > stage && row.enabled(options)) return row.stage;
  }
  return Stage::kCodegen;
}

std::optional<Verdict> probe_in_process(const ir::Module& annotated, const CaseOptions& options) {
  if (options.sut.kind != SutKind::kBuiltin) return std::nullopt;
  CaseOptions inner = options;
  inner.isolate_in_process = false;
  const ForkedOutcome o = run_forked(
      [&](const StageMark& mark) {
        mark(Stage::kAnnotated);
        const CaseReference ref =
            case_reference(annotated, inner.input_seed, nullptr, inner.memory_budget);
        if (ref.invalid) return;
        mark(next_stage(Stage::kAnnotated, inner.aot));
        aot::Stages stages;
        aot::run_pipeline(annotated, inner.aot, stages,
                          [&](const aot::PassInfo& row, const ir::Module&) {
                            mark(next_stage(row.stage, inner.aot));
                            return true;
                          });
        CaseResult r;
        (void)prepare_case(annotated, inner, r, &ref);
      },
      options.in_process_budget);
  using Kind = ForkedOutcome::Kind;
  if (o.kind == Kind::kEnded) return std::nullopt;
  const std::string where = "in the harness's process, at " + std::string(stage_name(o.last_mark));
  switch (o.kind) {
    case Kind::kEnded:
      return std::nullopt;
    case Kind::kNoFork:
      return Verdict{Stage::kRun, ToolchainError{"cannot fork to run the case's in-process steps"}};
    case Kind::kKilled:
      return Verdict{Stage::kRun,
                     ToolchainError{"the case's in-process steps were killed (SIGKILL, not by "
                                    "aotfuzz: out of memory?)"}};
    case Kind::kTimedOut:
      if (o.last_mark == Stage::kAnnotated) break;
      return Verdict{
          o.last_mark,
          Timeout{static_cast<std::int64_t>(options.in_process_budget.count()), "hung " + where}};
    case Kind::kDied:
      if (o.last_mark == Stage::kAnnotated) break;
      return Verdict{
          o.last_mark,
          Crash{
              o.signal, std::nullopt, "",
              o.signal == 0 ? "exit status " + std::to_string(o.exit_code) + " " + where : where}};
  }
  return Verdict{Stage::kRun,
                 ToolchainError{std::string("aotfuzz's reference interpreter ") +
                                (o.kind == Kind::kTimedOut ? "hung" : "crashed") +
                                " on this graph: a bug of the harness, not of the pipeline"}};
}

}  // namespace aotfuzz::oracle
