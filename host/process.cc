// Runs a child process with Boost.Process v1: rlimits, process group, timeout, capped capture.
#include "host/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exception.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace aotfuzz::host {

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_in_path(std::string_view program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string_view::npos) {
    std::string p(program);
    if (!is_executable_file(p)) return std::nullopt;
    return std::filesystem::absolute(p).string();
  }
  const char* path = ::getenv("PATH");
  std::string dirs = (path != nullptr) ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    begin = end + 1;
    // An empty entry means the current directory: never look there for a compiler.
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + std::string(program);
    if (is_executable_file(candidate)) return std::filesystem::absolute(candidate).string();
  }
  return std::nullopt;
}

namespace {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

// Closes a file descriptor on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Pipes are close-on-exec so that a child started concurrently by another thread never holds
// our write end (which would keep us from seeing end-of-file); dup2 in the child clears the flag
// on fds 1 and 2 only.
bool make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);
  return true;
}

// One rlimit to apply in the child: soft and hard values.
struct Limit {
  int resource;
  rlim_t soft;
  rlim_t hard;
};

// Async-signal-safe message to the child's stderr, then exit: the child cannot report errors
// through Boost.Process once it has passed the point of no return, and must never throw.
[[noreturn]] void child_fail(const char* what) {
  const char prefix[] = "aotfuzz: child setup failed: ";
  (void)!::write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  (void)!::write(STDERR_FILENO, what, std::strlen(what));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);
}

// Boost.Process extension: everything the child does between fork and exec. Only
// async-signal-safe calls: the parent may be multi-threaded.
struct ChildSetup : bp::extend::handler {
  int out_sink = -1;
  int err_sink = -1;
  const char* working_dir = nullptr;
  std::array<Limit, 5> limits{};
  std::size_t num_limits = 0;

  template <class Executor>
  void on_exec_setup(Executor& /*exec*/) const {
    // Own process group, so the timeout kills grandchildren too.
    ::setpgid(0, 0);
    if (::dup2(out_sink, STDOUT_FILENO) < 0) child_fail("dup2 stdout");
    if (::dup2(err_sink, STDERR_FILENO) < 0) child_fail("dup2 stderr");
    if (working_dir != nullptr && ::chdir(working_dir) != 0) child_fail("chdir");
    for (std::size_t i = 0; i < num_limits; ++i) {
      struct rlimit old;
      if (::getrlimit(limits[i].resource, &old) != 0) child_fail("getrlimit");
      struct rlimit lim;
      lim.rlim_cur = limits[i].soft;
      lim.rlim_max = limits[i].hard;
      // An unprivileged process cannot raise its hard limit: stay within the inherited one.
      if (old.rlim_max != RLIM_INFINITY) {
        lim.rlim_max = std::min(lim.rlim_max, old.rlim_max);
        lim.rlim_cur = std::min(lim.rlim_cur, old.rlim_max);
      }
      if (::setrlimit(limits[i].resource, &lim) != 0) child_fail("setrlimit");
    }
    // Dispositions set to ignore and blocked signals survive exec: give the program defaults.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }

  // In the parent, when the launch failed after fork (e.g. execve failed): Boost.Process does not
  // reap that child, so we do, or it stays a zombie.
  template <class Executor>
  void on_error(Executor& exec, const std::error_code& /*ec*/) const {
    if (exec.pid > 0) {
      while (::waitpid(exec.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
};

// Reads what is available from `fd` into `sink` (up to `cap` bytes kept). Returns false at
// end-of-file or on a hard error. A bounded number of reads per call so that a flooding child
// cannot keep us from checking the deadline.
bool drain(int fd, std::string& sink, bool& truncated, std::size_t cap) {
  char buf[65536];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      std::size_t room = cap > sink.size() ? cap - sink.size() : 0;
      std::size_t take = std::min<std::size_t>(room, static_cast<std::size_t>(n));
      sink.append(buf, take);
      if (take < static_cast<std::size_t>(n)) truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

std::atomic<bool> g_force_wait_fallback{false};

int pidfd_open(pid_t pid) {
  if (g_force_wait_fallback.load(std::memory_order_relaxed)) {
    errno = ENOSYS;
    return -1;
  }
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Whether `pid` has ended, without reaping it (so its process group id stays reserved).
bool has_ended(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid;
}

timespec to_timespec(Clock::duration d) {
  if (d < Clock::duration::zero()) d = Clock::duration::zero();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(d);
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(d - secs);
  timespec ts;
  ts.tv_sec = static_cast<time_t>(secs.count());
  ts.tv_nsec = static_cast<long>(nanos.count());
  return ts;
}

// Output of one stream while the child runs.
struct Stream {
  Fd fd;
  std::string* text = nullptr;
  bool* truncated = nullptr;
};

// Resident bytes of `pid` (its statm), 0 when unknown.
std::uint64_t resident_bytes_of(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/statm";
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.open()) return 0;
  char buf[128];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return resident * static_cast<std::uint64_t>(page > 0 ? page : 4096);
}

// Polls the open streams (and the pidfd if any) until `until`, reading as data arrives. Returns
// true when the child is known to have ended. With `max_resident` set, the child's resident
// memory is sampled every few milliseconds; passing it stops the wait with `over_memory` set.
bool pump(std::array<Stream, 2>& streams, int pidfd, pid_t pid, Clock::time_point until,
          std::size_t cap, bool watch_child, std::uint64_t max_resident = 0,
          bool* over_memory = nullptr, const std::atomic<bool>* cancel = nullptr,
          bool* cancelled = nullptr) {
  auto backoff = std::chrono::microseconds(100);
  while (true) {
    std::array<pollfd, 3> fds{};
    std::array<int, 3> owner{};
    nfds_t n = 0;
    for (int s = 0; s < 2; ++s) {
      if (streams[s].fd.open()) {
        fds[n] = pollfd{streams[s].fd.get(), POLLIN, 0};
        owner[n++] = s;
      }
    }
    if (watch_child && pidfd >= 0) {
      fds[n] = pollfd{pidfd, POLLIN, 0};
      owner[n++] = 2;
    }
    auto now = Clock::now();
    if (now >= until) return false;
    auto wait = until - now;
    // Without a pidfd nothing wakes us when the child ends: poll its state with a backoff.
    if (watch_child && pidfd < 0) {
      wait = std::min<Clock::duration>(wait, backoff);
      backoff = std::min(backoff * 2, std::chrono::microseconds(20'000));
    }
    if (cancel != nullptr) {
      if (cancel->load()) {
        if (cancelled != nullptr) *cancelled = true;
        return false;
      }
      wait = std::min<Clock::duration>(wait, std::chrono::milliseconds(10));
    }
    if (watch_child && max_resident != 0) {
      if (resident_bytes_of(pid) > max_resident) {
        if (over_memory != nullptr) *over_memory = true;
        return false;
      }
      wait = std::min<Clock::duration>(wait, std::chrono::milliseconds(5));
    }
    if (n == 0 && !watch_child) return false;
    timespec ts = to_timespec(wait);
    int ready = ::ppoll(fds.data(), n, &ts, nullptr);
    if (ready < 0 && errno != EINTR) return false;
    bool ended = false;
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (owner[i] == 2) {
        ended = true;
        continue;
      }
      Stream& s = streams[owner[i]];
      if (!drain(s.fd.get(), *s.text, *s.truncated, cap)) s.fd.reset();
    }
    if (watch_child && (ended || (pidfd < 0 && has_ended(pid)))) return true;
    if (!watch_child && !streams[0].fd.open() && !streams[1].fd.open()) return false;
  }
}

}  // namespace

// Boost.Process v1 creates its exec-error pipe without O_CLOEXEC on one end and sets it on the
// other only after pipe(2): a fork in another thread in between would leak it into an unrelated
// child and stall this launch until that child ends. Launches are therefore serialized (a launch
// is a fork plus an exec, well under a millisecond of holding the lock).
std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

std::string companion_program(const char* env_var, const char* name, const char* build_path) {
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sibling = self.parent_path() / name;
    if (::access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  if (build_path != nullptr && ::access(build_path, X_OK) == 0) return build_path;
  return "";
}

void detail::force_wait_fallback(bool on) { g_force_wait_fallback.store(on); }

std::map<std::string, std::string> RunLimits::minimal_environment() {
  std::map<std::string, std::string> env;
  const char* path = ::getenv("PATH");
  env["PATH"] = (path != nullptr && path[0] != '\0') ? path : "/usr/local/bin:/usr/bin:/bin";
  env["LC_ALL"] = "C";
  const char* tmp = ::getenv("TMPDIR");
  if (tmp != nullptr && tmp[0] != '\0') env["TMPDIR"] = tmp;
  return env;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGCHLD:
      return "SIGCHLD";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    default:
      return "SIG" + std::to_string(signal);
  }
}

std::string RunResult::describe() const {
  switch (kind) {
    case ExitKind::kExited:
      return "exited " + std::to_string(exit_code);
    case ExitKind::kSignaled:
      return "signaled " + signal_name(signal);
    case ExitKind::kTimedOut:
      return "timed out: " + message;
    case ExitKind::kStartFailed:
      return "failed to start: " + message;
  }
  return "unknown";
}

namespace {

// The CPU limit a run gets: the given one, else the wall-clock limit rounded up plus a second.
std::uint64_t cpu_limit_seconds(const RunLimits& limits) {
  if (limits.cpu_seconds != 0) return limits.cpu_seconds;
  return static_cast<std::uint64_t>((limits.timeout.count() + 999) / 1000) + 1;
}

// The resource limits the child sets on itself before exec.
void add_resource_limits(ChildSetup& setup, const RunLimits& limits) {
  const std::uint64_t cpu = cpu_limit_seconds(limits);
  setup.limits[setup.num_limits++] = {RLIMIT_CORE, 0, 0};
  // The soft CPU limit raises SIGXCPU; the hard one, a second later, SIGKILL.
  setup.limits[setup.num_limits++] = {RLIMIT_CPU, static_cast<rlim_t>(cpu),
                                      static_cast<rlim_t>(cpu + 1)};
  if (limits.address_space != 0) {
    auto v = static_cast<rlim_t>(limits.address_space);
    setup.limits[setup.num_limits++] = {RLIMIT_AS, v, v};
  }
  if (limits.file_size != 0) {
    auto v = static_cast<rlim_t>(limits.file_size);
    setup.limits[setup.num_limits++] = {RLIMIT_FSIZE, v, v};
  }
  if (limits.processes != 0) {
    auto v = static_cast<rlim_t>(limits.processes);
    setup.limits[setup.num_limits++] = {RLIMIT_NPROC, v, v};
  }
}

// Starts `exe` with `args`; the child's pid, or -1 with `message` saying why not.
pid_t launch_child(const std::string& exe, const std::vector<std::string>& args,
                   bp::environment& env, ChildSetup& setup, std::string& message) {
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> lock(launch_mutex());
    // With an error_code Boost.Process reports launch failures there and calls on_error
    // handlers (which reap the failed child) instead of throwing past them.
    std::error_code ec;
    try {
      bp::child child(bp::exe = exe, bp::args = args, env, bp::std_in < bp::null, setup, ec);
      if (!ec && child.valid()) {
        pid = child.id();
        // From here on the pid is ours to wait for, not Boost's (its destructor would kill it).
        child.detach();
      }
    } catch (const std::exception& e) {
      message = e.what();
    }
    if (ec) message = "cannot execute '" + exe + "': " + ec.message();
  }
  return pid;
}

// How a reaped child ended, into `result`.
void set_exit_status(RunResult& result, int status, bool timed_out, const RunLimits& limits) {
  if (timed_out) {
    result.kind = ExitKind::kTimedOut;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    result.message = "wall-clock limit of " + std::to_string(limits.timeout.count()) + " ms";
  } else if (WIFEXITED(status)) {
    result.kind = ExitKind::kExited;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    result.kind = ExitKind::kTimedOut;
    result.signal = SIGXCPU;
    result.message = "CPU limit of " + std::to_string(cpu_limit_seconds(limits)) + " s";
  } else if (WIFSIGNALED(status)) {
    result.kind = ExitKind::kSignaled;
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

RunResult run_process(const std::vector<std::string>& argv, const RunLimits& limits) {
  if (argv.empty() || argv[0].empty()) throw std::invalid_argument("run_process: empty argv");
  RunResult result;
  const auto start = Clock::now();
  auto finish = [&]() -> RunResult& {
    result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    return result;
  };

  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    auto found = find_in_path(exe);
    if (!found) {
      result.message = "'" + exe + "' not found in PATH";
      return finish();
    }
    exe = *found;
  }

  Fd out_read, out_write, err_read, err_write;
  if (!make_pipe(out_read, out_write) || !make_pipe(err_read, err_write)) {
    result.message = std::string("pipe2: ") + std::strerror(errno);
    return finish();
  }

  ChildSetup setup;
  setup.out_sink = out_write.get();
  setup.err_sink = err_write.get();
  if (!limits.working_dir.empty()) setup.working_dir = limits.working_dir.c_str();
  add_resource_limits(setup, limits);

  bp::environment env;
  // set(), not operator[]: Boost's operator[] goes through a find() that memcmp's "KEY=" against
  // the entries without looking at their length, and read past one (ASan: heap-buffer-overflow)
  // as soon as a value too long for std::string's inline buffer followed another variable.
  // set() compares lengths first; the keys of a map are distinct anyway.
  for (const auto& [key, value] : limits.env) env.set(key, value);
  std::vector<std::string> args(argv.begin() + 1, argv.end());

  const pid_t pid = launch_child(exe, args, env, setup, result.message);
  out_write.reset();
  err_write.reset();
  if (pid <= 0) {
    if (result.message.empty()) result.message = "could not start '" + exe + "'";
    return finish();
  }
  result.pid = pid;

  Fd pidfd(pidfd_open(pid));
  std::array<Stream, 2> streams;
  streams[0].fd.reset(out_read.release());
  streams[0].text = &result.stdout_text;
  streams[0].truncated = &result.stdout_truncated;
  streams[1].fd.reset(err_read.release());
  streams[1].text = &result.stderr_text;
  streams[1].truncated = &result.stderr_truncated;

  const auto deadline = start + limits.timeout;
  bool over_memory = false;
  bool ended = pump(streams, pidfd.get(), pid, deadline, limits.output_cap, true,
                    limits.resident_bytes, &over_memory, limits.cancel, &result.cancelled);
  bool timed_out = !ended;
  // Kill whatever is left in the group: on timeout the child itself, otherwise stragglers it left
  // behind. The child is not reaped yet, so its pid (the group id) cannot have been reused.
  ::kill(-pid, SIGKILL);
  if (timed_out) ::kill(pid, SIGKILL);

  int status = 0;
  bool reaped = false;
  while (true) {
    pid_t r = ::waitpid(pid, &status, 0);
    if (r == pid) {
      reaped = true;
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  // Collect what the killed group still had in the pipes; a process that escaped the group
  // (setsid) and keeps them open is given a short grace period only.
  pump(streams, -1, pid, Clock::now() + std::chrono::seconds(1), limits.output_cap, false);

  if (!reaped) {
    // SIGCHLD set to ignore by someone else: the kernel reaped the child, its status is lost.
    // An unknown status must never read as success: report exit code -1.
    result.kind = timed_out ? ExitKind::kTimedOut : ExitKind::kExited;
    result.exit_code = -1;
    result.message = timed_out
                         ? "wall-clock limit of " + std::to_string(limits.timeout.count()) + " ms"
                         : "exit status unavailable (child reaped elsewhere)";
    return finish();
  }
  set_exit_status(result, status, timed_out, limits);
  if (result.cancelled) {
    result.message = "cancelled by a stop request";
  } else if (over_memory) {
    result.message = "resident memory passed the limit of " +
                     std::to_string(limits.resident_bytes >> 20) + " MiB";
  }
  return finish();
}

}  // namespace aotfuzz::host
