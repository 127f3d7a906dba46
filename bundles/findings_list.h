// What a findings directory holds, across the campaigns that wrote into it: one summary per
// bundle, for `aotfuzz findings DIR` (list, --rerun, --json).
#pragma once

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bundles/replay.h"
#include "bundles/status_files.h"

namespace aotfuzz::bundles {

struct BundleSummary {
  std::string signature;
  std::filesystem::path dir;
  /// seen.json; a bundle of an older campaign without one counts its verdict.json's time as
  /// first and last seen and one hit.
  SeenRecord seen;
  /// Ops of the reduced graph (verdict.json's info.reduction.after.ops), -1 when unknown.
  int reduced_ops = -1;
  /// The reduction ended (a killed campaign leaves it to the next one).
  bool reduction_complete = true;
  std::string replay;
  /// The reduced graph's verdict, one line (verdict.json's verdict.summary).
  std::string verdict_summary;
  /// verdict.json's "triage" (bundles/triage.h: the bundle on every configured TVM build), or
  /// null.
  nlohmann::json triage;
  /// verdict.json's "bisect" (bundles/bisect.h: the TVM commit that introduced or fixed it), or
  /// null.
  nlohmann::json bisect;
  /// After rerun(): whether the reduced graph still gives the bundle's verdict; nullopt when it
  /// could not be replayed (cannot_run says why).
  std::optional<bool> reproduces;
  std::string rerun_detail;
  /// After rerun(): why the graph could not be replayed here (no C compiler, a TVM build that is
  /// gone or does not import, an unreadable bundle), which says nothing of the bug; else empty.
  std::string cannot_run;
  /// After rerun(): why the result could not be recorded in seen.json (a read-only directory).
  std::string record_error;
};

/// The bundles of `dir` (subdirectories with a verdict.json), by signature. Throws
/// std::system_error when `dir` cannot be read.
std::vector<BundleSummary> list_bundles(const std::filesystem::path& dir);

/// Why a replay says nothing of the bug: the file could not be read or replayed, or a line could
/// not be judged (ReplayRun::environment); nullopt when every line was judged.
std::optional<std::string> environment_failure(const FileReplay& replay);

/// Replays `bundle`'s reduced.relay against its header's replay lines with the current build,
/// sets `reproduces`, and records the result in its seen.json ("rerun": {"time", "reproduces"}).
/// A replay the environment kept from judging sets `cannot_run` and records nothing; a record
/// that cannot be written sets `record_error`.
void rerun_bundle(BundleSummary& bundle, const ReplayOverride& override = {});

/// "2026-12-02T01:07:43Z"; "-" for 0.
std::string utc(std::time_t t);

/// One line per bundle and a header, for humans.
std::string findings_table(const std::vector<BundleSummary>& bundles);
nlohmann::json to_json(const std::vector<BundleSummary>& bundles);

}  // namespace aotfuzz::bundles
