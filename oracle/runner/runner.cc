// Batch compilation (libtcc or dlopen) and the per-case forked children.
#include "oracle/runner/runner.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#ifdef AOTFUZZ_HAVE_LIBTCC
#include <libtcc.h>
#endif

namespace aotfuzz::oracle::runner {
namespace {

using Clock = std::chrono::steady_clock;
using EntryFn = int (*)(int, const unsigned char* const*);

std::uint64_t micros_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

void set_limit(int resource, std::uint64_t value) {
  if (value == 0) return;
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  (void)setrlimit(resource, &rl);
}

// The end of a case in a child's stdout and stderr: "\x02AOTFUZZ-END <nonce> <rc>\x03". Streams
// are ordered, so everything before a marker is that case's and everything after it the next
// one's. The nonce (per batch) keeps a case's own output from passing for a marker.
std::string marker_head(std::uint64_t nonce) {
  return "\x02" "AOTFUZZ-END " + std::to_string(nonce) + " ";
}

// In the child: limits, stdio on the pipes, cases [from, to) one after the other, each followed
// by its end marker on stderr then stdout, then out without running the parent's exit handlers
// or destructors. A case that crashes, exits or hangs ends the child.
[[noreturn]] void child_main(EntryFn entry, const std::vector<CaseRequest>& cases, std::size_t from,
                             std::size_t to, int out_fd, int err_fd, std::uint64_t nonce) {
  setpgid(0, 0);
  std::uint64_t cpu = 0, as = 0, fsize = 0;
  for (std::size_t i = from; i < to; ++i) {
    const auto& c = cases[i];
    cpu += c.cpu_seconds != 0 ? c.cpu_seconds : (c.timeout_ms + 999) / 1000 + 1;
    as = std::max(as, c.address_space);
    fsize = std::max(fsize, c.file_size);
  }
  rlimit rl{static_cast<rlim_t>(cpu), static_cast<rlim_t>(cpu + 1)};
  (void)setrlimit(RLIMIT_CPU, &rl);
  set_limit(RLIMIT_AS, as);
  set_limit(RLIMIT_FSIZE, fsize);
  rlimit no_core{0, 0};
  (void)setrlimit(RLIMIT_CORE, &no_core);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const std::string head = marker_head(nonce);
  for (std::size_t i = from; i < to; ++i) {
    std::vector<const unsigned char*> inputs;
    for (const auto& in : cases[i].inputs) {
      inputs.push_back(reinterpret_cast<const unsigned char*>(in.data()));
    }
    inputs.push_back(nullptr);
    const int rc = entry(cases[i].index, inputs.data());
    std::fflush(stdout);
    std::fflush(stderr);
    const std::string marker = head + std::to_string(rc & 0xff) + "\x03";
    for (int fd : {2, 1}) {
      std::size_t done = 0;
      while (done < marker.size()) {
        const ssize_t w = ::write(fd, marker.data() + done, marker.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ::_exit(99);
        done += static_cast<std::size_t>(w);
      }
    }
  }
  ::_exit(0);
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

// The first end marker in `text`: its position, length and the case's return value.
struct Marker {
  std::size_t at = std::string::npos, length = 0;
  int rc = 0;
};
Marker find_marker(const std::string& text, const std::string& head) {
  Marker m;
  const std::size_t at = text.find(head);
  if (at == std::string::npos) return m;
  const std::size_t end = text.find('\x03', at + head.size());
  if (end == std::string::npos) return m;  // not complete yet
  m.at = at;
  m.length = end + 1 - at;
  m.rc = std::atoi(text.c_str() + at + head.size());
  return m;
}

std::uint64_t next_nonce() {
  static std::uint64_t counter = 0;
  const auto t = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  std::uint64_t z = t ^ (static_cast<std::uint64_t>(::getpid()) << 40) ^ ++counter * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  return z ^ (z >> 27);
}

// Runs cases [from, to) in one forked child, appending one outcome per case it accounts for to
// `out`: every case up to and including the first that ends the child (crash, exit, hang, flood).
// Returns the position after the last case accounted for.
std::size_t run_child(EntryFn entry, const std::vector<CaseRequest>& cases, std::size_t from,
                      std::size_t to, std::vector<CaseOutcome>& out) {
  int o[2], e[2];
  if (::pipe2(o, O_CLOEXEC) != 0) {
    CaseOutcome failed;
    failed.message = std::string("pipe: ") + std::strerror(errno);
    out.push_back(failed);
    return from + 1;
  }
  if (::pipe2(e, O_CLOEXEC) != 0) {
    CaseOutcome failed;
    failed.message = std::string("pipe: ") + std::strerror(errno);
    close_all({o[0], o[1]});
    out.push_back(failed);
    return from + 1;
  }
  const std::uint64_t nonce = next_nonce();
  const std::string head = marker_head(nonce);
  std::fflush(nullptr);
  auto case_start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    CaseOutcome failed;
    failed.message = std::string("fork: ") + std::strerror(errno);
    close_all({o[0], o[1], e[0], e[1]});
    out.push_back(failed);
    return from + 1;
  }
  if (pid == 0) {
    ::close(o[0]);
    ::close(e[0]);
    child_main(entry, cases, from, to, o[1], e[1], nonce);
  }
  close_all({o[1], e[1]});
  // Readable once the child has ended (-1 where the kernel has no pidfd: no gathering then).
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  for (int fd : {o[0], e[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::size_t current = from;
  std::string out_buf, err_buf;  // this child's unattributed output
  bool err_truncated = false;
  bool open[2] = {true, true};
  const int fds[2] = {o[0], e[0]};
  char buf[65536];
  enum class Stop { kNone, kTimeout, kFlood } stop = Stop::kNone;
  // Reads what pipe i has now; false at end of file.
  auto drain = [&](int i) {
    for (;;) {
      const ssize_t r = ::read(fds[i], buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return true;  // EAGAIN: nothing more for now
      if (r == 0) return false;
      (i == 0 ? out_buf : err_buf).append(buf, static_cast<std::size_t>(r));
    }
  };
  // The case's stderr: up to its marker (which was written before the stdout marker).
  auto take_stderr = [&](CaseOutcome& c, bool ended) {
    const Marker m = find_marker(err_buf, head);
    std::string text = m.at == std::string::npos ? (ended ? err_buf : std::string()) : err_buf.substr(0, m.at);
    if (m.at != std::string::npos) {
      err_buf.erase(0, m.at + m.length);
    } else if (ended) {
      err_buf.clear();
    }
    const std::size_t cap = cases[current].output_cap;
    if (text.size() > cap) {
      text.resize(cap);
      err_truncated = true;
    }
    c.stderr_text = std::move(text);
    c.stderr_truncated = err_truncated;
    err_truncated = false;
  };
  auto finish_current = [&](CaseOutcome&& outcome) {
    outcome.elapsed_us = micros_since(case_start);
    out.push_back(std::move(outcome));
    ++current;
    case_start = Clock::now();
  };
  while ((open[0] || open[1]) && current < to) {
    const auto deadline = case_start + std::chrono::milliseconds(cases[current].timeout_ms);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      stop = Stop::kTimeout;
      break;
    }
    pollfd p[2];
    int idx[2];
    int n = 0;
    for (int i = 0; i < 2; ++i) {
      if (open[i]) {
        idx[n] = i;
        p[n++] = {fds[i], POLLIN, 0};
      }
    }
    const int rc =
        ::poll(p, static_cast<nfds_t>(n), static_cast<int>(std::min<long long>(left, 1000)));
    if (rc < 0 && errno != EINTR) break;
    for (int j = 0; j < n && rc > 0; ++j) {
      if ((p[j].revents & (POLLIN | POLLHUP | POLLERR)) != 0) open[idx[j]] = drain(idx[j]);
    }
    // Every complete marker on stdout closes its case.
    for (;;) {
      const Marker m = find_marker(out_buf, head);
      if (m.at == std::string::npos || current >= to) break;
      CaseOutcome done;
      done.stdout_text = out_buf.substr(0, m.at);
      out_buf.erase(0, m.at + m.length);
      if (open[1]) open[1] = drain(1);
      take_stderr(done, false);
      done.end = ChildEnd::kExited;
      done.exit_code = m.rc;
      if (done.stdout_text.size() > cases[current].output_cap) {
        // Over the cap but finished: the rest of the output is lost as a flood's would be.
        done.stdout_text.resize(cases[current].output_cap);
        done.flood = true;
      }
      finish_current(std::move(done));
    }
    if (current < to && out_buf.size() > cases[current].output_cap + head.size() + 8) {
      stop = Stop::kFlood;
      break;
    }
    // Keep a stderr flood bounded: what passes the cap is dropped (keeping a possible marker).
    if (current < to && err_buf.size() > 2 * cases[current].output_cap + 4096 &&
        find_marker(err_buf, head).at == std::string::npos) {
      err_buf.erase(cases[current].output_cap, err_buf.size() - cases[current].output_cap - 256);
      err_truncated = true;
    }
    // The call trace comes a line at a time (flushed per call, so that a crash keeps it): let
    // output gather for up to a millisecond unless the child ends first, rather than waking for
    // every line, which costs more than a small case's whole run.
    if (pidfd >= 0 && (open[0] || open[1])) {
      pollfd w{pidfd, POLLIN, 0};
      (void)::poll(&w, 1, 1);
    }
  }
  int status = 0;
  bool reaped = false;
  if (stop == Stop::kNone) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(
                                             current < to ? cases[current].timeout_ms : 1000);
    for (;;) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
        break;
      }
      if (w < 0 && errno != EINTR) break;
      if (Clock::now() >= deadline) {
        stop = Stop::kTimeout;
        break;
      }
      ::usleep(100);
    }
  }
  ::kill(-pid, SIGKILL);
  if (!reaped) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (current < to) {
    // The child ended inside case `current`: the rest of its output is that case's.
    drain(0);
    drain(1);
  }
  close_all({o[0], e[0], pidfd});
  if (current >= to) return to;
  CaseOutcome last;
  const auto& c = cases[current];
  last.stdout_text = std::move(out_buf);
  if (last.stdout_text.size() > c.output_cap) {
    last.stdout_text.resize(c.output_cap);
    last.flood = true;
  }
  take_stderr(last, true);
  if (stop == Stop::kFlood) {
    last.flood = true;
    last.end = ChildEnd::kTimedOut;
    last.signal = SIGKILL;
    last.message =
        "output flood: more than " + std::to_string(c.output_cap) + " bytes on stdout; killed";
  } else if (stop == Stop::kTimeout) {
    last.end = ChildEnd::kTimedOut;
    last.signal = SIGKILL;
    last.message = "timed out after " + std::to_string(c.timeout_ms) + " ms";
  } else if (WIFEXITED(status)) {
    last.end = ChildEnd::kExited;
    last.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    last.end = ChildEnd::kTimedOut;
    last.signal = SIGXCPU;
    last.message = "CPU time limit exceeded";
  } else if (WIFSIGNALED(status)) {
    last.end = ChildEnd::kSignaled;
    last.signal = WTERMSIG(status);
  }
  finish_current(std::move(last));
  return current;
}

#ifdef AOTFUZZ_HAVE_LIBTCC
void collect_diagnostic(void* opaque, const char* message) {
  auto* out = static_cast<std::string*>(opaque);
  *out += message;
  *out += '\n';
}

// Where libtcc finds its include/ and libtcc1.a: $AOTFUZZ_TCC_DIR, else `aotfuzz-tcc/` beside
// this executable, else the build machine's tcc. A ClusterFuzzLite build ships `aotfuzz-tcc/`
// beside fuzz_differential, with the system headers the generated C reaches under sysinclude/:
// the machines that run it have no headers of their own.
std::string tcc_support_dir(bool* shipped) {
  *shipped = true;
  if (const char* env = std::getenv("AOTFUZZ_TCC_DIR"); env != nullptr && *env != '\0') return env;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.rfind('/') + 1) + "aotfuzz-tcc";
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return dir;
  }
  *shipped = false;
  return AOTFUZZ_TCC_LIB_PATH;
}
#endif

}  // namespace

bool have_libtcc() {
#ifdef AOTFUZZ_HAVE_LIBTCC
  return true;
#else
  return false;
#endif
}

#ifdef AOTFUZZ_HAVE_LIBTCC
namespace {

// A libtcc state compiling to memory with the support files found, its diagnostics going to
// `*diagnostics`; null when libtcc cannot make one.
TCCState* new_tcc(const std::string& options, std::string* diagnostics) {
  TCCState* tcc = tcc_new();
  if (tcc == nullptr) {
    *diagnostics = "tcc_new failed";
    return nullptr;
  }
  bool shipped = false;
  const std::string support = tcc_support_dir(&shipped);
  tcc_set_lib_path(tcc, support.c_str());
  // Ahead of the system's own directories (added with the output type), which it may lack.
  if (shipped) tcc_add_sysinclude_path(tcc, (support + "/sysinclude").c_str());
  tcc_set_error_func(tcc, diagnostics, collect_diagnostic);
  tcc_set_options(tcc, options.c_str());
  tcc_set_output_type(tcc, TCC_OUTPUT_MEMORY);
  return tcc;
}

}  // namespace

// The runtime a runner process compiled for an earlier batch, and where its symbols are.
struct BatchRunner::Runtime {
  std::string text, options;
  std::vector<std::string> names;
  std::vector<void*> addresses;
  std::string diagnostics;
  TCCState* tcc = nullptr;
  ~Runtime() {
    if (tcc != nullptr) tcc_delete(tcc);
  }
};
#else
struct BatchRunner::Runtime {};
#endif

BatchRunner::BatchRunner() = default;
BatchRunner::~BatchRunner() = default;

BatchResult BatchRunner::run(const BatchRequest& request) {
  BatchResult result;
  const auto t0 = Clock::now();
  EntryFn entry = nullptr;
  void* handle = nullptr;
#ifdef AOTFUZZ_HAVE_LIBTCC
  TCCState* tcc = nullptr;
#endif
  if (request.mode == BatchRequest::Mode::kTccSource) {
#ifdef AOTFUZZ_HAVE_LIBTCC
    if (!request.runtime.empty() &&
        (!runtime_ || runtime_->text != request.runtime ||
         runtime_->options != request.tcc_options || runtime_->names != request.runtime_symbols)) {
      runtime_ = std::make_unique<Runtime>();
      runtime_->text = request.runtime;
      runtime_->options = request.tcc_options;
      runtime_->names = request.runtime_symbols;
      runtime_->tcc = new_tcc(request.tcc_options, &runtime_->diagnostics);
      bool ok = runtime_->tcc != nullptr &&
                tcc_compile_string(runtime_->tcc, request.runtime.c_str()) == 0 &&
                tcc_relocate(runtime_->tcc, TCC_RELOCATE_AUTO) >= 0;
      for (const auto& name : request.runtime_symbols) {
        if (!ok) break;
        void* address = tcc_get_symbol(runtime_->tcc, name.c_str());
        // What the runtime does not define is the C library's, as loaded in this process.
        if (address == nullptr) address = ::dlsym(RTLD_DEFAULT, name.c_str());
        runtime_->addresses.push_back(address);
        if (runtime_->addresses.back() == nullptr) {
          runtime_->diagnostics += "no symbol " + name + " in the runtime\n";
          ok = false;
        }
      }
      if (!ok) {
        result.compile = BatchResult::Compile::kCompileError;
        result.diagnostics = "runtime: " + runtime_->diagnostics;
        runtime_.reset();
        result.compile_us = micros_since(t0);
        return result;
      }
    }
    // Against a runtime, everything the program takes from outside is among the runtime's
    // symbols (the C library's functions as this process has them), so it skips loading libc's
    // linker script and libtcc1.a, a third of a small program's compile.
    tcc = new_tcc(request.runtime.empty() ? request.tcc_options : request.tcc_options + " -nostdlib",
                  &result.diagnostics);
    if (tcc == nullptr) return result;
    bool ok = tcc_compile_string(tcc, request.program.c_str()) == 0;
    if (ok && !request.runtime.empty()) {
      for (std::size_t i = 0; i < runtime_->names.size(); ++i) {
        tcc_add_symbol(tcc, runtime_->names[i].c_str(), runtime_->addresses[i]);
      }
    }
    if (!ok || tcc_relocate(tcc, TCC_RELOCATE_AUTO) < 0) {
      result.compile = BatchResult::Compile::kCompileError;
      tcc_delete(tcc);
      result.compile_us = micros_since(t0);
      return result;
    }
    entry = reinterpret_cast<EntryFn>(tcc_get_symbol(tcc, request.entry.c_str()));
    if (entry == nullptr) {
      result.compile = BatchResult::Compile::kCompileError;
      result.diagnostics += "no function " + request.entry + " in the program\n";
      tcc_delete(tcc);
      return result;
    }
    // Warnings that -Werror did not turn into errors stay out of the diagnostics of a success.
    result.diagnostics.clear();
#else
    result.diagnostics = "this runner was built without libtcc";
    return result;
#endif
  } else {
    handle = ::dlopen(request.program.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      result.diagnostics = std::string("dlopen: ") + (e != nullptr ? e : "failed");
      return result;
    }
    entry = reinterpret_cast<EntryFn>(::dlsym(handle, request.entry.c_str()));
    if (entry == nullptr) {
      result.diagnostics = "no function " + request.entry + " in " + request.program;
      ::dlclose(handle);
      return result;
    }
  }
  result.compile_us = micros_since(t0);
  result.compile = BatchResult::Compile::kOk;
  result.cases.reserve(request.cases.size());
  const std::size_t per_child =
      request.cases_per_child == 0 ? request.cases.size() : request.cases_per_child;
  std::size_t next = 0;
  while (next < request.cases.size()) {
    next = run_child(entry, request.cases, next,
                     std::min(request.cases.size(), next + per_child), result.cases);
  }
#ifdef AOTFUZZ_HAVE_LIBTCC
  if (tcc != nullptr) tcc_delete(tcc);
#endif
  if (handle != nullptr) ::dlclose(handle);
  return result;
}

void serve_as_runner_if_asked() {
  const char* serve_env = std::getenv(kServeEnv);
  if (serve_env == nullptr || *serve_env == '\0') return;
  // As aotfuzz-runner: the parent ends its runner by closing the socket.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  // _Exit: the program's own exit handlers (a fuzzing engine's) are not the runner's.
  std::_Exit(serve(0, 1));
}

std::string self_executable() {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
}

int serve(int in_fd, int out_fd) {
  signal(SIGPIPE, SIG_IGN);
  BatchRunner runner;
  for (;;) {
    auto frame = read_frame(in_fd, std::size_t{1} << 30);
    if (!frame) return 0;
    auto request = decode_request(*frame);
    if (!request) return 2;
    if (!write_frame(out_fd, encode(runner.run(*request)))) return 0;
  }
}

}  // namespace aotfuzz::oracle::runner
