// Regression replay: the `// replay: <flags> => <signature>` header lines of corpus files, the
// pipeline flags they carry, and replaying files against them (`aotfuzz replay`, `aotfuzz check`
// and the ctest corpus tier share this code path).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "ir/module.h"
#include "oracle/case_flags.h"
#include "oracle/oracle.h"
#include "systems/systems.h"

namespace aotfuzz::bundles {

/// A malformed replay line or flag string; what() names the file and line when known.
using ReplayError = oracle::FlagError;
using oracle::split_flags;
using systems::parse_case_flags;

/// One expectation: run_case with `flags` must give a verdict whose signature matches `expected`.
struct ReplayLine {
  int line = 0;  ///< 1-based line in the file (0 for the implicit defaults)
  std::string flags;
  std::string expected;
};

/// The header marker: a line `// replay: <flags> => <signature>`.
inline constexpr std::string_view kReplayMarker = "// replay:";

/// `// replay: <flags> => <signature>` (flags may be empty: `// replay: => pass`).
std::string format_replay_line(std::string_view flags, std::string_view signature);

/// The replay lines of a file's header (the `//` comment lines before the first other line).
/// Throws ReplayError (file:line) on a marker line without `=>` or without a signature, or with
/// flags parse_case_flags rejects.
std::vector<ReplayLine> parse_replay_lines(std::string_view text, const std::string& file);

/// What a file without replay lines expects: pass with `--merge` and with `--no-merge`.
std::vector<ReplayLine> default_replay_lines();

/// Whether a verdict signature is one that only compiling or running the program gives
/// (compile-error, mismatch, output-unwritten, input-clobbered, error-ignored,
/// workspace-oversized, crash or timeout at run, a known behaviour seen at codegen).
bool needs_program(std::string_view signature);

/// Whether an actual signature satisfies an expected one: equal, or `expected` is a prefix of it
/// ending at a `:` (so `pass` matches `pass:run`, `invalid-input` matches `invalid-input:merge`).
bool signature_matches(std::string_view expected, std::string_view actual);

/// One replayed line.
struct ReplayRun {
  ReplayLine line;
  std::string actual;   ///< the verdict's signature
  std::string summary;  ///< oracle::summary of the verdict
  bool ok = false;
  /// Not judged: the line expects what only the compiled program shows, and the replay was
  /// asked to compile nothing (ReplayOverride::no_run). Counts as ok.
  bool unchecked = false;
  std::chrono::milliseconds elapsed{0};
  /// Not judged: the verdict is a toolchain-error the line does not expect (no C compiler, a
  /// TVM that does not import). The environment failed, not the pipeline: neither ok nor failed.
  bool environment = false;
};

/// One replayed file.
struct FileReplay {
  std::string path;
  /// A file that cannot be read or whose header is malformed (no runs then).
  std::string error;
  std::vector<ReplayRun> runs;
  std::chrono::milliseconds elapsed{0};
  /// A stop request (Ctrl-C) came before every line ran: `runs` holds those that did.
  bool interrupted = false;
  /// Every line ran and met its expectation.
  bool ok() const;
  /// A line ran and missed its expectation, or the file cannot be read or parsed: a failure
  /// whatever else happened.
  bool failed() const;
  /// Not failed, but a line could not be judged because the environment failed
  /// (ReplayRun::environment).
  bool cannot_run() const;
  /// One line per failed expectation or line that could not run (or the error), for reports.
  std::string failure_text() const;
};

/// What `aotfuzz replay` may impose on every line of every file.
struct ReplayOverride {
  /// Another system under test, for every line without an injected bug (`--sut tvm`: the
  /// regression corpus against TVM).
  std::shared_ptr<const oracle::SystemUnderTest> sut;
  /// Compile and run nothing (`--no-run`): stages and static checks only. A line expecting a
  /// verdict only the compiled program gives (needs_program) is then unchecked, not failed.
  bool no_run = false;
  /// A stop request (the interrupt flag, host/interrupt.h): once set no new line starts, and
  /// the files and lines not run are marked interrupted.
  const std::atomic<bool>* stop = nullptr;
};

/// Replays one file: every replay line (or the defaults) is one run_case. A file that does not
/// parse or verify is judged as the verdict invalid-input:annotated, so a header may expect it.
FileReplay replay_file(const std::string& path, const ReplayOverride& override = {});
/// The same on text already read.
FileReplay replay_text(std::string_view text, const std::string& path,
                       const ReplayOverride& override = {});

/// The .relay files named by `paths`: files as given, directories searched recursively, sorted
/// by path within each directory argument. Throws ReplayError on a path that does not exist.
std::vector<std::string> collect_relay_files(const std::vector<std::string>& paths);

/// Replays `files` on `jobs` threads; the results are in `files` order.
std::vector<FileReplay> replay_files(const std::vector<std::string>& files, int jobs,
                                     const ReplayOverride& override = {});

/// The first replay line of a header that expects a finding (neither pass nor invalid-input).
std::optional<ReplayLine> first_finding_line(const std::vector<ReplayLine>& lines);

}  // namespace aotfuzz::bundles
