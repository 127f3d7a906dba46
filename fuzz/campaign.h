// Fuzzing campaigns: deterministic cases (generated graph + pipeline options) from (seed, index),
// worker threads over an atomic case counter, de-duplication of findings by verdict signature,
// automatic reduction and atomic bundles, progress snapshots and statistics. The parts:
// fuzz/campaign_cases.h (the cases), fuzz/worker_pool.h (the workers), fuzz/case_counter.h (the
// statistics), fuzz/finding_ledger.h (claims and confirmations), fuzz/finding_reduction.h and
// fuzz/finding_bundle.h (reductions and bundles), fuzz/campaign_status.h (the status files).
#pragma once

#include "fuzz/campaign_cases.h"
#include "fuzz/campaign_types.h"

namespace aotfuzz::fuzz {

/// Runs a campaign until its budget is spent or `options.stop` is set. Throws CampaignError on
/// bad options (a shard out of range, jobs < 1).
CampaignResult run_campaign(const CampaignOptions& options,
                            const CampaignCallbacks& callbacks = {});

}  // namespace aotfuzz::fuzz
