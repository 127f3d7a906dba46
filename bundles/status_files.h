// Files a monitor reads while a campaign runs (docs/fuzzing.md, "Watching a campaign"), in the
// findings directory, each replaced atomically (written aside, then renamed) so a reader or a
// kill -9 never sees half of one: `fuzzer_stats` (key : value lines, as AFL++'s) and `plot_data`
// (one comma-separated row per interval, kept across the campaigns that write into the
// directory), and a record of each campaign under `campaigns/`. Also each bundle's `seen.json`:
// when and how often its signature was seen.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundles/campaign_stats.h"

namespace aotfuzz::bundles {

/// Writes `text` to `path` through a temporary file in the same directory and a rename. Throws
/// std::system_error when it cannot.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

/// What the status files say about a running campaign.
struct StatusSnapshot {
  Progress progress;
  CampaignStats stats;
  std::uint64_t seed = 0;
  int jobs = 1;
  std::time_t start_time = 0;
  std::time_t now = 0;
  /// Unix time of the last new unique finding of this campaign, 0 when none yet.
  std::time_t last_new_finding = 0;
  /// How the campaign was started and by which aotfuzz (AFL++'s command_line and afl_version).
  std::string command_line;
  std::string version;
};

/// `fuzzer_stats`: start_time, last_update, run_time, fuzzer_pid, seed, jobs, cases_done,
/// (when known) command_line and aotfuzz_version,
/// cases_per_sec, finding_cases, unique_signatures, last_new_finding, toolchain_errors,
/// verdicts_<kind> for every kind seen, and time_share_<phase> (percent) for generation,
/// passes, codegen, compile, run and waiting.
std::string fuzzer_stats_text(const StatusSnapshot& s);

/// The header line of `plot_data`.
extern const char* const kPlotDataHeader;
/// One row of `plot_data`: unix_time, relative_time, cases, cases_per_sec, unique_signatures,
/// finding_cases, multi_output_cases, fused_tuple_param_cases, structure_cases.
std::string plot_data_row(const StatusSnapshot& s);

/// A campaign's record, `campaigns/<start_time>-<pid>.json` in the findings directory, rewritten
/// with the status files: stats_json() of its statistics so far plus start_time, last_update,
/// seed, jobs, elapsed_s, cases_per_s, finding_cases, unique_signatures and last_new_finding.
/// `aotfuzz report` sums them over the campaigns that wrote into the directory.
nlohmann::json campaign_record(const StatusSnapshot& s);
/// The records under `dir/campaigns`, by start time; unreadable files are skipped.
std::vector<nlohmann::json> read_campaign_records(const std::filesystem::path& dir);

/// A row of `plot_data`, as plot_data_row() writes it.
struct PlotRow {
  std::time_t unix_time = 0;
  double relative_time = 0;
  std::uint64_t cases = 0;
  double cases_per_sec = 0;
  std::uint64_t unique_signatures = 0, finding_cases = 0, multi_output_cases = 0,
                fused_tuple_param_cases = 0, structure_cases = 0;
};
/// The rows of a `plot_data` text; comments and malformed lines are skipped.
std::vector<PlotRow> parse_plot_data(const std::string& text);

/// The status files of one campaign in `dir`: the rows already in `dir/plot_data` (earlier
/// campaigns) are kept, and each update rewrites both files atomically. The directory's own
/// `fuzzer_stats` and `plot_data` belong to one running campaign at a time (an flock on
/// `dir/campaigns/.lock`, which holds its pid; the kernel drops it when the campaign dies, even
/// by kill -9). A campaign started while another holds them writes its own instead, as AFL++'s
/// secondary instances do: `campaigns/<start>-<pid>-<n>.fuzzer_stats` and `.plot_data`, next to
/// its record, so that neither overwrites the other's.
class StatusFiles {
 public:
  explicit StatusFiles(std::filesystem::path dir);
  ~StatusFiles();
  StatusFiles(const StatusFiles&) = delete;
  StatusFiles& operator=(const StatusFiles&) = delete;
  /// Rewrites fuzzer_stats and plot_data with a new row. Throws std::system_error.
  void update(const StatusSnapshot& s);
  /// The pid of the running campaign that holds the directory's own status files when this one
  /// does not (its files are then under campaigns/); 0 when this one holds them.
  long other_owner() const { return other_owner_; }
  /// Where this campaign's fuzzer_stats is (known after the first update).
  std::filesystem::path stats_path() const;

 private:
  std::filesystem::path dir_;
  std::string plot_;
  std::string record_name_;  // campaigns/<start>-<pid>-<n>.json, taken at the first update
  int lock_fd_ = -1;
  long other_owner_ = 0;
};

/// The rows of every campaign in `dir`: `plot_data`, then the `campaigns/*.plot_data` of
/// campaigns that ran while another held it.
std::vector<PlotRow> read_all_plot_data(const std::filesystem::path& dir);

/// A bundle's seen.json: {"first_seen", "last_seen" (unix times), "hits" (finding cases),
/// "campaigns" (runs that saw it)}; fresh counts when absent or unreadable.
struct SeenRecord {
  std::time_t first_seen = 0;
  std::time_t last_seen = 0;
  std::uint64_t hits = 0;
  std::uint64_t campaigns = 0;
};
SeenRecord read_seen(const std::filesystem::path& bundle_dir);
/// Adds `hits` seen at `now` to `bundle_dir/seen.json` (atomically); `new_campaign` counts the
/// campaign that saw them (a campaign records as it goes, once per status update, so a campaign
/// killed with -9 keeps what it recorded before).
void record_seen(const std::filesystem::path& bundle_dir, std::uint64_t hits, std::time_t now,
                 bool new_campaign = true);

}  // namespace aotfuzz::bundles
