// host::Child: posix_spawn with a socket pair on stdin and stdout, deadlines by poll, the group
// killed and the child reaped.
#include "host/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "host/process.h"

extern char** environ;

namespace aotfuzz::host {
namespace {

// The poll timeout until `deadline`, in slices of at most `slice_ms`; 0 once it has passed.
int poll_ms(Child::Clock::time_point deadline, int slice_ms) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - Child::Clock::now())
                        .count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, slice_ms));
}

// The most one read takes from the socket (a buffer on the stack).
constexpr std::size_t kReadSlice = std::size_t{64} << 10;
// A cancel flag is looked at this often while waiting.
constexpr int kCancelSliceMs = 20;
// Without one, the deadline is looked at again at least this often (a clock that jumps, EINTR).
constexpr int kSliceMs = 1000;

// Whether `pid` has ended, without reaping it: its pid, and so its process group id, stays
// reserved, and what it left in its group can still be killed by that id.
bool has_ended(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid;
}

}  // namespace

std::string ChildStatus::describe() const {
  if (exited()) return "exited " + std::to_string(exit_code);
  if (signal != 0) return (killed ? "killed by us with " : "killed by ") + signal_name(signal);
  return "not started";
}

Child::~Child() { kill(); }

Child::Child(Child&& other) noexcept { *this = std::move(other); }

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    err_cap_ = other.err_cap_;
    err_ = std::move(other.err_);
    error_ = std::move(other.error_);
    status_ = other.status_;
  }
  return *this;
}

bool Child::start(const ChildSpec& spec) {
  kill();
  error_.clear();
  err_.clear();
  status_ = ChildStatus{};
  err_cap_ = spec.stderr_cap;
  if (spec.argv.empty() || spec.argv[0].empty()) {
    error_ = "no program to start";
    return false;
  }
  std::string exe = spec.argv[0];
  if (exe.find('/') == std::string::npos) {
    auto found = find_in_path(exe);
    if (!found) {
      error_ = "cannot find " + exe + " in PATH";
      return false;
    }
    exe = *found;
  }
  // Close-on-exec: a child another thread starts meanwhile must not hold our ends, or we would
  // never see end of file. dup2 onto 0, 1 and 2 clears the flag in our own child.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error_ = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  int err[2] = {-1, -1};
  if (spec.capture_stderr && ::pipe2(err, O_CLOEXEC) != 0) {
    error_ = std::string("pipe2: ") + std::strerror(errno);
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  if (spec.capture_stderr) posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  // Every signal at its default action and none blocked: ignored ones would survive the exec
  // (a caller may ignore SIGINT or SIGPIPE, or block signals in the thread that starts it). A
  // group of its own: a terminal's Ctrl-C is for the caller, which decides when its children
  // stop, and a kill of the group ends whatever the child started.
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (spec.env) {
    for (const auto& [k, v] : *spec.env) env_strings.push_back(k + "=" + v);
  } else {
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.insert(env_strings.end(), spec.extra_env.begin(), spec.extra_env.end());
  }
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(launch_mutex());
    rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (spec.capture_stderr) ::close(err[1]);
  if (rc != 0) {
    ::close(sv[0]);
    if (spec.capture_stderr) ::close(err[0]);
    error_ = "cannot start " + exe + ": " + std::strerror(rc);
    return false;
  }
  pid_ = pid;
  fd_ = sv[0];
  err_fd_ = spec.capture_stderr ? err[0] : -1;
  if (err_fd_ >= 0) ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  if (spec.address_space != 0) {
    const rlimit lim = {spec.address_space, spec.address_space};
    ::prlimit(pid_, RLIMIT_AS, &lim, nullptr);
  }
  return true;
}

ChildIo Child::write(std::string_view data, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < data.size()) {
    if (fd_ < 0) return ChildIo::kClosed;
    pollfd p[2] = {{fd_, POLLOUT, 0}, {err_fd_, POLLIN, 0}};
    const int ms = poll_ms(deadline, kSliceMs);
    if (ms == 0) return ChildIo::kTimedOut;
    const int n = ::poll(p, 2, ms);
    if (n < 0 && errno != EINTR) return ChildIo::kClosed;
    if (n <= 0) continue;
    if (p[1].revents != 0) drain_stderr();
    if (p[0].revents == 0) continue;
    const ssize_t w =
        ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
    } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return ChildIo::kClosed;  // EPIPE, ECONNRESET: the child is gone or closed its input
    }
  }
  return ChildIo::kOk;
}

void Child::close_input() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

ChildIo Child::wait_readable(Clock::time_point deadline, const std::atomic<bool>* cancel) {
  for (;;) {
    if (cancel != nullptr && cancel->load()) return ChildIo::kCancelled;
    if (fd_ < 0) return ChildIo::kClosed;
    const int ms = poll_ms(deadline, cancel != nullptr ? kCancelSliceMs : kSliceMs);
    if (ms == 0) return ChildIo::kTimedOut;
    pollfd p[2] = {{fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(p, 2, ms);
    if (n < 0 && errno != EINTR) return ChildIo::kClosed;
    if (n <= 0) continue;
    if (p[1].revents != 0) drain_stderr();
    if (p[0].revents != 0) return ChildIo::kOk;
  }
}

ChildIo Child::read_some(std::string& out, Clock::time_point deadline, std::size_t max,
                         const std::atomic<bool>* cancel) {
  for (;;) {
    const ChildIo ready = wait_readable(deadline, cancel);
    if (ready != ChildIo::kOk) return ready;
    // Through a buffer of our own: growing `out` by all of a large `max` before each read
    // would fill it with zeros over and over.
    char buf[kReadSlice];
    const ssize_t got = ::recv(fd_, buf, std::clamp<std::size_t>(max, 1, sizeof buf), MSG_DONTWAIT);
    if (got > 0) {
      out.append(buf, static_cast<std::size_t>(got));
      return ChildIo::kOk;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    // A child gone with input of ours unread resets the connection after its last bytes: that
    // is its end of file too.
    return ChildIo::kClosed;
  }
}

ChildIo Child::read_exact(std::string& out, std::size_t n, Clock::time_point deadline) {
  out.clear();
  out.reserve(n);
  while (out.size() < n) {
    const ChildIo io = read_some(out, deadline, n - out.size());
    if (io != ChildIo::kOk) return io;
  }
  return ChildIo::kOk;
}

void Child::drain_stderr() {
  if (err_fd_ < 0) return;
  char buf[4096];
  // A bounded number of reads: a flood of stderr must not keep the caller from its deadline.
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) {
        ::close(err_fd_);
        err_fd_ = -1;
      }
      return;
    }
    err_.append(buf, static_cast<std::size_t>(n));
    if (err_.size() > 2 * err_cap_) err_.erase(0, err_.size() - err_cap_);
  }
}

std::string Child::take_stderr() {
  drain_stderr();
  if (err_.size() > err_cap_) err_.erase(0, err_.size() - err_cap_);
  return std::exchange(err_, std::string());
}

void Child::close_fds() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (err_fd_ >= 0) ::close(err_fd_);
  err_fd_ = -1;
}

void Child::reap(int status, bool killed) {
  status_ = ChildStatus{};
  if (WIFEXITED(status)) {
    status_.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    status_.signal = WTERMSIG(status);
    status_.killed = killed;
  }
  pid_ = -1;
}

ChildStatus Child::kill() {
  if (pid_ <= 0) {
    close_fds();
    return status_;
  }
  // Before it is reaped its pid is ours, and so is its group id: nothing else can have them.
  const bool ended = has_ended(pid_);
  ::kill(-pid_, SIGKILL);
  if (!ended) ::kill(pid_, SIGKILL);
  drain_stderr();
  close_fds();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reap(status, !ended);
  return status_;
}

std::optional<ChildStatus> Child::wait_for(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return status_;
  close_input();
  const auto until = Clock::now() + grace;
  // Its end is seen on a pidfd at once; where there is none (kernels before 5.3, seccomp), by
  // looking again after waits that grow from a few microseconds: a child that is exiting ends
  // within them.
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
#else
  const int pidfd = -1;
#endif
  auto backoff = std::chrono::microseconds(20);
  for (;;) {
    drain_stderr();
    if (has_ended(pid_)) break;
    const auto now = Clock::now();
    if (now >= until) {
      if (pidfd >= 0) ::close(pidfd);
      return std::nullopt;
    }
    if (pidfd >= 0) {
      pollfd p[2] = {{pidfd, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      (void)::poll(p, 2, std::max(1, poll_ms(until, kSliceMs)));
    } else {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(backoff, until - now));
      backoff = std::min(backoff * 2, std::chrono::microseconds(10'000));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  // What it left running in its group goes with it.
  ::kill(-pid_, SIGKILL);
  drain_stderr();
  close_fds();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reap(status, false);
  return status_;
}

}  // namespace aotfuzz::host
