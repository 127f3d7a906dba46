// How a finding is kept while it is reduced: the one rule `aotfuzz fuzz` and `aotfuzz reduce`
// share, so a file reduces to the repro its campaign's bundle would hold.
#pragma once

#include <string>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/verdict.h"
#include "reduce/reducer.h"

namespace aotfuzz::reduce {

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

/// Whether a reduction kept its predicate: it took a step, or found the graph 1-minimal. Neither
/// means the predicate did not hold on the graph itself (or the reduction was cut short first).
bool reduction_kept(const ReduceResult& result);

/// A finding reduced, and whether it was kept by its signature alone.
struct FindingReduction {
  ReduceResult result;
  /// The graph fails on the fixed system too (it holds a second bug), so no candidate keeps
  /// finding_predicate: it was reduced again keeping same_signature only, and its repro does not
  /// show that the fix removes it.
  bool signature_only = false;
};
/// Reduces a finding's graph keeping finding_predicate(options, signature); when that keeps
/// nothing (reduction_kept) and there is a fixed system, keeping the signature alone.
FindingReduction reduce_finding(const ir::Module& module, const oracle::CaseOptions& options,
                                const std::string& signature, const ReduceOptions& reduce_options);

}  // namespace aotfuzz::reduce
