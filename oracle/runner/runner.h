// The fork server's work: compile a batch program once (libtcc in memory, or dlopen a shared
// object a C compiler made), then run each case in its own forked child under that case's time,
// memory and output limits. A crash, hang, output flood or memory exhaustion of one case is that
// case's outcome; the others are untouched. Used by the runner executable (runner_main.cc,
// serving frames on a pipe) and in process by fuzz_differential. Not thread-safe (libtcc keeps
// global state): one caller at a time per process.
#pragma once

#include "oracle/runner/protocol.h"

namespace aotfuzz::oracle::runner {

/// Whether this build has libtcc (kTccSource batches need it).
bool have_libtcc();

/// Compiles or loads `request.program` and runs every case. Never throws; problems are in the
/// result (compile error, toolchain error with a message).
BatchResult run_batch(const BatchRequest& request);

/// Serves batches: reads request frames from `in_fd`, writes result frames to `out_fd`, until end
/// of file. Returns the process exit status (0 at end of file, 2 on a malformed frame).
int serve(int in_fd, int out_fd);

}  // namespace aotfuzz::oracle::runner
