// run_case: the differential test of one graph, every outcome a verdict.
#include "oracle/oracle.h"

#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/in_process_probe.h"
#include "oracle/sut.h"

namespace aotfuzz::oracle {

std::optional<CaseOptions> fixed_options(const CaseOptions& options) {
  return system_of(options).fixed_case(options);
}

CaseResult run_case(const ir::Module& annotated, const CaseOptions& options) {
  CaseResult r;
  // Isolated, the case is prepared once, by the probe's child, and judged here from its answer.
  std::optional<PreparedCase> prepared = options.isolate_in_process
                                             ? prepare_isolated(annotated, options, r)
                                             : prepare_case(annotated, options, r);
  if (!prepared) return r;
  SingleProgramExecutor executor;
  const auto raw = executor.run(std::span<const PreparedCase>(&*prepared, 1));
  judge_case(annotated, options, *prepared, raw.front(), r);
  return r;
}

}  // namespace aotfuzz::oracle
