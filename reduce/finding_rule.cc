#include "reduce/finding_rule.h"

#include "oracle/oracle.h"

namespace aotfuzz::reduce {

bool is_campaign_finding(const oracle::Verdict& verdict, bool merge_safe) {
  if (oracle::is_finding(verdict)) return true;
  return verdict.kind() == oracle::VerdictKind::kInvalidInput && merge_safe;
}

Predicate finding_predicate(const oracle::CaseOptions& options, const std::string& signature) {
  Predicate same = same_signature(options, signature);
  const auto fixed_or_none = oracle::fixed_options(options);
  if (!fixed_or_none) return same;
  const oracle::CaseOptions fixed = *fixed_or_none;
  return [same, fixed](const ir::Module& m) {
    return same(m) && oracle::run_case(m, fixed).verdict.kind() == oracle::VerdictKind::kPass;
  };
}

bool reduction_kept(const ReduceResult& result) { return result.steps > 0 || result.minimal; }

FindingReduction reduce_finding(const ir::Module& module, const oracle::CaseOptions& options,
                                const std::string& signature, const ReduceOptions& reduce_options) {
  FindingReduction out;
  out.result = reduce(module, finding_predicate(options, signature), reduce_options);
  if (!reduction_kept(out.result) && oracle::fixed_options(options)) {
    out.result = reduce(module, same_signature(options, signature), reduce_options);
    out.signature_only = true;
  }
  return out;
}

}  // namespace aotfuzz::reduce
