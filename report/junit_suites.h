// The pre-merge gate's reports: JUnit test cases for replayed corpus files and fuzz shards.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundles/replay.h"
#include "fuzz/campaign.h"
#include "report/junit.h"

namespace aotfuzz::report {

/// One test case per replayed file: classname from its directory (`corpus.conformance`), name
/// the file name, failed with the unmet expectations and their replay commands, in error when
/// the environment could not run a line (FileReplay::cannot_run), skipped when interrupted.
JUnitSuite replay_suite(const std::vector<bundles::FileReplay>& files,
                        const std::string& name = "replay");

/// The test case of one fuzz shard: `fuzz shard i/n (seed S)`, failed when the campaign found
/// anything (details: signatures and replay lines), its summary as output.
JUnitCase fuzz_shard_case(const fuzz::CampaignResult& result, const fuzz::CampaignOptions& options);

/// What the gate keeps of one fuzz shard for its reports: its test case, its findings (the fields
/// SARIF reads: signature, case, summary, replay, bundle) and its exit code. `aotfuzz check` runs
/// each shard in a supervised child (fuzz/crash_journal.h), which hands this over as JSON.
struct ShardOutcome {
  JUnitCase junit;
  std::vector<fuzz::Finding> findings;
  int exit_code = 3;
};
ShardOutcome shard_outcome(const fuzz::CampaignResult& result,
                           const fuzz::CampaignOptions& options);
nlohmann::json to_json(const ShardOutcome& outcome);
/// The inverse of to_json; throws nlohmann::json::exception on a malformed object.
ShardOutcome shard_outcome_from_json(const nlohmann::json& j);

/// A one-line status for a replayed file: `ok   path (2 runs, 31 ms)`, `FAIL path`,
/// `ERROR path (could not run: the environment)` or `SKIP path (interrupted)`.
std::string replay_status_line(const bundles::FileReplay& file);

}  // namespace aotfuzz::report
