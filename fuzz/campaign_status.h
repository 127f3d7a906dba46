// What a campaign with a findings directory keeps there as it runs: the status files
// (bundles/status_files.h) and, in each bundle's seen.json, the hits of its signature. A failure
// to write them is warned of and never stops the campaign.
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>

#include "bundles/campaign_stats.h"
#include "bundles/status_files.h"
#include "fuzz/campaign_log.h"
#include "fuzz/campaign_types.h"
#include "fuzz/journal_notes.h"

namespace aotfuzz::fuzz {

/// Used by the campaign's main thread only.
class CampaignStatus {
 public:
  /// `recorded_hits`: the hits an earlier child of this run put in seen.json already.
  CampaignStatus(const CampaignOptions& options, JournalNotes& notes, CampaignLog& log,
                 std::map<std::string, std::uint64_t> recorded_hits);

  /// Starts the campaign's clock (unix time).
  void start();
  /// Opens the status files of the findings directory (the rows of earlier campaigns are kept).
  void open();
  /// Whether there are status files to keep.
  bool active() const { return files_.has_value(); }
  /// Rewrites the status files.
  void write(const bundles::Progress& progress, const bundles::CampaignStats& stats);
  /// Adds to each bundle's seen.json the hits of its signature not recorded there yet. A bundle
  /// still being written (no verdict.json yet) gets them at a later call.
  void record_hits(const std::map<std::string, std::uint64_t>& hits);

 private:
  const CampaignOptions& opt_;
  JournalNotes& notes_;
  CampaignLog& log_;
  std::time_t start_time_ = 0;
  std::optional<bundles::StatusFiles> files_;
  bool failed_ = false;
  std::map<std::string, std::uint64_t> recorded_hits_;
};

}  // namespace aotfuzz::fuzz
