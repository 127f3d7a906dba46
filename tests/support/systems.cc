#include "tests/support/systems.h"

#include "oracle/case_flow.h"

namespace aotfuzz::test_support {

std::optional<oracle::PreparedCase> UnbatchedBuiltin::prepare(
    const ir::Module& annotated, const oracle::CaseOptions& options, oracle::CaseResult& r,
    const oracle::CaseReference* reference, const oracle::StageMark* mark) const {
  auto prepared = oracle::prepare_builtin_case(annotated, options, r, reference, mark);
  r.system_steps = {{"own step", std::chrono::microseconds(100)}};
  return prepared;
}

}  // namespace aotfuzz::test_support
