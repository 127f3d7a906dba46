// The probe: prepare_case's steps in a child process (aotfuzz-probe), each step announced over a
// pipe.
#include "oracle/in_process_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "host/process.h"
#include "ir/printer.h"
#include "oracle/case_flags.h"
#include "oracle/case_flow.h"
#include "oracle/sut.h"
#include "reference/footprint.h"

extern char** environ;

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;

// The in-process steps' time per MiB of tensors, with room for a loaded machine and a sanitized
// build (bench/in_process_scaling.py measures it; docs/fuzzing.md, "A pass that crashes or hangs").
constexpr std::uint64_t kMsPerTensorMiB = 250;
// Past this, the memory budget refuses the graph long before (and the product stays small).
constexpr std::uint64_t kMaxBudgetMiB = std::uint64_t{1} << 20;

// posix_spawn with stdin and stdout redirected, every signal at its default action and none
// blocked (a caller may ignore or block some; ignored ones would survive the exec), and a
// process group of its own (a Ctrl-C at the terminal is for the caller, which decides when its
// children stop). Returns the pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return -1;
  }
  posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0);
  posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(host::launch_mutex());
    rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

}  // namespace

SpawnedOutcome run_spawned(const std::vector<std::string>& argv, std::string_view input,
                           std::chrono::milliseconds budget) {
  SpawnedOutcome out;
  // A socket for the input, so that a child gone before it read everything is an error of
  // send (MSG_NOSIGNAL), never a SIGPIPE in this process.
  int in[2];
  int marks[2];
  if (argv.empty() || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    out.kind = SpawnedOutcome::Kind::kNoSpawn;
    return out;
  }
  if (::pipe2(marks, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    out.kind = SpawnedOutcome::Kind::kNoSpawn;
    return out;
  }
  const pid_t pid = spawn(argv, in[1], marks[1]);
  ::close(in[1]);
  ::close(marks[1]);
  if (pid < 0) {
    ::close(in[0]);
    ::close(marks[0]);
    out.kind = SpawnedOutcome::Kind::kNoSpawn;
    return out;
  }
  ::fcntl(in[0], F_SETFL, O_NONBLOCK);
  std::size_t sent = 0;
  bool writing = true;
  auto finish_input = [&] {
    ::shutdown(in[0], SHUT_WR);
    writing = false;
  };
  if (input.empty()) finish_input();
  const auto deadline = Clock::now() + budget;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[2] = {{marks[0], POLLIN, 0}, {writing ? in[0] : -1, POLLOUT, 0}};
    const int n = ::poll(p, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n <= 0) continue;  // EINTR or a second gone by: look at the deadline again
    if (writing && p[1].revents != 0) {
      const ssize_t w = ::send(in[0], input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<std::size_t>(w);
        if (sent == input.size()) finish_input();
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        writing = false;  // the child is gone: its end shows on the marks pipe
      }
    }
    if (p[0].revents == 0) continue;
    unsigned char buf[64];
    const ssize_t got = ::read(marks[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of file: the child is gone
    for (ssize_t i = 0; i < got; ++i) {
      if (buf[i] <= static_cast<unsigned char>(Stage::kCodegen)) {
        out.last_mark = static_cast<Stage>(buf[i]);
        out.marked = true;
      }
    }
  }
  ::close(in[0]);
  ::close(marks[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    out.kind = SpawnedOutcome::Kind::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.kind = out.signal == SIGKILL ? SpawnedOutcome::Kind::kKilled : SpawnedOutcome::Kind::kDied;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    out.kind = SpawnedOutcome::Kind::kDied;
    out.exit_code = WEXITSTATUS(status);
  }
  return out;
}

std::string probe_path() {
#ifdef AOTFUZZ_PROBE_BUILD_PATH
  return host::companion_program("AOTFUZZ_PROBE", "aotfuzz-probe", AOTFUZZ_PROBE_BUILD_PATH);
#else
  return host::companion_program("AOTFUZZ_PROBE", "aotfuzz-probe", nullptr);
#endif
}

void probe_steps(const ir::Module& annotated, const CaseOptions& options, const StageMark& mark) {
  mark(Stage::kAnnotated);
  const CaseReference ref =
      case_reference(annotated, options.input_seed, nullptr, options.memory_budget);
  if (ref.invalid) return;
  mark(next_stage(Stage::kAnnotated, options.aot));
  CaseResult r;
  (void)prepare_case(annotated, options, r, &ref, &mark);
}

std::chrono::milliseconds in_process_budget_for(const ir::Module& annotated,
                                                const CaseOptions& options) {
  const std::uint64_t mib = reference::tensor_bytes_needed(annotated) >> 20;
  const auto extra = std::chrono::milliseconds(mib > kMaxBudgetMiB ? kMaxBudgetMiB * kMsPerTensorMiB
                                                                   : mib * kMsPerTensorMiB);
  return options.in_process_budget + extra;
}

std::optional<Verdict> probe_in_process(const ir::Module& annotated, const CaseOptions& options) {
  if (!system_of(options).prepares_in_process()) return std::nullopt;
  const std::chrono::milliseconds budget = in_process_budget_for(annotated, options);
  const std::string exe = probe_path();
  if (exe.empty()) {
    return Verdict{Stage::kRun, ToolchainError{"aotfuzz-probe is not next to aotfuzz (the "
                                               "environment variable AOTFUZZ_PROBE may name it)"}};
  }
  const SpawnedOutcome o =
      run_spawned({exe, "--flags", replay_flags(options), "--parent", std::to_string(::getpid())},
                  ir::print_module(annotated), budget);
  using Kind = SpawnedOutcome::Kind;
  const std::string where = "in the harness's process, at " + std::string(stage_name(o.last_mark));
  switch (o.kind) {
    case Kind::kEnded:
      return std::nullopt;
    case Kind::kNoSpawn:
      return Verdict{Stage::kRun,
                     ToolchainError{"cannot start " + exe + " to run the case's in-process steps"}};
    case Kind::kKilled:
      return Verdict{Stage::kRun,
                     ToolchainError{"the case's in-process steps were killed (SIGKILL, not by "
                                    "aotfuzz: out of memory?)"}};
    case Kind::kTimedOut:
      if (!o.marked) {
        return Verdict{Stage::kRun, ToolchainError{exe + " did not start within " +
                                                   std::to_string(budget.count()) +
                                                   " ms (the machine, not the pipeline)"}};
      }
      if (o.last_mark == Stage::kAnnotated) break;
      return Verdict{o.last_mark,
                     Timeout{static_cast<std::int64_t>(budget.count()), "hung " + where}};
    case Kind::kDied:
      if (o.signal == 0 && o.exit_code == kProbeRefusedExit) {
        return Verdict{Stage::kRun, ToolchainError{exe + " could not read the case back from its "
                                                         "text and flags: a bug of the harness"}};
      }
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
