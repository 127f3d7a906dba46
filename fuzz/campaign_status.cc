// A campaign's status files and seen.json hits.
#include "fuzz/campaign_status.h"

#include <exception>
#include <filesystem>
#include <utility>

#include "bundles/bundle.h"

namespace aotfuzz::fuzz {

CampaignStatus::CampaignStatus(const CampaignOptions& options, JournalNotes& notes,
                               CampaignLog& log, std::map<std::string, std::uint64_t> recorded_hits)
    : opt_(options), notes_(notes), log_(log), recorded_hits_(std::move(recorded_hits)) {}

void CampaignStatus::start() { start_time_ = std::time(nullptr); }

void CampaignStatus::open() {
  files_.emplace(opt_.findings_dir);
  if (const long pid = files_->other_owner(); pid != 0) {
    log_.info("another campaign" +
              (pid > 0 ? " (pid " + std::to_string(pid) + ")" : std::string()) + " is writing " +
              (opt_.findings_dir / "fuzzer_stats").string() +
              " and plot_data; this campaign writes its own under " +
              (opt_.findings_dir / "campaigns").string() +
              "/ (<start>-<pid>-<n>.fuzzer_stats, "
              ".plot_data)");
  }
}

void CampaignStatus::write(const bundles::Progress& p, const bundles::CampaignStats& stats) {
  if (!files_) return;
  bundles::StatusSnapshot s;
  s.progress = p;
  s.stats = stats;
  s.seed = opt_.seed;
  s.jobs = opt_.jobs;
  s.command_line = opt_.command_line;
  s.version = opt_.version;
  s.start_time = start_time_;
  s.now = std::time(nullptr);
  s.last_new_finding =
      p.last_new_finding_s < 0 ? 0 : start_time_ + static_cast<std::time_t>(p.last_new_finding_s);
  try {
    files_->update(s);
  } catch (const std::exception& e) {
    if (!failed_) log_.warn(std::string("cannot write the status files: ") + e.what());
    failed_ = true;
  }
}

void CampaignStatus::record_hits(const std::map<std::string, std::uint64_t>& hits_now) {
  if (!files_) return;
  const std::time_t now = std::time(nullptr);
  for (const auto& [sig, hits] : hits_now) {
    auto recorded = recorded_hits_.find(sig);
    const bool first = recorded == recorded_hits_.end();
    if (!first && recorded->second >= hits) continue;
    const std::filesystem::path dir = opt_.findings_dir / bundles::bundle_dir_name(sig);
    if (!std::filesystem::exists(dir / "verdict.json")) continue;
    try {
      bundles::record_seen(dir, hits - (first ? 0 : recorded->second), now, first);
      recorded_hits_[sig] = hits;
      notes_.recorded(sig, hits);
    } catch (const std::exception& e) {
      log_.warn("cannot update " + (dir / "seen.json").string() + ": " + e.what());
    }
  }
}

}  // namespace aotfuzz::fuzz
