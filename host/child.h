// A child process we talk to: started from an argument vector (no shell), its stdin and stdout
// one end of a socket pair whose other end is ours, every signal at its default action and none
// blocked, in a process group of its own; written to and read from with deadlines, killed with
// its group, reaped with its status. The probe (aotfuzz-probe), the fork server (aotfuzz-runner)
// and the TVM driver are such children. run_process (host/process.h) is for a program that runs
// to its end with its output captured; a Child is for a conversation.
//
// Why a socket and not two pipes: writing to a child that is gone is an error of send
// (MSG_NOSIGNAL), never a SIGPIPE in this process, and one descriptor carries both directions.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::host {

/// What a Child runs and how.
struct ChildSpec {
  /// argv[0] is the program: a path, or a bare name looked up in our PATH.
  std::vector<std::string> argv{};
  /// The child's whole environment; nullopt: ours, with `extra_env` added.
  std::optional<std::map<std::string, std::string>> env{};
  /// "NAME=value" added to our environment (when `env` is not given).
  std::vector<std::string> extra_env{};
  /// Capture stderr (its last `stderr_cap` bytes kept, read whenever the child is waited on,
  /// so that it never blocks on a full pipe); otherwise it is inherited.
  bool capture_stderr = false;
  std::size_t stderr_cap = 4096;
  /// RLIMIT_AS of the child, set once it has started; 0 leaves it unchanged.
  std::uint64_t address_space = 0;
};

/// How a child ended.
struct ChildStatus {
  /// Exited: its exit code; -1 otherwise.
  int exit_code = -1;
  /// Ended by a signal: which one; 0 otherwise.
  int signal = 0;
  /// Killed by Child::kill (a deadline passed, or the caller was done with it): the signal says
  /// nothing of the program.
  bool killed = false;

  bool exited() const { return exit_code >= 0; }
  /// "exited 0", "killed by SIGSEGV", ...
  std::string describe() const;
};

/// The outcome of a read, a write or a wait.
enum class ChildIo {
  kOk,         ///< done (read: at least one byte arrived)
  kClosed,     ///< the child closed its end or is gone (read: end of file)
  kTimedOut,   ///< the deadline passed first
  kCancelled,  ///< the cancel flag was set first
};

/// A child process and our end of its socket. Not thread-safe: one thread talks to it at a time.
class Child {
 public:
  using Clock = std::chrono::steady_clock;

  Child() = default;
  /// Kills the child's group and reaps the child, if it still runs.
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  /// Starts `spec` (a child still running from an earlier start is killed first); false when it
  /// cannot be started, error() saying why. Started under launch_mutex().
  bool start(const ChildSpec& spec);
  /// Why the last start failed.
  const std::string& error() const { return error_; }

  /// Whether a child was started and not yet reaped.
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  /// Writes all of `data`: kClosed when the child closed its input or is gone, kTimedOut at the
  /// deadline (part of the data may have been sent).
  ChildIo write(std::string_view data, Clock::time_point deadline);
  /// The child reads end of file from now on (its output can still be read).
  void close_input();

  /// Waits for output, then appends what is there (at most `max` bytes) to `out`: kOk, kClosed
  /// at end of file, kTimedOut at the deadline, kCancelled once `*cancel` is set (checked every
  /// few milliseconds).
  ChildIo read_some(std::string& out, Clock::time_point deadline, std::size_t max = 65536,
                    const std::atomic<bool>* cancel = nullptr);
  /// Reads exactly `n` bytes into `out` (replacing it); anything short is kClosed or kTimedOut.
  ChildIo read_exact(std::string& out, std::size_t n, Clock::time_point deadline);
  /// Waits until output is there to read (or end of file): kOk, kTimedOut or kCancelled.
  ChildIo wait_readable(Clock::time_point deadline, const std::atomic<bool>* cancel = nullptr);

  /// The captured stderr read so far and not yet taken (its last stderr_cap bytes), after
  /// reading what is there now.
  std::string take_stderr();

  /// Kills the child's process group (and the child, should it have left it) with SIGKILL and
  /// reaps it; the status says killed unless it had ended before. Closes our end. A child that
  /// was never started, or was reaped, gives the status it ended with.
  ChildStatus kill();
  /// Reaps the child once it ends on its own (its input is closed first, so that a child waiting
  /// for more sees end of file), killing what it left in its group, waiting at most `grace`;
  /// nullopt when it is still running then.
  std::optional<ChildStatus> wait_for(std::chrono::milliseconds grace);

 private:
  void drain_stderr();
  void close_fds();
  void reap(int status, bool killed);

  pid_t pid_ = -1;
  int fd_ = -1;
  int err_fd_ = -1;
  std::size_t err_cap_ = 4096;
  std::string err_;
  std::string error_;
  ChildStatus status_;
};

}  // namespace aotfuzz::host
