// Fuzzing campaigns: deterministic cases (generated graph + pipeline options) from (seed, index),
// worker threads over an atomic case counter, de-duplication of findings by verdict signature,
// automatic reduction and atomic bundles, progress snapshots and statistics.
#pragma once

#include <string>

#include "fuzz/campaign_cases.h"
#include "fuzz/campaign_types.h"
#include "fuzz/reducer.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"

namespace aotfuzz::fuzz {

/// Whether a case's verdict is a finding of this campaign: oracle::is_finding, and also an
/// invalid-input verdict when the case's policy was merge_safe: such generated graphs are valid
/// input by construction, so refusing one is a bug. Without merge_safe a refusal TVM's rules do
/// not make is a structure verdict already.
bool is_campaign_finding(const oracle::Verdict& verdict, bool merge_safe);

/// The predicate a finding is reduced with: run_case(m, options) gives `signature`, and, when
/// there is a system without the bug (bugs injected, or a fixed TVM: oracle::fixed_options), the
/// case passes there (so the repro shows that bug, and the fixed system's `=> pass` replay line
/// holds).
Predicate finding_predicate(const oracle::CaseOptions& options, const std::string& signature);

/// Runs a campaign until its budget is spent or `options.stop` is set. Throws CampaignError on
/// bad options (a shard out of range, jobs < 1).
CampaignResult run_campaign(const CampaignOptions& options,
                            const CampaignCallbacks& callbacks = {});

}  // namespace aotfuzz::fuzz
