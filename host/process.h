// Out-of-process execution: argument vector (never a shell), rlimits, wall-clock timeout that
// kills the whole process group, and size-capped capture of stdout and stderr.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::host {

/// Limits and environment for one child process. The defaults suit a generated test program.
struct RunLimits {
  /// Wall-clock limit; the whole process group is killed with SIGKILL when it passes.
  std::chrono::milliseconds timeout{10'000};
  /// RLIMIT_CPU in seconds; 0 means timeout rounded up plus one second.
  std::uint64_t cpu_seconds = 0;
  /// RLIMIT_AS in bytes; 0 leaves it unchanged (needed for AddressSanitizer binaries).
  std::uint64_t address_space = std::uint64_t{1} << 30;
  /// Resident memory in bytes, watched while the child runs (killed when it passes, a
  /// kTimedOut result saying so); 0: not watched. For programs that cannot run under RLIMIT_AS:
  /// AddressSanitizer reserves terabytes of address space for its shadow.
  std::uint64_t resident_bytes = 0;
  /// RLIMIT_FSIZE in bytes; 0 leaves it unchanged. Exceeding it raises SIGXFSZ.
  std::uint64_t file_size = std::uint64_t{64} << 20;
  /// RLIMIT_NPROC (counted per user by the kernel, ignored for root); 0 leaves it unchanged.
  std::uint64_t processes = 4096;
  /// Bytes kept of each of stdout and stderr; the rest is read and discarded.
  std::size_t output_cap = std::size_t{1} << 20;
  /// Working directory of the child; empty inherits ours.
  std::string working_dir;
  /// The child's complete environment (nothing else is inherited).
  std::map<std::string, std::string> env = minimal_environment();
  /// A stop request (a campaign's SIGTERM flag): once set, the child's group is killed as at
  /// the timeout and the result is marked `cancelled`. Checked every few milliseconds.
  const std::atomic<bool>* cancel = nullptr;

  /// PATH (ours, or a standard one), LC_ALL=C, and TMPDIR when set.
  static std::map<std::string, std::string> minimal_environment();
};

/// How the child ended.
enum class ExitKind {
  kExited,       ///< returned from main or called exit: see exit_code
  kSignaled,     ///< killed by a signal it raised or received: see signal
  kTimedOut,     ///< wall-clock timeout or CPU limit (SIGXCPU); it was killed
  kStartFailed,  ///< could not be started (no such file, not executable, fork failed)
};

/// "SIGSEGV" for SIGSEGV, ..., "SIG<n>" for numbers without a name.
std::string signal_name(int signal);

/// What one child did.
struct RunResult {
  ExitKind kind = ExitKind::kStartFailed;
  int exit_code = -1;  ///< when kExited
  int signal = 0;      ///< when kSignaled (or the signal that ended a timed-out child)
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::chrono::microseconds elapsed{0};
  int pid = -1;         ///< for logs only; the process is gone when run_process returns
  std::string message;  ///< why it failed to start, or what limit it hit
  /// Killed because RunLimits::cancel was set: says nothing of the program.
  bool cancelled = false;

  bool exited_ok() const { return kind == ExitKind::kExited && exit_code == 0; }
  /// One line: "exited 0", "signaled SIGSEGV", "timed out after 10000 ms", ...
  std::string describe() const;
};

/// Runs argv[0] (a path, or a bare name looked up in our PATH) with arguments argv[1..], stdin
/// from /dev/null, in a new process group, under `limits`. Never throws for child failures (they
/// are results); throws std::invalid_argument for an empty argv. On return the child has been
/// reaped and every process left in its group has been killed. Thread-safe.
RunResult run_process(const std::vector<std::string>& argv, const RunLimits& limits = RunLimits());

/// The first executable regular file named `program` in the directories of $PATH, as an absolute
/// path; no shell is involved. A name containing '/' is checked as is.
std::optional<std::string> find_in_path(std::string_view program);

/// Whether `path` is a regular file this process may execute.
bool is_executable_file(const std::string& path);

/// Held by whatever starts a child process in this process (run_process, the runner, the
/// probe), for the fork and exec only: a child started while another launch is under way could
/// inherit that launch's pipes and stall it (oracle/process.cc says how).
std::mutex& launch_mutex();

/// A program of this project that runs beside the harness (aotfuzz-runner, aotfuzz-probe): the
/// path in the environment variable `env_var` when set, else `name` next to this executable,
/// else `build_path` (the build tree's) when executable; empty when none exists.
std::string companion_program(const char* env_var, const char* name, const char* build_path);

namespace detail {
/// For tests: when on, run_process ignores pidfd_open and uses the polling fallback it needs on
/// kernels before 5.3 or under seccomp filters that deny pidfd_open.
void force_wait_fallback(bool on);
}  // namespace detail

}  // namespace aotfuzz::host
