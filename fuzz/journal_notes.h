// What a supervised campaign child notes in its crash journal as it goes (fuzz/crash_journal.h),
// so that a child started after it died goes on where it stopped; and what that child reads
// back. The notes of all threads go through one lock, the journal's lists and records being
// plain data.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fuzz/campaign_types.h"
#include "fuzz/crash_journal.h"

namespace aotfuzz::fuzz {

/// What the earlier children of a supervised run leave for the next one; empty for a first
/// child or an unsupervised campaign.
struct Restart {
  /// Every case below this one is done: the first case to take.
  std::uint64_t first_case = 0;
  /// Cases above first_case that were judged and completed: not judged again.
  std::set<std::uint64_t> judged_before;
  /// Cases above first_case that were counted but not completed: judged again (a finding must
  /// still be claimed), not counted again.
  std::set<std::uint64_t> counted_before;
  bundles::CampaignStats stats;
  std::map<std::string, std::uint64_t> signature_hits;
  /// The findings claimed so far, with the case each was claimed at.
  std::vector<Finding> findings;
  std::map<std::string, std::uint64_t> claimed;
  double last_new_finding_s = -1;
  /// Hits of each signature already in its bundle's seen.json.
  std::map<std::string, std::uint64_t> recorded_hits;
};
/// The restart `journal` asks for (nullptr: none).
Restart restart_from(const CrashJournal* journal);

/// The campaign child's notes; with no journal, nothing is noted.
class JournalNotes {
 public:
  explicit JournalNotes(CrashJournal* journal) : journal_(journal) {}

  /// Every case below `watermark` is done, and case k (at or above it) is.
  void done(std::uint64_t watermark, std::uint64_t k);
  /// Case k is counted: `totals` are the counters with it, and `finding_signature` (nullptr:
  /// none) gets a hit.
  void counted(std::uint64_t k, const bundles::CampaignStats& totals,
               const std::string* finding_signature);
  /// `hits` finding cases of `signature` are in its bundle's seen.json.
  void recorded(const std::string& signature, std::uint64_t hits);
  /// The finding this child claimed at case k, as far as it got: a restarted child counts it as
  /// this run's.
  void claimed(const Finding& finding, std::uint64_t k);
  /// A new unique finding is announced: from now on the run exits 1, even if this child is killed
  /// before its bundle is written.
  void announced();
  /// A culprit case's verdict reached the point where findings are claimed.
  void culprit_judged(std::uint64_t k);

 private:
  // Appends case k to one of the journal's lists of cases above the watermark; a full list drops
  // the entries the watermark has passed.
  void note_above(std::uint64_t* list, int& n, std::uint64_t k);

  CrashJournal* journal_;
  std::mutex mu_;
};

}  // namespace aotfuzz::fuzz
