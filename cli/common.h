// Shared plumbing of the subcommands: exit codes, file loading, error reporting, pipeline and
// generation-policy flags.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "bundles/triage.h"
#include "fuzz/campaign_types.h"
#include "generator/policy.h"
#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/sut.h"
#include "reference/footprint.h"

namespace aotfuzz::cli {

/// The exit codes of docs/design.md, "Verdicts"; 130 when Ctrl-C or SIGTERM stopped the work.
enum ExitCode : int { kOk = 0, kFinding = 1, kBadInput = 2, kInternal = 3, kInterrupted = 130 };

/// Thrown by commands for bad input or usage; main prints it and exits with `code`.
class CommandError : public std::runtime_error {
 public:
  CommandError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Reads a whole file, or standard input for "-" (read once; later calls return the same text).
/// A missing or unreadable file or a directory is a CommandError(kBadInput).
std::string read_file(const std::string& path);

/// The TVM builds of `--tvm-build LABEL=DIR` (repeatable) and `--tvm-builds FILE` (the file's
/// first), each home made absolute; throws CommandError (exit 2) naming `command` on a bad entry
/// or a home that is not a directory.
std::vector<bundles::TriageBuild> triage_builds(const std::vector<std::string>& labelled,
                                                const std::string& file,
                                                const std::string& command);
/// Parses and verifies a module ("-": standard input, named <stdin> in messages); any error
/// becomes CommandError(kBadInput) with the position.
ir::Module load_module(const std::string& path);

/// Fails fast, before the work that produces the output: `path` of option `flag` must be a file
/// this process can create or append to. A CommandError(kBadInput) "<command>: cannot write
/// <flag> <path>: <reason>" otherwise. Leaves the file system as it was.
void check_output_file(const std::string& path, const std::string& flag,
                       const std::string& command);
/// The same for a directory of outputs, which may not exist yet.
void check_output_dir(const std::string& path, const std::string& flag, const std::string& command);

/// A whole decimal number from `min` to 2^64-1, rewritten in plain decimal for CLI11 to read.
/// CLI11 alone reads numbers with strtoull in base 0: "-1" and anything past 2^64 become
/// 2^64-1, and "010" is 8.
CLI::Validator unsigned_decimal(std::uint64_t min);
/// Seconds as a budget: a finite number greater than 0 and at most 1e9 (CLI::PositiveNumber
/// lets NaN through, and its message prints DBL_MAX in full).
CLI::Validator positive_seconds();
/// Worker threads, candidates or files in parallel: --jobs 0 and below are errors.
inline CLI::Range jobs_range() { return CLI::Range(1, 1024); }

/// Registers the pair --NAME and --no-NAME, calling `set` with true and false; they exclude
/// each other (CLI11's "--x,!--no-x" lets the last one win). Returns --NAME.
CLI::Option* add_flag_pair(CLI::App* app, const std::string& name, std::function<void(bool)> set,
                           const std::string& help);
/// The same, setting `value`.
void add_flag_pair(CLI::App* app, const std::string& name, bool& value, const std::string& help);

/// The case flags (oracle/case_flags.def) as given on the command line, in order: `--no-merge`,
/// `--api`, `unpacked`, ... case_options reads them with the replay parser's rules.
struct PipelineFlags {
  std::vector<std::string> words;
};
/// Registers the rows of oracle/case_flags.def that `command` (an oracle::CaseFlagCommand bit)
/// takes; each checks its value as the replay parser does. For fuzz, the help of the flags a
/// campaign draws says so.
void add_pipeline_flags(CLI::App* app, PipelineFlags& flags, unsigned command);
/// A directory `aotfuzz fuzz --findings` wrote (a bundle or a campaign's status files in it);
/// otherwise a CommandError(kBadInput) naming `command`.
void require_findings_dir(const std::string& dir, const std::string& command);
/// Whether option `name` of `app`, or its other half `--no-...` for a flag pair, was given on the
/// command line.
bool given(CLI::App* app, const std::string& name);
/// Whether any flag that selects the case was given (a kCase row of oracle/case_flags.def):
/// without one, run and reduce take the flags of the file's `// replay:` header.
bool any_pipeline_flag(CLI::App* app);
/// The flags given that adjust a file's replay line rather than replace it (the rows that are
/// not kCase: --sut, --tvm-home, --no-run, ...), shell-quoted, each with a leading blank.
std::string setting_flags(const PipelineFlags& flags);
/// The case options `words` select (oracle::case_options_from_words with make_sut, command-line
/// rows included); a bad flag, an unknown bug or a broken rule is a CommandError(kBadInput).
oracle::CaseOptions case_options(const std::vector<std::string>& words,
                                 bool system_refusals = true);
/// The system the --sut row of `flags` chooses (the builtin pipeline too, when named); null when
/// no --sut was given, so that each replay line keeps its own. Bad flags are CommandError.
std::shared_ptr<const oracle::SystemUnderTest> chosen_system(const PipelineFlags& flags);
inline oracle::CaseOptions case_options(const PipelineFlags& flags) {
  return case_options(flags.words);
}

/// The system under test `spec` names (systems::make_system); an unknown name or a missing or
/// unusable home is a CommandError(kBadInput).
std::shared_ptr<const oracle::SystemUnderTest> make_sut(const oracle::SutSpec& spec);
/// Registers the generation-policy flags of gen and fuzz: --knob NAME=VALUE (repeatable) into
/// `knobs` and --size N into `size`.
void add_policy_flags(CLI::App* app, std::vector<std::string>& knobs, int& size);
/// The policy the defaults with `knobs` applied in order (each `NAME=VALUE`, later ones win)
/// describe, then `size` steps per graph unless it is 0; validated. A malformed flag, an unknown
/// knob or a bad value is a CommandError(kBadInput) whose message starts with `command`.
generator::GenPolicy policy_from_flags(const std::vector<std::string>& knobs, int size,
                                       const std::string& command);
/// A campaign draws mostly inside its system's stated limits (SystemUnderTest::generation_knobs),
/// so that they do not drown new findings: sets each of those knobs that `knobs` (the --knob
/// flags given) does not, then validates; a bad combination is a CommandError(kBadInput).
void within_system_limits(generator::GenPolicy& policy, const std::vector<std::string>& knobs,
                          const oracle::SystemUnderTest& system, const std::string& command);
/// The campaign profiles of `system` (SystemUnderTest::generation_profiles) over `policy` (which
/// within_system_limits has set): each profile's knobs that `knobs` does not set, validated, and
/// its knob flags. Empty when the system has none.
std::vector<fuzz::CampaignOptions::Profile> system_profiles(
    const generator::GenPolicy& policy, const std::vector<std::string>& knobs,
    const oracle::SystemUnderTest& system, const std::string& command);
/// The graph knobs of `policy` that differ from the defaults as ` --knob NAME=VALUE` flags (each
/// with a leading space), so a printed `aotfuzz gen` command regenerates the same graph.
std::string knob_flags(const generator::GenPolicy& policy);

/// A subcommand: registers its options on `app` and sets `run` to execute it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// One registration function per subcommand file (the table lives in main.cc).
using Registrar = Command (*)(CLI::App& parent);

Command register_gen(CLI::App& parent);
Command register_fmt(CLI::App& parent);
Command register_show(CLI::App& parent);
Command register_bugs(CLI::App& parent);
Command register_compile(CLI::App& parent);
Command register_run(CLI::App& parent);
Command register_fuzz(CLI::App& parent);
Command register_reduce(CLI::App& parent);
Command register_replay(CLI::App& parent);
Command register_findings(CLI::App& parent);
Command register_merge(CLI::App& parent);
Command register_bisect(CLI::App& parent);
Command register_report(CLI::App& parent);
Command register_check(CLI::App& parent);
Command register_bench(CLI::App& parent);

}  // namespace aotfuzz::cli
