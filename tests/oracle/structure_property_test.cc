// Property: on generated graphs (swarm policies, merge-unsafe ones included) the pipeline's
// module after every pass is the one TVM v0.8's rules give, and it refuses exactly what they
// refuse.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/printer.h"
#include "oracle/oracle.h"

namespace aotfuzz::oracle {
namespace {

RC_GTEST_PROP(StructureProperties, EveryPassFollowsTvmsRulesOnGeneratedGraphs, ()) {
  ir::Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  generator::GenPolicy base;
  base.merge_safe = *rc::gen::element(true, false);
  base.targets = {{"ccompiler", 3}, {"default", 1}, {"dsp", 1}};
  const generator::GenPolicy policy = generator::swarm(base, rng);
  const ir::Module m = generator::generate(policy, rng);
  for (bool merge : {true, false}) {
    CaseOptions options;
    options.aot.merge = merge;
    options.in_process_only = true;
    const CaseResult r = run_case(m, options);
    RC_ASSERT(r.verdict.kind() == VerdictKind::kPass ||
              r.verdict.kind() == VerdictKind::kInvalidInput);
    RC_CLASSIFY(r.verdict.kind() == VerdictKind::kInvalidInput, "refused by both");
  }
}

}  // namespace
}  // namespace aotfuzz::oracle
