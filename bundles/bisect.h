// Bisecting a TVM finding over TVM's history: the commit that introduced it or the one that
// fixed it. This file is the model only, free of git and builds (those are tvm_history.h; the
// command is cli/cmd_bisect.cc):
//  - the outcome of one step (a commit built and the finding replayed on it);
//  - the search: git bisect's old and new terms over candidates ordered oldest first, where a
//    skipped step (the commit does not build, or its TVM does not import) counts neither way;
//  - the record `bisect.json` a rerun resumes from, keyed by commit, valid only for the same
//    finding, flags and patches (its "setup");
//  - the answer: one commit, or the commits it could be when skipped ones leave it open.
// Requires: candidates in ancestry order (git rev-list --reverse --ancestry-path OLD..NEW), on
// which the finding's state changes once, as git bisect requires. Ensures: the search never
// proposes a commit already recorded, nor the newer end (its state is given).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::bundles {

/// What one built commit says about the finding.
enum class StepOutcome {
  kReproduces,      ///< the finding's signature
  kPasses,          ///< the graph passes there
  kOtherSignature,  ///< another finding: not the original one
  kCannotBuild,     ///< the build script failed on the tree: skipped
  kDoesNotImport,   ///< built, but TVM does not import or cannot run the case: skipped
};
/// "reproduces", "passes", "other-signature", "cannot-build", "does-not-import".
std::string_view step_outcome_name(StepOutcome outcome);
std::optional<StepOutcome> parse_step_outcome(std::string_view name);
/// Skipped outcomes say nothing either way (`git bisect skip`).
bool is_skip(StepOutcome outcome);

/// The change sought. `present` older than `absent` (its ancestor): the commit that fixed the
/// finding, the first where it no longer reproduces; otherwise the commit that introduced it,
/// the first where it reproduces.
enum class BisectKind { kIntroduced, kFixed };
std::string_view bisect_kind_name(BisectKind kind);  ///< "introduced", "fixed"

/// One recorded step.
struct BisectStep {
  StepOutcome outcome = StepOutcome::kCannotBuild;
  std::string signature;  ///< what the build gave (empty when there was nothing to replay)
  std::string subject;    ///< the commit's subject line
  double seconds = 0;     ///< wall time: tree, build and replay
  std::string detail;     ///< why it was skipped (the build's last lines, the import error)
};
using BisectSteps = std::map<std::string, BisectStep>;  ///< by full commit hash

/// The commits between the two ends, and which state the newer end is in.
struct BisectRange {
  BisectKind kind = BisectKind::kIntroduced;
  std::string older, newer;             ///< full hashes of the ends
  std::vector<std::string> candidates;  ///< oldest first; `older` excluded, `newer` when listed
};

/// Whether a step's outcome puts the commit in the newer end's state (reproduces when seeking
/// what introduced the finding; anything but reproducing when seeking its fix). Not for skips.
bool in_newer_state(BisectKind kind, StepOutcome outcome);

/// Where the search stands. Candidates at or before `lo` are in the older state, those from
/// `hi` on in the newer state; the answer is among candidates lo+1 .. hi.
struct SearchPoint {
  int lo = -1;  ///< -1: only the older end is known to be older
  int hi = 0;   ///< candidates.size(): no candidate is known newer (the newer end is not listed)
  std::optional<std::size_t> next;  ///< the candidate to build next; none: the search is over
  std::size_t untested = 0;         ///< candidates between lo and hi neither recorded nor given
  std::size_t left = 0;             ///< the commits the answer may still be (lo+1 .. hi)
  int steps_left = 0;               ///< builds still needed at most, about log2(untested + 1)
};
/// The search after `steps`: the untested candidate between lo and hi nearest their middle.
SearchPoint search_point(const BisectRange& range, const BisectSteps& steps);

/// The end of a search.
struct BisectAnswer {
  std::optional<std::string> commit;  ///< the one commit, when the steps single it out
  /// Otherwise the commits it could be, oldest first: the skipped ones between lo and hi, and
  /// the first newer one when there is one.
  std::vector<std::string> could_be;
  /// The newer end is not a candidate (--paths left it out) and no candidate is newer: the
  /// change may lie in a commit that touches none of the paths.
  bool maybe_outside_paths = false;
  /// The ends the one commit rests on (the older end when no candidate was seen in the older
  /// state, the newer end when it is the answer itself) whose own step does not confirm the
  /// state the user gave them: missing, skipped, or in the other state. No commit is answered
  /// then: --present and --absent swapped would otherwise name the commit next to an end.
  std::vector<std::string> unconfirmed_ends;
  /// One of unconfirmed_ends was judged in the other state: the ends are wrong or swapped.
  bool ends_contradicted = false;
};
BisectAnswer bisect_answer(const BisectRange& range, const BisectSteps& steps);

/// The ends the search's answer rests on that have no recorded step yet: to be built and judged
/// once the search is over (BisectAnswer::unconfirmed_ends). Often cached by the build script.
std::vector<std::string> ends_to_verify(const BisectRange& range, const BisectSteps& steps);

/// The PR number of a squash-merged subject, "... (#9064)": its last `(#N)`.
std::optional<int> pr_number(std::string_view subject);

/// The finding and options the recorded outcomes hold for: the graph's file name and text
/// hash, the signature, the replay flags and the build patches (content hashes, in order).
nlohmann::json bisect_setup(const std::string& file, const std::string& graph_text,
                            const std::string& signature, const std::string& flags,
                            const std::vector<std::string>& patch_texts, bool release_patches);

/// The steps of `record` (none when it does not exist). Throws std::invalid_argument with one
/// line when it cannot be read or parsed, or records another setup (its steps would not hold).
BisectSteps load_bisect_steps(const std::filesystem::path& record, const nlohmann::json& setup);

/// Writes `record` atomically: setup, range (as given and resolved), steps and, once the search
/// is over, the result (null before). Throws std::system_error.
void save_bisect_record(const std::filesystem::path& record, const nlohmann::json& setup,
                        const nlohmann::json& range, const BisectSteps& steps,
                        const nlohmann::json& result);

/// The answer as JSON: kind, answered, commit, subject and pr (or null), could_be (commit,
/// subject, outcome or "untested"), maybe_outside_paths, unconfirmed_ends (commit, subject,
/// outcome or "untested", which: "older" or "newer"), ends_contradicted, candidates, steps,
/// skipped, and the
/// members of `ends` (present, absent, paths as given). `subjects` holds the subject of every
/// commit the answer names that has no recorded step (the newer end is never built).
nlohmann::json bisect_result_json(const BisectRange& range, const BisectSteps& steps,
                                  const BisectAnswer& answer, const nlohmann::json& ends,
                                  const std::map<std::string, std::string>& subjects);

/// Writes `result` into a bundle's verdict.json (key "bisect"), atomically.
void record_bisect(const std::filesystem::path& bundle_dir, const nlohmann::json& result);

/// The progress line of a step about to run: step number, candidates left, the commit and an
/// estimate of the time left (the longest step time times steps left) when a step time is known.
std::string bisect_progress_line(int step, std::size_t candidates_left, const std::string& commit,
                                 const std::string& subject, std::optional<double> step_seconds,
                                 int steps_left);
/// What a step may take: the longest recorded step; none without one. Not the mean: a step whose
/// build is cached takes seconds, one built from cold an hour, and the first steps (the ends,
/// often built before) would make a mean far too short.
std::optional<double> step_estimate_seconds(const BisectSteps& steps);

/// "1h05m", "12m30s", "40s".
std::string duration_text(double seconds);

}  // namespace aotfuzz::bundles
