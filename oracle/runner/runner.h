// The fork server's work: compile a batch program once (libtcc in memory, or dlopen a shared
// object a C compiler made), then run each case in its own forked child under that case's time,
// memory and output limits. A crash, hang, output flood or memory exhaustion of one case is that
// case's outcome; the others are untouched. Used by the runner executable (runner_main.cc,
// serving frames on a pipe) and in process by fuzz_differential. Not thread-safe (libtcc keeps
// global state): one caller at a time per process.
#pragma once

#include <memory>
#include <string>

#include "oracle/runner/protocol.h"

namespace aotfuzz::oracle::runner {

/// Whether this build has libtcc (kTccSource batches need it).
bool have_libtcc();

/// Compiles or loads each request's program and runs every case. Keeps what requests share (a
/// request's `runtime`, compiled on first use and again only when it changes).
class BatchRunner {
 public:
  BatchRunner();
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  /// Never throws; problems are in the result (compile error, toolchain error with a message).
  BatchResult run(const BatchRequest& request);

 private:
  struct Runtime;
  std::unique_ptr<Runtime> runtime_;
};

/// A program shipped without the runner executable can be its own runner: it names itself as
/// the runner (BatchOptions::runner = self_executable()) with kServeEnv in the runner's
/// environment (BatchOptions::runner_env), and calls serve_as_runner_if_asked() first thing.
inline constexpr const char* kServeEnv = "AOTFUZZ_SERVE_AS_RUNNER";
/// When kServeEnv is set: serves batches on stdin and stdout (as aotfuzz-runner does) and ends
/// the process. Otherwise returns.
void serve_as_runner_if_asked();
/// This program's executable (/proc/self/exe resolved); empty when it cannot be found.
std::string self_executable();

/// Serves batches: reads request frames from `in_fd`, writes result frames to `out_fd`, until end
/// of file. Returns the process exit status (0 at end of file, 2 on a malformed frame).
int serve(int in_fd, int out_fd);

}  // namespace aotfuzz::oracle::runner
