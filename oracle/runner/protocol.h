// The wire format between a campaign worker and its runner (oracle/runner/runner_main.cc): one
// batch request frame in, one batch result frame out, each a 4-byte little-endian length followed
// by the payload. Plain data only, so the runner stays a small program without the oracle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::oracle::runner {

/// How one case of a batch is run: its entry index and limits.
struct CaseRequest {
  /// Passed to the batch's entry function (`int entry(int index, const uint8_t* const* inputs)`).
  std::int32_t index = 0;
  /// Wall-clock limit; the child is killed with SIGKILL when it passes.
  std::uint64_t timeout_ms = 10'000;
  /// RLIMIT_CPU in seconds (0: timeout rounded up plus one second).
  std::uint64_t cpu_seconds = 0;
  /// RLIMIT_AS in bytes; 0 leaves it unchanged.
  std::uint64_t address_space = std::uint64_t{1} << 30;
  /// RLIMIT_FSIZE in bytes; 0 leaves it unchanged.
  std::uint64_t file_size = std::uint64_t{64} << 20;
  /// Bytes kept of stderr, and bytes of stdout beyond which the child is killed (a flood).
  std::uint64_t output_cap = std::uint64_t{1} << 20;
  /// The case's input tensors' bytes, passed to the entry function as `inputs`.
  std::vector<std::string> inputs;
};

/// One batch: a program and the cases to run from it.
struct BatchRequest {
  enum class Mode : std::uint8_t {
    kTccSource = 0,     ///< `program` is C source, compiled in memory with libtcc
    kSharedObject = 1,  ///< `program` is the path of a shared object to dlopen
  };
  Mode mode = Mode::kTccSource;
  std::string program;
  /// libtcc options (`-std=c99 -Wall -Werror -DAOTFUZZ_TRACE`), kTccSource only.
  std::string tcc_options;
  /// kTccSource: C that every batch of this runner process shares (the harness runtime), compiled
  /// once per process and kept; `program` then sees the runtime's `runtime_symbols` as its own.
  /// Empty: `program` is whole.
  std::string runtime;
  std::vector<std::string> runtime_symbols;
  /// The entry function, `int <entry>(int index)`.
  std::string entry = "aotfuzz_batch_run";
  /// Cases one forked child runs one after the other (0: all). A case that crashes, exits,
  /// hangs or floods ends its child, and the next case starts in a new one; 1 gives every case a
  /// process of its own.
  std::uint32_t cases_per_child = 0;
  std::vector<CaseRequest> cases;
};

/// How a child ended, as host::ExitKind.
enum class ChildEnd : std::uint8_t { kExited = 0, kSignaled = 1, kTimedOut = 2, kStartFailed = 3 };

/// What one case's child did.
struct CaseOutcome {
  ChildEnd end = ChildEnd::kStartFailed;
  std::int32_t exit_code = -1;
  std::int32_t signal = 0;
  /// stdout passed output_cap: the child was killed (the rest of its output is lost).
  bool flood = false;
  bool stderr_truncated = false;
  std::uint64_t elapsed_us = 0;
  std::string stdout_text;
  std::string stderr_text;
  std::string message;
};

/// What a batch did.
struct BatchResult {
  enum class Compile : std::uint8_t { kOk = 0, kCompileError = 1, kToolchainError = 2 };
  Compile compile = Compile::kToolchainError;
  /// Compiler diagnostics, or why the program could not be loaded.
  std::string diagnostics;
  std::uint64_t compile_us = 0;
  /// One per requested case when compile is kOk, else empty.
  std::vector<CaseOutcome> cases;
};

std::string encode(const BatchRequest& request);
std::string encode(const BatchResult& result);
/// nullopt when the payload is malformed.
std::optional<BatchRequest> decode_request(const std::string& payload);
std::optional<BatchResult> decode_result(const std::string& payload);

/// `payload` as one frame: its 4-byte length, then itself.
std::string frame(const std::string& payload);
/// The number of bytes of payload a frame's first 4 bytes announce.
std::size_t frame_length(std::string_view head);

/// Writes one frame (length + payload) to `fd`, retrying short writes; false on an error.
bool write_frame(int fd, const std::string& payload);
/// Reads one frame from `fd`. nullopt on end of file, an error, a frame larger than `max_bytes`,
/// or when `deadline_ms` (milliseconds from now, negative: none) passes first.
std::optional<std::string> read_frame(int fd, std::size_t max_bytes, long deadline_ms = -1);

}  // namespace aotfuzz::oracle::runner
