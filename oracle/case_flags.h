// The case flags (the table case_flags.def) and the flag strings of replay lines: replay_flags
// prints a case's options, parse_case_flags reads them back. The command line, replay lines,
// campaign records and the probe child (in_process_probe.h) carry a case's options this way, so
// one parser serves them all.
#pragma once

#include <functional>
#include <memory>
#include <optional>
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

/// Which commands take a case flag (the `commands` column of case_flags.def).
enum CaseFlagCommand : unsigned {
  kCompile = 1u << 0,
  kShow = 1u << 1,
  kRun = 1u << 2,
  kFuzz = 1u << 3,
  kReduce = 1u << 4,
  kCheck = 1u << 5,
  kBench = 1u << 6,
  /// Registered but kept out of the help (a testing aid).
  kHidden = 1u << 7,
  /// Replay takes only the system's rows: they choose the system of every line.
  kReplay = 1u << 8,
};

/// One row of case_flags.def, by its Id.
enum class CaseFlag {
#define AOTFUZZ_CASE_FLAG(Id, ...) Id,
#include "oracle/case_flags.def"
#undef AOTFUZZ_CASE_FLAG
};

enum class CaseFlagKind { kPair, kSwitch, kValue, kList };
enum class CaseFlagReplay { kCase, kSetting, kNever };

/// What a flag sets: the case's options and the spec of its system (made once all flags are
/// read).
struct CaseFlagTarget {
  CaseOptions& options;
  SutSpec& sut;
};

/// How a campaign draws a flag per case (the `drawn` column of case_flags.def): with the
/// probability the generator knob `knob` holds (generator/policy.h; by name, as oracle does not
/// know the generator), the flag takes the value `hit`, else `miss`, where empty keeps the value
/// the campaign's options hold. With a `range_knob`, a hit's value is drawn in [1, that knob]
/// instead, after the hit itself, whether it hit or not. With `choices` ("a|b|c"), a hit's value
/// is one of them, drawn uniformly after the hit itself, whether it hit or not.
struct CaseDraw {
  std::string_view knob;
  std::string_view hit;
  std::string_view miss;
  std::string_view range_knob;
  std::string_view choices;
  bool drawn() const { return !knob.empty(); }
};
/// The `drawn` column of a row a campaign does not draw: given or not, every case takes the
/// command line's value.
inline constexpr CaseDraw kNotDrawn{};
/// A row a campaign draws: the value `hit` with the probability of `knob`, else `miss`.
constexpr CaseDraw drawn_by(std::string_view knob, std::string_view hit, std::string_view miss) {
  return {knob, hit, miss, {}, {}};
}
/// A row a campaign draws a number for: with the probability of `knob` one in [1, `range_knob`],
/// else the campaign's value.
constexpr CaseDraw drawn_in_range(std::string_view knob, std::string_view range_knob) {
  return {knob, {}, {}, range_knob, {}};
}
/// A row a campaign draws one of `choices` ("a|b|c") for: with the probability of `knob` one of
/// them, uniformly, else the campaign's value.
constexpr CaseDraw drawn_from(std::string_view knob, std::string_view choices) {
  return {knob, {}, {}, {}, choices};
}

/// A row of case_flags.def; the file's header says what each column means.
struct CaseFlagRow {
  CaseFlag id;
  std::string_view name;
  CaseFlagKind kind;
  std::string_view value_name;
  unsigned commands;
  CaseDraw draw;
  CaseFlagReplay replay;
  void (*apply)(CaseFlagTarget& target, const std::string& value);
  std::string (*print)(const CaseOptions& options);
  std::string_view default_text;
  std::string_view help;
};

/// The rows of case_flags.def, in its order.
const std::vector<CaseFlagRow>& case_flag_table();
const CaseFlagRow& case_flag(CaseFlag id);
/// The row whose `--name` (or `--no-name` of a pair) is `flag`; nullptr for none.
const CaseFlagRow* find_case_flag(std::string_view flag);

/// The flags that reproduce `options` on the command line (`--no-merge --api unpacked ...`):
/// each row's print, in table order.
std::string replay_flags(const CaseOptions& options);

/// Makes the system a replay line names (systems::make_system); throws std::invalid_argument with
/// one line for a name it does not know.
using SystemMaker = std::function<std::shared_ptr<const SystemUnderTest>(const SutSpec& spec)>;

/// The case options the words select (`--flag VALUE` or `--flag=VALUE`, any row of
/// case_flags.def that replays), over the defaults of `aotfuzz run` (isolate_in_process and the
/// warnings oracle on); a later value wins, --inject adds. Then the rules that hold on every
/// path: the system's refusals (SystemUnderTest::refuses), --interface c only with --api
/// unpacked, --sanitize not with tcc (and without --cc, gcc else clang). Throws FlagError with
/// one line naming the flag on an unknown flag, a missing or bad value, or a broken rule.
/// `make_system` makes the system of --sut/--tvm-home; without one, only the builtin pipeline is
/// known (the probe, which runs the builtin pipeline's steps alone). With `command_line`, the
/// rows that are a command's setting and never part of a replay line (kNever) are taken too.
/// Without `system_refusals` the system's refusals are left out: options for another purpose than
/// running the case here (an exported pytest, which the TVM release it runs on judges).
CaseOptions case_options_from_words(const std::vector<std::string>& words,
                                    const SystemMaker& make_system = nullptr,
                                    bool command_line = false, bool system_refusals = true);

/// Why `options`' memory configuration (MemoryOptions) is not one TVM builds, whatever the release:
/// USMP's options without --usmp on, --workspace-io without the C interface; as one line naming
/// the flags, or nullopt.
std::optional<std::string> memory_options_problem(const CaseOptions& options);

/// case_options_from_words of a replay line's flag string (split_flags).
CaseOptions parse_case_flags(std::string_view flags, const SystemMaker& make_system = nullptr);

}  // namespace aotfuzz::oracle
