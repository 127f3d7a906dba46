// What a campaign reports: the --stats JSON, the progress line and the closing summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/campaign_types.h"
#include "reduce/reducer.h"

namespace aotfuzz::fuzz {

/// cases, verdicts (per kind: total and per stage), stages (totals), features (generated graph
/// features) and options (pipeline options drawn): the parts of the --stats JSON that the
/// campaign records of a findings directory also hold (status_files.h).
/// The --stats JSON: options, counts per verdict kind and stage, throughput, features, findings.
nlohmann::json to_json(const CampaignResult& result, const CampaignOptions& options);

/// "12.3s  1234 cases  98.7/s  3 findings  1 unique  [invalid-input 2, arity 3]  last new 4s ago":
/// the verdict kinds other than pass that occurred, and the time since the last new finding.
std::string format_progress(const bundles::Progress& progress);
/// The closing summary (several lines, no trailing newline).
std::string format_summary(const CampaignResult& result, const CampaignOptions& options);

/// Seconds with one decimal ("12.3").
std::string format_seconds(double seconds);
/// {"ops", "inputs", "annotations", "nodes"}.
nlohmann::json to_json(const reduce::ModuleSize& size);

}  // namespace aotfuzz::fuzz
