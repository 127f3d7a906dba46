// A running campaign's counters: every judged case counted once, its finding's signature hit,
// and the totals noted in the crash journal with the case, all in one step.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "bundles/campaign_stats.h"
#include "fuzz/journal_notes.h"

namespace aotfuzz::fuzz {

class CaseCounter {
 public:
  /// Goes on from what the earlier children of this run counted (`restart`).
  CaseCounter(JournalNotes& notes, const Restart& restart);

  /// Counts case k, which adds `one` (case_stats), and a hit of `finding_signature` (nullptr:
  /// not a finding case). A case an earlier child counted is not counted again.
  void count(std::uint64_t k, const bundles::CampaignStats& one,
             const std::string* finding_signature);
  /// Whether an earlier child counted case k (it is judged again, not counted again).
  bool counted_before(std::uint64_t k) const {
    return !counted_before_.empty() && counted_before_.count(k) != 0;
  }
  void add_generator_error();
  /// Counts a graph over the memory budget; true for the first one.
  bool add_over_budget();
  void add_waiting_us(std::uint64_t us);

  bundles::CampaignStats totals() const;
  /// Finding cases by signature.
  std::map<std::string, std::uint64_t> signature_hits() const;

 private:
  JournalNotes& notes_;
  // Read-only once the workers run.
  const std::set<std::uint64_t> counted_before_;
  mutable std::mutex mu_;
  bundles::CampaignStats totals_;
  std::map<std::string, std::uint64_t> hits_;
};

}  // namespace aotfuzz::fuzz
