// The flag strings of replay lines: replay_flags prints a case's options, parse_case_flags
// reads them back. Replay lines, campaign records and the probe child (in_process_probe.h) carry a
// case's options this way, so one parser serves them all.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "oracle/case.h"
#include "oracle/sut.h"

namespace aotfuzz::oracle {

/// A malformed flag string or replay line; what() names the file and line when known.
class FlagError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// Splits a flag string into POSIX shell words (quotes as shell_quote writes them); throws
/// FlagError on an unterminated quote.
std::vector<std::string> split_flags(std::string_view flags);

/// The flags that reproduce `options` on the command line (`--no-merge --api unpacked ...`).
std::string replay_flags(const CaseOptions& options);

/// Makes the system a replay line names (systems::make_system); throws std::invalid_argument with
/// one line for a name it does not know.
using SystemMaker =
    std::function<std::shared_ptr<const SystemUnderTest>(const SutSpec& spec)>;

/// The case options a flag string selects, with the same flags and defaults as `aotfuzz run`
/// (isolate_in_process on): --merge/--no-merge, --mod-name M, --api packed|unpacked,
/// --interface packed|c, --storage-reuse/--no-storage-reuse, --max-fuse-depth N,
/// --check-num-args, --inject BUG (repeatable), --cc tcc|gcc|clang, --sanitize, --input-seed N,
/// --ulp N, --memory-budget MIB, --no-run, --[no-]structure, --[no-]determinism, --[no-]warnings, --sut builtin|tvm, --tvm-home DIR,
/// --in-process-time S, --debug-fault PASS:crash|hang|overflow|throw; `--flag=value` works too. Throws
/// FlagError on an unknown flag, a missing or bad value, an unknown bug, or --interface c with
/// the packed API.
/// `make_system` makes the system of --sut/--tvm-home; without one, only the builtin pipeline is
/// known (the probe, which runs the builtin pipeline's steps alone).
CaseOptions parse_case_flags(std::string_view flags, const SystemMaker& make_system = nullptr);

}  // namespace aotfuzz::oracle
