// TVM's known behaviours by release (tvm/known.def): what a release does that the builtin
// pipeline's model of v0.8 does not and that is already understood, so that a campaign sees past
// it to the next bug.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "aot/codegen.h"

namespace aotfuzz::tvm {

/// A TVM release as major.minor ("0.18.0", "0.8.dev0" and "0.16.dev123+g1234" give 0.18, 0.8
/// and 0.16); nullopt for a version string of another form (a fake TVM's "0.0.fake" gives 0.0).
struct Release {
  int major = 0;
  int minor = 0;
  auto operator<=>(const Release&) const = default;
};
std::optional<Release> parse_release(std::string_view version);

enum class KnownKind { kBug, kChange };

/// Whether a case that shows a behaviour runs on past it (its outputs are still judged), or ends
/// there because the behaviour leaves the run undefined.
enum class KnownRun { kGoesOn, kUndefined };

/// One call of TVM's executor as the static arity check reads it, with what its callee takes
/// (the arguments its definition reads, else its type).
struct ArityObservation {
  aot::CallSiteInfo site;
  int takes = 0;
  /// The callee's C definition reads packed arguments (`((TVMValue*)args)[k]`): a direct call of
  /// it disagrees with it whatever the counts.
  bool callee_packed = false;
};

/// Whether the call disagrees with its callee: another argument count than it takes, or a direct
/// call of a packed definition.
bool disagrees(const ArityObservation& call);

/// A row of tvm/known.def.
struct KnownBehaviour {
  std::string_view id;
  KnownKind kind;
  Release since;
  std::optional<Release> until;
  std::string_view source;
  std::string_view what;
  /// Whether a call that disagrees with its callee is this behaviour.
  bool (*explains_call)(const ArityObservation&) = nullptr;
  /// The behaviour makes the run undefined (a callee reading arguments of another form than it
  /// gets): a case that shows it ends known there, unrun.
  bool run_undefined = false;

  bool applies_to(const Release& release) const {
    return since <= release && (!until || release < *until);
  }
};

/// Every row, in the table's order.
std::span<const KnownBehaviour> known_behaviours();

/// The row that explains every call of `calls` that disagrees with its callee, for `release`;
/// null when one of them is explained by no row, or by another row than the rest, or none
/// disagrees.
const KnownBehaviour* explain_arity(const std::vector<ArityObservation>& calls,
                                    const Release& release);

}  // namespace aotfuzz::tvm
