// The reductions of a campaign's findings: a new finding's (its options made canonical first,
// then reduced as the ledger's rule says, its bundle replaced), a cleaner repro for a finding that
// fails on the fixed system too, and the bundles an earlier campaign left not fully reduced.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "fuzz/campaign_log.h"
#include "fuzz/campaign_types.h"
#include "fuzz/finding_bundle.h"
#include "oracle/oracle.h"
#include "reduce/reducer.h"

namespace aotfuzz::fuzz {

class FindingReducer {
 public:
  /// `seeks_cleaner_repros`: a finding reduced by its signature alone waits for a later case
  /// whose graph passes on the fixed system (try_cleaner_repro).
  /// `deadline`: the campaign's time budget, which reductions keep to (one cut short by it is
  /// left marked not fully reduced, for the next campaign on the directory).
  FindingReducer(const CampaignOptions& options, const FindingBundles& bundles, CampaignLog& log,
                 bool seeks_cleaner_repros,
                 std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  /// Reduces the new finding `f` of case `spec`, whose unreduced bundle is written, and replaces
  /// its bundle with the reduced one: `f` gets the reduction's figures (its module dropped), the
  /// canonical options' flags and the bundle's replay line, or the error that kept the bundle
  /// from being written.
  void reduce_new_finding(const CaseSpec& spec, Finding& f);
  /// A later case with the signature `signature` of a finding that waits for a cleaner repro:
  /// when its graph passes on the fixed system, its reduction replaces the finding's bundle.
  /// Gives up on the signature after a few attempts, or when `stopping`.
  void try_cleaner_repro(const CaseSpec& spec, const std::string& signature, bool stopping);
  /// Reduces further, from its best graph so far, a bundle an earlier campaign left not fully
  /// reduced (killed or stopped), and replaces it.
  void resume_reduction(const std::filesystem::path& dir);

 private:
  reduce::ReduceOptions reduce_options() const;
  // Whether a reduction that gave `red` has ended: 1-minimal, or neither stopped nor out of the
  // campaign's time.
  bool ended(const reduce::ReduceResult& red) const;
  // Options back to their defaults, one at a time, as long as the signature stays.
  oracle::CaseOptions canonical_options(const CaseSpec& spec, const std::string& signature) const;
  // Claims `signature`'s cleaner-repro search for one attempt; false when there is none to make.
  bool start_cleaner_attempt(const std::string& signature, bool stopping);

  const CampaignOptions& opt_;
  const FindingBundles& bundles_;
  CampaignLog& log_;
  const bool seeks_cleaner_repros_;
  const std::optional<std::chrono::steady_clock::time_point> deadline_;
  // Signatures whose bundle fails on the fixed build too, and the later cases tried for a
  // cleaner repro.
  struct CleanerSearch {
    int attempts = 0;
    bool busy = false;
  };
  static constexpr int kCleanerAttempts = 8;
  std::mutex mu_;
  std::map<std::string, CleanerSearch> needs_cleaner_;
};

}  // namespace aotfuzz::fuzz
