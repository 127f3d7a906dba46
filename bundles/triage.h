// Triage across TVM builds: each bundle's reduced graph replayed, with the flags it was found
// with, on every configured TVM build, so that a finding says where it is present and where it
// is gone ("present on the #9036 snapshot, gone in v0.8.0") without anyone asking.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bundles/findings_list.h"
#include "bundles/triage_build.h"
#include "ir/module.h"
#include "oracle/oracle.h"

namespace aotfuzz::bundles {

/// `LABEL=DIR`; throws std::invalid_argument naming what is wrong.
TriageBuild parse_triage_build(const std::string& text);
/// A builds file: one build per line, `LABEL DIR` (blank lines and `#` comments skipped);
/// throws std::invalid_argument with file:line.
std::vector<TriageBuild> parse_triage_builds_file(const std::string& text, const std::string& file);

enum class TriageOutcome {
  kReproduces,  ///< the bundle's signature
  kPasses,      ///< the graph passes there
  kOther,       ///< another finding (its signature says which)
  kCannotRun,   ///< the build cannot be used (does not import; a toolchain error)
};
std::string_view triage_outcome_name(TriageOutcome outcome);

struct TriageCell {
  std::string build;
  TriageOutcome outcome = TriageOutcome::kCannotRun;
  std::string signature;  ///< what the build gave
  std::string summary;    ///< its verdict in one line (why a build cannot run the case)
};

/// A finding to judge on builds: its graph, the flags of its first finding line (`// replay:
/// FLAGS => SIGNATURE`) and the signature it must give to reproduce.
struct TriageCase {
  std::filesystem::path file;
  ir::Module module;
  oracle::CaseOptions options;
  std::string flags;
  std::string signature;
};

/// Reads a `.relay` file of a `--sut tvm` finding: its first finding line's flags, and
/// `signature` (empty: that line's). Throws std::invalid_argument with one line saying what is
/// missing (no such file, no finding line, not a TVM finding, a graph that does not parse).
TriageCase load_triage_case(const std::filesystem::path& relay, const std::string& signature = "");

/// The case replayed on one build through `driver` (started for that build's home): the
/// signature it gives there and what that means for the finding.
TriageCell triage_cell(const TriageCase& finding, const TriageBuild& build,
                       const std::shared_ptr<const oracle::SystemUnderTest>& system);

/// A bundle's row: one cell per build, and the first and last build it reproduces on.
struct TriageRow {
  std::vector<TriageCell> cells;
  std::optional<std::string> first, last;
};

/// Replays and judges bundles on the builds, one TVM driver per build for all bundles.
class Triage {
 public:
  explicit Triage(std::vector<TriageBuild> builds);
  ~Triage();
  Triage(const Triage&) = delete;
  Triage& operator=(const Triage&) = delete;

  const std::vector<TriageBuild>& builds() const { return builds_; }
  /// The row of a bundle found with `--sut tvm`; nullopt for a bundle of the builtin pipeline
  /// (no TVM build decides it) or one whose header has no finding line.
  std::optional<TriageRow> row(const BundleSummary& bundle);

 private:
  std::vector<TriageBuild> builds_;
  std::vector<std::shared_ptr<const oracle::SystemUnderTest>> systems_;
};

nlohmann::json to_json(const TriageRow& row);
/// Writes the row into the bundle's verdict.json (key "triage"), atomically.
void record_triage(const BundleSummary& bundle, const TriageRow& row);
/// The matrix, bundles by builds, for humans.
std::string triage_table(const std::vector<BundleSummary>& bundles,
                         const std::vector<std::optional<TriageRow>>& rows,
                         const std::vector<TriageBuild>& builds);

}  // namespace aotfuzz::bundles
